//! Durable state of a single aggregator: the catalog, each member's latched
//! health (decided health, warm-up gate, manual override), the health log,
//! and the version. Behind the [`Store`] trait: a single node writes its
//! redb database directly, a cluster node proposes through the Raft log
//! (`cluster`).

pub mod backup;
mod marker;
mod redb_store;

use std::collections::BTreeMap;

use gslb_shared::{Health, MemberId, Resolved};
use serde::{Deserialize, Serialize};

pub use marker::MARKER;
pub(crate) use redb_store::open_locked;
pub use redb_store::{
    DEFAULT_CACHE_MIB, FILE, MetaEntries, RedbStore, audit_trimmed, set_audit_limits, set_cache_mib,
};

use crate::core::audit::{AuditQuery, AuditRecord};
use crate::core::catalog::{CatalogState, Change};
use crate::core::notify::{Event, Outbox, OutboxDump, OutboxWrite};
use crate::core::sessions::{SessionRecord, SessionWrite};

/// The on-disk schema this build writes and reads.
pub const SCHEMA_VERSION: u32 = 1;

/// A member's state that must survive a restart.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Latched {
    /// Last decided health.
    pub health: Health,
    /// The warm-up gate has opened.
    pub gate_open: bool,
    /// Operator override.
    pub manual: Option<Health>,
    /// The slow-start step reached, while it ramps.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp: Option<u8>,
}

/// One health log entry: the engine output it records (a transition, a
/// warm-up event, an expiry), about `member`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LogRecord {
    /// Member it is about.
    pub member: MemberId,
    /// The entry.
    pub entry: gslb_engine::Output,
}

impl<'de> Deserialize<'de> for LogRecord {
    /// Typed, or the JSON text that nodes before typed entries put in the
    /// Raft log (a log written by an older node still replays).
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Wire {
            Typed {
                member: MemberId,
                entry: gslb_engine::Output,
            },
            Text {
                member: MemberId,
                json: String,
            },
        }
        match Wire::deserialize(d)? {
            Wire::Typed { member, entry } => Ok(LogRecord { member, entry }),
            Wire::Text { member, json } => serde_json::from_str(&json)
                .map(|entry| LogRecord { member, entry })
                .map_err(serde::de::Error::custom),
        }
    }
}

/// Everything loaded at start.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Loaded {
    /// Catalog, version and id counter.
    pub state: CatalogState,
    /// Latched member state.
    pub latched: BTreeMap<MemberId, Latched>,
    /// Hostname members' addresses as last resolved (for flattening).
    pub resolved: BTreeMap<MemberId, Resolved>,
    /// Round-trip times as last published (latency steering).
    pub rtt: BTreeMap<MemberId, gslb_shared::Rtts>,
    /// The notification outbox.
    pub outbox: OutboxDump,
    /// True when the store was empty (a first start).
    pub first_start: bool,
}

/// One durable write.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Commit {
    /// Catalog changes, in order.
    pub changes: Vec<Change>,
    /// The id counter after them.
    pub last_id: u64,
    /// The version after them.
    pub version: u64,
    /// Latched state to set (`None` removes it).
    pub latched: Vec<(MemberId, Option<Latched>)>,
    /// The new edge epoch, set only by a deliberate reset of the edges.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<u64>,
    /// The operator's decision hold, set only when it changed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold: Option<crate::core::catalog::DecisionHold>,
    /// Hostname members' addresses to set (`None` forgets them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub resolved: Vec<(MemberId, Option<Resolved>)>,
    /// Round-trip tables to set (`None`: no location measures it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rtt: Vec<(MemberId, Option<gslb_shared::Rtts>)>,
    /// Raise the version reservation to this: every version up to it may
    /// already have been published before it was durable, so a restart
    /// continues above it (a single node's deferred decisions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reserved: Option<u64>,
    /// Notification events the decisions amount to (numbered by the store
    /// as it applies them).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<Event>,
    /// Audit records of the writes in it (numbered by the store).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub audit: Vec<AuditRecord>,
}

