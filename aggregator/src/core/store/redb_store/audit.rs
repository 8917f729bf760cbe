//! The audit log in redb: records by sequence number, appended in the same
//! transaction as the commit that carries them (so a replica numbers them
//! as every other), kept within a count and an age, the oldest trimmed
//! first and counted.

use std::sync::atomic::{AtomicU64, Ordering};

use redb::{
    ReadTransaction, ReadableTable, ReadableTableMetadata, TableDefinition, WriteTransaction,
};

use super::{db_err, decode, encode, put_meta};
use crate::core::audit::{AuditQuery, AuditRecord, DEFAULT_KEEP, DEFAULT_MAX_AGE_MS};
use crate::core::store::StoreError;

pub(super) const RECORDS: TableDefinition<u64, &[u8]> = TableDefinition::new("audit");
/// Each record's time and version (0: none), so trimming never decodes a
/// record (one of a large apply can be megabytes).
const STAMPS: TableDefinition<u64, (u64, u64)> = TableDefinition::new("audit_stamps");

const LAST: &str = "audit_last";
/// The newest version among trimmed records: history before it is gone.
const TRIMMED_THROUGH: &str = "audit_trimmed_through";

static KEEP: AtomicU64 = AtomicU64::new(DEFAULT_KEEP);
static MAX_AGE_MS: AtomicU64 = AtomicU64::new(DEFAULT_MAX_AGE_MS);
static TRIMMED: AtomicU64 = AtomicU64::new(0);

/// Keep at most `keep` records, none older than `max_age_ms` before the
/// newest (`--audit-keep`, `--audit-days`); set before the store opens.
pub fn set_limits(keep: u64, max_age_ms: u64) {
    KEEP.store(keep.max(1), Ordering::Relaxed);
    MAX_AGE_MS.store(max_age_ms, Ordering::Relaxed);
}

/// Records trimmed by this process (for the metric).
pub fn trimmed() -> u64 {
    TRIMMED.load(Ordering::Relaxed)
}

/// Create the table (at open, so reads never meet a missing one).
pub(super) fn create(w: &WriteTransaction) -> Result<(), StoreError> {
    w.open_table(RECORDS).map_err(db_err)?;
    w.open_table(STAMPS).map_err(db_err)?;
    Ok(())
}

/// Append `records`, numbering them after the newest, then trim.
pub(super) fn append(w: &WriteTransaction, records: &[AuditRecord]) -> Result<(), StoreError> {
    let Some(newest) = records.iter().map(|r| r.at_ms).max() else {
        return Ok(());
    };
    let mut last = {
        let meta = w.open_table(super::META).map_err(db_err)?;
        meta.get(LAST)
            .map_err(db_err)?
            .and_then(|v| <[u8; 8]>::try_from(v.value()).ok())
            .map_or(0, u64::from_be_bytes)
    };
    let mut table = w.open_table(RECORDS).map_err(db_err)?;
    let mut stamps = w.open_table(STAMPS).map_err(db_err)?;
    for record in records {
        last += 1;
        let record = AuditRecord {
            seq: last,
            ..record.clone()
        };
        table
            .insert(last, encode(&record).as_slice())
            .map_err(db_err)?;
        stamps
            .insert(last, (record.at_ms, record.version.unwrap_or(0)))
            .map_err(db_err)?;
    }
    // The age is measured from the newest record, not this node's clock,
    // so every replica trims the same records.
    let keep = KEEP.load(Ordering::Relaxed);
    let oldest_kept = newest.saturating_sub(MAX_AGE_MS.load(Ordering::Relaxed));
    let mut count = table.len().map_err(db_err)?;
    let mut through = None;
    loop {
        let Some((seq, (at_ms, version))) =
            (stamps.first().map_err(db_err)?).map(|(k, v)| (k.value(), v.value()))
        else {
            break;
        };
        if count <= keep && at_ms >= oldest_kept {
            break;
        }
        table.remove(seq).map_err(db_err)?;
        stamps.remove(seq).map_err(db_err)?;
        count -= 1;
        if version > 0 {
            through = through.max(Some(version));
        }
        TRIMMED.fetch_add(1, Ordering::Relaxed);
    }
    drop((table, stamps));
    let mut meta = vec![(LAST, last.to_be_bytes().to_vec())];
    if let Some(version) = through {
        meta.push((TRIMMED_THROUGH, version.to_be_bytes().to_vec()));
    }
    put_meta(w, &meta)
}

