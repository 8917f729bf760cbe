//! Notifications end to end: targets written through gslbctl and REST, a
//! scripted sequence of manual health flips, and a loopback receiver that
//! records every POST. Every transition arrives, in order and signed; a
//! receiver answering 500 gets retries and the failures show in
//! `gslbctl notifications status`; a URL reaching a metadata address or
//! the aggregator itself is refused at the API; and a cluster leader
//! killed with SIGKILL mid-sequence loses no event (the receiver
//! de-duplicates by idempotency key).

use gslb_e2e::catalog::{ZONE, a_record, member, pool};
use gslb_e2e::cluster::Cluster;
use gslb_e2e::receiver::{Received, Receiver};
use gslb_e2e::{Aggregator, temp_dir, wait_until};
use serde_json::Value;

/// Pool `web` (no check: health is set by hand) with `web-1` and `web-2`,
/// and pool `api` with `api-1`, both answering in `example.test`.
fn config() -> String {
    let at = |n: u8| format!("127.0.25.{n}:80").parse().unwrap();
    format!(
        "{ZONE}{}{}{}{}",
        pool(
            "web",
            None,
            "",
            &[member("web-1", at(1), ""), member("web-2", at(2), "")]
        ),
        pool("api", None, "", &[member("api-1", at(3), "")]),
        a_record("www.example.test", &["web"]),
        a_record("api.example.test", &["api"]),
    )
}

/// The flips: (member, state), each acknowledged before the next.
const FLIPS: [(&str, &str); 8] = [
    ("web-1", "down"),
    ("web-2", "down"),
    ("web-2", "up"),
    ("web-1", "up"),
    ("web-1", "down"),
    ("web-1", "up"),
    ("web-2", "down"),
    ("web-2", "up"),
];

/// The member events the flips make: each member's first move is from
/// no decision, so its first `up` (none here) would not count.
fn expected_member_events(flips: &[(&str, &str)]) -> Vec<(String, String)> {
    flips
        .iter()
        .map(|(m, s)| {
            let kind = if *s == "down" {
                "member_down"
            } else {
                "member_up"
            };
            (m.to_string(), kind.to_owned())
        })
        .collect()
}

