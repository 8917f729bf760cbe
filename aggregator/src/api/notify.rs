//! Delivering notifications. On the deciding node (a single node, or the
//! cluster's leader) a supervisor keeps one worker per notification target
//! and watches edges and agents (`watch`); each worker reads the outbox
//! after its target's position, posts each event the target wants
//! (`send`), retries a failure with backoff (`core::notify::retry`), and
//! records its new position in the replicated outbox. A leader killed
//! mid-way leaves the position where the last record put it: the next
//! leader posts from there again, so delivery is at least once and a
//! receiver de-duplicates by the event's idempotency key.

mod send;
mod target;
mod watch;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use gslb_shared::NotifierId;
pub use send::Sender;

use crate::api::service::Service;
use crate::core::control::Role;
use crate::core::notify::OutboxWrite;

/// How often the supervisor looks when nothing wakes it.
const TICK: Duration = Duration::from_secs(1);

/// Run the supervisor until the process ends.
pub async fn run(service: Arc<Service>, sender: Sender) {
    let (seq_tx, seq_rx) = tokio::sync::watch::channel(0u64);
    let mut version = service.watch_version();
    let mut flushed = service.watch_outbox();
    let mut workers: HashMap<NotifierId, tokio::task::JoinHandle<()>> = HashMap::new();
    let mut tick = tokio::time::interval(TICK);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        let ticked = tokio::select! {
            _ = tick.tick() => true,
            changed = version.changed() => {
                if changed.is_err() {
                    return;
                }
                false
            }
            changed = flushed.changed() => {
                if changed.is_err() {
                    return;
                }
                false
            }
        };
        let view = service.view();
        let leading = view.role() != Role::Follower;
        service.notifications().set_delivering(leading);
        if !leading {
            for (_, worker) in workers.drain() {
                worker.abort();
            }
            continue;
        }
        let catalog = view.catalog();
        workers.retain(|id, worker| {
            let keep = catalog.notifiers.contains_key(id) && !worker.is_finished();
            if !keep {
                worker.abort();
            }
            keep
        });
        for id in catalog.notifiers.keys() {
            workers.entry(*id).or_insert_with(|| {
                tokio::spawn(target::run(
                    Arc::clone(&service),
                    sender.clone(),
                    *id,
                    seq_rx.clone(),
                ))
            });
        }
        let Ok(outbox) = view.outbox() else {
            continue;
        };
        if ticked {
            let mut write = watch::scan(&service, &view, &outbox.watched);
            write.trim_through = trim_point(&outbox, catalog);
            if !write.is_empty() {
                write_outbox(&view, write).await;
            }
        }
        seq_tx.send_if_modified(|seq| {
            let moved = *seq != outbox.last_seq;
            *seq = outbox.last_seq;
            moved
        });
    }
}

/// Events every target is past (those without a position yet have none
/// to lose: they start at the newest event).
fn trim_point(outbox: &crate::core::notify::Outbox, catalog: &gslb_shared::Catalog) -> Option<u64> {
    let through = (catalog.notifiers.keys())
        .map(|id| outbox.cursors.get(id).copied().unwrap_or(outbox.last_seq))
        .min()
        .unwrap_or(outbox.last_seq);
    (through >= outbox.first_seq.max(1)).then_some(through)
}

/// Write to the outbox off the runtime's workers (a Raft proposal blocks
/// until it is committed); a failure is logged and tried again later.
pub(crate) async fn write_outbox(
    view: &Arc<crate::core::control::View>,
    write: OutboxWrite,
) -> bool {
    let view = Arc::clone(view);
    match crate::api::service::off_worker(move || view.write_outbox(&write)).await {
        Ok(()) => true,
        Err(e) => {
            tracing::warn!(error = %e, "notifications: outbox write failed; retried later");
            false
        }
    }
}
