//! One aggregator node's Raft instance: its redb log and state machine
//! under the data directory, openraft's timing (elections well under 3 s)
//! and log compaction (a snapshot every `snapshot_every` entries, keeping
//! `keep_logs` behind it so a briefly absent follower catches up from the
//! log, a longer-absent one from the snapshot).

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use gslb_proto::pb::raft_service_server::RaftServiceServer;
use openraft::{Raft, SnapshotPolicy};

use tokio::sync::mpsc::UnboundedSender;

use super::{Applied, Command, Event, LogStore, Network, RaftRpc, StateMachine, TypeConfig};

/// Timing and compaction settings.
#[derive(Debug, Clone)]
pub struct NodeConfig {
    /// Leader heartbeat interval.
    pub heartbeat: Duration,
    /// Election timeout, drawn from this range.
    pub election: (Duration, Duration),
    /// Build a snapshot after this many entries since the last one.
    pub snapshot_every: u64,
    /// Entries kept in the log behind a snapshot.
    pub keep_logs: u64,
    /// How to reach peers (TLS, scheme).
    pub link: gslb_proto::link::Link,
}

impl Default for NodeConfig {
    fn default() -> Self {
        Self {
            // A follower waits out the leader's lease and then its own
            // election timeout: with these, a new leader in about 1.5-2.5 s.
            heartbeat: Duration::from_millis(150),
            election: (Duration::from_millis(600), Duration::from_millis(1200)),
            snapshot_every: 10_000,
            keep_logs: 1_000,
            link: gslb_proto::link::Link::default(),
        }
    }
}

/// A node: the Raft instance and the state machine it applies to.
pub struct Node {
    /// This node's id.
    pub id: u64,
    /// The openraft instance.
    pub raft: Raft<TypeConfig>,
    /// The applied state (catalog, latched health, health log).
    pub state: StateMachine,
    /// The log (shared with the Raft instance; for its size).
    pub log: LogStore,
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

impl Node {
    /// Open node `id` with its storage under `dir` (created if missing);
    /// applied commits are announced on `events`, if given.
    pub async fn open(
        id: u64,
        dir: &Path,
        config: &NodeConfig,
        events: Option<UnboundedSender<Event>>,
    ) -> anyhow::Result<Node> {
        let log = LogStore::open(&dir.join("raft-log")).context("opening the Raft log")?;
        let mut state =
            StateMachine::open(&dir.join("state")).context("opening the state machine")?;
        if let Some(events) = events {
            state = state.announcing(events);
        }
        let raft_config = openraft::Config {
            cluster_name: "gslb".into(),
            heartbeat_interval: millis(config.heartbeat),
            election_timeout_min: millis(config.election.0),
            election_timeout_max: millis(config.election.1),
            snapshot_policy: SnapshotPolicy::LogsSinceLast(config.snapshot_every),
            max_in_snapshot_log_to_keep: config.keep_logs,
            ..Default::default()
        }
        .validate()
        .context("Raft settings")?;
        let raft = Raft::new(
            id,
            Arc::new(raft_config),
            Network {
                from: id,
                link: config.link.clone(),
            },
            log.clone(),
            state.clone(),
        )
        .await
        .context("starting Raft")?;
        Ok(Node {
            id,
            raft,
            state,
            log,
        })
    }

    /// The gRPC service peers send this node's Raft messages to.
    pub fn service(&self) -> RaftServiceServer<RaftRpc> {
        Self::service_for(self.raft.clone())
    }

    /// The gRPC service in front of `raft`.
    pub fn service_for(raft: Raft<TypeConfig>) -> RaftServiceServer<RaftRpc> {
        RaftServiceServer::new(RaftRpc { raft })
            .max_decoding_message_size(gslb_proto::MAX_MESSAGE)
            .max_encoding_message_size(gslb_proto::MAX_MESSAGE)
    }

    /// Serve this node's Raft service on `listener` until `stop` resolves
    /// (a node on its own listener; in the aggregator it joins the gRPC one).
    pub fn serve(
        &self,
        listener: tokio::net::TcpListener,
        stop: impl Future<Output = ()> + Send + 'static,
    ) -> tokio::task::JoinHandle<Result<(), tonic::transport::Error>> {
        let service = self.service();
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(service)
                .serve_with_incoming_shutdown(
                    crate::net::listener::grpc_incoming(
                        listener,
                        None,
                        crate::net::listener::Limits {
                            max_connections: 1024,
                            idle: None,
                        },
                    ),
                    stop,
                ),
        )
    }

    /// Replicate `command` (on the leader); returns once it is committed and
    /// applied here.
    pub async fn propose(&self, command: Command) -> anyhow::Result<Applied> {
        let reply = self.raft.client_write(command).await?;
        Ok(reply.data)
    }
}

/// A node serving its Raft service on its own loopback or LAN listener,
/// for tests, benchmarks and (until the aggregator wiring lands) tools.
pub struct ServedNode {
    /// The node.
    pub node: Node,
    /// Where its Raft service listens.
    pub addr: std::net::SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

impl ServedNode {
    /// Open node `id` under `dir/node{id}` and serve it on `addr` (port 0
    /// picks one; restart a node on the address its peers know).
    pub async fn start(
        id: u64,
        dir: &Path,
        addr: std::net::SocketAddr,
        config: &NodeConfig,
    ) -> anyhow::Result<ServedNode> {
        let node = Node::open(id, &dir.join(format!("node{id}")), config, None).await?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding the Raft listener {addr}"))?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        node.serve(listener, async {
            let _ = stopped.await;
        });
        Ok(ServedNode {
            node,
            addr,
            stop: Some(stop),
        })
    }

    /// Stop serving and shut the Raft instance down.
    pub async fn shutdown(mut self) -> anyhow::Result<()> {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        self.node.raft.shutdown().await?;
        Ok(())
    }

    /// The last log index applied here.
    pub fn applied(&self) -> u64 {
        self.node
            .raft
            .metrics()
            .borrow()
            .last_applied
            .map_or(0, |l| l.index)
    }
}
