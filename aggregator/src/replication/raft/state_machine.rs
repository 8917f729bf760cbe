//! The replicated state machine: applies committed [`Command`]s to a
//! [`RedbStore`] (the same store a single node uses), and keeps the last
//! applied log id, the membership and the last snapshot in the store's meta
//! table, written in the same transaction as each command. A snapshot is
//! the whole catalog and latched state as JSON.

use std::io::Cursor;
use std::path::Path;
use std::sync::Arc;

use gslb_shared::MemberId;
use openraft::storage::{RaftStateMachine, Snapshot};
use openraft::{
    BasicNode, EntryPayload, LogId, RaftSnapshotBuilder, SnapshotMeta, StorageIOError,
    StoredMembership,
};
use serde::{Deserialize, Serialize};

use tokio::sync::mpsc::UnboundedSender;

use super::{Applied, Entry, Event, StorageError, TypeConfig, io_error};
use crate::core::catalog::CatalogState;
use crate::core::store::{Latched, Loaded, RedbStore, Store, StoreError};

const APPLIED: &str = "raft.applied";
const MEMBERSHIP: &str = "raft.membership";
const SNAPSHOT: &str = "raft.snapshot";

/// What a snapshot holds.
#[derive(Serialize, Deserialize)]
struct Body {
    state: CatalogState,
    latched: Vec<(MemberId, Latched)>,
    #[serde(default)]
    resolved: Vec<(MemberId, gslb_shared::Resolved)>,
    #[serde(default)]
    rtt: Vec<(MemberId, gslb_shared::Rtts)>,
    /// The notification outbox (absent from snapshots of older nodes).
    #[serde(default)]
    outbox: crate::core::notify::OutboxDump,
    /// The audit log (absent from snapshots of older nodes).
    #[serde(default)]
    audit: Vec<crate::core::audit::AuditRecord>,
    /// Web UI sessions (absent from snapshots of older nodes).
    #[serde(default)]
    sessions: Vec<(String, crate::core::sessions::SessionRecord)>,
}

/// The last snapshot built or installed, kept for followers that need it.
#[derive(Serialize, Deserialize)]
struct Stored {
    meta: SnapshotMeta<u64, BasicNode>,
    data: Vec<u8>,
}

/// The applied state with the log id and membership it reflects.
type Consistent = (Loaded, Option<LogId<u64>>, StoredMembership<u64, BasicNode>);

/// The state machine over a shared store; clones share it.
#[derive(Debug, Clone)]
pub struct StateMachine {
    store: Arc<RedbStore>,
    /// Where applied commits and installed snapshots are announced.
    events: Option<UnboundedSender<Event>>,
}

/// A stored JSON value, if there is one.
fn decode_opt<T: for<'de> Deserialize<'de>>(
    bytes: Option<Vec<u8>>,
) -> Result<Option<T>, StorageError> {
    bytes
        .map(|b| serde_json::from_slice(&b))
        .transpose()
        .map_err(|e| io_error(StorageIOError::read_state_machine, &e))
}

fn encode<T: Serialize>(value: &T) -> Result<Vec<u8>, StorageError> {
    serde_json::to_vec(value).map_err(|e| io_error(StorageIOError::write_state_machine, &e))
}

impl StateMachine {
    /// Open the state machine's store under `dir`.
    pub fn open(dir: &Path) -> Result<StateMachine, StorageError> {
        let store =
            RedbStore::open(dir).map_err(|e| io_error(StorageIOError::read_state_machine, &e))?;
        Ok(StateMachine {
            store: Arc::new(store),
            events: None,
        })
    }

    /// Announce every applied commit and installed snapshot on `events`
    /// (after it is durable).
    pub fn announcing(mut self, events: UnboundedSender<Event>) -> Self {
        self.events = Some(events);
        self
    }

    fn announce(&self, event: Event) {
        if let Some(events) = &self.events {
            // A closed receiver means the node is shutting down.
            let _ = events.send(event);
        }
    }

