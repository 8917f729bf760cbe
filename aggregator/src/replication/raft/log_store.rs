//! The Raft log in sled: entries keyed by big-endian index (so ranges are
//! index ranges), the vote, the committed id and the last purged id in a
//! meta tree. Every change is flushed (fsync) before openraft is told it
//! is durable.

use std::fmt::Debug;
use std::ops::{Bound, RangeBounds};
use std::path::Path;

use openraft::storage::{LogFlushed, LogState, RaftLogStorage};
use openraft::{LogId, OptionalSend, RaftLogReader, StorageIOError, Vote};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{Entry, StorageError, TypeConfig, io_error};

/// sled-backed Raft log; clones share the same trees.
#[derive(Debug, Clone)]
pub struct LogStore {
    db: sled::Db,
    log: sled::Tree,
    meta: sled::Tree,
}

impl LogStore {
    /// Bytes the log uses on disk.
    pub fn size_on_disk(&self) -> u64 {
        self.db.size_on_disk().unwrap_or(0)
    }

    /// Open (or create) the log under `dir`.
    pub fn open(dir: &Path) -> Result<LogStore, StorageError> {
        // Waits briefly for a previous holder (a node just shut down in
        // this process, whose tasks still hold the log) like the store does.
        let db = crate::core::store::open_locked(dir)
            .map_err(|e| io_error(StorageIOError::read_logs, &e))?;
        let log = db
            .open_tree("raft_log")
            .map_err(|e| io_error(StorageIOError::read_logs, &e))?;
        let meta = db
            .open_tree("raft_meta")
            .map_err(|e| io_error(StorageIOError::read_logs, &e))?;
        Ok(LogStore { db, log, meta })
    }

    fn get<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>, StorageError> {
        let Some(bytes) = self
            .meta
            .get(key)
            .map_err(|e| io_error(StorageIOError::read, &e))?
        else {
            return Ok(None);
        };
        serde_json::from_slice(&bytes)
            .map(Some)
            .map_err(|e| io_error(StorageIOError::read, &e))
    }

    fn put<T: Serialize>(
        &self,
        key: &str,
        value: &T,
        err: fn(openraft::AnyError) -> StorageIOError<u64>,
    ) -> Result<(), StorageError> {
        let bytes = serde_json::to_vec(value).map_err(|e| io_error(err, &e))?;
        self.meta
            .insert(key, bytes)
            .map_err(|e| io_error(err, &e))?;
        self.flush(err)
    }

    fn flush(
        &self,
        err: fn(openraft::AnyError) -> StorageIOError<u64>,
    ) -> Result<(), StorageError> {
        self.db.flush().map(drop).map_err(|e| io_error(err, &e))
    }

    /// Remove the entries whose keys fall in `range`, durably.
    fn remove<R: RangeBounds<[u8; 8]>>(&self, range: R) -> Result<(), StorageError> {
        let mut batch = sled::Batch::default();
        for item in self.log.range(range) {
            let (key, _) = item.map_err(|e| io_error(StorageIOError::write_logs, &e))?;
            batch.remove(key);
        }
        self.log
            .apply_batch(batch)
            .map_err(|e| io_error(StorageIOError::write_logs, &e))?;
        self.flush(StorageIOError::write_logs)
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
        let end = match range.end_bound() {
            Bound::Included(i) => Bound::Included(i.to_be_bytes()),
            Bound::Excluded(i) => Bound::Excluded(i.to_be_bytes()),
            Bound::Unbounded => Bound::Unbounded,
        };
        self.log
            .range((Bound::Included(start.to_be_bytes()), end))
            .map(|item| {
                let (_, value) = item.map_err(|e| io_error(StorageIOError::read_logs, &e))?;
                Self::decode(&value)
            })
            .collect()
    }
}

impl RaftLogStorage<TypeConfig> for LogStore {
    type LogReader = LogStore;

    async fn get_log_state(&mut self) -> Result<LogState<TypeConfig>, StorageError> {
        let last_purged: Option<LogId<u64>> = self.get("last_purged")?;
        let last = match self
            .log
            .last()
            .map_err(|e| io_error(StorageIOError::read_logs, &e))?
        {
            Some((_, value)) => Some(Self::decode(&value)?.log_id),
            None => last_purged,
        };
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
        let mut batch = sled::Batch::default();
        for entry in entries {
            let bytes =
                serde_json::to_vec(&entry).map_err(|e| io_error(StorageIOError::write_logs, &e))?;
            batch.insert(&entry.log_id.index.to_be_bytes(), bytes);
        }
        self.log
            .apply_batch(batch)
            .map_err(|e| io_error(StorageIOError::write_logs, &e))?;
        let flushed = self.db.flush().map(drop).map_err(std::io::Error::other);
        let failed = flushed
            .as_ref()
            .err()
            .map(|e| io_error(StorageIOError::write_logs, e));
        callback.log_io_completed(flushed);
        failed.map_or(Ok(()), Err)
    }

    async fn truncate(&mut self, log_id: LogId<u64>) -> Result<(), StorageError> {
        self.remove(log_id.index.to_be_bytes()..)
    }

    async fn purge(&mut self, log_id: LogId<u64>) -> Result<(), StorageError> {
        // Record the purge first: a crash halfway leaves entries at or
        // below it, which are ignored, never a gap.
        self.put("last_purged", &log_id, StorageIOError::write_logs)?;
        self.remove(..=log_id.index.to_be_bytes())
    }
}
