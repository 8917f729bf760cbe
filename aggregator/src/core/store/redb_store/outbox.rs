//! The notification outbox in redb: events by sequence number, each
//! target's position, and the watcher's open problems, written in the same
//! transaction as the commit or outbox write that carries them, so every
//! replica numbers the same events the same way.

use redb::{ReadTransaction, ReadableTable, TableDefinition, WriteTransaction};

use super::{db_err, decode, encode, put_meta, u64_in};
use crate::core::notify::{Event, MAX_OUTBOX_EVENTS, Outbox, OutboxDump, OutboxWrite, Subject};
use crate::core::store::StoreError;
use gslb_shared::NotifierId;

pub(super) const EVENTS: TableDefinition<u64, &[u8]> = TableDefinition::new("outbox");
pub(super) const CURSORS: TableDefinition<u64, u64> = TableDefinition::new("outbox_cursors");
pub(super) const WATCHED: TableDefinition<&str, ()> = TableDefinition::new("outbox_watched");

const LAST: &str = "outbox_last";
const FIRST: &str = "outbox_first";
const DROPPED: &str = "outbox_dropped";

fn first_in(txn: &ReadTransaction) -> Result<u64, StoreError> {
    Ok(u64_in(txn, FIRST)?.max(1))
}

/// Create the tables (at open, so reads never meet a missing one).
pub(super) fn create(w: &WriteTransaction) -> Result<(), StoreError> {
    w.open_table(EVENTS).map_err(db_err)?;
    w.open_table(CURSORS).map_err(db_err)?;
    w.open_table(WATCHED).map_err(db_err)?;
    Ok(())
}

/// The meta counters as a write transaction sees them.
fn counters(w: &WriteTransaction) -> Result<(u64, u64, u64), StoreError> {
    let meta = w.open_table(super::META).map_err(db_err)?;
    let get = |key: &str| -> Result<u64, StoreError> {
        Ok(meta
            .get(key)
            .map_err(db_err)?
            .and_then(|v| <[u8; 8]>::try_from(v.value()).ok())
            .map_or(0, u64::from_be_bytes))
    };
    Ok((get(LAST)?, get(FIRST)?.max(1), get(DROPPED)?))
}

/// Append `events`, numbering them after the newest, and keep the outbox
/// within [`MAX_OUTBOX_EVENTS`] (the oldest dropped, and counted).
pub(super) fn append(w: &WriteTransaction, events: &[Event]) -> Result<(), StoreError> {
    if events.is_empty() {
        return Ok(());
    }
    let (mut last, mut first, mut dropped) = counters(w)?;
    {
        let mut table = w.open_table(EVENTS).map_err(db_err)?;
        let mut watched = w.open_table(WATCHED).map_err(db_err)?;
        for event in events {
            last += 1;
            let event = Event {
                seq: last,
                ..event.clone()
            };
            table
                .insert(last, encode(&event).as_slice())
                .map_err(db_err)?;
            // Only the watcher's own problems (edges, agents) are levels it
            // compares against; decisions carry their own state.
            if matches!(event.subject, Subject::Edge { .. } | Subject::Agent { .. }) {
                let key = Outbox::watch_key(&event);
                if event.kind.is_recovery() {
                    watched.remove(key.as_str()).map_err(db_err)?;
                } else {
                    watched.insert(key.as_str(), ()).map_err(db_err)?;
                }
            }
        }
        while last + 1 - first > MAX_OUTBOX_EVENTS {
            table.remove(first).map_err(db_err)?;
            first += 1;
            dropped += 1;
        }
    }
    put_meta(
        w,
        &[
            (LAST, last.to_be_bytes().to_vec()),
            (FIRST, first.to_be_bytes().to_vec()),
            (DROPPED, dropped.to_be_bytes().to_vec()),
        ],
    )
}