    /// The store the state machine writes (for reads by the service).
    pub fn store(&self) -> &Arc<RedbStore> {
        &self.store
    }

    /// The applied state, read in one transaction, so a control core
    /// rebuilt from it misses nothing and repeats nothing.
    pub fn load_consistent(&self) -> Result<Loaded, StoreError> {
        self.consistent()
            .map(|(loaded, _, _)| loaded)
            .map_err(|e| StoreError::Db(e.to_string()))
    }

    /// The state with the log id and membership it reflects, read in one
    /// transaction: entries go on being applied while a snapshot is built,
    /// and a snapshot claiming an entry its data lacks would lose that
    /// entry on every node installing it.
    fn consistent(&self) -> Result<Consistent, StorageError> {
        let failed = |e: StoreError| io_error(StorageIOError::read_state_machine, &e);
        let (loaded, meta) = self
            .store
            .load_with_meta(&[APPLIED, MEMBERSHIP])
            .map_err(failed)?;
        let [applied, membership] = <[Option<Vec<u8>>; 2]>::try_from(meta)
            .map_err(|_| failed(StoreError::Db("meta entries missing from the read".into())))?;
        let applied: Option<Option<LogId<u64>>> = decode_opt(applied)?;
        let membership: Option<StoredMembership<u64, BasicNode>> = decode_opt(membership)?;
        Ok((loaded, applied.flatten(), membership.unwrap_or_default()))
    }

    fn read(&self, key: &str) -> Result<Option<Vec<u8>>, StorageError> {
        self.store
            .meta_get(key)
            .map_err(|e| io_error(StorageIOError::read_state_machine, &e))
    }

    fn decoded<T: for<'de> Deserialize<'de>>(&self, key: &str) -> Result<Option<T>, StorageError> {
        decode_opt(self.read(key)?)
    }

    fn applied(&self) -> Result<Option<LogId<u64>>, StorageError> {
        Ok(self.decoded::<Option<LogId<u64>>>(APPLIED)?.flatten())
    }

    fn membership(&self) -> Result<StoredMembership<u64, BasicNode>, StorageError> {
        Ok(self.decoded(MEMBERSHIP)?.unwrap_or_default())
    }
}

impl RaftSnapshotBuilder<TypeConfig> for StateMachine {
    async fn build_snapshot(&mut self) -> Result<Snapshot<TypeConfig>, StorageError> {
        let (loaded, last_log_id, last_membership) = self.consistent()?;
        let body = Body {
            state: loaded.state,
            latched: loaded.latched.into_iter().collect(),
            resolved: loaded.resolved.into_iter().collect(),
            rtt: loaded.rtt.into_iter().collect(),
            outbox: loaded.outbox,
            audit: (self.store.audit_all())
                .map_err(|e| io_error(StorageIOError::read_state_machine, &e))?,
            sessions: (self.store.sessions())
                .map_err(|e| io_error(StorageIOError::read_state_machine, &e))?,
        };
        let data = encode(&body)?;
        let meta = SnapshotMeta {
            last_log_id,
            last_membership,
            snapshot_id: format!(
                "{}-{}",
                last_log_id.map_or(0, |l| l.index),
                crate::core::now().0
            ),
        };
        let stored = Stored {
            meta: meta.clone(),
            data: data.clone(),
        };
        self.store
            .commit_with_meta(None, &[(SNAPSHOT, encode(&stored)?)])
            .map_err(|e| io_error(StorageIOError::write_state_machine, &e))?;
        Ok(Snapshot {
            meta,
            snapshot: Box::new(Cursor::new(data)),
        })
    }
}

impl RaftStateMachine<TypeConfig> for StateMachine {
    type SnapshotBuilder = StateMachine;

