//! Key rollovers in accelerated time (TTLs of 1–2 s, a 1 s propagation
//! delay and parent DS TTL), while unbound validates answers throughout:
//! a ZSK by pre-publication, run by the aggregator alone once started, and
//! a KSK by double DS, where the operator confirms the new DS. unbound's
//! trust anchors stand for the parent: it is started again with both DS
//! when the operator would publish the new one, and with the new one alone
//! after the swap, as a resolver sees the parent's DS set change once its
//! TTL passes. Not one answer may fail validation.

use std::net::SocketAddr;
use std::path::Path;
use std::time::{Duration, Instant};

use gslb_e2e::cluster::Cluster;
use gslb_e2e::dns::{dig, rcode};
use gslb_e2e::mesh::{Aggregator, Edge};
use gslb_e2e::unbound::{Unbound, UnboundConf};
use gslb_e2e::wait::temp_dir;
use serde_json::Value;

const CONFIG: &str = r#"
[[zone]]
apex = "example.test"
ns = ["ns1.example.test"]
defaultTtl = 2
[zone.soa]
mname = "ns1.example.test"
rname = "hostmaster.example.test"
refresh = 3600
retry = 600
expire = 604800
negativeTtl = 1
[zone.dnssec]
scheme = "ksk-zsk"
signatureValidity = 300
propagationDelay = 1
parentDsTtl = 1

[[record]]
zone = "example.test"
name = "www.example.test"
type = "A"
ttl = 1
static = [{ a = "127.0.0.10" }]
"#;

fn unbound(dir: &Path, edge: SocketAddr, anchors: &[String]) -> Unbound {
    Unbound::start(
        dir,
        &UnboundConf {
            stubs: vec![("example.test".into(), edge)],
            ready: "www.example.test".into(),
            trust_anchors: anchors.to_vec(),
            ..Default::default()
        },
    )
}

