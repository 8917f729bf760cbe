//! The redb implementation of [`Store`]: one table per object kind keyed by
//! id (so iteration is in id order), values as JSON; latched state by
//! member; the health log keyed by (member, sequence); named meta entries.
//! Every write is one transaction, durable (fsync) when it commits. redb's
//! page cache is bounded (`--store-cache-mib`) and a commit's pages are
//! freed once written, so the store's resident size follows its cache, not
//! the size of the largest write.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use gslb_shared::MemberId;
use redb::{
    Database, ReadTransaction, ReadableDatabase, ReadableTable, TableDefinition, TableHandle,
    WriteTransaction,
};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{Commit, Latched, Loaded, LogRecord, SCHEMA_VERSION, Store, StoreError, marker};
use crate::core::audit::{AuditQuery, AuditRecord};
use crate::core::catalog::{CatalogState, Object, ObjectRef, Written};
use crate::core::notify::{Event, Outbox, OutboxWrite};
use crate::core::sessions::{SessionRecord, SessionWrite};

/// Most health log entries kept per member.
pub const LOG_PER_MEMBER: usize = 1_000;

/// The database file inside the data directory.
pub const FILE: &str = "gslb.redb";

mod audit;
mod outbox;
mod sessions;

pub use audit::{set_limits as set_audit_limits, trimmed as audit_trimmed};

const META: TableDefinition<&str, &[u8]> = TableDefinition::new("meta");
const KINDS: [TableDefinition<u64, &[u8]>; 7] = [
    TableDefinition::new("zones"),
    TableDefinition::new("records"),
    TableDefinition::new("pools"),
    TableDefinition::new("members"),
    TableDefinition::new("checks"),
    TableDefinition::new("tsig_keys"),
    TableDefinition::new("notifiers"),
];
const LATCHED: TableDefinition<u64, &[u8]> = TableDefinition::new("latched");
const RESOLVED: TableDefinition<u64, &[u8]> = TableDefinition::new("resolved");
const RTT: TableDefinition<u64, &[u8]> = TableDefinition::new("rtt");
const LOG: TableDefinition<(u64, u64), &[u8]> = TableDefinition::new("log");
/// Each object's revision, by (kind index, id).
const REVISIONS: TableDefinition<(u64, u64), u64> = TableDefinition::new("revisions");

/// redb-backed store.
#[derive(Debug)]
pub struct RedbStore {
    db: Database,
    /// The data directory (the marker lives there).
    dir: PathBuf,
    /// The marker is written: set after the first commit.
    marked: AtomicBool,
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
        ObjectRef::TsigKey(id) => (5, id.0),
        ObjectRef::Notifier(id) => (6, id.0),
    }
}

/// The object a [`REVISIONS`] key names.
fn object_ref((kind, id): (u64, u64)) -> Option<ObjectRef> {
    Some(match kind {
        0 => ObjectRef::Zone(gslb_shared::ZoneId(id)),
        1 => ObjectRef::Record(gslb_shared::RecordSetId(id)),
        2 => ObjectRef::Pool(gslb_shared::PoolId(id)),
        3 => ObjectRef::Member(gslb_shared::MemberId(id)),
        4 => ObjectRef::Check(gslb_shared::CheckId(id)),
        5 => ObjectRef::TsigKey(gslb_shared::TsigKeyId(id)),
        6 => ObjectRef::Notifier(gslb_shared::NotifierId(id)),
        _ => return None,
    })
}

fn meta_in(txn: &ReadTransaction, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
    let table = txn.open_table(META).map_err(db_err)?;
    Ok(table.get(key).map_err(db_err)?.map(|v| v.value().to_vec()))
}

fn u64_in(txn: &ReadTransaction, key: &str) -> Result<u64, StoreError> {
    Ok(meta_in(txn, key)?
        .and_then(|v| <[u8; 8]>::try_from(v.as_slice()).ok())
        .map_or(0, u64::from_be_bytes))
}

