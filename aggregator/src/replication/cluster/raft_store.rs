//! The [`Store`] of a cluster node's control core: reads come from the
//! state machine's store, writes are proposed through the Raft log and
//! return once applied here, numbered by their log index.

use std::sync::Arc;

use gslb_shared::MemberId;

use super::Cluster;
use crate::core::audit::{AuditQuery, AuditRecord};
use crate::core::notify::{Event, Outbox, OutboxWrite};
use crate::core::sessions::{SessionRecord, SessionWrite};
use crate::core::store::{Commit, Loaded, LogRecord, Store, StoreError};
use crate::replication::raft::Command;

/// Raft-backed storage for one node's control core.
#[derive(Debug, Clone)]
pub struct RaftStore {
    cluster: Arc<Cluster>,
}

impl RaftStore {
    /// Storage through `cluster`'s log.
    pub fn new(cluster: Arc<Cluster>) -> Self {
        Self { cluster }
    }
}

impl Store for RaftStore {
    fn load(&self) -> Result<Loaded, StoreError> {
        self.cluster.state.load_consistent()
    }

    fn commit(&self, commit: &Commit) -> Result<u64, StoreError> {
        self.cluster.propose(Command {
            commit: Some(commit.clone()),
            ..Command::default()
        })
    }

    fn append_log(&self, records: &[LogRecord]) -> Result<(), StoreError> {
        self.commit_decisions(None, records).map(|_| ())
    }

    fn commit_decisions(
        &self,
        commit: Option<&Commit>,
        log: &[LogRecord],
    ) -> Result<Option<u64>, StoreError> {
        // One entry for both, so a decision and its log line travel together.
        let index = self.cluster.propose(Command {
            commit: commit.cloned(),
            log: log.to_vec(),
            ..Command::default()
        })?;
        Ok(commit.map(|_| index))
    }

    fn health_log(
        &self,
        member: MemberId,
        limit: usize,
    ) -> Result<Vec<gslb_engine::Output>, StoreError> {
        self.cluster.state.store().health_log(member, limit)
    }

    fn one_version_per_commit(&self) -> bool {
        true
    }

    fn outbox(&self) -> Result<Outbox, StoreError> {
        self.cluster.state.store().outbox()
    }

    fn outbox_events(&self, after: u64, limit: usize) -> Result<Vec<Event>, StoreError> {
        self.cluster.state.store().outbox_events(after, limit)
    }

    fn write_outbox(&self, write: &OutboxWrite) -> Result<(), StoreError> {
        self.cluster
            .propose(Command {
                commit: None,
                log: Vec::new(),
                outbox: Some(write.clone()),
                audit: Vec::new(),
                sessions: None,
            })
            .map(drop)
    }

    fn append_audit(&self, records: &[AuditRecord]) -> Result<(), StoreError> {
        self.cluster
            .propose(Command {
                commit: None,
                log: Vec::new(),
                outbox: None,
                audit: records.to_vec(),
                sessions: None,
            })
            .map(drop)
    }

    fn audit(&self, query: &AuditQuery) -> Result<Vec<AuditRecord>, StoreError> {
        self.cluster.state.store().audit(query)
    }

    fn audit_count(&self) -> Result<u64, StoreError> {
        self.cluster.state.store().audit_count()
    }

    fn audit_all(&self) -> Result<Vec<AuditRecord>, StoreError> {
        self.cluster.state.store().audit_all()
    }

    fn audit_after(&self, version: u64) -> Result<(Vec<AuditRecord>, bool), StoreError> {
        self.cluster.state.store().audit_after(version)
    }

    fn session(&self, digest: &str) -> Result<Option<SessionRecord>, StoreError> {
        self.cluster.state.store().session(digest)
    }

    fn sessions(&self) -> Result<Vec<(String, SessionRecord)>, StoreError> {
        self.cluster.state.store().sessions()
    }

    fn session_count(&self) -> Result<u64, StoreError> {
        self.cluster.state.store().session_count()
    }

    fn write_sessions(&self, write: &SessionWrite) -> Result<(), StoreError> {
        self.cluster
            .propose(Command {
                sessions: Some(write.clone()),
                ..Command::default()
            })
            .map(drop)
    }

    fn size_on_disk(&self) -> u64 {
        self.cluster.state.store().size_on_disk() + self.cluster.log.size_on_disk()
    }
}
