//! A three-node aggregator cluster on loopback (scripts/bench-cluster.sh),
//! real processes throughout:
//! 1. config writes per second acknowledged by the leader over gRPC, with
//!    1 and with 16 concurrent writers (each write a new TXT record set);
//! 2. election time after kill -9 of the leader, KILLS times (default 20):
//!    from the kill until a survivor reports itself leader with its quorum
//!    confirmed (polled every ~50 ms); the killed node then rejoins;
//! 3. decision to follower edge: three agents and an edge subscribed to a
//!    follower only; a backend is killed and restarted FLIPS times (default
//!    20); each time, from the leader's decision (the `at` of its health-log
//!    transition) to the edge answering accordingly (polled every 1 ms).
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime};

use gslb_e2e::bench::{env, percentile};
use gslb_e2e::catalog::web_pair;
use gslb_e2e::cluster::Cluster;
use gslb_e2e::dns::query_a;
use gslb_e2e::{Agent, Aggregator, Backend, Edge, ZONE, temp_dir, wait_until};
use gslb_proto::pb;

fn summary(what: &str, mut ms: Vec<u64>) {
    if ms.is_empty() {
        return;
    }
    ms.sort_unstable();
    println!(
        "{what}: n={} p50 {} ms, p99 {} ms, max {} ms",
        ms.len(),
        percentile(&ms, 50.0),
        percentile(&ms, 99.0),
        ms[ms.len() - 1]
    );
}

fn txt(n: u64) -> pb::RecordSet {
    pb::RecordSet {
        zone_id: 1,
        name: format!("w{n}.example.test"),
        r#type: pb::RecordType::Txt as i32,
        ttl: 60,
        data: Some(pb::record_set::Data::StaticData(pb::StaticData {
            rdata: vec![pb::Rdata {
                data: Some(pb::rdata::Data::Txt(pb::Txt {
                    strings: vec![format!("write {n}")],
                })),
            }],
        })),
        ..Default::default()
    }
}

/// Acknowledged writes per second with `writers` concurrent clients.
async fn writes_per_second(url: &str, token: &str, writers: u64, secs: u64) -> (f64, Vec<u64>) {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let done = Arc::new(AtomicU64::new(0));
    let deadline = Instant::now() + Duration::from_secs(secs);
    let mut tasks = Vec::new();
    for _ in 0..writers {
        let mut client = gslb_proto::link::admin_client(url, token).await.unwrap();
        let done = done.clone();
        tasks.push(tokio::spawn(async move {
            let mut latencies = Vec::new();
            while Instant::now() < deadline {
                let n = NEXT.fetch_add(1, Ordering::Relaxed);
                let start = Instant::now();
                client.create_record_set(txt(n)).await.unwrap();
                latencies.push(start.elapsed().as_micros() as u64);
                done.fetch_add(1, Ordering::Relaxed);
            }
            latencies
        }));
    }
    let start = Instant::now();
    let mut latencies = Vec::new();
    for t in tasks {
        latencies.extend(t.await.unwrap());
    }
    let rate = done.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64();
    (rate, latencies)
}

/// Milliseconds since the Unix epoch.
fn epoch_ms() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// The `at` of the newest health-log entry of `target` on `leader`.
fn last_decision(leader: &Aggregator) -> u64 {
    let id = leader.member("web", "web-1")["id"]
        .as_u64()
        .unwrap()
        .to_string();
    let log = leader.ctl_json(&["logs", &id, "--limit", "1"]);
    let entry = &log.as_array().unwrap()[0];
    entry["atMs"]
        .as_u64()
        .unwrap_or_else(|| panic!("no decision time in {entry}"))
}

/// Poll the edge every 1 ms until `target` is (or is no longer) answered;
/// the wall-clock time then, ms since the epoch.
fn answered_at(dns: SocketAddr, target: Ipv4Addr, answered: bool) -> u64 {
    let start = Instant::now();
    loop {
        if let Ok(got) = query_a(dns, "www.example.test", Duration::from_millis(200))
            && got.contains(&target) == answered
        {
            return epoch_ms();
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "edge unchanged for 30 s"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn main() {
    let kills = env("KILLS", 20);
    let flips = env("FLIPS", 20);
    let dir = temp_dir("bench-cluster");
    let mut cluster = Cluster::start(&dir, 12, 3, &[]);
    let leader = cluster.leader(30);
    cluster.node(leader).apply(ZONE, &dir);

    let runtime = tokio::runtime::Runtime::new().unwrap();
    let url = cluster.node(leader).url();
    for writers in [1, 16] {
        let (rate, mut lat) =
            runtime.block_on(writes_per_second(&url, &cluster.token(), writers, 5));
        lat.sort_unstable();
        println!(
            "config writes, {writers} writer(s): {rate:.0} acknowledged/s, latency p50 {:.1} ms, p99 {:.1} ms",
            percentile(&lat, 50.0) as f64 / 1000.0,
            percentile(&lat, 99.0) as f64 / 1000.0
        );
    }

    let mut elections = Vec::new();
    for _ in 0..kills {
        let leader = cluster.leader(30);
        let applied = cluster.converged(0, 30);
        let start = Instant::now();
        cluster.kill(leader);
        let next = cluster.leader(30);
        elections.push(start.elapsed().as_millis() as u64);
        assert_ne!(next, leader);
        cluster.start_node(leader);
        cluster.converged(applied, 60);
    }
    summary("election after kill -9 of the leader", elections);

    let target = Backend::start(None, "127.0.12.101:0");
    let kept = Backend::start(None, "127.0.12.102:0");
    let leader = cluster.leader(30);
    // The write phase's records are left out: pruned.
    let version = cluster
        .node(leader)
        .apply_pruning(&web_pair(target.addr, kept.addr), &dir);
    let urls = cluster.urls();
    let _agents: Vec<Agent> = [("fra1", "eu"), ("iad1", "us"), ("sin1", "ap")]
        .iter()
        .map(|(loc, region)| Agent::start(None, loc, region, &urls))
        .collect();
    let follower = cluster
        .running()
        .into_iter()
        .find(|id| *id != leader)
        .unwrap();
    let edge_url = cluster.node(follower).url();
    let edge = Edge::start(
        None,
        Some(&edge_url),
        &dir.join("cache"),
        "127.0.0.1:0",
        &[],
    );
    let dns = edge.dns();
    edge.wait_version(version);
    let l = cluster.node(leader);
    wait_until(30, "both up", || {
        l.health("web", "web-1") == "up" && l.health("web", "web-2") == "up"
    });
    let mut target = target;
    let ip: Ipv4Addr = "127.0.12.101".parse().unwrap();
    let mut down = Vec::new();
    let mut up = Vec::new();
    for _ in 0..flips {
        target.kill();
        let seen = answered_at(dns, ip, false);
        down.push(seen.saturating_sub(last_decision(l)));
        target.restart();
        let seen = answered_at(dns, ip, true);
        up.push(seen.saturating_sub(last_decision(l)));
    }
    summary("leader decision (down) to a follower's edge", down);
    summary("leader decision (up) to a follower's edge", up);
    drop(cluster);
    let _ = std::fs::remove_dir_all(&dir);
}