/// Apply an outbox write: its events, forgotten problems, positions, trim.
pub(super) fn write(w: &WriteTransaction, write: &OutboxWrite) -> Result<(), StoreError> {
    append(w, &write.events)?;
    {
        let mut watched = w.open_table(WATCHED).map_err(db_err)?;
        for key in &write.forget {
            watched.remove(key.as_str()).map_err(db_err)?;
        }
        let mut cursors = w.open_table(CURSORS).map_err(db_err)?;
        for (target, seq) in &write.cursors {
            cursors.insert(target.0, *seq).map_err(db_err)?;
        }
    }
    if let Some(through) = write.trim_through {
        let (last, mut first, _) = counters(w)?;
        let through = through.min(last);
        {
            let mut table = w.open_table(EVENTS).map_err(db_err)?;
            while first <= through {
                table.remove(first).map_err(db_err)?;
                first += 1;
            }
        }
        put_meta(w, &[(FIRST, first.to_be_bytes().to_vec())])?;
    }
    Ok(())
}

/// Forget a deleted target's position.
pub(super) fn forget_target(w: &WriteTransaction, target: NotifierId) -> Result<(), StoreError> {
    let mut cursors = w.open_table(CURSORS).map_err(db_err)?;
    cursors.remove(target.0).map_err(db_err)?;
    Ok(())
}

/// The bookkeeping.
pub(super) fn state(txn: &ReadTransaction) -> Result<Outbox, StoreError> {
    let mut outbox = Outbox {
        last_seq: u64_in(txn, LAST)?,
        first_seq: first_in(txn)?,
        dropped: u64_in(txn, DROPPED)?,
        ..Outbox::default()
    };
    let cursors = txn.open_table(CURSORS).map_err(db_err)?;
    for item in cursors.iter().map_err(db_err)? {
        let (k, v) = item.map_err(db_err)?;
        outbox.cursors.insert(NotifierId(k.value()), v.value());
    }
    let watched = txn.open_table(WATCHED).map_err(db_err)?;
    for item in watched.iter().map_err(db_err)? {
        let (k, _) = item.map_err(db_err)?;
        outbox.watched.insert(k.value().to_owned());
    }
    Ok(outbox)
}

/// At most `limit` events after sequence number `after`, oldest first.
pub(super) fn events(
    txn: &ReadTransaction,
    after: u64,
    limit: usize,
) -> Result<Vec<Event>, StoreError> {
    let table = txn.open_table(EVENTS).map_err(db_err)?;
    let mut out = Vec::new();
    for item in table
        .range(after.saturating_add(1)..)
        .map_err(db_err)?
        .take(limit)
    {
        let (_, v) = item.map_err(db_err)?;
        out.push(decode("outbox event", v.value())?);
    }
    Ok(out)
}

/// Everything, for a Raft snapshot.
pub(super) fn dump(txn: &ReadTransaction) -> Result<OutboxDump, StoreError> {
    Ok(OutboxDump {
        outbox: state(txn)?,
        events: events(txn, 0, usize::MAX)?,
    })
}

/// Replace everything with `dump` (installing a Raft snapshot).
pub(super) fn replace(w: &WriteTransaction, dump: &OutboxDump) -> Result<(), StoreError> {
    w.delete_table(EVENTS).map_err(db_err)?;
    w.delete_table(CURSORS).map_err(db_err)?;
    w.delete_table(WATCHED).map_err(db_err)?;
    create(w)?;
    {
        let mut table = w.open_table(EVENTS).map_err(db_err)?;
        for event in &dump.events {
            table
                .insert(event.seq, encode(event).as_slice())
                .map_err(db_err)?;
        }
        let mut cursors = w.open_table(CURSORS).map_err(db_err)?;
        for (target, seq) in &dump.outbox.cursors {
            cursors.insert(target.0, *seq).map_err(db_err)?;
        }
        let mut watched = w.open_table(WATCHED).map_err(db_err)?;
        for key in &dump.outbox.watched {
            watched.insert(key.as_str(), ()).map_err(db_err)?;
        }
    }
    let o = &dump.outbox;
    put_meta(
        w,
        &[
            (LAST, o.last_seq.to_be_bytes().to_vec()),
            (FIRST, o.first_seq.max(1).to_be_bytes().to_vec()),
            (DROPPED, o.dropped.to_be_bytes().to_vec()),
        ],
    )
}
