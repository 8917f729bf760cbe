//! What it takes to call every REST route of a real aggregator: a
//! catalog with one object of each kind (and spares to delete), and for
//! each route that writes, a request that succeeds on it. Shared by the
//! audit table test and the role and scope table test, so a new route
//! without a recipe fails both.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use gslb_e2e::ZONE;
use gslb_e2e::dns::http_request;
use serde_json::{Value, json};

/// A REST call with `token`: the status and the JSON body (null if none).
pub fn call(http: SocketAddr, token: &str, method: &str, path: &str, body: &str) -> (u16, Value) {
    let auth = format!("Bearer {token}");
    let (code, _, body) = http_request(http, method, path, &[("Authorization", &auth)], body);
    (code, serde_json::from_str(&body).unwrap_or(Value::Null))
}

/// Create at `path`; the new id.
pub fn created(http: SocketAddr, token: &str, path: &str, body: Value) -> u64 {
    let (code, v) = call(http, token, "POST", path, &body.to_string());
    assert_eq!(code, 201, "{path}: {v}");
    v["id"].as_u64().unwrap()
}

/// The objects the recipes name.
pub struct Fixture {
    /// The signed zone `example.test`.
    pub zone: u64,
    /// Pool `web` (checked).
    pub pool: u64,
    /// A member of `web`.
    pub member: u64,
    /// A record set of the zone.
    pub record: u64,
    /// The check `web` uses.
    pub check: u64,
    /// A TSIG key.
    pub key: u64,
    /// A notifier.
    pub notifier: u64,
    /// (method, path as routed) -> (the URL called, its body).
    pub recipes: BTreeMap<(&'static str, &'static str), (String, String)>,
}

impl Fixture {
    /// The URL of a read of `path` (as routed): `{id}` is the object of
    /// the kind the path names.
    pub fn read_url(&self, path: &str) -> String {
        let id = match path.split('/').nth(3) {
            Some("zones") => self.zone,
            Some("records") => self.record,
            Some("pools") => self.pool,
            Some("members") => self.member,
            Some("checks") => self.check,
            Some("tsig-keys") => self.key,
            Some("notifiers") => self.notifier,
            _ => 0,
        };
        let url = path.replace("{id}", &id.to_string());
        match path {
            "/api/v1/zonefile" => format!("{url}?apex=example.test"),
            "/api/v1/explain" => format!("{url}?name=www.example.test&type=A"),
            "/api/v1/diff" => format!("{url}?from=1"),
            _ => url,
        }
    }
}

