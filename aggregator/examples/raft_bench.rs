//! Raft figures for issue 7 (scripts/bench-raft.sh): three nodes in one
//! process, each serving its Raft gRPC service on loopback, storage in redb
//! with fsync. Prints acknowledged config writes per second (one writer,
//! then 16 concurrent) with latency percentiles, and the time from the
//! leader stopping to another node being leader over ELECTIONS (default 20)
//! stops; each stopped leader is restarted and caught up before the next.
//! A stop here is an in-process shutdown of the node, not a kill -9 of a
//! process.
#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::result_large_err)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use gslb_aggregator::core::catalog::{CatalogState, Object, Op};
use gslb_aggregator::replication::raft::{Command, NodeConfig, ServedNode};
use gslb_shared::{Pool, PoolId};
use openraft::BasicNode;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Commands creating `n` pools, validated against a running catalog.
fn commands(catalog: &mut CatalogState, prefix: &str, n: usize) -> Vec<Command> {
    (0..n)
        .map(|i| {
            let pool = Pool::new(PoolId(0), format!("{prefix}{i}"));
            let change = catalog.apply(Op::Create(Object::Pool(pool))).unwrap();
            Command::catalog(catalog, vec![change])
        })
        .collect()
}

/// Index of a node that is leader (and not node `not`).
async fn leader(nodes: &[ServedNode], not: Option<u64>) -> usize {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if let Some(i) = nodes.iter().position(|n| {
            n.node.raft.metrics().borrow().state.is_leader() && Some(n.node.id) != not
        }) {
            return i;
        }
        assert!(Instant::now() < deadline, "no leader");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

#[tokio::main]
async fn main() {
    let elections: usize = std::env::var("ELECTIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let dir = std::env::temp_dir().join(format!("gslb-raft-bench-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let config = NodeConfig::default();
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let mut nodes = Vec::new();
    for id in 1..=3 {
        nodes.push(ServedNode::start(id, &dir, any, &config).await.unwrap());
    }
    let members: BTreeMap<u64, BasicNode> = nodes
        .iter()
        .map(|n| (n.node.id, BasicNode::new(n.addr.to_string())))
        .collect();
    nodes[0].node.raft.initialize(members).await.unwrap();
    let mut catalog = CatalogState::default();

    // One writer: each write waits for the previous acknowledgement.
    let l = leader(&nodes, None).await;
    let mut latencies = Vec::new();
    let start = Instant::now();
    for command in commands(&mut catalog, "seq", 2_000) {
        let t = Instant::now();
        nodes[l].node.propose(command).await.unwrap();
        latencies.push(t.elapsed());
    }
    let rate = 2_000.0 / start.elapsed().as_secs_f64();
    latencies.sort();
    println!(
        "raft writes, 1 writer:   {rate:.0}/s  p50 {:.2} ms  p99 {:.2} ms  (3 nodes, redb fsync per append)",
        ms(percentile(&latencies, 50.0)),
        ms(percentile(&latencies, 99.0))
    );

    // 16 writers at once (openraft batches their entries).
    let batch = commands(&mut catalog, "par", 4_000);
    let start = Instant::now();
    let mut tasks = Vec::new();
    for chunk in batch.chunks(250) {
        let raft = nodes[l].node.raft.clone();
        let chunk = chunk.to_vec();
        tasks.push(tokio::spawn(async move {
            for command in chunk {
                raft.client_write(command).await.unwrap();
            }
        }));
    }
    for t in tasks {
        t.await.unwrap();
    }
    let rate = 4_000.0 / start.elapsed().as_secs_f64();
    println!("raft writes, 16 writers: {rate:.0}/s");

    // Elections: stop the leader, time until another node leads.
    let mut times = Vec::new();
    for _ in 0..elections {
        let l = leader(&nodes, None).await;
        let old = nodes.remove(l);
        let (id, addr) = (old.node.id, old.addr);
        old.shutdown().await.unwrap();
        let stopped = Instant::now();
        let new = leader(&nodes, Some(id)).await;
        times.push(stopped.elapsed());
        let target = nodes[new].applied();
        nodes.push(ServedNode::start(id, &dir, addr, &config).await.unwrap());
        let back = nodes.last().unwrap();
        let deadline = Instant::now() + Duration::from_secs(20);
        while back.applied() < target {
            assert!(Instant::now() < deadline, "node {id} did not catch up");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
    times.sort();
    println!(
        "election after the leader stops: n={} p50 {:.0} ms  p99 {:.0} ms  max {:.0} ms  (heartbeat {:?}, election timeout {:?}-{:?})",
        times.len(),
        ms(percentile(&times, 50.0)),
        ms(percentile(&times, 99.0)),
        ms(*times.last().unwrap()),
        config.heartbeat,
        config.election.0,
        config.election.1
    );
    for n in nodes {
        n.shutdown().await.unwrap();
    }
    let _ = std::fs::remove_dir_all(&dir);
}
