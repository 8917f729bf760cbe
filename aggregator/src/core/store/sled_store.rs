//! The sled implementation of [`Store`]: one tree per object kind, keyed by
//! big-endian id so iteration is in id order, values as JSON; the health log
//! keyed by (member, sequence). Writes go through one transaction and a
//! flush (fsync) before they are acknowledged.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use gslb_shared::MemberId;
use serde::Serialize;
use serde::de::DeserializeOwned;
use sled::Transactional;
use sled::transaction::{ConflictableTransactionError, TransactionError, TransactionalTree};

use super::{Commit, Latched, Loaded, LogRecord, SCHEMA_VERSION, Store, StoreError, marker};
use crate::core::catalog::{CatalogState, Object, ObjectRef, Written};

/// Most health log entries kept per member.
pub const LOG_PER_MEMBER: usize = 1_000;

const KINDS: [&str; 5] = ["zones", "records", "pools", "members", "checks"];

/// sled-backed store.
#[derive(Debug)]
pub struct SledStore {
    db: sled::Db,
    /// The data directory (the marker lives there).
    dir: PathBuf,
    /// The marker is written: set after the first commit.
    marked: AtomicBool,
    meta: sled::Tree,
    kinds: [sled::Tree; 5],
    latched: sled::Tree,
    log: sled::Tree,
    /// Next health log sequence number.
    log_seq: AtomicU64,
}

fn db_err(e: impl std::fmt::Display) -> StoreError {
    StoreError::Db(e.to_string())
}

fn decode<T: DeserializeOwned>(what: &str, bytes: &[u8]) -> Result<T, StoreError> {
    serde_json::from_slice(bytes).map_err(|e| StoreError::Corrupt {
        what: what.to_owned(),
        error: e.to_string(),
    })
}

fn encode<T: Serialize>(value: &T) -> Vec<u8> {
    // Our own types serialize infallibly to JSON (no non-string map keys).
    serde_json::to_vec(value).unwrap_or_default()
}

fn kind_index(r: &ObjectRef) -> (usize, u64) {
    match r {
        ObjectRef::Zone(id) => (0, id.0),
        ObjectRef::Record(id) => (1, id.0),
        ObjectRef::Pool(id) => (2, id.0),
        ObjectRef::Member(id) => (3, id.0),
        ObjectRef::Check(id) => (4, id.0),
    }
}

fn u64_at(tree: &sled::Tree, key: &str) -> Result<u64, StoreError> {
    Ok(tree
        .get(key)
        .map_err(db_err)?
        .and_then(|v| <[u8; 8]>::try_from(v.as_ref()).ok())
        .map_or(0, u64::from_be_bytes))
}

/// How long `open` waits for another holder of the directory lock (a
/// process still shutting down, or sled's own flusher after a drop).
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// The page cache of a store, in MiB, unless `--store-cache-mib` says
/// otherwise: sled's own default is 1 GiB per store, for a store and health
/// log that only grow. (sled's in-memory tree nodes are outside this bound:
/// see docs/benchmarks.md, "Memory and the cluster, second pass".)
pub const DEFAULT_CACHE_MIB: u64 = 64;

static CACHE_MIB: AtomicU64 = AtomicU64::new(DEFAULT_CACHE_MIB);

/// Set the page cache of every store opened from now on (each of a
/// cluster node's two stores has its own).
pub fn set_cache_mib(mib: u64) {
    CACHE_MIB.store(mib, Ordering::Relaxed);
}

