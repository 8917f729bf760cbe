//! The audit log in redb: records by sequence number, appended in the same
//! transaction as the commit that carries them (so a replica numbers them
//! as every other), kept within a count and an age, the oldest trimmed
//! first and counted.

use std::sync::atomic::{AtomicU64, Ordering};

use redb::{ReadTransaction, ReadableTable, TableDefinition, WriteTransaction};

use super::{db_err, decode, encode, put_meta};
use crate::core::audit::{AuditQuery, AuditRecord, DEFAULT_KEEP, DEFAULT_MAX_AGE_MS};
use crate::core::store::StoreError;

/// The index of records: (number, time, version or 0), no value. Trimming
/// and paging read keys only; a record's body (one of a large apply is
/// megabytes) is read only when it is returned.
pub(super) const INDEX: TableDefinition<(u64, u64, u64), ()> = TableDefinition::new("audit_index");
/// Each record's body by number.
pub(super) const RECORDS: TableDefinition<u64, &[u8]> = TableDefinition::new("audit");

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
    w.open_table(INDEX).map_err(db_err)?;
    w.open_table(RECORDS).map_err(db_err)?;
    Ok(())
}

/// The key of `record` numbered `seq`.
fn key(seq: u64, record: &AuditRecord) -> (u64, u64, u64) {
    (seq, record.at_ms, record.version.unwrap_or(0))
}

/// Append `records`, numbering them after the newest, then trim.
pub(super) fn append(w: &WriteTransaction, records: &[AuditRecord]) -> Result<(), StoreError> {
    let Some(newest) = records.iter().map(|r| r.at_ms).max() else {
        return Ok(());
    };
    let mut index = w.open_table(INDEX).map_err(db_err)?;
    let mut bodies = w.open_table(RECORDS).map_err(db_err)?;
    let mut last = (index.last().map_err(db_err)?).map_or(0, |(k, _)| k.value().0);
    for record in records {
        last += 1;
        let record = AuditRecord {
            seq: last,
            ..record.clone()
        };
        index.insert(key(last, &record), ()).map_err(db_err)?;
        bodies
            .insert(last, encode(&record).as_slice())
            .map_err(db_err)?;
    }
    // The age is measured from the newest record, not this node's clock,
    // so every replica trims the same records. Numbers are contiguous
    // (trimmed from the front only): the count is the span from the oldest.
    let keep = KEEP.load(Ordering::Relaxed);
    let oldest_kept = newest.saturating_sub(MAX_AGE_MS.load(Ordering::Relaxed));
    let mut through = None;
    loop {
        let first = (index.first().map_err(db_err)?).map(|(k, _)| k.value());
        let Some((seq, at_ms, version)) = first else {
            break;
        };
        if last + 1 - seq <= keep && at_ms >= oldest_kept {
            break;
        }
        index.remove((seq, at_ms, version)).map_err(db_err)?;
        bodies.remove(seq).map_err(db_err)?;
        if version > 0 {
            through = through.max(Some(version));
        }
        TRIMMED.fetch_add(1, Ordering::Relaxed);
    }
    drop((index, bodies));
    match through {
        Some(version) => put_meta(w, &[(TRIMMED_THROUGH, version.to_be_bytes().to_vec())]),
        None => Ok(()),
    }
}

/// The body of record `seq`.
fn body(table: &redb::ReadOnlyTable<u64, &[u8]>, seq: u64) -> Result<AuditRecord, StoreError> {
    let value = table.get(seq).map_err(db_err)?;
    let value = value.ok_or_else(|| StoreError::Corrupt {
        what: format!("audit record {seq}"),
        error: "indexed but missing".into(),
    })?;
    decode("audit", value.value())
}

/// The accepted records after catalog version `from`, oldest first, and
/// whether the log still reaches back to `from` (nothing after it trimmed).
pub(super) fn after_version(
    txn: &ReadTransaction,
    from: u64,
) -> Result<(Vec<AuditRecord>, bool), StoreError> {
    let complete = super::u64_in(txn, TRIMMED_THROUGH)? <= from;
    let index = txn.open_table(INDEX).map_err(db_err)?;
    let bodies = txn.open_table(RECORDS).map_err(db_err)?;
    let mut out = Vec::new();
    for item in index.iter().map_err(db_err)?.rev() {
        let (seq, _, version) = item.map_err(db_err)?.0.value();
        match version {
            0 => {} // a refusal
            v if v <= from => break,
            _ => {
                let record = body(&bodies, seq)?;
                if !record.changes.is_empty() {
                    out.push(record);
                }
            }
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
    let index = txn.open_table(INDEX).map_err(db_err)?;
    let bodies = txn.open_table(RECORDS).map_err(db_err)?;
    let upper = (query.before_seq.unwrap_or(u64::MAX), 0, 0);
    let mut out = Vec::new();
    for item in index.range(..upper).map_err(db_err)?.rev() {
        let (seq, at_ms, _) = item.map_err(db_err)?.0.value();
        if query.since_ms.is_some_and(|t| at_ms < t) {
            break;
        }
        let record = body(&bodies, seq)?;
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
    w.delete_table(INDEX).map_err(db_err)?;
    w.delete_table(RECORDS).map_err(db_err)?;
    let mut index = w.open_table(INDEX).map_err(db_err)?;
    let mut bodies = w.open_table(RECORDS).map_err(db_err)?;
    for record in records {
        index.insert(key(record.seq, record), ()).map_err(db_err)?;
        bodies
            .insert(record.seq, encode(record).as_slice())
            .map_err(db_err)?;
    }
    drop((index, bodies));
    // What a snapshot or backup did not carry is gone.
    let first = records.iter().find_map(|r| r.version);
    let through = first.map_or(version, |v| v.saturating_sub(1));
    put_meta(w, &[(TRIMMED_THROUGH, through.to_be_bytes().to_vec())])
}

/// How many records the log holds.
pub(super) fn count(txn: &ReadTransaction) -> Result<u64, StoreError> {
    // Contiguous numbers: the span of the index, read from its two ends.
    let index = txn.open_table(INDEX).map_err(db_err)?;
    let first = (index.first().map_err(db_err)?).map(|(k, _)| k.value().0);
    let last = (index.last().map_err(db_err)?).map(|(k, _)| k.value().0);
    Ok(match (first, last) {
        (Some(first), Some(last)) => last + 1 - first,
        _ => 0,
    })
}
