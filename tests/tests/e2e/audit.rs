//! The audit log and history through the real aggregator: every REST
//! route that writes leaves a record naming its caller (a table over
//! `api::rest::routes()`, so a new route without one fails here), gRPC
//! writes too, secrets never show, no record of an acknowledged write is
//! lost to kill -9, and a rollback of a 1,000-change apply gives the
//! earlier catalog back exactly.

use std::collections::BTreeMap;
use std::net::SocketAddr;

use gslb_e2e::pki::create_token;
use gslb_e2e::{Aggregator, ZONE, temp_dir};
use serde_json::{Value, json};

use super::routes::{self, call, created};

/// The newest audit record.
fn newest(http: SocketAddr, token: &str) -> Value {
    let (code, v) = call(http, token, "GET", "/api/v1/audit?limit=1", "");
    assert_eq!(code, 200, "{v}");
    v["records"][0].clone()
}

/// A second admin token, `name`, in `agg`'s tokens file.
fn token(agg: &Aggregator, dir: &std::path::Path, name: &str) -> String {
    let _ = agg;
    create_token(&dir.join("tokens.json"), name, "admin", None)
}

#[test]
fn every_rest_route_that_writes_is_audited_with_its_caller() {
    let dir = temp_dir("audit-routes");
    let agg = Aggregator::start(&dir);
    let t = token(&agg, &dir, "alice");
    let h = agg.http;
    let fixture = routes::fixture(h, &t);
    let recipes = &fixture.recipes;
    // (method, path as routed) -> the request made, and its body. Routes
    // that write and take no record say why here.
    let exempt: BTreeMap<(&str, &str), &str> = BTreeMap::from([(
        ("POST", "/api/v1/members/{id}/heartbeat"),
        "an ephemeral member's liveness, not a change: heartbeats arrive every few seconds per member",
    )]);
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
