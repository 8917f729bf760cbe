//! The audit log and history through the real aggregator: every REST
//! route that writes leaves a record naming its caller (a table over
//! `api::rest::routes()`, so a new route without one fails here), gRPC
//! writes too, secrets never show, no record of an acknowledged write is
//! lost to kill -9, and a rollback of a 1,000-change apply gives the
//! earlier catalog back exactly.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use gslb_e2e::dns::http_request;
use gslb_e2e::pki::create_token;
use gslb_e2e::{Aggregator, ZONE, temp_dir};
use serde_json::{Value, json};

fn call(http: SocketAddr, token: &str, method: &str, path: &str, body: &str) -> (u16, Value) {
    let auth = format!("Bearer {token}");
    let (code, _, body) = http_request(http, method, path, &[("Authorization", &auth)], body);
    (code, serde_json::from_str(&body).unwrap_or(Value::Null))
}

fn created(http: SocketAddr, token: &str, path: &str, body: Value) -> u64 {
    let (code, v) = call(http, token, "POST", path, &body.to_string());
    assert_eq!(code, 201, "{path}: {v}");
    v["id"].as_u64().unwrap()
}

/// The newest audit record.
fn newest(http: SocketAddr, token: &str) -> Value {
    let (code, v) = call(http, token, "GET", "/api/v1/audit?limit=1", "");
    assert_eq!(code, 200, "{v}");
    v["records"][0].clone()
}

/// A second write token, `name`, in `agg`'s tokens file.
fn token(agg: &Aggregator, dir: &std::path::Path, name: &str) -> String {
    let _ = agg;
    create_token(&dir.join("tokens.json"), name, "write", None)
}