/// Build the catalog at `h` with `t` (a token that may do everything) and
/// the recipes of the routes that write.
pub fn fixture(h: SocketAddr, t: &str) -> Fixture {
    let t = t.to_owned();
    // What the recipes need: a zone (signed, for the DNSSEC routes), a
    // check, a pool with a member, a record, spares to delete.
    let zone = created(
        h,
        &t,
        "/api/v1/zones",
        json!({"apex": "example.test", "ns": ["ns1.example.test"], "defaultTtl": 60,
        "soa": {"mname": "ns1.example.test", "rname": "hostmaster.example.test", "refresh": 3600, "retry": 600, "expire": 604800, "negativeTtl": 5},
        "dnssec": {"algorithm": "ecdsap256sha256"}}),
    );
    let check = created(
        h,
        &t,
        "/api/v1/checks",
        json!({"name": "tcp", "probe": {"type": "tcp"}}),
    );
    let none = created(
        h,
        &t,
        "/api/v1/checks",
        json!({"name": "none", "probe": {"type": "none"}}),
    );
    let pool = created(
        h,
        &t,
        "/api/v1/pools",
        json!({"name": "web", "check": check}),
    );
    let manual = created(
        h,
        &t,
        "/api/v1/pools",
        json!({"name": "manual", "check": none}),
    );
    let member = created(
        h,
        &t,
        &format!("/api/v1/pools/{pool}/members"),
        json!({"name": "m1", "ipAddress": "127.0.0.1"}),
    );
    let by_hand = created(
        h,
        &t,
        &format!("/api/v1/pools/{manual}/members"),
        json!({"name": "h1", "ipAddress": "127.0.0.2"}),
    );
    let record = created(
        h,
        &t,
        "/api/v1/records",
        json!({"zone": zone, "name": "www.example.test", "type": "A", "data": {"dynamic": {"pools": [pool]}}}),
    );
    let key = created(h, &t, "/api/v1/tsig-keys", json!({"name": "xfr.key"}));
    let notifier = created(
        h,
        &t,
        "/api/v1/notifiers",
        json!({"name": "hook", "kind": "webhook", "url": "http://127.0.0.1:9/hook"}),
    );
    let spare_zone = created(
        h,
        &t,
        "/api/v1/zones",
        json!({"apex": "spare.test", "ns": ["ns1.spare.test"], "defaultTtl": 60,
        "soa": {"mname": "ns1.spare.test", "rname": "hostmaster.spare.test", "refresh": 3600, "retry": 600, "expire": 604800, "negativeTtl": 5}}),
    );
    let spare_check = created(
        h,
        &t,
        "/api/v1/checks",
        json!({"name": "spare", "probe": {"type": "tcp"}}),
    );
    let spare_pool = created(h, &t, "/api/v1/pools", json!({"name": "spare"}));
    let spare_record = created(
        h,
        &t,
        "/api/v1/records",
        json!({"zone": zone, "name": "txt.example.test", "type": "TXT", "data": {"static": [{"txt": ["x"]}]}}),
    );
    let spare_member = created(
        h,
        &t,
        &format!("/api/v1/pools/{pool}/members"),
        json!({"name": "m2", "ipAddress": "127.0.0.3"}),
    );
    let spare_key = created(h, &t, "/api/v1/tsig-keys", json!({"name": "spare.key"}));
    let spare_notifier = created(
        h,
        &t,
        "/api/v1/notifiers",
        json!({"name": "spare", "kind": "webhook", "url": "http://127.0.0.1:9/x"}),
    );
    let (_, mut batch_pool) = call(h, &t, "GET", &format!("/api/v1/pools/{pool}"), "");
    batch_pool["id"] = json!(0);
    batch_pool["name"] = json!("batch");
    let (_, newest) = call(h, &t, "GET", "/api/v1/audit?limit=1", "");
    let version = newest["records"][0]["version"].as_u64().unwrap();

    let zone_doc = format!("{ZONE}\n[[check]]\nname = \"doc\"\nprobe = {{ type = \"tcp\" }}\n");
    let zonefile = "$ORIGIN example.test.\n$TTL 60\n@ IN SOA ns1 hostmaster 1 3600 600 604800 5\n@ IN NS ns1\nmail IN A 192.0.2.9\n";
    let recipes: BTreeMap<(&'static str, &'static str), (String, String)> = [
        (("POST", "/api/v1/zones"), ("/api/v1/zones".into(), json!({"apex": "new.test", "ns": ["ns1.new.test"], "defaultTtl": 60, "soa": {"mname": "ns1.new.test", "rname": "h.new.test", "refresh": 3600, "retry": 600, "expire": 604800, "negativeTtl": 5}}).to_string())),
        (("PUT", "/api/v1/zones/{id}"), (format!("/api/v1/zones/{zone}"), r#"{"defaultTtl": 120}"#.into())),
        (("DELETE", "/api/v1/zones/{id}"), (format!("/api/v1/zones/{spare_zone}"), String::new())),
        (("POST", "/api/v1/zones/{id}/dnssec/rollover"), (format!("/api/v1/zones/{zone}/dnssec/rollover"), r#"{"role": "csk"}"#.into())),
        (("POST", "/api/v1/zones/{id}/dnssec/ds-seen"), (format!("/api/v1/zones/{zone}/dnssec/ds-seen"), String::new())),
        (("POST", "/api/v1/records"), ("/api/v1/records".into(), json!({"zone": zone, "name": "api.example.test", "type": "A", "data": {"static": [{"a": "192.0.2.1"}]}}).to_string())),
        (("PUT", "/api/v1/records/{id}"), (format!("/api/v1/records/{record}"), r#"{"ttl": 30}"#.into())),
        (("DELETE", "/api/v1/records/{id}"), (format!("/api/v1/records/{spare_record}"), String::new())),
        (("POST", "/api/v1/pools"), ("/api/v1/pools".into(), r#"{"name": "new"}"#.into())),
        (("PUT", "/api/v1/pools/{id}"), (format!("/api/v1/pools/{pool}"), r#"{"minHealthy": 2}"#.into())),
        (("DELETE", "/api/v1/pools/{id}"), (format!("/api/v1/pools/{spare_pool}"), String::new())),
        (("POST", "/api/v1/pools/{id}/members"), (format!("/api/v1/pools/{pool}/members"), r#"{"name": "m3", "ipAddress": "127.0.0.4"}"#.into())),
        (("PUT", "/api/v1/members/{id}"), (format!("/api/v1/members/{member}"), r#"{"weight": 7}"#.into())),
        (("DELETE", "/api/v1/members/{id}"), (format!("/api/v1/members/{spare_member}"), String::new())),
        (("PUT", "/api/v1/members/{id}/health"), (format!("/api/v1/members/{by_hand}/health"), r#"{"health": "down"}"#.into())),
        (("POST", "/api/v1/checks"), ("/api/v1/checks".into(), r#"{"name": "new", "probe": {"type": "tcp"}}"#.into())),
        (("PUT", "/api/v1/checks/{id}"), (format!("/api/v1/checks/{check}"), r#"{"interval": "20s"}"#.into())),
        (("DELETE", "/api/v1/checks/{id}"), (format!("/api/v1/checks/{spare_check}"), String::new())),
        (("POST", "/api/v1/tsig-keys"), ("/api/v1/tsig-keys".into(), r#"{"name": "new.key"}"#.into())),
        (("PUT", "/api/v1/tsig-keys/{id}"), (format!("/api/v1/tsig-keys/{key}"), r#"{"name": "renamed.key"}"#.into())),
        (("DELETE", "/api/v1/tsig-keys/{id}"), (format!("/api/v1/tsig-keys/{spare_key}"), String::new())),
        (("POST", "/api/v1/notifiers"), ("/api/v1/notifiers".into(), r#"{"name": "new", "kind": "webhook", "url": "http://127.0.0.1:9/n"}"#.into())),
        (("PUT", "/api/v1/notifiers/{id}"), (format!("/api/v1/notifiers/{notifier}"), r#"{"name": "renamed"}"#.into())),
        (("DELETE", "/api/v1/notifiers/{id}"), (format!("/api/v1/notifiers/{spare_notifier}"), String::new())),
        (("POST", "/api/v1/apply"), ("/api/v1/apply".into(), json!({"ops": [{"op": "create", "kind": "pool", "object": batch_pool}]}).to_string())),
        // Refused (it leaves out what exists, without prune): recorded as refused.
        (("POST", "/api/v1/config"), ("/api/v1/config".into(), zone_doc)),
        // The file replaces the zone's records: with prune (issue 43).
        (("POST", "/api/v1/zonefile"), ("/api/v1/zonefile?apex=example.test&prune=true".into(), zonefile.into())),
        (("PUT", "/api/v1/decisions"), ("/api/v1/decisions".into(), r#"{"paused": true}"#.into())),
        (("PUT", "/api/v1/pools/{id}/decisions"), (format!("/api/v1/pools/{pool}/decisions"), r#"{"paused": true}"#.into())),
        // Refused (a deleted TSIG key cannot come back): recorded as refused.
        (("POST", "/api/v1/rollback"), (format!("/api/v1/rollback?version={version}"), String::new())),
    ]
    .into_iter()
    .collect();

    Fixture {
        zone,
        pool,
        member,
        record,
        check,
        key,
        notifier,
        recipes,
    }
}