/// How long `open` waits for another holder of the database (a process
/// still shutting down, or a node just dropped in this process).
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// The page cache of a store, in MiB, unless `--store-cache-mib` says
/// otherwise. The store is read whole only at start (the core holds the
/// catalog), so a small cache costs writes little: pages come back from
/// the kernel's page cache.
pub const DEFAULT_CACHE_MIB: u64 = 16;

static CACHE_MIB: AtomicU64 = AtomicU64::new(DEFAULT_CACHE_MIB);

/// Set the page cache of every database opened from now on (each of a
/// cluster node's two has its own).
pub fn set_cache_mib(mib: u64) {
    CACHE_MIB.store(mib, Ordering::Relaxed);
}

/// Open (or create) the database file `path`, waiting briefly for another
/// holder to let go.
pub(crate) fn open_locked(path: &Path) -> Result<Database, StoreError> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| db_err(format!("{}: {e}", dir.display())))?;
    }
    let deadline = std::time::Instant::now() + LOCK_WAIT;
    let cache =
        usize::try_from(CACHE_MIB.load(Ordering::Relaxed) * 1024 * 1024).unwrap_or(usize::MAX);
    loop {
        match Database::builder().set_cache_size(cache).create(path) {
            Ok(db) => {
                // Owner only: the catalog holds TSIG secrets.
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
                    .map_err(|e| db_err(format!("{}: {e}", path.display())))?;
                return Ok(db);
            }
            Err(redb::DatabaseError::DatabaseAlreadyOpen) => {
                if std::time::Instant::now() >= deadline {
                    let dir = path.parent().unwrap_or(path);
                    return Err(StoreError::InUse {
                        dir: dir.display().to_string(),
                    });
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            Err(e) => return Err(db_err(format!("{}: {e}", path.display()))),
        }
    }
}

impl RedbStore {
    /// Open (or create) the store in `dir`. A store marked as initialised
    /// whose data is gone or damaged is refused without writing to it.
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        if !dir.join(FILE).exists() && dir.join("conf").exists() && dir.join("db").exists() {
            return Err(StoreError::OldFormat {
                dir: dir.display().to_string(),
            });
        }
        let marked = marker::marked(dir)?;
        if marked && !dir.join(FILE).exists() {
            return Err(marker::lost(
                dir,
                format!("its database file {FILE} is missing"),
            ));
        }
        if marked {
            // redb repairs a file it finds unclean while opening, so a
            // marked store is first opened and loaded from a scratch copy:
            // a refused store is never written.
            marker::on_copy(dir, |copy| {
                Self::open_checked(copy, true)
                    .and_then(|s| s.load_all())
                    .map(drop)
                    .map_err(|e| match e {
                        StoreError::Db(why) | StoreError::Corrupt { error: why, .. } => {
                            marker::lost(copy, format!("the database is damaged ({why})"))
                        }
                        other => other,
                    })
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
        u64_in(&self.db.begin_read().map_err(db_err)?, "version")
    }

    fn open_checked(dir: &Path, marked: bool) -> Result<Self, StoreError> {
        let db = open_locked(&dir.join(FILE))?;
        let w = db.begin_write().map_err(db_err)?;
        let found = {
            let mut meta = w.open_table(META).map_err(db_err)?;
            let found = meta
                .get("schema")
                .map_err(db_err)?
                .and_then(|v| <[u8; 4]>::try_from(v.value()).ok())
                .map(u32::from_be_bytes);
            if found.is_none() && !marked {
                meta.insert("schema", SCHEMA_VERSION.to_be_bytes().as_slice())
                    .map_err(db_err)?;
            }
            found
        };
        match found {
            Some(v) if v > SCHEMA_VERSION => return Err(StoreError::NewerSchema { found: v }),
            // Older schemas would be migrated here; version 1 is the first.
            Some(_) => {}
            None if marked => {
                return Err(marker::lost(
                    dir,
                    "its data is gone (the database holds no schema and no version)",
                ));
            }
            None => {}
        }
        // Every table exists from the first open on, so reads never meet a
        // missing one.
        for kind in KINDS {
            w.open_table(kind).map_err(db_err)?;
        }
        w.open_table(LATCHED).map_err(db_err)?;
        w.open_table(RESOLVED).map_err(db_err)?;
        w.open_table(RTT).map_err(db_err)?;
        w.open_table(LOG).map_err(db_err)?;
        w.open_table(REVISIONS).map_err(db_err)?;
        outbox::create(&w)?;
        audit::create(&w)?;
        sessions::create(&w)?;
        w.commit().map_err(db_err)?;
        let r = db.begin_read().map_err(db_err)?;
        let log_seq = u64_in(&r, "log_seq")?;
        let version = u64_in(&r, "version")?;
        drop(r);
        if marked && version == 0 {
            return Err(marker::lost(dir, "its version is 0 (the data is gone)"));
        }
        Ok(Self {
            db,
            dir: dir.to_owned(),
            marked: AtomicBool::new(marked),
            log_seq: AtomicU64::new(log_seq),
        })
    }
}

impl RedbStore {
    fn load_all(&self) -> Result<Loaded, StoreError> {
        Ok(self.load_with_meta(&[])?.0)
    }

    /// Everything loaded, and the raw meta entries `keys`, read in one
    /// transaction (so they describe the same state).
    pub fn load_with_meta(&self, keys: &[&str]) -> Result<LoadedWithMeta, StoreError> {
        let txn = self.db.begin_read().map_err(db_err)?;
        let mut state = CatalogState {
            version: u64_in(&txn, "version")?,
            last_id: u64_in(&txn, "last_id")?,
            epoch: u64_in(&txn, "epoch")?,
            catalog_version: u64_in(&txn, "catalog_version")?,
            hold: match meta_in(&txn, "hold")? {
                Some(bytes) => decode("decision hold", &bytes)?,
                None => Default::default(),
            },
            ..Default::default()
        };
        let mut empty = state.version == 0;
        for kind in KINDS.iter() {
            let table = txn.open_table(*kind).map_err(db_err)?;
            for item in table.iter().map_err(db_err)? {
                let (_, value) = item.map_err(db_err)?;
                empty = false;
                state.put(decode::<Object>(kind.name(), value.value())?);
            }
        }
        let table = txn.open_table(REVISIONS).map_err(db_err)?;
        for item in table.iter().map_err(db_err)? {
            let (key, value) = item.map_err(db_err)?;
            if let Some(r) = object_ref(key.value()) {
                state.revisions.insert(r, value.value());
            }
        }
        let mut latched = std::collections::BTreeMap::new();
        let table = txn.open_table(LATCHED).map_err(db_err)?;
        for item in table.iter().map_err(db_err)? {
            let (key, value) = item.map_err(db_err)?;
            latched.insert(
                MemberId(key.value()),
                decode::<Latched>("latched", value.value())?,
            );
        }
        let mut resolved = std::collections::BTreeMap::new();
        let table = txn.open_table(RESOLVED).map_err(db_err)?;
        for item in table.iter().map_err(db_err)? {
            let (key, value) = item.map_err(db_err)?;
            resolved.insert(
                MemberId(key.value()),
                decode::<gslb_shared::Resolved>("resolved", value.value())?,
            );
        }
        let mut rtt = std::collections::BTreeMap::new();
        let table = txn.open_table(RTT).map_err(db_err)?;
        for item in table.iter().map_err(db_err)? {
            let (key, value) = item.map_err(db_err)?;
            rtt.insert(
                MemberId(key.value()),
                decode::<gslb_shared::Rtts>("rtt", value.value())?,
            );
        }
        let meta = keys
            .iter()
            .map(|k| meta_in(&txn, k))
            .collect::<Result<_, _>>()?;
        let loaded = Loaded {
            state,
            latched,
            resolved,
            rtt,
            outbox: outbox::dump(&txn)?,
            first_start: empty,
        };
        Ok((loaded, meta))
    }
}

/// What [`RedbStore::load_with_meta`] reads: the state and the asked
/// meta entries, in the order asked.
pub type LoadedWithMeta = (Loaded, Vec<Option<Vec<u8>>>);

/// Raw entries of the meta table that a caller (the Raft state machine)
/// keeps beside the catalog: written in the same transaction as a commit.
pub type MetaEntries<'a> = &'a [(&'a str, Vec<u8>)];

impl RedbStore {
    /// Write `commit` (if any) and the raw `meta` entries in one
    /// transaction, durable on return.
    pub fn commit_with_meta(
        &self,
        commit: Option<&Commit>,
        meta: MetaEntries<'_>,
    ) -> Result<(), StoreError> {
        self.commit_all(commit, None, None, &[], meta)
    }

    /// Write `commit`, `outbox` and `sessions` (if any) and the raw `meta`
    /// entries in one transaction, durable on return.
    pub fn commit_all(
        &self,
        commit: Option<&Commit>,
        write: Option<&OutboxWrite>,
        sessions: Option<&SessionWrite>,
        records: &[AuditRecord],
        meta: MetaEntries<'_>,
    ) -> Result<(), StoreError> {
        let w = self.db.begin_write().map_err(db_err)?;
        if let Some(commit) = commit {
            apply_commit(&w, commit)?;
        }
        if let Some(write) = write {
            outbox::write(&w, write)?;
        }
        if let Some(write) = sessions {
            sessions::write(&w, write)?;
        }
        audit::append(&w, records)?;
        put_meta(&w, meta)?;
        w.commit().map_err(db_err)?;
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

    /// A raw meta entry written by [`RedbStore::commit_with_meta`].
    pub fn meta_get(&self, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        meta_in(&self.db.begin_read().map_err(db_err)?, key)
    }

    /// Replace the catalog and latched state with `loaded` and set `meta`,
    /// in one transaction. The health log is kept.
    pub fn replace_all(
        &self,
        loaded: &Loaded,
        audit: Option<&[AuditRecord]>,
        ui_sessions: Option<&[(String, SessionRecord)]>,
        meta: MetaEntries<'_>,
    ) -> Result<(), StoreError> {
        let w = self.db.begin_write().map_err(db_err)?;
        for table in KINDS.into_iter().chain([LATCHED, RESOLVED, RTT]) {
            w.delete_table(table).map_err(db_err)?;
            w.open_table(table).map_err(db_err)?;
        }
        w.delete_table(REVISIONS).map_err(db_err)?;
        {
            let mut revisions = w.open_table(REVISIONS).map_err(db_err)?;
            for (r, revision) in &loaded.state.revisions {
                let (kind, id) = kind_index(r);
                revisions
                    .insert((kind as u64, id), *revision)
                    .map_err(db_err)?;
            }
        }
        {
            let mut kinds = open_kinds(&w)?;
            for object in loaded.state.objects() {
                let (kind, id) = kind_index(&object.reference());
                kinds[kind]
                    .insert(id, encode(&object).as_slice())
                    .map_err(db_err)?;
            }
            let mut latched = w.open_table(LATCHED).map_err(db_err)?;
            for (member, l) in &loaded.latched {
                latched
                    .insert(member.0, encode(l).as_slice())
                    .map_err(db_err)?;
            }
            let mut resolved = w.open_table(RESOLVED).map_err(db_err)?;
            for (member, r) in &loaded.resolved {
                resolved
                    .insert(member.0, encode(r).as_slice())
                    .map_err(db_err)?;
            }
            let mut rtt = w.open_table(RTT).map_err(db_err)?;
            for (member, r) in &loaded.rtt {
                rtt.insert(member.0, encode(r).as_slice()).map_err(db_err)?;
            }
        }
        outbox::replace(&w, &loaded.outbox)?;
        if let Some(records) = audit {
            audit::replace(&w, records, loaded.state.version)?;
        }
        if let Some(all) = ui_sessions {
            sessions::replace(&w, all)?;
        }
        let state = &loaded.state;
        let own = [
            ("version", state.version.to_be_bytes().to_vec()),
            ("last_id", state.last_id.to_be_bytes().to_vec()),
            ("epoch", state.epoch.to_be_bytes().to_vec()),
            ("hold", encode(&state.hold)),
            (
                "catalog_version",
                state.catalog_version.to_be_bytes().to_vec(),
            ),
        ];
        put_meta(&w, &own)?;
        put_meta(&w, meta)?;
        w.commit().map_err(db_err)?;
        self.mark_once(state.version)
    }
}

fn put_meta(w: &WriteTransaction, entries: MetaEntries<'_>) -> Result<(), StoreError> {
    let mut table = w.open_table(META).map_err(db_err)?;
    for (key, value) in entries {
        table.insert(*key, value.as_slice()).map_err(db_err)?;
    }
    Ok(())
}

/// The object tables, open for writing, in [`KINDS`] order.
fn open_kinds(
    w: &WriteTransaction,
) -> Result<Vec<redb::Table<'_, u64, &'static [u8]>>, StoreError> {
    KINDS
        .into_iter()
        .map(|kind| w.open_table(kind).map_err(db_err))
        .collect()
}

fn apply_commit(w: &WriteTransaction, commit: &Commit) -> Result<(), StoreError> {
    let mut latched = w.open_table(LATCHED).map_err(db_err)?;
    let mut resolved = w.open_table(RESOLVED).map_err(db_err)?;
    let mut rtt = w.open_table(RTT).map_err(db_err)?;
    let mut kinds = open_kinds(w)?;
    let mut revisions = w.open_table(REVISIONS).map_err(db_err)?;
    for change in &commit.changes {
        match &change.what {
            Written::Upserted(object) => {
                let (kind, id) = kind_index(&object.reference());
                kinds[kind]
                    .insert(id, encode(object.as_ref()).as_slice())
                    .map_err(db_err)?;
                revisions
                    .insert((kind as u64, id), change.version)
                    .map_err(db_err)?;
            }
            Written::Deleted(r) => {
                let (kind, id) = kind_index(r);
                kinds[kind].remove(id).map_err(db_err)?;
                revisions.remove((kind as u64, id)).map_err(db_err)?;
                if let ObjectRef::Member(m) = r {
                    latched.remove(m.0).map_err(db_err)?;
                    resolved.remove(m.0).map_err(db_err)?;
                    rtt.remove(m.0).map_err(db_err)?;
                }
                if let ObjectRef::Notifier(n) = r {
                    outbox::forget_target(w, *n)?;
                }
            }
        }
    }
    for (member, r) in &commit.resolved {
        match r {
            Some(r) => drop(
                resolved
                    .insert(member.0, encode(r).as_slice())
                    .map_err(db_err)?,
            ),
            None => drop(resolved.remove(member.0).map_err(db_err)?),
        }
    }
    for (member, r) in &commit.rtt {
        match r {
            Some(r) => drop(rtt.insert(member.0, encode(r).as_slice()).map_err(db_err)?),
            None => drop(rtt.remove(member.0).map_err(db_err)?),
        }
    }
    for (member, l) in &commit.latched {
        match l {
            Some(l) => drop(
                latched
                    .insert(member.0, encode(l).as_slice())
                    .map_err(db_err)?,
            ),
            None => drop(latched.remove(member.0).map_err(db_err)?),
        }
    }
    outbox::append(w, &commit.events)?;
    audit::append(w, &commit.audit)?;
    let mut meta = vec![
        ("version", commit.version.to_be_bytes().to_vec()),
        ("last_id", commit.last_id.to_be_bytes().to_vec()),
    ];
    if let Some(epoch) = commit.epoch {
        meta.push(("epoch", epoch.to_be_bytes().to_vec()));
    }
    if let Some(last) = commit.changes.last() {
        meta.push(("catalog_version", last.version.to_be_bytes().to_vec()));
    }
    if let Some(hold) = &commit.hold {
        meta.push(("hold", encode(hold)));
    }
    if let Some(reserved) = commit.reserved {
        meta.push(("reserved", reserved.to_be_bytes().to_vec()));
    }
    put_meta(w, &meta)
}

impl Store for RedbStore {
    fn load(&self) -> Result<Loaded, StoreError> {
        marker::no_panic(&self.dir, || self.load_all())
    }

    fn commit(&self, commit: &Commit) -> Result<u64, StoreError> {
        self.commit_with_meta(Some(commit), &[])?;
        Ok(commit.version)
    }

    fn append_log(&self, records: &[LogRecord]) -> Result<(), StoreError> {
        let w = self.db.begin_write().map_err(db_err)?;
        {
            let mut log = w.open_table(LOG).map_err(db_err)?;
            let mut touched = Vec::new();
            for r in records {
                let seq = self.log_seq.fetch_add(1, Ordering::Relaxed);
                log.insert((r.member.0, seq), encode(&r.entry).as_slice())
                    .map_err(db_err)?;
                touched.push(r.member.0);
            }
            touched.sort_unstable();
            touched.dedup();
            for member in touched {
                let all = (member, 0)..=(member, u64::MAX);
                let count = log.range(all.clone()).map_err(db_err)?.count();
                if count > LOG_PER_MEMBER {
                    let old: Vec<(u64, u64)> = log
                        .range(all)
                        .map_err(db_err)?
                        .take(count - LOG_PER_MEMBER)
                        .filter_map(|item| item.ok().map(|(k, _)| k.value()))
                        .collect();
                    for key in old {
                        log.remove(key).map_err(db_err)?;
                    }
                }
            }
        }
        let next = self.log_seq.load(Ordering::Relaxed);
        put_meta(&w, &[("log_seq", next.to_be_bytes().to_vec())])?;
        w.commit().map_err(db_err)
    }

    fn health_log(
        &self,
        member: MemberId,
        limit: usize,
    ) -> Result<Vec<gslb_engine::Output>, StoreError> {
        let txn = self.db.begin_read().map_err(db_err)?;
        let log = txn.open_table(LOG).map_err(db_err)?;
        let mut entries = Vec::new();
        for item in log
            .range((member.0, 0)..=(member.0, u64::MAX))
            .map_err(db_err)?
            .rev()
            .take(limit)
        {
            let (_, value) = item.map_err(db_err)?;
            entries.push(decode("health log entry", value.value())?);
        }
        entries.reverse();
        Ok(entries)
    }

    fn size_on_disk(&self) -> u64 {
        std::fs::metadata(self.dir.join(FILE)).map_or(0, |m| m.len())
    }

    fn reserved(&self) -> Result<u64, StoreError> {
        u64_in(&self.db.begin_read().map_err(db_err)?, "reserved")
    }

    fn outbox(&self) -> Result<Outbox, StoreError> {
        outbox::state(&self.db.begin_read().map_err(db_err)?)
    }

    fn outbox_events(&self, after: u64, limit: usize) -> Result<Vec<Event>, StoreError> {
        outbox::events(&self.db.begin_read().map_err(db_err)?, after, limit)
    }

    fn append_audit(&self, records: &[AuditRecord]) -> Result<(), StoreError> {
        self.commit_all(None, None, None, records, &[])
    }

    fn audit(&self, query: &AuditQuery) -> Result<Vec<AuditRecord>, StoreError> {
        audit::read(&self.db.begin_read().map_err(db_err)?, query)
    }

    fn audit_count(&self) -> Result<u64, StoreError> {
        audit::count(&self.db.begin_read().map_err(db_err)?)
    }

    fn audit_all(&self) -> Result<Vec<AuditRecord>, StoreError> {
        audit::all(&self.db.begin_read().map_err(db_err)?)
    }

    fn audit_after(&self, version: u64) -> Result<(Vec<AuditRecord>, bool), StoreError> {
        audit::after_version(&self.db.begin_read().map_err(db_err)?, version)
    }

    fn write_outbox(&self, write: &OutboxWrite) -> Result<(), StoreError> {
        self.commit_all(None, Some(write), None, &[], &[])
    }

    fn session(&self, digest: &str) -> Result<Option<SessionRecord>, StoreError> {
        sessions::get(&self.db.begin_read().map_err(db_err)?, digest)
    }

    fn sessions(&self) -> Result<Vec<(String, SessionRecord)>, StoreError> {
        sessions::all(&self.db.begin_read().map_err(db_err)?)
    }

    fn session_count(&self) -> Result<u64, StoreError> {
        sessions::count(&self.db.begin_read().map_err(db_err)?)
    }

    fn write_sessions(&self, write: &SessionWrite) -> Result<(), StoreError> {
        self.commit_all(None, None, Some(write), &[], &[])
    }
}
