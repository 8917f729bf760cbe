//! One target's worker: post each event it wants, in order, from its
//! position in the outbox; on a failure wait out the backoff and try the
//! same event again (later events wait, so a receiver sees a member's down
//! before its up); record the new position after each run of deliveries.
//! A failing target is logged once when it starts failing (or fails in a
//! new way) and once when it delivers again; each try in between is DEBUG.

use std::sync::Arc;
use std::time::Duration;

use gslb_shared::NotifierId;
use rand::SeedableRng;

use super::Sender;
use crate::api::service::Service;
use crate::core::control::Role;
use crate::core::notify::retry::{self, Next};
use crate::core::notify::{OutboxWrite, payload, route};

/// Most events read from the outbox at once.
const BATCH: usize = 64;
/// The longest a worker waits without looking (a missed wake-up costs this).
const IDLE: Duration = Duration::from_secs(1);
/// The fewest milliseconds between two failed tries of one target, even
/// when its definition changes meanwhile: the cap on a target's rate.
const MIN_RETRY_GAP_MS: u64 = 1_000;

/// Deliver to target `id` until it is deleted or this node stops deciding.
pub async fn run(
    service: Arc<Service>,
    sender: Sender,
    id: NotifierId,
    mut seq: tokio::sync::watch::Receiver<u64>,
) {
    let board = service.notifications();
    let backoff = retry::backoff();
    let mut rng = rand::rngs::StdRng::from_rng(&mut rand::rng());
    // (sequence number, failed tries) of the event being retried.
    let mut head: Option<(u64, u32)> = None;
    // How the target last failed, as logged (None: delivering).
    let mut failing: Option<String> = None;
    // One receiver for the worker's life: a clone of the service's would
    // report every catalog change since the service began as new.
    let mut catalog = service.watch_catalog();
    catalog.mark_unchanged();
    loop {
        let view = service.view();
        if view.role() == Role::Follower {
            return;
        }
        let Some(target) = view.catalog().notifiers.get(&id).cloned() else {
            return;
        };
        let Ok(outbox) = view.outbox() else {
            tokio::time::sleep(IDLE).await;
            continue;
        };
        let Some(&cursor) = outbox.cursors.get(&id) else {
            // A new target starts at the newest event, not the backlog.
            let write = OutboxWrite {
                cursors: vec![(id, outbox.last_seq)],
                ..OutboxWrite::default()
            };
            if !super::write_outbox(&view, write).await {
                tokio::time::sleep(IDLE).await;
            }
            continue;
        };
        let events = view.outbox_events(cursor, BATCH).unwrap_or_default();
        if events.is_empty() {
            let _ = tokio::time::timeout(IDLE, seq.changed()).await;
            continue;
        }
        let mut done = cursor;
        let mut wait_until = None;
        for event in &events {
            if !route::wants(&target, event, view.catalog()) {
                done = event.seq;
                continue;
            }
            let now_ms = gslb_shared::clock::now_ms();
            let post = payload::post(&target, event, now_ms / 1_000);
            match sender.send(&target.url, &post).await {
                Ok(()) => {
                    done = event.seq;
                    head = None;
                    if failing.take().is_some() {
                        tracing::info!(target = %target.name, "notification target delivering again");
                    }
                    board.update(id, |s| {
                        s.delivered += 1;
                        s.attempts = 0;
                        s.next_attempt_ms = 0;
                        s.last_delivered_ms = gslb_shared::clock::now_ms();
                    });
                }
                Err(why) => {
                    let failed = match head {
                        Some((s, n)) if s == event.seq => n + 1,
                        _ => 1,
                    };
                    let delay = backoff.delay(failed - 1, &mut rng);
                    let now_ms = gslb_shared::clock::now_ms();
                    let next = retry::after_failure(event.at_ms, now_ms, delay);
                    if failing.as_deref() == Some(why.as_str()) {
                        tracing::debug!(
                            target = %target.name, event = event.seq, kind = %event.kind,
                            tries = failed, error = %why, "notification not delivered"
                        );
                    } else {
                        tracing::warn!(
                            target = %target.name, event = event.seq, kind = %event.kind,
                            tries = failed, error = %why,
                            "notification not delivered (logged again when this changes)"
                        );
                        failing = Some(why.clone());
                    }
                    board.update(id, |s| {
                        s.failures += 1;
                        s.attempts = failed;
                        s.last_error = why;
                        s.last_error_ms = now_ms;
                        s.next_attempt_ms = match next {
                            Next::At(at) => at,
                            Next::GiveUp => 0,
                        };
                    });
                    match next {
                        Next::At(at) => {
                            head = Some((event.seq, failed));
                            wait_until = Some(at);
                            break;
                        }
                        Next::GiveUp => {
                            tracing::error!(
                                target = %target.name, event = event.seq,
                                "notification given up after a day of retries"
                            );
                            board.update(id, |s| {
                                s.given_up += 1;
                                s.attempts = 0;
                            });
                            head = None;
                            done = event.seq;
                        }
                    }
                }
            }
        }
        if done > cursor {
            let write = OutboxWrite {
                cursors: vec![(id, done)],
                ..OutboxWrite::default()
            };
            // Not recorded (no quorum, leadership lost): the same events
            // are posted again later, not at once.
            if !super::write_outbox(&view, write).await {
                tokio::time::sleep(IDLE).await;
            }
        }
        if let Some(at) = wait_until {
            wait_out(&service, &mut catalog, &target, at).await;
        }
    }
}

/// Wait until `at` (ms since the epoch), or until `target` is rewritten
/// (its URL fixed: tried again sooner, but never within
/// [`MIN_RETRY_GAP_MS`] of the failure). Other catalog changes do not
/// wake it.
async fn wait_out(
    service: &Service,
    catalog: &mut tokio::sync::watch::Receiver<u64>,
    target: &gslb_shared::Notifier,
    at: u64,
) {
    let earliest = gslb_shared::clock::now_ms().saturating_add(MIN_RETRY_GAP_MS);
    let mut until = at.max(earliest);
    loop {
        let wait = until.saturating_sub(gslb_shared::clock::now_ms());
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(wait)) => return,
            changed = catalog.changed() => {
                if changed.is_err() {
                    return;
                }
                let view = service.view();
                let now = view.catalog().notifiers.get(&target.id);
                if now != Some(target) {
                    until = until.min(earliest);
                }
            }
        }
    }
}
