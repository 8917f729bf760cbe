//! The aggregator as one node of a Raft cluster (`--node-id`, `--peers`).
//! Every durable write is proposed through the log (`raft_store`); every
//! node mirrors the applied log into its control core, so edges may
//! subscribe to any node. The leader alone runs the health engine: on
//! becoming leader a node rebuilds its control core from the applied state
//! (the startup gate then holds decisions until fresh results arrive), on
//! losing leadership or its quorum it rebuilds a mirror (`roles`). Admin
//! calls and agents on a follower are answered with a leader hint
//! (`gate`); `membership` serves `gslbctl cluster`.
//!
//! openraft runs on a runtime of its own: a leader's write blocks the
//! worker thread that holds the control core (as a single node's fsync
//! does) while replication, on the other runtime, completes it.

pub mod peers;
mod raft_store;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context;
use openraft::error::{ClientWriteError, RaftError};
use openraft::{BasicNode, Raft, ServerState};
use tokio::sync::mpsc::{UnboundedReceiver, WeakUnboundedSender};

pub use raft_store::RaftStore;

use crate::core::store::StoreError;
use crate::replication::raft::{Command, Event, Node, NodeConfig, StateMachine, TypeConfig};
use gslb_engine::EngineConfig;
use gslb_proto::link::Link;

/// Raft settings of a cluster node.
#[derive(Debug, Clone, PartialEq)]
pub struct ClusterConfig {
    /// This node's id.
    pub node_id: u64,
    /// Initial members and their gRPC addresses (empty: wait to be added).
    pub peers: std::collections::BTreeMap<u64, String>,
    /// Leader heartbeat interval.
    pub heartbeat: Duration,
    /// Election timeout range.
    pub election: (Duration, Duration),
    /// Log entries between snapshots.
    pub snapshot_every: u64,
    /// Who forms the cluster of `peers`.
    pub bootstrap: Bootstrap,
}

/// Who forms a cluster of `--peers`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Bootstrap {
    /// The lowest id forms it on its first start.
    #[default]
    Auto,
    /// No node forms it until an operator runs `gslbctl cluster init`
    /// (so a node that lost its data never forms a second cluster alone).
    Manual,
}

/// Why `gslbctl cluster init` was refused.
#[derive(Debug)]
pub enum FormError {
    /// The node has no `--peers`.
    NoPeers,
    /// A cluster exists already.
    Formed,
    /// openraft refused or the runtime failed.
    Failed(String),
}

/// Form the cluster of `peers` on `raft` (openraft's `initialize`).
async fn form(
    handle: &tokio::runtime::Handle,
    raft: &Raft<TypeConfig>,
    peers: &BTreeMap<u64, String>,
) -> Result<(), FormError> {
    if peers.is_empty() {
        return Err(FormError::NoPeers);
    }
    let members: BTreeMap<u64, BasicNode> = peers
        .iter()
        .map(|(id, addr)| (*id, BasicNode::new(addr)))
        .collect();
    let raft = raft.clone();
    match handle
        .spawn(async move { raft.initialize(members).await })
        .await
    {
        Ok(Ok(())) => Ok(()),
        Ok(Err(RaftError::APIError(openraft::error::InitializeError::NotAllowed(_)))) => {
            Err(FormError::Formed)
        }
        Ok(Err(e)) => Err(FormError::Failed(e.to_string())),
        Err(e) => Err(FormError::Failed(e.to_string())),
    }
}

/// How long a write waits for a quorum before it is reported unreplicated.
pub const PROPOSE_TIMEOUT: Duration = Duration::from_secs(5);

/// A leader and its gRPC address.
pub type LeaderHint = (u64, String);

/// One node's Raft instance and what the rest of the aggregator asks of it.
pub struct Cluster {
    /// This node's id.
    pub id: u64,
    /// The Raft instance.
    pub raft: Raft<TypeConfig>,
    state: StateMachine,
    log: crate::replication::raft::LogStore,
    pub(crate) engine: EngineConfig,
    /// Confirming leadership (a quorum round) must finish within this.
    confirm_timeout: Duration,
    /// openraft's runtime; shut down without blocking when the node goes.
    runtime: Mutex<Option<tokio::runtime::Runtime>>,
    handle: tokio::runtime::Handle,
    /// Where a failed proposal is reported ([`Event::Diverged`]); weak, so
    /// the stream still ends when the node's own sender goes.
    events: WeakUnboundedSender<Event>,
    /// The leader's HTTP address, learnt from it (REST redirects).
    leader_http: Mutex<Option<(u64, String)>>,
    /// How this node reaches its peers (TLS, scheme).
    pub link: Link,
    /// The initial members it was started with (`--peers`).
    peers: BTreeMap<u64, String>,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cluster").field("id", &self.id).finish()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        if let Some(runtime) = crate::core::lock(&self.runtime).take() {
            runtime.shutdown_background();
        }
    }
}