/// The accepted records after catalog version `from`, oldest first, and
/// whether the log still reaches back to `from` (nothing after it trimmed).
pub(super) fn after_version(
    txn: &ReadTransaction,
    from: u64,
) -> Result<(Vec<AuditRecord>, bool), StoreError> {
    let complete = super::u64_in(txn, TRIMMED_THROUGH)? <= from;
    let table = txn.open_table(RECORDS).map_err(db_err)?;
    let mut out = Vec::new();
    for item in table.iter().map_err(db_err)?.rev() {
        let (_, value) = item.map_err(db_err)?;
        let record: AuditRecord = decode("audit", value.value())?;
        match record.version {
            Some(v) if v <= from => break,
            Some(_) if !record.changes.is_empty() => out.push(record),
            _ => {}
        }
    }
    out.reverse();
    Ok((out, complete))
}

/// The records `query` asks for, newest first.
pub(super) fn read(
    txn: &ReadTransaction,
    query: &AuditQuery,
) -> Result<Vec<AuditRecord>, StoreError> {
    let table = txn.open_table(RECORDS).map_err(db_err)?;
    let upper = query.before_seq.unwrap_or(u64::MAX);
    let mut out = Vec::new();
    for item in table.range(..upper).map_err(db_err)?.rev() {
        let (_, value) = item.map_err(db_err)?;
        let record: AuditRecord = decode("audit", value.value())?;
        if query.since_ms.is_some_and(|t| record.at_ms < t) {
            break;
        }
        if query.matches(&record) {
            out.push(record);
            if out.len() >= query.page() {
                break;
            }
        }
    }
    Ok(out)
}

/// Every record, oldest first (snapshots and backups).
pub(super) fn all(txn: &ReadTransaction) -> Result<Vec<AuditRecord>, StoreError> {
    let table = txn.open_table(RECORDS).map_err(db_err)?;
    table
        .iter()
        .map_err(db_err)?
        .map(|item| {
            let (_, value) = item.map_err(db_err)?;
            decode("audit", value.value())
        })
        .collect()
}

/// Replace the log with `records` (a snapshot or a restore of the state
/// at `version`), keeping their numbers.
pub(super) fn replace(
    w: &WriteTransaction,
    records: &[AuditRecord],
    version: u64,
) -> Result<(), StoreError> {
    w.delete_table(RECORDS).map_err(db_err)?;
    w.delete_table(STAMPS).map_err(db_err)?;
    let mut table = w.open_table(RECORDS).map_err(db_err)?;
    let mut stamps = w.open_table(STAMPS).map_err(db_err)?;
    let mut last = 0;
    for record in records {
        last = last.max(record.seq);
        table
            .insert(record.seq, encode(record).as_slice())
            .map_err(db_err)?;
        stamps
            .insert(record.seq, (record.at_ms, record.version.unwrap_or(0)))
            .map_err(db_err)?;
    }
    drop((table, stamps));
    // What a snapshot or backup did not carry is gone.
    let first = records.iter().find_map(|r| r.version);
    let through = first.map_or(version, |v| v.saturating_sub(1));
    put_meta(
        w,
        &[
            (LAST, last.to_be_bytes().to_vec()),
            (TRIMMED_THROUGH, through.to_be_bytes().to_vec()),
        ],
    )
}

/// How many records the log holds.
pub(super) fn count(txn: &ReadTransaction) -> Result<u64, StoreError> {
    txn.open_table(RECORDS)
        .map_err(db_err)?
        .len()
        .map_err(db_err)
}