/// A storage failure.
#[derive(Debug, Clone, thiserror::Error)]
pub enum StoreError {
    /// The database failed.
    #[error("store: {0}")]
    Db(String),
    /// Stored data could not be decoded.
    #[error("store: corrupt {what}: {error}")]
    Corrupt {
        /// Which record.
        what: String,
        /// Decoder error.
        error: String,
    },
    /// Another process holds the data directory.
    #[error(
        "store: data directory {dir} is in use by another process (is another gslb-aggregator running on it?)"
    )]
    InUse {
        /// The directory.
        dir: String,
    },
    /// The write was not replicated (this node is not the cluster's leader,
    /// or no quorum acknowledged it in time); it may still be committed by
    /// a later leader, so the client should check before retrying blindly.
    #[error("store: not replicated: {why}")]
    NotReplicated {
        /// What happened.
        why: String,
        /// The leader's id and gRPC address, when known.
        leader: Option<(u64, String)>,
    },
    /// The store was initialised but its data is gone or damaged: refused,
    /// nothing written.
    #[error(
        "store: {dir} held an initialised store ({dir}/{MARKER} is there) but {what}; nothing was written. \
         Restore the directory from a backup (move it aside, then gslb-aggregator --data-dir {dir} --restore FILE), \
         or move it aside to start empty on purpose"
    )]
    Lost {
        /// The data directory.
        dir: String,
        /// What is missing or damaged.
        what: String,
    },
    /// The data directory holds a store in the format of builds before
    /// redb (sled's `conf` and `db`).
    #[error(
        "store: {dir} holds a store written by an earlier gslb build (sled's conf and db files); this build keeps \
         its store in {dir}/{FILE}. Take a backup with the earlier build (gslbctl backup --out FILE), then start \
         this build once with --data-dir on an empty directory and --restore FILE"
    )]
    OldFormat {
        /// The data directory.
        dir: String,
    },
    /// The data directory was written by a newer build.
    #[error(
        "store: schema version {found} is newer than this build's {SCHEMA_VERSION}; upgrade gslb-aggregator"
    )]
    NewerSchema {
        /// Version found on disk.
        found: u32,
    },
}

/// Durable storage for one aggregator.
pub trait Store: Send + Sync + 'static {
    /// Read everything back.
    fn load(&self) -> Result<Loaded, StoreError>;
    /// Write atomically; returns once the write is durable, with the version
    /// it was stored as: `commit.version` on a single node, the log index in
    /// a Raft cluster.
    fn commit(&self, commit: &Commit) -> Result<u64, StoreError>;
    /// Append health log entries (durable on return).
    fn append_log(&self, records: &[LogRecord]) -> Result<(), StoreError>;
    /// Health decisions: log entries and, if any, the commit they go with
    /// (a Raft store replicates both in one entry). The commit's version.
    fn commit_decisions(
        &self,
        commit: Option<&Commit>,
        log: &[LogRecord],
    ) -> Result<Option<u64>, StoreError> {
        if !log.is_empty() {
            self.append_log(log)?;
        }
        commit.map(|c| self.commit(c)).transpose()
    }
    /// The newest `limit` entries of a member, oldest first.
    fn health_log(
        &self,
        member: MemberId,
        limit: usize,
    ) -> Result<Vec<gslb_engine::Output>, StoreError>;
    /// Bytes used on disk.
    fn size_on_disk(&self) -> u64;
    /// The version reservation ([`Commit::reserved`]); 0 when none.
    fn reserved(&self) -> Result<u64, StoreError> {
        Ok(0)
    }
    /// True when every change of a commit takes the commit's version (a
    /// Raft store: one log index per entry); a single node numbers each
    /// change of a batch in turn.
    fn one_version_per_commit(&self) -> bool {
        false
    }
    /// The notification outbox's bookkeeping.
    fn outbox(&self) -> Result<Outbox, StoreError>;
    /// At most `limit` outbox events after sequence number `after`.
    fn outbox_events(&self, after: u64, limit: usize) -> Result<Vec<Event>, StoreError>;
    /// Write to the outbox (durable, and replicated, on return).
    fn write_outbox(&self, write: &OutboxWrite) -> Result<(), StoreError>;
    /// Append audit records that go with no commit (a refused write, a
    /// manual health change); durable, and replicated, on return.
    fn append_audit(&self, records: &[AuditRecord]) -> Result<(), StoreError>;
    /// The audit records `query` asks for, newest first.
    fn audit(&self, query: &AuditQuery) -> Result<Vec<AuditRecord>, StoreError>;
    /// How many audit records are kept.
    fn audit_count(&self) -> Result<u64, StoreError>;
    /// Every audit record, oldest first (a backup).
    fn audit_all(&self) -> Result<Vec<AuditRecord>, StoreError>;
    /// The accepted writes after catalog version `version`, oldest first,
    /// and whether the log still reaches back to it.
    fn audit_after(&self, version: u64) -> Result<(Vec<AuditRecord>, bool), StoreError>;
    /// The web UI session stored under `digest`, read here.
    fn session(&self, digest: &str) -> Result<Option<SessionRecord>, StoreError>;
    /// Every stored web UI session, read here.
    fn sessions(&self) -> Result<Vec<(String, SessionRecord)>, StoreError>;
    /// How many web UI sessions are stored here.
    fn session_count(&self) -> Result<u64, StoreError>;
    /// Change the web UI sessions (durable, and replicated, on return).
    fn write_sessions(&self, write: &SessionWrite) -> Result<(), StoreError>;
}
