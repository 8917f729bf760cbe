//! Three Raft nodes in one process, each behind its own gRPC server on
//! loopback: a stranger's message refused, replication of commands to every state machine, a new leader
//! after the leader stops, no acknowledged write lost, and the
//! old leader, back after the log it missed was compacted, catching up
//! from a snapshot.
#![allow(missing_docs, clippy::unwrap_used, clippy::result_large_err)]

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use gslb_aggregator::core::catalog::{CatalogState, Object, Op};
use gslb_aggregator::core::store::Store;
use gslb_aggregator::replication::raft::{Command, NodeConfig, ServedNode};
use gslb_proto::pb::RaftPayload;
use gslb_proto::pb::raft_service_client::RaftServiceClient;
use gslb_shared::{Pool, PoolId};
use openraft::BasicNode;

/// Test-side view of a served node.
trait Pools {
    fn pools(&self) -> usize;
}

impl Pools for ServedNode {
    fn pools(&self) -> usize {
        self.node
            .state
            .store()
            .load()
            .unwrap()
            .state
            .catalog
            .pools
            .len()
    }
}

async fn start(
    id: u64,
    dir: &std::path::Path,
    addr: SocketAddr,
    config: &NodeConfig,
) -> ServedNode {
    ServedNode::start(id, dir, addr, config).await.unwrap()
}

fn create_pool(state: &mut CatalogState, name: &str) -> Command {
    let change = state
        .apply(Op::Create(Object::Pool(Pool::new(PoolId(0), name))))
        .unwrap();
    Command::catalog(state, vec![change])
}

/// Create pools `p{i}` for `range` through `leader`, one acknowledged
/// write each; returns the last log index.
async fn write_pools(
    nodes: &[ServedNode],
    leader: u64,
    catalog: &mut CatalogState,
    range: std::ops::Range<u32>,
) -> u64 {
    let n = nodes.iter().find(|n| n.node.id == leader).unwrap();
    let mut last = 0;
    for i in range {
        let command = create_pool(catalog, &format!("p{i}"));
        last = n.node.propose(command).await.unwrap().index;
    }
    last
}

async fn leader_of(nodes: &[&ServedNode], not: Option<u64>, within: Duration) -> u64 {
    let deadline = Instant::now() + within;
    loop {
        for n in nodes {
            let m = n.node.raft.metrics().borrow().clone();
            if let Some(l) = m.current_leader
                && Some(l) != not
                && nodes.iter().any(|x| x.node.id == l)
                && m.state.is_leader() == (l == n.node.id)
            {
                return l;
            }
        }
        assert!(Instant::now() < deadline, "no leader within {within:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn wait_applied(nodes: &[&ServedNode], index: u64) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while nodes.iter().any(|n| n.applied() < index) {
        assert!(Instant::now() < deadline, "nodes did not apply {index}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_nodes_replicate_elect_a_new_leader_and_catch_up_from_a_snapshot() {
    let dir = std::env::temp_dir().join(format!("gslb-raft-cluster-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let dir = Dir(dir);
    let config = NodeConfig {
        snapshot_every: 50,
        keep_logs: 5,
        ..NodeConfig::default()
    };
    let any: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let mut nodes = Vec::new();
    for id in 1..=3 {
        nodes.push(start(id, &dir.0, any, &config).await);
    }
    let members: BTreeMap<u64, BasicNode> = nodes
        .iter()
        .map(|n| (n.node.id, BasicNode::new(n.addr.to_string())))
        .collect();
    nodes[0].node.raft.initialize(members).await.unwrap();
    let all: Vec<&ServedNode> = nodes.iter().collect();
    let leader = leader_of(&all, None, Duration::from_secs(10)).await;

    // A Raft message from a node outside the membership is refused.
    let url = format!("http://{}", nodes[0].addr);
    let mut stranger = RaftServiceClient::connect(url).await.unwrap();
    let refused = stranger
        .vote(RaftPayload {
            from: 99,
            json: b"{}".to_vec(),
        })
        .await
        .unwrap_err();
    assert_eq!(refused.code(), tonic::Code::PermissionDenied, "{refused}");
    assert!(refused.message().contains("node 99 is not a member"));

    // 100 writes through the leader, acknowledged once committed.
    let mut catalog = CatalogState::default();
    let mut last = write_pools(&nodes, leader, &mut catalog, 0..100).await;
    wait_applied(&all, last).await;
    for n in &nodes {
        assert_eq!(n.pools(), 100, "node {}", n.node.id);
        assert_eq!(
            n.node.state.store().load().unwrap().state.version,
            last,
            "the version is the log index on every node"
        );
    }

    // The leader stops: the other two elect a new one.
    let old = nodes.iter().position(|n| n.node.id == leader).unwrap();
    let old_leader = nodes.remove(old);
    let (away_id, away_addr) = (old_leader.node.id, old_leader.addr);
    old_leader.shutdown().await.unwrap();
    let stopped = Instant::now();
    let alive: Vec<&ServedNode> = nodes.iter().collect();
    let new_leader = leader_of(&alive, Some(away_id), Duration::from_secs(10)).await;
    let elected = stopped.elapsed();
    // Timing is for a benchmark (issue 7); here only that one is elected.
    eprintln!("new leader {new_leader} after {elected:?}");

    // 100 more writes with two of three: the log passes two snapshot
    // points and is compacted behind them.
    last = write_pools(&nodes, new_leader, &mut catalog, 100..200).await;
    wait_applied(&alive, last).await;

    // The old leader returns: the entries it missed are compacted away, so
    // it catches up from a snapshot; nothing acknowledged is lost anywhere.
    nodes.push(start(away_id, &dir.0, away_addr, &config).await);
    let alive: Vec<&ServedNode> = nodes.iter().collect();
    wait_applied(&alive, last).await;
    for n in &nodes {
        assert_eq!(n.pools(), 200, "node {} lost writes", n.node.id);
    }
    let returned = nodes.iter().find(|n| n.node.id == away_id).unwrap();
    let snapshot = returned.node.raft.metrics().borrow().snapshot;
    assert!(
        snapshot.is_some(),
        "the returning node installed a snapshot"
    );
    for n in nodes {
        n.shutdown().await.unwrap();
    }
}

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