/// (member name, event type) of each member event received, in order.
fn member_events(received: &[Received]) -> Vec<(String, String)> {
    received
        .iter()
        .map(Received::json)
        .filter(|v| v["subject"]["type"] == "member")
        .map(|v| {
            (
                v["subject"]["name"].as_str().unwrap_or("").to_owned(),
                v["type"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect()
}

/// Bring every member up first (their first decision is no news).
fn all_up(agg: &Aggregator) {
    for (pool, name) in [("web", "web-1"), ("web", "web-2"), ("api", "api-1")] {
        let id = agg.member(pool, name)["id"].as_u64().unwrap().to_string();
        agg.ctl(&["health", &id, "up"]);
    }
}

/// A single node holding [`config`], every member up.
fn started(name: &str) -> (std::path::PathBuf, Aggregator) {
    let dir = temp_dir(name);
    let agg = Aggregator::start(&dir);
    agg.apply(&config(), &dir);
    all_up(&agg);
    (dir, agg)
}

fn create_webhook(agg: &Aggregator, name: &str, url: &str, extra: &[&str]) -> Vec<u8> {
    let mut args = vec![
        "notifications",
        "create",
        name,
        "--kind",
        "webhook",
        "--url",
        url,
    ];
    args.extend_from_slice(extra);
    let made = agg.ctl_json(&args);
    let secret = made["secret"].as_str().expect("a generated signing key");
    gslb_shared::Secret::from_base64(secret).unwrap().0
}

#[test]
fn every_flip_arrives_in_order_signed_and_a_denied_url_is_refused() {
    let (_dir, agg) = started("notify-flips");

    // Denied destinations are refused at the API, naming the field.
    for url in [
        "http://169.254.169.254/latest/meta-data".to_owned(),
        "http://[fe80::1]:8080/hook".to_owned(),
        // Issue 43 item 21: the embedded IPv4 forms, and the broadcast.
        "http://[::a9fe:a9fe]/".to_owned(),
        "http://[64:ff9b::a9fe:a9fe]/".to_owned(),
        "http://255.255.255.255/".to_owned(),
        format!("http://{}/api/v1/zones", agg.http),
        format!("http://{}/", agg.grpc),
    ] {
        let (ok, out, err) = agg.try_ctl(&[
            "notifications",
            "create",
            "bad",
            "--kind",
            "webhook",
            "--url",
            &url,
        ]);
        assert!(!ok, "{url} accepted: {out}");
        assert!(
            err.contains("url") && err.contains("denied"),
            "{url}: {err}"
        );
    }
    let (code, body) = agg.rest(
        "POST",
        "/api/v1/notifiers",
        r#"{"name": "bad", "kind": "slack", "url": "http://169.254.169.254/"}"#,
    );
    assert_eq!(code, 400, "{body}");
    assert!(body.to_string().contains("url"), "{body}");
    let (ok, _, err) = agg.try_ctl(&[
        "notifications",
        "create",
        "bad",
        "--kind",
        "webhook",
        "--url",
        "http://127.0.0.1:9/",
        "--pool",
        "nope",
    ]);
    assert!(!ok && err.contains("filter.pools[0]"), "{err}");
    assert_eq!(
        agg.ctl_json(&["notifications", "list"]),
        Value::Array(vec![])
    );

    let receiver = Receiver::start("127.0.0.1:0", 0);
    let secret = create_webhook(&agg, "ops", &receiver.url("/hook"), &[]);
    // A second target that wants only the api pool gets nothing here.
    let quiet = Receiver::start("127.0.0.1:0", 0);
    create_webhook(&agg, "api-team", &quiet.url("/hook"), &["--pool", "api"]);
    let listed = agg.ctl_json(&["notifications", "list"]);
    assert_eq!(listed.as_array().unwrap().len(), 2);
    assert!(listed.to_string().find("secret").is_none(), "{listed}");
    // Views hide the URL's path (it may hold a token); a merge-patch that
    // does not name the URL keeps the real one (the flips below arrive).
    let ops = (listed.as_array().unwrap().iter())
        .find(|t| t["name"] == "ops")
        .unwrap();
    assert_eq!(ops["url"], format!("http://{}/redacted", receiver.addr));
    let (code, _) = agg.rest("GET", "/api/v1/notifiers", "");
    assert_eq!(code, 200);
    let path = format!("/api/v1/notifiers/{}", ops["id"]);
    let (code, body) = agg.rest("PUT", &path, r#"{"filter": {"events": []}}"#);
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["url"], ops["url"], "{body}");
    // A target only hears of what happens after it exists.
    wait_until(20, "both targets positioned", || {
        let s = agg.ctl_json(&["notifications", "status"]);
        (s["targets"].as_array().unwrap().iter()).all(|t| t["positioned"] == true)
    });

    for (name, state) in FLIPS {
        let id = agg.member("web", name)["id"].as_u64().unwrap().to_string();
        agg.ctl(&["health", &id, state]);
    }
    let want = expected_member_events(&FLIPS);
    wait_until(30, "every member event delivered", || {
        member_events(&receiver.unique()).len() >= want.len()
    });
    let received = receiver.unique();
    assert_eq!(member_events(&received), want);
    for r in &received {
        assert!(r.signed_by(&secret), "bad signature on {}", r.json());
        assert!(!r.signed_by(b"another key of sixteen bytes"));
        let body = r.json();
        assert_eq!(r.header("idempotency-key"), body["id"].as_str(), "{body}");
        assert_eq!(r.header("x-gslb-event"), body["type"].as_str());
    }
    // Both web members down took the pool out and back, once each time.
    let pool_events: Vec<String> = received
        .iter()
        .map(Received::json)
        .filter(|v| v["subject"]["type"] == "pool" && v["subject"]["name"] == "web")
        .filter(|v| v["type"] == "pool_not_eligible" || v["type"] == "pool_eligible")
        .map(|v| v["type"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(pool_events, ["pool_not_eligible", "pool_eligible"]);
    assert!(
        quiet.received().is_empty(),
        "the api-only target heard of web"
    );
    let status = agg.ctl(&["notifications", "status"]);
    assert!(
        status.contains("ops") && status.contains("api-team"),
        "{status}"
    );
}

#[test]
fn a_receiver_answering_500_gets_retries_and_the_failures_show() {
    let (_dir, agg) = started("notify-retry");
    let receiver = Receiver::start("127.0.0.1:0", 3);
    create_webhook(
        &agg,
        "ops",
        &receiver.url("/hook"),
        &["--event", "member_down"],
    );
    wait_until(20, "the target positioned", || {
        agg.ctl_json(&["notifications", "status"])["targets"][0]["positioned"] == true
    });
    let id = agg.member("web", "web-1")["id"]
        .as_u64()
        .unwrap()
        .to_string();
    agg.ctl(&["health", &id, "down"]);
    wait_until(20, "a failure shown", || {
        let s = agg.ctl_json(&["notifications", "status"]);
        s["targets"][0]["failures"].as_u64() >= Some(1)
            && s["targets"][0]["lastError"]
                .as_str()
                .unwrap_or("")
                .contains("500")
    });
    let table = agg.ctl(&["notifications", "status"]);
    assert!(table.contains("HTTP 500"), "{table}");
    // Issue 43 item 22: the receiver's body is counted, never shown or
    // logged (it could be an internal service's answer).
    let error = agg.ctl_json(&["notifications", "status"])["targets"][0]["lastError"].to_string();
    assert!(error.contains("a body of 45 bytes"), "{error}");
    let secret = gslb_e2e::receiver::FAILURE_BODY;
    assert!(
        !table.contains(secret) && !error.contains(secret),
        "{table}"
    );
    assert!(!agg.proc.stderr.contains("hunter2"), "the body was logged");
    // 1 s, 2 s, 4 s: the fourth try lands.
    wait_until(30, "delivered after retries", || {
        !receiver.unique().is_empty()
    });
    let all = receiver.received();
    assert_eq!(all.len(), 4, "three 500s and one success");
    let keys: Vec<_> = all.iter().map(|r| r.header("idempotency-key")).collect();
    assert!(
        keys.iter().all(|k| *k == keys[0]),
        "one event, one key: {keys:?}"
    );
    wait_until(10, "the status catches up", || {
        let s = agg.ctl_json(&["notifications", "status"]);
        s["targets"][0]["delivered"] == 1 && s["targets"][0]["failures"] == 3
    });
    // And the metrics say the same (the queue's gauges are set by the
    // sender after the status: polled too).
    let metrics = [
        ("gslb_aggregator_notification_failures_total{", 3),
        ("gslb_aggregator_notification_delivered_total{", 1),
        ("gslb_aggregator_notification_retrying{", 0),
        ("gslb_aggregator_notification_pending_events{", 0),
    ];
    wait_until(10, "the metrics catch up", || {
        metrics
            .iter()
            .all(|&(name, value)| agg.metric(name) == value)
    });
}

/// Issue 43 item 12: a target that keeps failing is tried on its back-off
/// (1 s, 2 s, 4 s, ...) however much the catalog changes meanwhile, and is
/// logged once, not at every try.
#[test]
fn a_failing_target_backs_off_and_is_logged_once() {
    let (dir, agg) = started("notify-backoff");
    let receiver = Receiver::start("127.0.0.1:0", usize::MAX);
    create_webhook(
        &agg,
        "ops",
        &receiver.url("/hook"),
        &["--event", "member_down"],
    );
    wait_until(20, "the target positioned", || {
        agg.ctl_json(&["notifications", "status"])["targets"][0]["positioned"] == true
    });
    let id = agg.member("web", "web-1")["id"]
        .as_u64()
        .unwrap()
        .to_string();
    agg.ctl(&["health", &id, "down"]);
    wait_until(20, "the first failure", || !receiver.received().is_empty());
    // Catalog writes while it fails: none of them may wake a retry.
    let mut writes = 0;
    wait_until(30, "three tries", || {
        if writes < 40 {
            let (code, body) = agg.rest(
                "POST",
                "/api/v1/pools",
                &format!(r#"{{"name": "churn-{writes}"}}"#),
            );
            assert_eq!(code, 201, "{body}");
            writes += 1;
        }
        receiver.received().len() >= 3
    });
    // Tries 1 to 3 are >= 0.8 s + 1.6 s apart: no fourth try can have come
    // yet, let alone thousands.
    let tries = receiver.received();
    assert!(tries.len() <= 4, "{} tries", tries.len());
    let gaps: Vec<u64> = tries.windows(2).map(|w| w[1].at_ms - w[0].at_ms).collect();
    assert!(gaps.iter().all(|g| *g >= 750), "{gaps:?}");
    let status = agg.ctl_json(&["notifications", "status"]);
    assert!(
        status["targets"][0]["nextAttemptMs"].as_u64() > Some(0),
        "{status}"
    );
    let warned = agg.proc.stderr.count("notification not delivered");
    assert_eq!(warned, 1, "{:?}", agg.proc.stderr.all());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_leader_killed_mid_sequence_loses_no_event() {
    let dir = temp_dir("notify-cluster");
    let mut cluster = Cluster::start(&dir, 25, 3, &["--startup-window", "2s"]);
    let leader = cluster.leader(30);
    cluster.node(leader).apply(&config(), &dir);
    all_up(cluster.node(leader));
    // Refusing at first, so the leader dies with events undelivered.
    let receiver = Receiver::start("127.0.0.1:0", usize::MAX);
    create_webhook(
        cluster.node(leader),
        "ops",
        &receiver.url("/hook"),
        &["--event", "member_down", "--event", "member_up"],
    );
    wait_until(20, "the target positioned", || {
        cluster.node(leader).ctl_json(&["notifications", "status"])["targets"][0]["positioned"]
            == true
    });
    let flip = |cluster: &Cluster, at: u64, name: &str, state: &str| {
        let id = cluster.node(at).member("web", name)["id"]
            .as_u64()
            .unwrap()
            .to_string();
        cluster.node(at).ctl(&["health", &id, state]);
    };
    let (first, rest) = FLIPS.split_at(4);
    for (name, state) in first {
        flip(&cluster, leader, name, state);
    }
    wait_until(20, "the leader failing to deliver", || {
        cluster.node(leader).ctl_json(&["notifications", "status"])["targets"][0]["failures"]
            .as_u64()
            >= Some(1)
    });
    // Killed with the first flips' events in the outbox, undelivered.
    cluster.kill(leader);
    receiver.fail_next(0);
    let next = cluster.leader(30);
    assert_ne!(next, leader);
    for (name, state) in rest {
        flip(&cluster, next, name, state);
    }
    let want = expected_member_events(&FLIPS);
    wait_until(60, "every member event delivered once per key", || {
        member_events(&receiver.unique()).len() >= want.len()
    });
    assert_eq!(member_events(&receiver.unique()), want);
    let status = cluster.node(next).ctl_json(&["notifications", "status"]);
    assert_eq!(status["delivering"], true, "{status}");
}
