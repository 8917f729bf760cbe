//! The Raft log in redb: entries keyed by index (so ranges are index
//! ranges), the vote, the committed id and the last purged id in a meta
//! table. Every change is one transaction, durable (fsync) when it
//! commits, before openraft is told it is.

use std::fmt::Debug;
use std::ops::{Bound, RangeBounds};
use std::path::Path;
use std::sync::Arc;

use openraft::storage::{LogFlushed, LogState, RaftLogStorage};
use openraft::{LogId, OptionalSend, RaftLogReader, StorageIOError, Vote};
use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{Entry, StorageError, TypeConfig, io_error};

/// The log's database file inside its directory.
const FILE: &str = "raft-log.redb";
const LOG: TableDefinition<u64, &[u8]> = TableDefinition::new("raft_log");
const META: TableDefinition<&str, &[u8]> = TableDefinition::new("raft_meta");

type IoKind = fn(openraft::AnyError) -> StorageIOError<u64>;

/// A failed read of the log.
fn read_failed(e: impl std::fmt::Display) -> StorageError {
    io_error(
        StorageIOError::read_logs,
        &std::io::Error::other(e.to_string()),
    )
}

/// redb-backed Raft log; clones share the same database.
#[derive(Debug, Clone)]
pub struct LogStore {
    db: Arc<Database>,
    /// The database file.
    path: std::path::PathBuf,
}

impl LogStore {
    /// Bytes the log uses on disk.
    pub fn size_on_disk(&self) -> u64 {
        std::fs::metadata(&self.path).map_or(0, |m| m.len())
    }

    /// Open (or create) the log under `dir`.
    pub fn open(dir: &Path) -> Result<LogStore, StorageError> {
        let failed = |e: &dyn std::fmt::Display| {
            io_error(
                StorageIOError::read_logs,
                &std::io::Error::other(e.to_string()),
            )
        };
        std::fs::create_dir_all(dir).map_err(|e| failed(&e))?;
        let path = dir.join(FILE);
        // Waits briefly for a previous holder (a node just shut down in
        // this process, whose tasks still hold the log) like the store does.
        let db = crate::core::store::open_locked(&path).map_err(|e| failed(&e))?;
        let w = db.begin_write().map_err(|e| failed(&e))?;
        w.open_table(LOG).map_err(|e| failed(&e))?;
        w.open_table(META).map_err(|e| failed(&e))?;
        w.commit().map_err(|e| failed(&e))?;
        Ok(LogStore {
            db: Arc::new(db),
            path,
        })
    }

    fn get<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, StorageError> {
        let read = |e: &dyn std::fmt::Display| {
            io_error(StorageIOError::read, &std::io::Error::other(e.to_string()))
        };
        let txn = self.db.begin_read().map_err(|e| read(&e))?;
        let meta = txn.open_table(META).map_err(|e| read(&e))?;
        let Some(bytes) = meta.get(key).map_err(|e| read(&e))? else {
            return Ok(None);
        };
        serde_json::from_slice(bytes.value())
            .map(Some)
            .map_err(|e| read(&e))
    }

    /// Run `f` in one write transaction and commit it (durable on return).
    fn write(
        &self,
        err: IoKind,
        f: impl FnOnce(&redb::WriteTransaction) -> Result<(), redb::Error>,
    ) -> Result<(), StorageError> {
        let failed =
            |e: &dyn std::fmt::Display| io_error(err, &std::io::Error::other(e.to_string()));
        let w = self.db.begin_write().map_err(|e| failed(&e))?;
        f(&w).map_err(|e| failed(&e))?;
        w.commit().map_err(|e| failed(&e))
    }

    fn put<T: Serialize>(&self, key: &str, value: &T, err: IoKind) -> Result<(), StorageError> {
        let bytes = serde_json::to_vec(value).map_err(|e| io_error(err, &e))?;
        self.write(err, |w| {
            w.open_table(META)?.insert(key, bytes.as_slice())?;
            Ok(())
        })
    }

    /// Remove the entries whose indexes fall in `range`, durably.
    fn remove(&self, range: impl RangeBounds<u64>) -> Result<(), StorageError> {
        self.write(StorageIOError::write_logs, |w| {
            w.open_table(LOG)?.retain_in(range, |_, _| false)?;
            Ok(())
        })
    }

