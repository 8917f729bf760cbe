//! Notification latency (run by `scripts/bench-notify.sh`): from a health
//! transition (its time in the event, the deciding node's clock) to the
//! webhook's arrival at a loopback receiver (the same machine's clock), over
//! FLIPS manual flips of one member (default 200), each sent once the last
//! arrived; p50, p99 and the worst. On a single node (the event stored
//! with the decision in one fsync) and on a 3-node Raft cluster (the event
//! replicated with the decision, then the delivery position replicated).
#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)]

use std::time::{Duration, Instant};

use gslb_e2e::bench::{env, percentile};
use gslb_e2e::catalog::{ZONE, member, pool};
use gslb_e2e::cluster::Cluster;
use gslb_e2e::receiver::Receiver;
use gslb_e2e::{Aggregator, temp_dir, wait_until};

fn document() -> String {
    let at = "127.0.26.1:80".parse().unwrap();
    format!(
        "{ZONE}{}",
        pool("flip", None, "", &[member("flipper", at, "")])
    )
}

fn measure(agg: &Aggregator, flips: usize, label: &str, dir: &std::path::Path) {
    agg.apply(&document(), dir);
    let id = agg.member("flip", "flipper")["id"].as_u64().unwrap();
    agg.ctl(&["health", &id.to_string(), "up"]);
    let receiver = Receiver::start("127.0.0.1:0", 0);
    let made = agg.ctl_json(&[
        "notifications",
        "create",
        label,
        "--kind",
        "webhook",
        "--url",
        &receiver.url("/hook"),
    ]);
    assert!(made["secret"].is_string());
    wait_until(20, "the target positioned", || {
        agg.ctl_json(&["notifications", "status"])["targets"][0]["positioned"] == true
    });
    let mut lags = Vec::with_capacity(flips);
    for i in 0..flips {
        let health = if i % 2 == 0 { "down" } else { "up" };
        let (code, body) = agg.rest(
            "PUT",
            &format!("/api/v1/members/{id}/health"),
            &format!(r#"{{"health": "{health}"}}"#),
        );
        assert_eq!(code, 200, "{body}");
        let deadline = Instant::now() + Duration::from_secs(10);
        let got = loop {
            let all = receiver.unique();
            if all.len() > i {
                break all[i].clone();
            }
            assert!(Instant::now() < deadline, "flip {i} not delivered in 10 s");
            std::thread::sleep(Duration::from_micros(200));
        };
        let at = got.json()["atMs"].as_u64().unwrap();
        lags.push(got.at_ms.saturating_sub(at));
    }
    lags.sort_unstable();
    println!(
        "notify {label} transition_to_webhook flips={flips} p50_ms={} p99_ms={} max_ms={}",
        percentile(&lags, 50.0),
        percentile(&lags, 99.0),
        lags[lags.len() - 1]
    );
}

fn main() {
    let flips = env("FLIPS", 200);
    let dir = temp_dir("bench-notify");
    let single = Aggregator::start(&dir.join("single"));
    measure(&single, flips, "single", &dir);
    drop(single);
    let cluster = Cluster::start(&dir.join("cluster"), 26, 3, &["--startup-window", "1s"]);
    let leader = cluster.leader(30);
    measure(cluster.node(leader), flips, "cluster", &dir);
}