pub(crate) fn open_locked(dir: &Path) -> Result<sled::Db, StoreError> {
    let deadline = std::time::Instant::now() + LOCK_WAIT;
    loop {
        match sled::Config::new()
            .path(dir)
            .mode(sled::Mode::LowSpace)
            .cache_capacity(CACHE_MIB.load(Ordering::Relaxed) * 1024 * 1024)
            .open()
        {
            Ok(db) => return Ok(db),
            // sled reports a held lock as an IO error of kind Other with this text.
            Err(sled::Error::Io(e)) if e.to_string().contains("could not acquire lock") => {
                if std::time::Instant::now() >= deadline {
                    return Err(StoreError::InUse {
                        dir: dir.display().to_string(),
                    });
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) => return Err(db_err(e)),
        }
    }
}

impl SledStore {
    /// Open (or create) the store in `dir`. A store marked as initialised
    /// whose data is gone or damaged is refused without writing to it.
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        let marked = marker::marked(dir)?;
        if marked && !dir.join("db").exists() {
            return Err(marker::lost(dir, "sled's db file is missing"));
        }
        if marked {
            // sled repairs what it finds while opening (it rewrote a
            // truncated db), so a marked store is first opened and loaded
            // from a scratch copy: a refused store is never written.
            marker::on_copy(dir, |copy| {
                Self::open_checked(copy, true)?.load_all().map(drop)
            })?;
        }
        let store = marker::no_panic(dir, || Self::open_checked(dir, marked))?;
        let version = store.version()?;
        if !marked && version > 0 {
            // A store from before the marker existed.
            marker::mark(dir, version)?;
            store.marked.store(true, Ordering::SeqCst);
        }
        Ok(store)
    }

    fn version(&self) -> Result<u64, StoreError> {
        u64_at(&self.meta, "version")
    }

    fn open_checked(dir: &Path, marked: bool) -> Result<Self, StoreError> {
        let db = open_locked(dir)?;
        let meta = db.open_tree("meta").map_err(db_err)?;
        let found = meta
            .get("schema")
            .map_err(db_err)?
            .and_then(|v| <[u8; 4]>::try_from(v.as_ref()).ok())
            .map(u32::from_be_bytes);
        match found {
            Some(v) if v > SCHEMA_VERSION => return Err(StoreError::NewerSchema { found: v }),
            // Older schemas would be migrated here; version 1 is the first.
            Some(_) => {}
            None if marked => {
                return Err(marker::lost(
                    dir,
                    "its data is gone (sled opened with no schema and no version)",
                ));
            }
            None => {
                meta.insert("schema", &SCHEMA_VERSION.to_be_bytes())
                    .map_err(db_err)?;
                db.flush().map_err(db_err)?;
            }
        }
        let open = |name: &str| db.open_tree(name).map_err(db_err);
        let kinds = [
            open(KINDS[0])?,
            open(KINDS[1])?,
            open(KINDS[2])?,
            open(KINDS[3])?,
            open(KINDS[4])?,
        ];
        let latched = open("latched")?;
        let log = open("log")?;
        let log_seq = u64_at(&meta, "log_seq")?;
        let version = u64_at(&meta, "version")?;
        if marked && version == 0 {
            return Err(marker::lost(dir, "its version is 0 (the data is gone)"));
        }
        Ok(Self {
            db,
            dir: dir.to_owned(),
            marked: AtomicBool::new(marked),
            meta,
            kinds,
            latched,
            log,
            log_seq: AtomicU64::new(log_seq),
        })
    }
}

impl SledStore {
    fn load_all(&self) -> Result<Loaded, StoreError> {
        let mut state = CatalogState {
            version: u64_at(&self.meta, "version")?,
            last_id: u64_at(&self.meta, "last_id")?,
            epoch: u64_at(&self.meta, "epoch")?,
            hold: match self.meta.get("hold").map_err(db_err)? {
                Some(bytes) => decode("decision hold", &bytes)?,
                None => Default::default(),
            },
            ..Default::default()
        };
        let mut empty = state.version == 0;
        for (i, tree) in self.kinds.iter().enumerate() {
            for item in tree.iter() {
                let (_, value) = item.map_err(db_err)?;
                empty = false;
                let object = decode::<Object>(KINDS[i], &value)?;
                state.put(object);
            }
        }
        let mut latched = std::collections::BTreeMap::new();
        for item in self.latched.iter() {
            let (key, value) = item.map_err(db_err)?;
            let id = <[u8; 8]>::try_from(key.as_ref())
                .map(u64::from_be_bytes)
                .map_err(|_| StoreError::Corrupt {
                    what: "latched key".into(),
                    error: "not 8 bytes".into(),
                })?;
            latched.insert(MemberId(id), decode::<Latched>("latched", &value)?);
        }
        Ok(Loaded {
            state,
            latched,
            first_start: empty,
        })
    }
}