    /// Run `f` on the log table in one read transaction.
    fn read_log<T>(
        &self,
        f: impl FnOnce(&redb::ReadOnlyTable<u64, &'static [u8]>) -> Result<T, StorageError>,
    ) -> Result<T, StorageError> {
        let txn = self.db.begin_read().map_err(read_failed)?;
        let log = txn.open_table(LOG).map_err(read_failed)?;
        f(&log)
    }

    fn decode(bytes: &[u8]) -> Result<Entry, StorageError> {
        serde_json::from_slice(bytes).map_err(|e| io_error(StorageIOError::read_logs, &e))
    }
}

impl RaftLogReader<TypeConfig> for LogStore {
    async fn try_get_log_entries<RB: RangeBounds<u64> + Clone + Debug + OptionalSend>(
        &mut self,
        range: RB,
    ) -> Result<Vec<Entry>, StorageError> {
        let start = match range.start_bound() {
            Bound::Included(i) => *i,
            Bound::Excluded(i) => i.saturating_add(1),
            Bound::Unbounded => 0,
        };
        let end = range.end_bound().cloned();
        self.read_log(|log| {
            log.range((Bound::Included(start), end))
                .map_err(read_failed)?
                .map(|item| {
                    let (_, value) = item.map_err(read_failed)?;
                    Self::decode(value.value())
                })
                .collect()
        })
    }
}

impl RaftLogStorage<TypeConfig> for LogStore {
    type LogReader = LogStore;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, StorageError> {
        let last_purged: Option<LogId<u64>> = self.get("last_purged")?;
        let last = self.read_log(|log| match log.last().map_err(read_failed)? {
            Some((_, value)) => Ok(Some(Self::decode(value.value())?.log_id)),
            None => Ok(last_purged),
        })?;
        Ok(LogState {
            last_purged_log_id: last_purged,
            last_log_id: last,
        })
    }

    async fn get_log_reader(&mut self) -> LogStore {
        self.clone()
    }

    async fn save_vote(&mut self, vote: &Vote<u64>) -> Result<(), StorageError> {
        self.put("vote", vote, StorageIOError::write_vote)
    }

    async fn read_vote(&mut self) -> Result<Option<Vote<u64>>, StorageError> {
        self.get("vote")
    }

    async fn save_committed(&mut self, committed: Option<LogId<u64>>) -> Result<(), StorageError> {
        self.put("committed", &committed, StorageIOError::write)
    }

    async fn read_committed(&mut self) -> Result<Option<LogId<u64>>, StorageError> {
        Ok(self.get::<Option<LogId<u64>>>("committed")?.flatten())
    }

    async fn append<I>(
        &mut self,
        entries: I,
        callback: LogFlushed<TypeConfig>,
    ) -> Result<(), StorageError>
    where
        I: IntoIterator<Item = Entry> + OptionalSend,
        I::IntoIter: OptionalSend,
    {
        let mut encoded = Vec::new();
        for entry in entries {
            let bytes =
                serde_json::to_vec(&entry).map_err(|e| io_error(StorageIOError::write_logs, &e))?;
            encoded.push((entry.log_id.index, bytes));
        }
        let written = self.write(StorageIOError::write_logs, |w| {
            let mut log = w.open_table(LOG)?;
            for (index, bytes) in &encoded {
                log.insert(*index, bytes.as_slice())?;
            }
            Ok(())
        });
        callback.log_io_completed(
            written
                .as_ref()
                .map(drop)
                .map_err(|e| std::io::Error::other(e.to_string())),
        );
        written
    }

    async fn truncate(&mut self, log_id: LogId<u64>) -> Result<(), StorageError> {
        self.remove(log_id.index..)
    }

    async fn purge(&mut self, log_id: LogId<u64>) -> Result<(), StorageError> {
        // Record the purge first: a crash halfway leaves entries at or
        // below it, which are ignored, never a gap.
        self.put("last_purged", &log_id, StorageIOError::write_logs)?;
        self.remove(..=log_id.index)
    }
}