/// Ask unbound for a name that exists and one that does not, with DO,
/// every 100 ms until `done` (at most `secs`): every answer must carry AD.
/// The number of questions asked.
fn validating(u: SocketAddr, secs: u64, what: &str, mut done: impl FnMut() -> bool) -> usize {
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut asked = 0;
    loop {
        for name in ["www.example.test", "nothere.example.test"] {
            let reply = dig(None, u, &[name, "A", "+dnssec"]);
            let flags = reply
                .lines()
                .find(|l| l.contains(";; flags:"))
                .unwrap_or_default();
            assert!(
                flags.contains(" ad") && ["NOERROR", "NXDOMAIN"].contains(&rcode(&reply)),
                "{what}: answer {asked} to {name} failed validation:\n{reply}"
            );
            asked += 1;
        }
        if done() {
            return asked;
        }
        assert!(Instant::now() < deadline, "{what}: not done in {secs} s");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn status(agg: &Aggregator) -> Value {
    agg.ctl_json(&["dnssec", "status", "example.test"])
}

/// The tag of the active key with `role`, and whether a rollover runs.
fn active(agg: &Aggregator, role: &str) -> (u64, bool) {
    let s = status(agg);
    let keys = s["keys"].as_array().unwrap().clone();
    let tag = keys
        .iter()
        .find(|k| k["role"] == role && k["state"] == "active")
        .map(|k| k["tag"].as_u64().unwrap())
        .unwrap();
    (tag, keys.iter().any(|k| k["state"] != "active"))
}

#[test]
fn zsk_and_ksk_rollovers_never_break_validation() {
    let dir = temp_dir("rollover");
    let agg = Aggregator::start(&dir.join("store"));
    let version = agg.apply(CONFIG, &dir);
    let url = agg.url();
    let edge = Edge::start(None, Some(&url), &dir.join("cache"), "127.0.0.1:0", &[]);
    edge.wait_version(version);
    let old_ds = agg.ctl(&["dnssec", "ds", "example.test"]).trim().to_owned();
    let first = dir.join("first");
    std::fs::create_dir_all(&first).unwrap();
    let u = unbound(&first, edge.dns(), std::slice::from_ref(&old_ds));
    let mut asked = validating(u.addr, 10, "before", || true);

    // ZSK: started by the operator, finished by the aggregator.
    let (zsk, _) = active(&agg, "zsk");
    let out = agg.ctl(&["dnssec", "rollover", "example.test", "--role", "zsk"]);
    assert!(out.contains("new ZSK is published"), "{out}");
    let (ok, _, err) = agg.try_ctl(&["dnssec", "rollover", "example.test", "--role", "ksk"]);
    assert!(!ok && err.contains("a rollover is running"), "{err}");
    asked += validating(u.addr, 60, "zsk rollover", || {
        let (now, running) = active(&agg, "zsk");
        now != zsk && !running
    });

    // KSK: the new DS is published "at the parent" (unbound's anchors),
    // confirmed, then the keys swap and the old DS goes.
    let (ksk, _) = active(&agg, "ksk");
    let out = agg.ctl(&["dnssec", "rollover", "example.test", "--role", "ksk"]);
    assert!(out.contains("gslbctl dnssec ds-seen"), "{out}");
    let both = agg.ctl(&["dnssec", "ds", "example.test"]);
    let both: Vec<String> = both.lines().map(str::to_owned).collect();
    assert_eq!(both.len(), 2, "{both:?}");
    let status_now = status(&agg);
    assert!(
        status_now["next"].as_str().unwrap().contains("ds-seen"),
        "{status_now}"
    );
    drop(u);
    let second = dir.join("second");
    std::fs::create_dir_all(&second).unwrap();
    let u = unbound(&second, edge.dns(), &both);
    asked += validating(u.addr, 10, "both DS", || true);
    // Confirmed over REST this time (gslbctl dnssec ds-seen does the same).
    let (_, zones) = agg.rest("GET", "/api/v1/zones", "");
    let id = zones[0]["id"].as_u64().unwrap();
    let path = format!("/api/v1/zones/{id}/dnssec/rollover");
    let (code, body) = agg.rest("POST", &path, r#"{"role": "rsa"}"#);
    assert!(
        code == 400 && body.to_string().contains("role"),
        "{code} {body}"
    );
    let (code, body) = agg.rest("POST", &path, r#"{"role": "zsk"}"#);
    assert!(
        code == 400 && body.to_string().contains("a rollover is running"),
        "{code} {body}"
    );
    let (code, body) = agg.rest("POST", &format!("/api/v1/zones/{id}/dnssec/ds-seen"), "");
    assert_eq!(code, 200, "{body}");
    assert!(!body.to_string().contains("privateKey"), "{body}");
    asked += validating(u.addr, 60, "ksk rollover", || {
        let (now, running) = active(&agg, "ksk");
        now != ksk && !running
    });
    let new_ds = agg.ctl(&["dnssec", "ds", "example.test"]).trim().to_owned();
    assert_eq!(new_ds.lines().count(), 1, "{new_ds}");
    assert_ne!(new_ds, old_ds);
    drop(u);
    let third = dir.join("third");
    std::fs::create_dir_all(&third).unwrap();
    let u = unbound(&third, edge.dns(), std::slice::from_ref(&new_ds));
    asked += validating(u.addr, 10, "new DS alone", || true);
    assert!(asked > 40, "{asked} answers checked");
}

#[test]
fn a_rollover_goes_on_after_the_leader_is_killed_and_validation_holds() {
    let dir = temp_dir("rollover-leader");
    let mut cluster = Cluster::start(&dir, 13, 3, &[]);
    let leader = cluster.leader(30);
    let version = cluster.node(leader).apply(CONFIG, &dir);
    let edge = Edge::start(
        None,
        Some(&cluster.urls()),
        &dir.join("cache"),
        "127.0.0.1:0",
        &[],
    );
    edge.wait_version(version);
    let ds = cluster
        .node(leader)
        .ctl(&["dnssec", "ds", "example.test"])
        .trim()
        .to_owned();
    let u = unbound(&dir, edge.dns(), std::slice::from_ref(&ds));
    validating(u.addr, 10, "before", || true);
    let (zsk, _) = active(cluster.node(leader), "zsk");
    cluster
        .node(leader)
        .ctl(&["dnssec", "rollover", "example.test", "--role", "zsk"]);
    // kill -9 the leader while the new key is only published.
    cluster.kill(leader);
    let asked = validating(u.addr, 90, "zsk rollover across a leader change", || {
        let Some(node) = cluster.running().into_iter().next() else {
            return false;
        };
        let (ok, out, _) =
            cluster
                .node(node)
                .try_ctl(&["-o", "json", "dnssec", "status", "example.test"]);
        let Ok(s) = serde_json::from_str::<Value>(&out) else {
            return false;
        };
        let keys = s["keys"].as_array().cloned().unwrap_or_default();
        ok && keys.len() == 2
            && keys.iter().all(|k| k["state"] == "active")
            && keys
                .iter()
                .any(|k| k["role"] == "zsk" && k["tag"].as_u64() != Some(zsk))
    });
    assert!(asked > 4, "{asked}");
}