#[test]
fn every_rest_route_that_writes_is_audited_with_its_caller() {
    let dir = temp_dir("audit-routes");
    let agg = Aggregator::start(&dir);
    let t = token(&agg, &dir, "alice");
    let h = agg.http;
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
    let _ = (key, notifier);
    let (_, mut batch_pool) = call(h, &t, "GET", &format!("/api/v1/pools/{pool}"), "");
    batch_pool["id"] = json!(0);
    batch_pool["name"] = json!("batch");
    let version = newest(h, &t)["version"].as_u64().unwrap();

    // (method, path as routed) -> the request made, and its body. Routes
    // that write and take no record say why here.
    let exempt: BTreeMap<(&str, &str), &str> = BTreeMap::from([(
        ("POST", "/api/v1/members/{id}/heartbeat"),
        "an ephemeral member's liveness, not a change: heartbeats arrive every few seconds per member",
    )]);
    let zone_doc = format!("{ZONE}\n[[check]]\nname = \"doc\"\nprobe = {{ type = \"tcp\" }}\n");
    let zonefile = "$ORIGIN example.test.\n$TTL 60\n@ IN SOA ns1 hostmaster 1 3600 600 604800 5\n@ IN NS ns1\nmail IN A 192.0.2.9\n";
    let recipes: BTreeMap<(&str, &str), (String, String)> = [
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
        (("POST", "/api/v1/zonefile"), ("/api/v1/zonefile?apex=example.test".into(), zonefile.into())),
        (("PUT", "/api/v1/decisions"), ("/api/v1/decisions".into(), r#"{"paused": true}"#.into())),
        (("PUT", "/api/v1/pools/{id}/decisions"), (format!("/api/v1/pools/{pool}/decisions"), r#"{"paused": true}"#.into())),
        // Refused (a deleted TSIG key cannot come back): recorded as refused.
        (("POST", "/api/v1/rollback"), (format!("/api/v1/rollback?version={version}"), String::new())),
    ]
    .into_iter()
    .collect();

    let mut missing = Vec::new();
    for (method, path) in gslb_aggregator::api::rest::routes() {
        let method = method.as_str();
        if method == "GET" || exempt.contains_key(&(method, path)) {
            continue;
        }
        let Some((url, body)) = recipes.get(&(method, path)) else {
            missing.push(format!("{method} {path}"));
            continue;
        };
        let before = newest(h, &t)["seq"].as_u64().unwrap();
        let (code, reply) = call(h, &t, method, url, body);
        let refused = ["/api/v1/config", "/api/v1/rollback"].contains(&path);
        assert!(
            code < 300 || (refused && code == 400),
            "{method} {url}: {code} {reply}"
        );
        let record = newest(h, &t);
        assert_eq!(record["refused"].is_string(), refused, "{record}");
        let operation = format!("{method} {}", url.split('?').next().unwrap());
        assert!(
            record["seq"].as_u64().unwrap() > before,
            "{method} {path}: no record: {record}"
        );
        assert_eq!(record["operation"], operation, "{record}");
        assert!(
            record["who"].as_str().unwrap().starts_with("token:alice ("),
            "{record}"
        );
        assert!(
            record["source"].as_str().unwrap().starts_with("127.0.0.1:"),
            "{record}"
        );
    }
    assert!(
        missing.is_empty(),
        "routes that write with no audit recipe here: {missing:?}"
    );
}

#[test]
fn the_audit_log_says_who_changed_what_and_never_shows_a_secret() {
    let dir = temp_dir("audit-who");
    let agg = Aggregator::start(&dir);
    let alice = token(&agg, &dir, "alice");
    let h = agg.http;
    agg.apply(ZONE, &dir);
    let check = created(
        h,
        &alice,
        "/api/v1/checks",
        json!({"name": "tcp", "probe": {"type": "tcp"}}),
    );
    let pool = created(
        h,
        &alice,
        "/api/v1/pools",
        json!({"name": "web", "check": check}),
    );
    let member = created(
        h,
        &alice,
        &format!("/api/v1/pools/{pool}/members"),
        json!({"name": "m1", "ipAddress": "127.0.0.1"}),
    );
    let (code, _) = call(
        h,
        &alice,
        "PUT",
        &format!("/api/v1/members/{member}"),
        r#"{"weight": 250}"#,
    );
    assert_eq!(code, 200);
    // A refused write is recorded, with why.
    let (code, _) = call(
        h,
        &alice,
        "PUT",
        &format!("/api/v1/members/{member}"),
        r#"{"port": 0}"#,
    );
    assert_eq!(code, 400);
    // Secrets: a TSIG key's and a webhook's, and a Slack URL's path.
    let secret = "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LTEyMzQ=";
    created(
        h,
        &alice,
        "/api/v1/tsig-keys",
        json!({"name": "xfr.key", "secret": secret}),
    );
    let hook_secret = "d2ViaG9vay1zZWNyZXQtd2ViaG9vay1zZWNyZXQ=";
    created(
        h,
        &alice,
        "/api/v1/notifiers",
        json!({"name": "hook", "kind": "webhook", "url": "http://127.0.0.1:9/hook", "secret": hook_secret}),
    );
    created(
        h,
        &alice,
        "/api/v1/notifiers",
        json!({"name": "chat", "kind": "slack", "url": "http://127.0.0.1:9/services/T000/B000/XXXXSLACKPATH"}),
    );
    // gRPC, through gslbctl with the harness's own token.
    let file = dir.join("m.toml");
    std::fs::write(&file, "priority = 5\n").unwrap();
    agg.ctl(&[
        "members",
        "update",
        &member.to_string(),
        "-f",
        file.to_str().unwrap(),
    ]);

    let (_, log) = call(h, &alice, "GET", "/api/v1/audit", "");
    let records = log["records"].as_array().unwrap();
    let grpc = &records[0];
    assert!(
        grpc["who"].as_str().unwrap().starts_with("token:e2e ("),
        "{grpc}"
    );
    assert_eq!(grpc["operation"], "AdminService/UpdateMember");
    assert_eq!(
        grpc["changes"][0]["fields"],
        json!([{"field": "priority", "before": 0, "after": 5}])
    );
    let weight = records
        .iter()
        .find(|r| {
            r["operation"] == format!("PUT /api/v1/members/{member}") && r["version"].is_u64()
        })
        .unwrap();
    assert_eq!(
        weight["changes"][0]["fields"],
        json!([{"field": "weight", "before": 100, "after": 250}])
    );
    let refused = records.iter().find(|r| r["refused"].is_string()).unwrap();
    assert!(
        refused["refused"].as_str().unwrap().contains("port"),
        "{refused}"
    );
    assert!(
        refused["who"]
            .as_str()
            .unwrap()
            .starts_with("token:alice (")
    );
    // Filters: by object, by who.
    let (_, by_member) = call(
        h,
        &alice,
        "GET",
        &format!("/api/v1/audit?object=member/{member}"),
        "",
    );
    assert_eq!(
        by_member["records"].as_array().unwrap().len(),
        4,
        "{by_member}"
    );
    let (_, by_e2e) = call(h, &alice, "GET", "/api/v1/audit?who=e2e", "");
    assert!(
        by_e2e["records"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r["who"].as_str().unwrap().contains("e2e"))
    );
    let text = agg.ctl(&["audit", "--object", &format!("member/{member}")]);
    assert!(
        text.contains("weight: 100 → 250") && text.contains("REFUSED"),
        "{text}"
    );
    let history = agg.ctl(&["history"]);
    assert!(history.contains("AdminService/UpdateMember"), "{history}");

    // No secret in the API's log, gslbctl's, a backup, or the aggregator's output.
    let backup = dir.join("backup.json");
    agg.ctl(&["backup", "--out", backup.to_str().unwrap()]);
    let backup: Value = serde_json::from_str(&std::fs::read_to_string(&backup).unwrap()).unwrap();
    let audit_in_backup = backup["audit"].to_string();
    assert!(
        audit_in_backup.contains("xfr.key"),
        "the backup carries the log"
    );
    let json_log = agg.ctl(&["-o", "json", "audit", "--limit", "1000"]);
    let output = [agg.proc.stdout.all(), agg.proc.stderr.all()]
        .concat()
        .join("\n");
    for shown in [&log.to_string(), &json_log, &audit_in_backup, &output] {
        for secret in [secret, hook_secret, "XXXXSLACKPATH"] {
            assert!(
                !shown.contains(secret),
                "a secret in {}",
                &shown[..shown.len().min(200)]
            );
        }
    }
}

/// Every accepted write's record, by the version it made.
fn records_by_version(h: SocketAddr, t: &str) -> BTreeMap<u64, Value> {
    let mut all = BTreeMap::new();
    let mut before = String::new();
    loop {
        let (code, page) = call(
            h,
            t,
            "GET",
            &format!("/api/v1/audit?acceptedOnly=true&limit=1000{before}"),
            "",
        );
        assert_eq!(code, 200, "{page}");
        for r in page["records"].as_array().unwrap() {
            all.insert(r["version"].as_u64().unwrap(), r.clone());
        }
        match page["next"].as_u64() {
            Some(next) => before = format!("&before={next}"),
            None => return all,
        }
    }
}

#[test]
fn kill_9_loses_no_audit_record_of_an_acknowledged_write() {
    let dir = temp_dir("audit-kill");
    let mut agg = Aggregator::start(&dir);
    let t = agg.token.clone();
    let h = agg.http;
    let check = created(
        h,
        &t,
        "/api/v1/checks",
        json!({"name": "tcp", "probe": {"type": "tcp"}}),
    );
    let pool = created(
        h,
        &t,
        "/api/v1/pools",
        json!({"name": "web", "check": check}),
    );
    let members: Vec<u64> = (1..=2)
        .map(|i| {
            created(
                h,
                &t,
                &format!("/api/v1/pools/{pool}/members"),
                json!({"name": format!("m{i}"), "ipAddress": format!("127.0.0.{i}")}),
            )
        })
        .collect();
    // Two writers, each writing weights to its member until the process
    // dies; every 200 is an acknowledged write and its version.
    let acknowledged = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let writers: Vec<_> = members
        .iter()
        .map(|&m| {
            let (t, acknowledged) = (t.clone(), std::sync::Arc::clone(&acknowledged));
            std::thread::spawn(move || {
                for weight in 1..=5_000u32 {
                    let (code, v) = call(
                        h,
                        &t,
                        "PUT",
                        &format!("/api/v1/members/{m}"),
                        &json!({"weight": weight}).to_string(),
                    );
                    if code != 200 {
                        return;
                    }
                    acknowledged
                        .lock()
                        .unwrap()
                        .push((v["revision"].as_u64().unwrap(), m, weight));
                }
            })
        })
        .collect();
    gslb_e2e::wait_until(30, "200 acknowledged writes", || {
        acknowledged.lock().unwrap().len() >= 200
    });
    agg.proc.kill();
    for w in writers {
        w.join().unwrap();
    }
    let acknowledged = acknowledged.lock().unwrap().clone();
    let agg = Aggregator::start(&dir);
    let records = records_by_version(agg.http, &agg.token);
    for (version, member, weight) in &acknowledged {
        let record = records.get(version).unwrap_or_else(|| {
            panic!("no audit record of the acknowledged write at version {version}")
        });
        assert_eq!(
            record["changes"][0]["object"],
            json!({"kind": "member", "id": member}),
            "{record}"
        );
        let fields = &record["changes"][0]["fields"];
        assert_eq!(fields[0]["after"], *weight, "{record}");
    }
    assert!(acknowledged.len() >= 200);
}

#[test]
fn a_rollback_of_a_1000_change_apply_restores_the_earlier_catalog_exactly() {
    let dir = temp_dir("audit-rollback");
    let agg = Aggregator::start(&dir);
    // Before: two pools of 400 members each.
    let member = |pool: &str, i: u32, weight: u32| {
        format!(
            "[[pool.member]]\nname = \"{pool}-{i}\"\naddress = \"127.1.{}.{}\"\nweight = {weight}\n",
            i / 200,
            i % 200 + 1
        )
    };
    let document = |a: &dyn Fn(u32) -> Option<u32>, b: &dyn Fn(u32) -> Option<u32>| {
        let mut doc = format!("{ZONE}\n[[check]]\nname = \"tcp\"\nprobe = {{ type = \"tcp\" }}\n");
        for (name, weights) in [("a", a), ("b", b)] {
            doc.push_str(&format!("\n[[pool]]\nname = \"{name}\"\ncheck = \"tcp\"\n"));
            for i in 0..600 {
                if let Some(w) = weights(i) {
                    doc.push_str(&member(name, i, w));
                }
            }
        }
        doc
    };
    let before_doc = document(&|i| (i < 400).then_some(100), &|i| (i < 400).then_some(100));
    agg.apply(&before_doc, &dir);
    let backup = |name: &str| -> Value {
        let file = dir.join(name);
        agg.ctl(&["backup", "--out", file.to_str().unwrap()]);
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        doc["state"]["catalog"].clone()
    };
    let before = backup("before.json");
    let version: u64 = agg.ctl_json(&["history", "--limit", "1"])["records"][0]["version"]
        .as_u64()
        .unwrap();
    // 1,000 changes in one apply: pool a's 400 members re-weighted, 200
    // members added to b, and b's members 200..400 deleted (400 + 200 + 200
    // + 200 more re-weighted in b).
    let after_doc = document(&|i| (i < 400).then_some(150), &|i| match i {
        0..200 => Some(50),
        400..600 => Some(100),
        _ => None,
    });
    let file = dir.join("after.toml");
    std::fs::write(&file, &after_doc).unwrap();
    let out = agg.ctl(&["apply", "-f", file.to_str().unwrap(), "--prune"]);
    assert_eq!(
        out.lines()
            .filter(|l| l.starts_with(['+', '~', '-']))
            .count(),
        1_000,
        "{out}"
    );
    assert_ne!(backup("after.json"), before);
    // The plan first, then the rollback itself.
    let plan = agg.ctl(&["rollback", &version.to_string(), "--dry-run"]);
    assert_eq!(
        plan.lines()
            .filter(|l| l.starts_with(['+', '~', '-']))
            .count(),
        1_000,
        "{plan}"
    );
    let diff = agg.ctl_json(&["diff", &version.to_string()]);
    assert_eq!(diff["changes"].as_array().unwrap().len(), 1_000);
    agg.ctl(&["rollback", &version.to_string()]);
    assert_eq!(
        backup("rolled-back.json"),
        before,
        "the catalog as it was, ids included"
    );
    // The rollback is itself a write in the history.
    let history = agg.ctl(&["history", "--limit", "1"]);
    assert!(history.contains("AdminService/Rollback"), "{history}");
}