    async fn applied_state(
        &mut self,
    ) -> Result<(Option<LogId<u64>>, StoredMembership<u64, BasicNode>), StorageError> {
        Ok((self.applied()?, self.membership()?))
    }

    async fn apply<I>(&mut self, entries: I) -> Result<Vec<Applied>, StorageError>
    where
        I: IntoIterator<Item = Entry> + openraft::OptionalSend,
        I::IntoIter: openraft::OptionalSend,
    {
        let mut replies = Vec::new();
        for entry in entries {
            let id = entry.log_id;
            let mut meta = vec![(APPLIED, encode(&Some(id))?)];
            let mut commit = None;
            let mut log = Vec::new();
            let mut outbox = None;
            let mut audit = Vec::new();
            let mut sessions = None;
            match entry.payload {
                EntryPayload::Blank => {}
                EntryPayload::Normal(command) => {
                    commit = command.commit.map(|mut c| {
                        // Every node serves the same version for the same state.
                        c.version = id.index;
                        for change in &mut c.changes {
                            change.version = id.index;
                        }
                        for record in &mut c.audit {
                            if record.version.is_some() {
                                record.version = Some(id.index);
                            }
                        }
                        c
                    });
                    log = command.log;
                    outbox = command.outbox;
                    audit = command.audit;
                    sessions = command.sessions;
                }
                EntryPayload::Membership(m) => {
                    meta.push((MEMBERSHIP, encode(&StoredMembership::new(Some(id), m))?));
                }
            }
            self.store
                .commit_all(
                    commit.as_ref(),
                    outbox.as_ref(),
                    sessions.as_ref(),
                    &audit,
                    &meta,
                )
                .map_err(|e| io_error(StorageIOError::write_state_machine, &e))?;
            if !log.is_empty() {
                self.store
                    .append_log(&log)
                    .map_err(|e| io_error(StorageIOError::write_state_machine, &e))?;
            }
            if let Some(commit) = commit {
                self.announce(Event::Committed(id.index, Box::new(commit)));
            }
            replies.push(Applied { index: id.index });
        }
        Ok(replies)
    }

    async fn get_snapshot_builder(&mut self) -> StateMachine {
        self.clone()
    }

    async fn begin_receiving_snapshot(&mut self) -> Result<Box<Cursor<Vec<u8>>>, StorageError> {
        Ok(Box::new(Cursor::new(Vec::new())))
    }

    async fn install_snapshot(
        &mut self,
        meta: &SnapshotMeta<u64, BasicNode>,
        snapshot: Box<Cursor<Vec<u8>>>,
    ) -> Result<(), StorageError> {
        let data = snapshot.into_inner();
        let body: Body = serde_json::from_slice(&data).map_err(|e| {
            StorageIOError::read_snapshot(Some(meta.signature()), openraft::AnyError::new(&e))
        })?;
        let loaded = Loaded {
            state: body.state,
            latched: body.latched.into_iter().collect(),
            resolved: body.resolved.into_iter().collect(),
            rtt: body.rtt.into_iter().collect(),
            outbox: body.outbox,
            first_start: false,
        };
        let stored = Stored {
            meta: meta.clone(),
            data,
        };
        self.store
            .replace_all(
                &loaded,
                Some(&body.audit),
                Some(&body.sessions),
                &[
                    (APPLIED, encode(&meta.last_log_id)?),
                    (MEMBERSHIP, encode(&meta.last_membership)?),
                    (SNAPSHOT, encode(&stored)?),
                ],
            )
            .map_err(|e| io_error(StorageIOError::write_state_machine, &e))?;
        self.announce(Event::Installed);
        Ok(())
    }

    async fn get_current_snapshot(&mut self) -> Result<Option<Snapshot<TypeConfig>>, StorageError> {
        Ok(self.decoded::<Stored>(SNAPSHOT)?.map(|s| Snapshot {
            meta: s.meta,
            snapshot: Box::new(Cursor::new(s.data)),
        }))
    }
}
