//! The REST API through its router (no socket), over a real store: seed
//! 000's paths and bodies, errors that name the field, nothing stored on a
//! refusal, atomic apply, manual health, ephemeral members, explain.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::http::{Method, Request, StatusCode};
use gslb_aggregator::api::rest::router;
use gslb_aggregator::api::service::Service;
use gslb_aggregator::core::control::Control;
use gslb_aggregator::core::store::RedbStore;
use gslb_engine::{EngineConfig, Timestamp};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

struct Api {
    app: Router,
    service: Arc<Service>,
    dir: std::path::PathBuf,
}

impl Drop for Api {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn api(name: &str) -> Api {
    let dir = std::env::temp_dir().join(format!("gslb-rest-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let store = RedbStore::open(&dir).unwrap();
    let now = Timestamp::from_system(std::time::SystemTime::now());
    let control = Control::open(Box::new(store), EngineConfig::default(), now).unwrap();
    let service = Arc::new(Service::new(control));
    Api {
        app: router(service.clone()),
        service,
        dir,
    }
}

impl Api {
    async fn call(&self, method: Method, path: &str, body: Option<Value>) -> (StatusCode, Value) {
        let body = body.map_or_else(Body::empty, |b| Body::from(b.to_string()));
        let mut request = Request::builder()
            .method(method)
            .uri(path)
            .header("content-type", "application/json")
            .body(body)
            .unwrap();
        // What the listener's token check hands the router: an admin token
        // limited to nothing (roles and scopes are tested end to end).
        request
            .extensions_mut()
            .insert(gslb_aggregator::api::tokens::Checked {
                role: gslb_aggregator::api::tokens::TokenRole::Admin,
                name: "test".into(),
                id: "0".into(),
                scope: Default::default(),
            });
        let response = self.app.clone().oneshot(request).await.unwrap();
        let status = response.status();
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        (
            status,
            serde_json::from_slice(&bytes).unwrap_or(Value::Null),
        )
    }

    async fn ok(&self, method: Method, path: &str, body: Option<Value>) -> Value {
        let (status, value) = self.call(method, path, body).await;
        assert!(status.is_success(), "{status}: {value}");
        value
    }

    /// check 1 (http), pool 2 using it.
    async fn pool(&self) {
        self.ok(Method::POST, "/api/v1/checks", Some(json!({"name": "web", "probe": {"type": "http", "method": "GET", "path": "/health"}}))).await;
        self.ok(
            Method::POST,
            "/api/v1/pools",
            Some(json!({"name": "web", "check": 1})),
        )
        .await;
    }
}

fn error_field(v: &Value) -> &str {
    v["error"]["field"].as_str().unwrap_or("")
}

#[tokio::test]
async fn seed_000_member_paths_and_status_fields() {
    let api = api("seed");
    api.pool().await;
    let (status, created) = api
        .call(Method::POST, "/api/v1/pools/2/members", Some(json!({"name": "web-03", "ipAddress": "10.0.0.3", "port": 80, "weight": 100, "warmupThreshold": 3})))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{created}");
    assert_eq!(
        (
            created["id"].as_u64(),
            created["ipAddress"].as_str(),
            created["warmupThreshold"].as_u64()
        ),
        (Some(3), Some("10.0.0.3"), Some(3))
    );
    let updated = api
        .ok(
            Method::PUT,
            "/api/v1/members/3",
            Some(json!({"warmupThreshold": 5})),
        )
        .await;
    assert_eq!(
        (
            updated["warmupThreshold"].as_u64(),
            updated["name"].as_str(),
            updated["weight"].as_u64()
        ),
        (Some(5), Some("web-03"), Some(100))
    );
    for path in ["/api/v1/members/3", "/api/v1/pools/2/members"] {
        let v = api.ok(Method::GET, path, None).await;
        let member = if v.is_array() { v[0].clone() } else { v };
        assert_eq!(
            member["warmupThreshold"].as_u64(),
            Some(5),
            "warmupThreshold in every member response ({path})"
        );
    }
    let s = api.ok(Method::GET, "/api/v1/members/3/status", None).await;
    assert_eq!(
        (
            s["memberId"].as_u64(),
            s["warming"].as_bool(),
            s["warmupPasses"].as_u64(),
            s["warmupThreshold"].as_u64()
        ),
        (Some(3), Some(true), Some(0), Some(5))
    );
    assert_eq!(s["healthy"].as_bool(), Some(false));
    let p = api.ok(Method::GET, "/api/v1/pools/2/status", None).await;
    assert_eq!(
        p["members"]["10.0.0.3"]["warmupThreshold"].as_u64(),
        Some(5),
        "seed 000's shape, keyed by IP: {p}"
    );
    assert_eq!(
        p["membersById"]["3"]["ipAddress"], "10.0.0.3",
        "keyed by id: {p}"
    );
    assert_eq!(p["membersById"]["3"]["warmupThreshold"].as_u64(), Some(5));
    assert!(
        p.get("membersByAddress").is_none(),
        "one copy by address: {p}"
    );
    assert_eq!(p["failOpen"].as_bool(), Some(true));
}

#[tokio::test]
async fn refusals_name_the_field_and_store_nothing() {
    let api = api("refusals");
    api.pool().await;
    let cases = [
        (
            json!({"name": "a", "ipAddress": "10.0.0.4:80"}),
            "ipAddress",
            "without a port",
        ),
        (
            json!({"name": "a", "ipAddress": "user@10.0.0.4"}),
            "ipAddress",
            "user information",
        ),
        (
            json!({"name": "a", "ipAddress": "10.0.0.4", "weight": -5}),
            "weight",
            "expected u32",
        ),
        (
            json!({"name": "a", "ipAddress": "10.0.0.4", "weight": 5_000_000}),
            "weight",
            "between 0 and",
        ),
        (
            json!({"name": "a", "ipAddress": "10.0.0.4", "colour": "red"}),
            "colour",
            "unknown field",
        ),
        (json!({"ipAddress": "10.0.0.4"}), "name", "required"),
        (json!({"name": "a"}), "ipAddress", "required"),
    ];
    for (body, field, rule) in cases {
        let (status, v) = api
            .call(Method::POST, "/api/v1/pools/2/members", Some(body.clone()))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{body}: {v}");
        assert_eq!(error_field(&v), field, "{body}: {v}");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(rule) && !message.contains(" at line "),
            "{body}: {message}"
        );
    }
    let bad_check =
        json!({"name": "c", "probe": {"type": "http", "method": "GET", "path": "http://evil/"}});
    let (status, v) = api
        .call(Method::POST, "/api/v1/checks", Some(bad_check))
        .await;
    assert_eq!(
        (status, error_field(&v)),
        (StatusCode::BAD_REQUEST, "probe.path"),
        "{v}"
    );
    assert_eq!(
        api.ok(Method::GET, "/api/v1/pools/2/members", None).await,
        json!([]),
        "nothing was stored"
    );
    assert_eq!(
        api.call(Method::GET, "/api/v1/members/99", None).await.0,
        StatusCode::NOT_FOUND
    );
    assert_eq!(
        api.call(Method::PUT, "/api/v1/pools/99", Some(json!({"name": "x"})))
            .await
            .0,
        StatusCode::NOT_FOUND
    );
    api.ok(
        Method::POST,
        "/api/v1/pools/2/members",
        Some(json!({"name": "a", "ipAddress": "10.0.0.4"})),
    )
    .await;
    let (status, v) = api.call(Method::DELETE, "/api/v1/pools/2", None).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(
        v["error"]["message"],
        "pool 2 is in use: member 3 belongs to it"
    );
    let (status, v) = api
        .call(
            Method::PUT,
            "/api/v1/members/3/health",
            Some(json!({"health": "down"})),
        )
        .await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("active health check")
    );
}

/// Seed 002's hostname members are taken over REST as over gRPC, gslbctl
/// and documents: one rule for every way in.
#[tokio::test]
async fn a_hostname_member_is_created_under_its_pool_and_bad_names_are_refused() {
    let api = api("hostname-member");
    api.pool().await;
    let created = api
        .ok(
            Method::POST,
            "/api/v1/pools/2/members",
            Some(json!({"name": "elb", "ipAddress": "my-lb-123.eu-west-1.elb.amazonaws.com."})),
        )
        .await;
    assert_eq!(
        created["ipAddress"], "my-lb-123.eu-west-1.elb.amazonaws.com",
        "{created}"
    );
    let id = created["id"].as_u64().unwrap();
    let updated = api
        .ok(
            Method::PUT,
            &format!("/api/v1/members/{id}"),
            Some(json!({"ipAddress": "cdn.example.net"})),
        )
        .await;
    assert_eq!(updated["ipAddress"], "cdn.example.net", "{updated}");
    for (text, rule) in [
        ("lb", "fully qualified"),
        ("*.example.com", "wildcard"),
        ("10.0.0", "IP address or a hostname"),
        ("http://lb.example.com", "without a scheme"),
    ] {
        let body = json!({"name": "bad", "ipAddress": text});
        let (status, v) = api
            .call(Method::POST, "/api/v1/pools/2/members", Some(body))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{text}: {v}");
        assert_eq!(error_field(&v), "ipAddress", "{text}: {v}");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(message.contains(rule), "{text}: {message}");
    }
    let members = api.ok(Method::GET, "/api/v1/pools/2/members", None).await;
    assert_eq!(members.as_array().map(Vec::len), Some(1), "{members}");
}

#[tokio::test]
async fn apply_is_all_or_nothing_and_dry_run_changes_nothing() {
    let api = api("apply");
    let ops = |address: &str| {
        json!({"ops": [
            {"op": "create", "kind": "pool", "object": {"id": 0, "name": "p", "check": null, "minHealthy": 1, "protectThreshold": 0.0, "failMode": "open"}},
            {"op": "create", "kind": "member", "object": {"id": 0, "pool": 1, "name": "m", "address": address, "port": 80, "weight": 100,
             "priority": 0, "region": null, "enabled": true, "backup": false, "warmupThreshold": 0, "rewarmAfterDown": false, "kind": "persistent"}}
        ]})
    };
    let mut bad = ops("10.0.0.1");
    bad["ops"][1]["object"]["pool"] = json!(42);
    let (status, v) = api.call(Method::POST, "/api/v1/apply", Some(bad)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        v["error"]["message"],
        "operation 1: pool: pool 42 does not exist"
    );
    assert_eq!(
        api.ok(Method::GET, "/api/v1/pools", None).await,
        json!([]),
        "the first op did not stay"
    );
    let mut dry = ops("10.0.0.1");
    dry["dryRun"] = json!(true);
    assert_eq!(
        api.ok(Method::POST, "/api/v1/apply", Some(dry)).await["applied"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(api.ok(Method::GET, "/api/v1/pools", None).await, json!([]));
    let applied = api
        .ok(Method::POST, "/api/v1/apply", Some(ops("10.0.0.1")))
        .await;
    // Two catalog versions, then the new member's facts (no check: up) take the next.
    assert_eq!(applied["version"].as_u64(), Some(3));
    assert_eq!(
        api.ok(Method::GET, "/api/v1/pools/1/members", None)
            .await
            .as_array()
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn manual_health_ephemeral_members_and_explain() {
    let api = api("manual");
    api.ok(
        Method::POST,
        "/api/v1/checks",
        Some(json!({"name": "none", "probe": {"type": "none"}})),
    )
    .await;
    api.ok(
        Method::POST,
        "/api/v1/pools",
        Some(json!({"name": "static", "check": 1})),
    )
    .await;
    api.ok(
        Method::POST,
        "/api/v1/pools/2/members",
        Some(json!({"name": "a", "ipAddress": "192.0.2.1"})),
    )
    .await;
    api.ok(
        Method::POST,
        "/api/v1/pools/2/members",
        Some(json!({"name": "b", "ipAddress": "192.0.2.2"})),
    )
    .await;
    let s = api
        .ok(
            Method::PUT,
            "/api/v1/members/3/health",
            Some(json!({"health": "down"})),
        )
        .await;
    assert_eq!(
        (s["health"].as_str(), s["manual"].as_str()),
        (Some("down"), Some("down"))
    );
    api.ok(
        Method::POST,
        "/api/v1/zones",
        Some(json!({"apex": "example.test", "soa": {"mname": "ns1.example.test", "rname": "h.example.test", "refresh": 3600, "retry": 600, "expire": 86400, "negativeTtl": 60}, "ns": ["ns1.example.test"], "defaultTtl": 300})),
    )
    .await;
    api.ok(Method::POST, "/api/v1/records", Some(json!({"zone": 5, "name": "www.example.test", "type": "A", "data": {"dynamic": {"steering": "roundrobin", "pools": [2]}}}))).await;
    let e = api
        .ok(
            Method::GET,
            "/api/v1/explain?name=www.example.test&type=A",
            None,
        )
        .await;
    assert_eq!(e["answers"], json!(["192.0.2.2"]), "{e}");
    assert!(
        e["steps"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["step"] == "healthy")
    );
    let log = api.ok(Method::GET, "/api/v1/members/3/logs", None).await;
    assert_eq!(log["entries"][0]["reason"], "manual");

    let (status, eph) = api
        .call(Method::POST, "/api/v1/pools/2/members", Some(json!({"name": "worker", "ipAddress": "192.0.2.9", "ephemeral": {"heartbeatTimeout": "15s", "deleteTimeout": "30s", "expire": true}})))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{eph}");
    let id = eph["id"].as_u64().unwrap();
    // Issue 16 item 14: the interval, left out, is a third of the timeout
    // and shown; given, it must be shorter than the timeout.
    assert_eq!(eph["kind"]["ephemeral"]["heartbeatInterval"], "5s", "{eph}");
    let (status, refused) = api
        .call(Method::POST, "/api/v1/pools/2/members", Some(json!({"name": "late", "ipAddress": "192.0.2.10", "ephemeral": {"heartbeatInterval": "20s", "heartbeatTimeout": "15s", "deleteTimeout": "30s", "expire": true}})))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
    assert_eq!(
        error_field(&refused),
        "kind.ephemeral.heartbeatTimeout",
        "{refused}"
    );
    let (status, given) = api
        .call(Method::POST, "/api/v1/pools/2/members", Some(json!({"name": "paced", "ipAddress": "192.0.2.11", "ephemeral": {"heartbeatInterval": "2s", "heartbeatTimeout": "15s", "deleteTimeout": "30s", "expire": true}})))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{given}");
    let shown = api
        .ok(
            Method::GET,
            &format!("/api/v1/members/{}", given["id"]),
            None,
        )
        .await;
    assert_eq!(
        shown["kind"]["ephemeral"]["heartbeatInterval"], "2s",
        "{shown}"
    );
    // Issue 43 item 5: `{}` (and Nacos's `true`) take seed 004's defaults;
    // its reserved metadata keys are aliases of the policy's fields.
    for (name, address, ephemeral) in [
        ("bare", "192.0.2.12", json!({})),
        ("flag", "192.0.2.16", json!(true)),
    ] {
        let (status, made) = api
            .call(
                Method::POST,
                "/api/v1/pools/2/members",
                Some(json!({"name": name, "ipAddress": address, "ephemeral": ephemeral})),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{made}");
        let p = &made["kind"]["ephemeral"];
        assert_eq!(
            (
                &p["heartbeatInterval"],
                &p["heartbeatTimeout"],
                &p["deleteTimeout"],
                &p["expire"]
            ),
            (&json!("5s"), &json!("15s"), &json!("30s"), &json!(true)),
            "{made}"
        );
    }
    let (status, made) = api
        .call(Method::POST, "/api/v1/pools/2/members", Some(json!({"name": "nacos", "ipAddress": "192.0.2.13", "ephemeral": true,
            "metadata": {"preserved.heart.beat.interval": "3000", "preserved.heart.beat.timeout": 9000, "preserved.ip.delete.timeout": "20000"}})))
        .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let p = &made["kind"]["ephemeral"];
    assert_eq!(
        (
            &p["heartbeatInterval"],
            &p["heartbeatTimeout"],
            &p["deleteTimeout"]
        ),
        (&json!("3s"), &json!("9s"), &json!("20s")),
        "{made}"
    );
    for (body, field) in [
        (
            json!({"name": "m1", "ipAddress": "192.0.2.14", "ephemeral": true, "metadata": {"app": "x"}}),
            "metadata.app",
        ),
        (
            json!({"name": "m2", "ipAddress": "192.0.2.14", "metadata": {"preserved.heart.beat.timeout": "9000"}}),
            "metadata.preserved.heart.beat.timeout",
        ),
        (
            json!({"name": "m3", "ipAddress": "192.0.2.14", "ephemeral": {"heartbeatTimeout": "10s"}, "metadata": {"preserved.heart.beat.timeout": "9000"}}),
            "metadata.preserved.heart.beat.timeout",
        ),
        (
            json!({"name": "m4", "ipAddress": "192.0.2.14", "ephemeral": true, "metadata": {"preserved.heart.beat.timeout": "9s"}}),
            "metadata.preserved.heart.beat.timeout",
        ),
    ] {
        let (status, refused) = api
            .call(Method::POST, "/api/v1/pools/2/members", Some(body))
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{refused}");
        assert_eq!(error_field(&refused), field, "{refused}");
    }
    let (status, same) = api
        .call(Method::POST, "/api/v1/pools/2/members", Some(json!({"name": "agree", "ipAddress": "192.0.2.15", "ephemeral": {"heartbeatTimeout": "9s"}, "metadata": {"preserved.heart.beat.timeout": "9000"}})))
        .await;
    assert_eq!(status, StatusCode::CREATED, "the same value twice: {same}");
    let hb = api
        .ok(
            Method::POST,
            &format!("/api/v1/members/{id}/heartbeat"),
            None,
        )
        .await;
    assert_eq!(hb["health"], "up");
    assert_eq!(
        api.call(Method::POST, "/api/v1/members/3/heartbeat", None)
            .await
            .0,
        StatusCode::CONFLICT,
        "persistent members have no heartbeat"
    );
    assert_eq!(
        api.call(Method::DELETE, &format!("/api/v1/members/{id}"), None)
            .await
            .0,
        StatusCode::NO_CONTENT
    );
}

/// Every catalog read, the health log, explain and a pool's member list are
/// answered from the published view while another thread holds the
/// control core: no read waits for the lock writers and ingest need. A
/// view held across a write keeps showing its own version.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_never_wait_for_the_core() {
    let api = api("reads-free");
    api.pool().await;
    let member = api
        .ok(
            Method::POST,
            "/api/v1/pools/2/members",
            Some(json!({"name": "a", "ipAddress": "192.0.2.1", "port": 80})),
        )
        .await;
    let id = member["id"].as_u64().unwrap();
    let before = api.service.view();

    let (hold, held) = std::sync::mpsc::channel::<()>();
    let (release, wait) = std::sync::mpsc::channel::<()>();
    let service = api.service.clone();
    let holder = std::thread::spawn(move || {
        service.call_blocking(move |_| {
            hold.send(()).unwrap();
            // Held until the reads below are done (or the test gives up).
            let _ = wait.recv_timeout(std::time::Duration::from_secs(60));
        })
    });
    held.recv().unwrap();
    for path in [
        "/api/v1/pools".to_owned(),
        "/api/v1/pools/2".to_owned(),
        "/api/v1/checks".to_owned(),
        "/api/v1/pools/2/members".to_owned(),
        format!("/api/v1/members/{id}"),
        format!("/api/v1/members/{id}/logs"),
    ] {
        let read = api.call(Method::GET, &path, None);
        let (status, body) = tokio::time::timeout(std::time::Duration::from_secs(10), read)
            .await
            .unwrap_or_else(|_| panic!("GET {path} waited for the held core"));
        assert!(status.is_success(), "{path}: {status} {body}");
    }
    release.send(()).unwrap();
    holder.join().unwrap();

    api.ok(
        Method::PUT,
        &format!("/api/v1/members/{id}"),
        Some(json!({"name": "renamed"})),
    )
    .await;
    let after = api.service.view();
    assert!(after.version() > before.version());
    let name = |v: &gslb_aggregator::core::control::View| {
        v.catalog().members.values().next().unwrap().name.clone()
    };
    assert_eq!(name(&before), "a", "an older view does not move");
    assert_eq!(
        name(&after),
        "renamed",
        "a write is visible once acknowledged"
    );
}
