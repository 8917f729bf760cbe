//! Web UI sessions in redb, by digest, written in the same transaction as
//! the command that carries them (so every replica holds the same set).

use redb::{
    ReadTransaction, ReadableTable, ReadableTableMetadata, TableDefinition, WriteTransaction,
};

use super::{db_err, decode, encode};
use crate::core::sessions::{SessionRecord, SessionWrite};
use crate::core::store::StoreError;

const SESSIONS: TableDefinition<&str, &[u8]> = TableDefinition::new("ui_sessions");

/// Create the table (at open, so reads never meet a missing one).
pub(super) fn create(w: &WriteTransaction) -> Result<(), StoreError> {
    w.open_table(SESSIONS).map_err(db_err)?;
    Ok(())
}

/// Apply `write`: opened, then touched (existing ones only), then closed.
pub(super) fn write(w: &WriteTransaction, write: &SessionWrite) -> Result<(), StoreError> {
    let mut table = w.open_table(SESSIONS).map_err(db_err)?;
    for (digest, record) in &write.open {
        table
            .insert(digest.as_str(), encode(record).as_slice())
            .map_err(db_err)?;
    }
    for (digest, used_ms) in &write.touch {
        let stored = match table.get(digest.as_str()).map_err(db_err)? {
            Some(stored) => decode::<SessionRecord>("session", stored.value())?,
            None => continue,
        };
        let mut record = stored;
        record.used_ms = record.used_ms.max(*used_ms);
        table
            .insert(digest.as_str(), encode(&record).as_slice())
            .map_err(db_err)?;
    }
    for digest in &write.close {
        table.remove(digest.as_str()).map_err(db_err)?;
    }
    Ok(())
}

/// Replace every session with `all` (a snapshot installed).
pub(super) fn replace(
    w: &WriteTransaction,
    all: &[(String, SessionRecord)],
) -> Result<(), StoreError> {
    w.delete_table(SESSIONS).map_err(db_err)?;
    let mut table = w.open_table(SESSIONS).map_err(db_err)?;
    for (digest, record) in all {
        table
            .insert(digest.as_str(), encode(record).as_slice())
            .map_err(db_err)?;
    }
    Ok(())
}

/// The session stored under `digest`.
pub(super) fn get(
    txn: &ReadTransaction,
    digest: &str,
) -> Result<Option<SessionRecord>, StoreError> {
    let table = txn.open_table(SESSIONS).map_err(db_err)?;
    let stored = table.get(digest).map_err(db_err)?;
    stored.map(|v| decode("session", v.value())).transpose()
}

/// Every stored session.
pub(super) fn all(txn: &ReadTransaction) -> Result<Vec<(String, SessionRecord)>, StoreError> {
    let table = txn.open_table(SESSIONS).map_err(db_err)?;
    let mut out = Vec::new();
    for entry in table.iter().map_err(db_err)? {
        let (digest, value) = entry.map_err(db_err)?;
        out.push((digest.value().to_owned(), decode("session", value.value())?));
    }
    Ok(out)
}

/// How many are stored.
pub(super) fn count(txn: &ReadTransaction) -> Result<u64, StoreError> {
    let table = txn.open_table(SESSIONS).map_err(db_err)?;
    table.len().map_err(db_err)
}
