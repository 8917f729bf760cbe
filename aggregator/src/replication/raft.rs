//! Raft replication of the aggregator's durable writes, on openraft 0.9
//! with redb underneath: the type configuration, the replicated command
//! (exactly the single-node store's [`Commit`] plus its health-log lines),
//! the storage openraft needs (a redb log store and a state machine that
//! applies commands to a [`RedbStore`](crate::core::store::RedbStore), both
//! checked by openraft's storage conformance suite), Raft messages over
//! gRPC (`network`) and a node with its timing and compaction (`node`).
//! `crate::replication::cluster` runs a node inside the aggregator.

// openraft's storage traits fix the error type (`StorageError`, 200+
// bytes); our helpers return the same type rather than convert at every call.
#![allow(clippy::result_large_err)]

mod log_store;
mod network;
mod node;
mod state_machine;

use std::io::Cursor;

use serde::{Deserialize, Serialize};

pub use log_store::LogStore;
pub use network::{Network, RaftRpc};
pub use node::{Node, NodeConfig, ServedNode};
pub use state_machine::StateMachine;

use crate::core::catalog::{CatalogState, Change};
use crate::core::store::{Commit, LogRecord};

openraft::declare_raft_types!(
    /// The aggregator's Raft types: node ids are numbers, nodes carry an address.
    pub TypeConfig:
        D = Command,
        R = Applied,
        NodeId = u64,
        Node = openraft::BasicNode,
        SnapshotData = Cursor<Vec<u8>>,
);

/// A log entry of this cluster.
pub type Entry = openraft::Entry<TypeConfig>;

/// A storage failure as openraft reports it.
pub type StorageError = openraft::StorageError<u64>;

/// One replicated write: what a single node would commit to its store.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Command {
    /// Catalog changes and latched state; none for health-log lines alone
    /// (they change nothing DNS answers, so no version either).
    pub commit: Option<Commit>,
    /// Health-log lines that go with it.
    pub log: Vec<LogRecord>,
    /// A write to the notification outbox (the leader's deliveries and
    /// watched events), with no version either.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outbox: Option<crate::core::notify::OutboxWrite>,
    /// Audit records that go with no commit (a refused write, a manual
    /// health change); a commit carries its own.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub audit: Vec<crate::core::audit::AuditRecord>,
    /// Web UI sessions opened, used or ended (absent from older nodes'
    /// entries).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sessions: Option<crate::core::sessions::SessionWrite>,
}

/// What the state machine tells the node's control core, in log order.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A commit was applied at this log index (its version).
    Committed(u64, Box<Commit>),
    /// A snapshot replaced the whole state: reload it.
    Installed,
    /// A proposal failed after the leader's control core had moved on:
    /// rebuild the core from the applied state.
    Diverged,
}

impl Command {
    /// The command for catalog `changes` just made to `state` (validated,
    /// as the leader does before proposing).
    pub fn catalog(state: &CatalogState, changes: Vec<Change>) -> Command {
        Command {
            commit: Some(Commit {
                changes,
                last_id: state.last_id,
                version: state.version,
                latched: Vec::new(),
                ..Commit::default()
            }),
            log: Vec::new(),
            outbox: None,
            audit: Vec::new(),
            sessions: None,
        }
    }
}

/// What applying an entry returns to the proposer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Applied {
    /// The log index now applied (the version edges will see).
    pub index: u64,
}

/// Wrap a store or encoding failure for openraft.
fn io_error(
    make: fn(openraft::AnyError) -> openraft::StorageIOError<u64>,
    e: &(impl std::error::Error + 'static),
) -> StorageError {
    make(openraft::AnyError::new(e)).into()
}