/// Raw entries of the meta tree that a caller (the Raft state machine)
/// keeps beside the catalog: written in the same transaction as a commit.
pub type MetaEntries<'a> = &'a [(&'a str, Vec<u8>)];

impl SledStore {
    /// Write `commit` (if any) and the raw `meta` entries in one transaction,
    /// durable on return.
    pub fn commit_with_meta(
        &self,
        commit: Option<&Commit>,
        meta: MetaEntries<'_>,
    ) -> Result<(), StoreError> {
        let trees = self.all_trees();
        let result: Result<(), TransactionError<StoreError>> = trees.as_slice().transaction(|t| {
            if let Some(commit) = commit {
                apply_commit(t, commit)?;
            }
            for (key, value) in meta {
                t[0].insert(*key, value.as_slice())?;
            }
            Ok(())
        });
        result.map_err(|e| match e {
            TransactionError::Abort(e) => e,
            TransactionError::Storage(e) => db_err(e),
        })?;
        self.db.flush().map_err(db_err)?;
        if let Some(commit) = commit {
            self.mark_once(commit.version)?;
        }
        Ok(())
    }

    /// Write the marker with the first commit that holds data.
    fn mark_once(&self, version: u64) -> Result<(), StoreError> {
        if version > 0 && !self.marked.load(Ordering::SeqCst) {
            marker::mark(&self.dir, version)?;
            self.marked.store(true, Ordering::SeqCst);
        }
        Ok(())
    }

    /// A raw meta entry written by [`SledStore::commit_with_meta`].
    pub fn meta_get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        Ok(self.meta.get(key).map_err(db_err)?.map(|v| v.to_vec()))
    }

    /// Replace the catalog and latched state with `loaded` and set `meta`.
    /// Not one transaction (a catalog may be large): `marker` is set first
    /// and removed last, so a reader that finds it knows the state is
    /// partial. The health log is kept.
    pub fn replace_all(
        &self,
        loaded: &Loaded,
        meta: MetaEntries<'_>,
        marker: &str,
    ) -> Result<(), StoreError> {
        self.meta.insert(marker, &[1u8]).map_err(db_err)?;
        self.db.flush().map_err(db_err)?;
        for tree in self.kinds.iter().chain([&self.latched]) {
            tree.clear().map_err(db_err)?;
        }
        for object in loaded.state.objects() {
            let (kind, id) = kind_index(&object.reference());
            self.kinds[kind]
                .insert(id.to_be_bytes(), encode(&object))
                .map_err(db_err)?;
        }
        for (member, latched) in &loaded.latched {
            self.latched
                .insert(member.0.to_be_bytes(), encode(latched))
                .map_err(db_err)?;
        }
        for (key, value) in [
            ("version", loaded.state.version.to_be_bytes().to_vec()),
            ("last_id", loaded.state.last_id.to_be_bytes().to_vec()),
            ("epoch", loaded.state.epoch.to_be_bytes().to_vec()),
            ("hold", encode(&loaded.state.hold)),
        ]
        .iter()
        .map(|(k, v)| (*k, v.clone()))
        .chain(meta.iter().map(|(k, v)| (*k, v.clone())))
        {
            self.meta.insert(key, value).map_err(db_err)?;
        }
        self.db.flush().map_err(db_err)?;
        self.meta.remove(marker).map_err(db_err)?;
        self.db.flush().map_err(db_err)?;
        self.mark_once(loaded.state.version)
    }

    fn all_trees(&self) -> [&sled::Tree; 7] {
        [
            &self.meta,
            &self.kinds[0],
            &self.kinds[1],
            &self.kinds[2],
            &self.kinds[3],
            &self.kinds[4],
            &self.latched,
        ]
    }
}

type TxResult = Result<(), ConflictableTransactionError<StoreError>>;

fn apply_commit(trees: &[TransactionalTree], commit: &Commit) -> TxResult {
    // trees: meta, 5 kinds, latched
    for change in &commit.changes {
        match &change.what {
            Written::Upserted(object) => {
                let (kind, id) = kind_index(&object.reference());
                trees[1 + kind].insert(&id.to_be_bytes(), encode(object.as_ref()))?;
            }
            Written::Deleted(r) => {
                let (kind, id) = kind_index(r);
                trees[1 + kind].remove(&id.to_be_bytes())?;
                if let ObjectRef::Member(m) = r {
                    trees[6].remove(&m.0.to_be_bytes())?;
                }
            }
        }
    }
    for (member, latched) in &commit.latched {
        match latched {
            Some(l) => trees[6].insert(&member.0.to_be_bytes(), encode(l))?,
            None => trees[6].remove(&member.0.to_be_bytes())?,
        };
    }
    trees[0].insert("version", &commit.version.to_be_bytes())?;
    trees[0].insert("last_id", &commit.last_id.to_be_bytes())?;
    if let Some(epoch) = commit.epoch {
        trees[0].insert("epoch", &epoch.to_be_bytes())?;
    }
    if let Some(hold) = &commit.hold {
        trees[0].insert("hold", encode(hold))?;
    }
    Ok(())
}

impl Store for SledStore {
    fn load(&self) -> Result<Loaded, StoreError> {
        marker::no_panic(&self.dir, || self.load_all())
    }

    fn commit(&self, commit: &Commit) -> Result<u64, StoreError> {
        self.commit_with_meta(Some(commit), &[])?;
        Ok(commit.version)
    }

    fn append_log(&self, records: &[LogRecord]) -> Result<(), StoreError> {
        let mut touched = Vec::new();
        for r in records {
            let seq = self.log_seq.fetch_add(1, Ordering::Relaxed);
            let mut key = r.member.0.to_be_bytes().to_vec();
            key.extend_from_slice(&seq.to_be_bytes());
            self.log.insert(key, encode(&r.entry)).map_err(db_err)?;
            touched.push(r.member);
        }
        let next = self.log_seq.load(Ordering::Relaxed);
        self.meta
            .insert("log_seq", &next.to_be_bytes())
            .map_err(db_err)?;
        touched.dedup();
        for member in touched {
            let prefix = member.0.to_be_bytes();
            let count = self.log.scan_prefix(prefix).count();
            if count > LOG_PER_MEMBER {
                let old: Vec<_> = self
                    .log
                    .scan_prefix(prefix)
                    .keys()
                    .take(count - LOG_PER_MEMBER)
                    .filter_map(Result::ok)
                    .collect();
                for key in old {
                    self.log.remove(key).map_err(db_err)?;
                }
            }
        }
        self.db.flush().map_err(db_err)?;
        Ok(())
    }

    fn health_log(
        &self,
        member: MemberId,
        limit: usize,
    ) -> Result<Vec<gslb_engine::Output>, StoreError> {
        let mut entries = Vec::new();
        for item in self
            .log
            .scan_prefix(member.0.to_be_bytes())
            .rev()
            .take(limit)
        {
            let (_, value) = item.map_err(db_err)?;
            entries.push(decode("health log entry", &value)?);
        }
        entries.reverse();
        Ok(entries)
    }

    fn size_on_disk(&self) -> u64 {
        self.db.size_on_disk().unwrap_or(0)
    }
}