/// Refuse a data directory laid out for the other mode: a single node's
/// store is a database file at the top, a cluster node's is `raft-log/`
/// and `state/`;
/// opening one as the other would start from an empty catalog.
pub fn check_data_dir(dir: &Path, clustered: bool) -> anyhow::Result<()> {
    if clustered && dir.join(crate::core::store::FILE).exists() {
        anyhow::bail!(
            "data-dir {} holds a single node's store; a cluster node needs a directory of its own (apply your configuration to the cluster once it runs)",
            dir.display()
        );
    }
    if !clustered && dir.join("raft-log").exists() {
        anyhow::bail!(
            "data-dir {} belongs to a cluster node (raft-log/ is there): start it with --node-id (and --peers)",
            dir.display()
        );
    }
    Ok(())
}

impl Cluster {
    /// Open this node's Raft storage under `data_dir` and start it; the
    /// lowest id in `--peers`, with an empty log, forms the cluster of all
    /// of them. Returns the node and the stream of applied commits for
    /// [`follow`].
    pub async fn start(
        config: &ClusterConfig,
        data_dir: &Path,
        engine: EngineConfig,
        link: Link,
    ) -> anyhow::Result<(Arc<Cluster>, UnboundedReceiver<Event>)> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("raft")
            .enable_all()
            .build()
            .context("starting the Raft runtime")?;
        let handle = runtime.handle().clone();
        let node_config = NodeConfig {
            heartbeat: config.heartbeat,
            election: config.election,
            snapshot_every: config.snapshot_every,
            keep_logs: config.snapshot_every / 10,
            link: link.clone(),
        };
        let (events, received) = tokio::sync::mpsc::unbounded_channel();
        let (id, dir) = (config.node_id, data_dir.to_path_buf());
        let diverged = events.downgrade();
        let node = handle
            .spawn(async move { Node::open(id, &dir, &node_config, Some(events)).await })
            .await??;
        // One node forms the cluster: a second `initialize` on a node that
        // has not heard from the first yet would stand for election against
        // the leader the first already has (openraft only makes that safe
        // when every node calls it before any election).
        let founder = config.peers.keys().next() == Some(&id);
        if config.bootstrap == Bootstrap::Manual && !config.peers.is_empty() {
            tracing::info!(
                node = id,
                "bootstrap manual: the cluster forms when an operator runs gslbctl cluster init (once, on any node)"
            );
        } else if founder {
            match form(&handle, &node.raft, &config.peers).await {
                Ok(()) => tracing::info!(peers = ?config.peers, "cluster formed"),
                // Already formed (a restart, or another member was first).
                Err(FormError::Formed) => {}
                Err(FormError::NoPeers) => unreachable!("a founder has peers"),
                Err(FormError::Failed(why)) => anyhow::bail!("forming the cluster: {why}"),
            }
        } else if config.peers.is_empty() {
            tracing::info!(
                node = id,
                "waiting to be added to a cluster (gslbctl cluster join)"
            );
        } else {
            tracing::info!(
                node = id,
                "waiting for the founding node (the lowest id in --peers)"
            );
        }
        let cluster = Cluster {
            id,
            raft: node.raft,
            state: node.state,
            log: node.log,
            engine,
            confirm_timeout: config.election.0,
            runtime: Mutex::new(Some(runtime)),
            handle,
            events: diverged,
            leader_http: Mutex::new(None),
            link,
            peers: config.peers.clone(),
        };
        Ok((Arc::new(cluster), received))
    }

    /// Form the cluster of this node's `--peers` (`gslbctl cluster init`).
    pub async fn form(&self) -> Result<(), FormError> {
        form(&self.handle, &self.raft, &self.peers).await
    }

    /// The gRPC service peers send this node's Raft messages to.
    pub fn rpc(
        &self,
    ) -> gslb_proto::pb::raft_service_server::RaftServiceServer<crate::replication::raft::RaftRpc>
    {
        crate::replication::raft::Node::service_for(self.raft.clone())
    }

    /// The leader as far as this node knows, unless that is this node and
    /// it is not `leading` (its control core does not decide: no quorum
    /// has confirmed it yet). Whether it leads is the core's role, which
    /// the API reads from its published view.
    pub fn leader(&self, leading: bool) -> Option<LeaderHint> {
        let metrics = self.raft.metrics();
        let m = metrics.borrow();
        let leader = m.current_leader?;
        if leader == self.id && !leading {
            return None;
        }
        let node = m.membership_config.membership().get_node(&leader)?;
        Some((leader, node.addr.clone()))
    }

    /// The HTTP address of leader `hint`, asked of it once per leader.
    pub async fn leader_http(&self, hint: &LeaderHint) -> Option<String> {
        if let Some((id, http)) = crate::core::lock(&self.leader_http).clone()
            && id == hint.0
        {
            return Some(http);
        }
        let http = peers::http_address_of(&self.link, &hint.1).await?;
        *crate::core::lock(&self.leader_http) = Some((hint.0, http.clone()));
        Some(http)
    }

    /// The Raft role as a word (`leader`, `follower`, ...); `leading` as
    /// for [`Cluster::leader`].
    pub fn role(&self, leading: bool) -> &'static str {
        match self.raft.metrics().borrow().state {
            ServerState::Leader if leading => "leader",
            ServerState::Leader => "leader-unconfirmed",
            ServerState::Follower => "follower",
            ServerState::Candidate => "candidate",
            ServerState::Learner => "learner",
            ServerState::Shutdown => "shutdown",
        }
    }

    /// Confirm with a quorum that this node still leads, and wait until
    /// everything committed before now is applied here (a linearizable read).
    pub async fn confirm(&self) -> Result<(), String> {
        match tokio::time::timeout(self.confirm_timeout, self.raft.ensure_linearizable()).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => Err(format!(
                "no quorum confirmed the leadership within {:?}",
                self.confirm_timeout
            )),
        }
    }

    /// Replicate `command`; blocks the calling thread until it is applied
    /// here (its log index) or [`PROPOSE_TIMEOUT`] passes.
    fn propose(&self, command: Command) -> Result<u64, StoreError> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let raft = self.raft.clone();
        self.handle.spawn(async move {
            let _ = tx.send(raft.client_write(command).await);
        });
        let outcome = rx.recv_timeout(PROPOSE_TIMEOUT);
        if !matches!(outcome, Ok(Ok(_)))
            && let Some(events) = self.events.upgrade()
        {
            let _ = events.send(Event::Diverged);
        }
        match outcome {
            Ok(Ok(reply)) => Ok(reply.data.index),
            Ok(Err(RaftError::APIError(ClientWriteError::ForwardToLeader(f)))) => {
                Err(StoreError::NotReplicated {
                    why: "this node is not the leader".into(),
                    leader: f.leader_id.zip(f.leader_node.map(|n| n.addr)),
                })
            }
            Ok(Err(e)) => Err(StoreError::NotReplicated {
                why: e.to_string(),
                leader: None,
            }),
            Err(_) => Err(StoreError::NotReplicated {
                why: format!(
                    "no quorum acknowledged the write within {PROPOSE_TIMEOUT:?}; a later leader may still commit it"
                ),
                leader: None,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::check_data_dir;

    #[test]
    fn a_data_dir_of_the_other_mode_is_refused() {
        let dir = std::env::temp_dir().join(format!("gslb-mode-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        assert!(check_data_dir(&dir, true).is_ok() && check_data_dir(&dir, false).is_ok());
        let file = dir.join(crate::core::store::FILE);
        std::fs::write(&file, b"").unwrap();
        let err = check_data_dir(&dir, true).unwrap_err().to_string();
        assert!(err.contains("holds a single node's store"), "{err}");
        assert!(check_data_dir(&dir, false).is_ok());
        std::fs::remove_file(&file).unwrap();
        std::fs::create_dir(dir.join("raft-log")).unwrap();
        let err = check_data_dir(&dir, false).unwrap_err().to_string();
        assert!(err.contains("start it with --node-id"), "{err}");
        assert!(check_data_dir(&dir, true).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
