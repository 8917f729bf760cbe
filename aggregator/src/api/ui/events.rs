//! The UI's live view: one hub per aggregator turns the core's own change
//! signals (the version, the catalog generation and the count of closed
//! member cycles, moved by the core's owner after each operation) into
//! frames of every member's and pool's state, and broadcasts what changed
//! to every open event stream (server-sent events). Browsers never poll.
//!
//! The hub's cost does not grow with the number of streams: one frame per
//! refresh whatever their number, and it computes nothing while no stream
//! is open. A refresh waits at least [`MIN_REFRESH`] after the previous
//! one, and at least four times as long as that one took, so on a large
//! catalog it uses at most about a fifth of one core.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::response::Response;
use bytes::Bytes;
use serde::Serialize;
use tokio::sync::{Notify, Semaphore, broadcast, mpsc};

use super::live::{self, Changes, Frame, MemberLive, PoolLive};
use super::sse::{self, Framed};
use crate::api::service::{Service, off_worker};

/// Shortest time between two refreshes.
pub const MIN_REFRESH: Duration = Duration::from_millis(50);
/// Event streams open at once at most; more are refused with 503.
pub const MAX_EVENT_STREAMS: usize = 1_000;
/// Ticks go out at most this often.
pub const TICK_EVERY: Duration = Duration::from_secs(1);
/// How often an open stream checks that its session is still signed in.
pub const SESSION_CHECK: Duration = Duration::from_secs(5);
/// Longest a new stream waits for a frame taken after it opened (its
/// page was rendered before, so an older frame could show it stale state);
/// past it, the latest frame is sent and the changes follow.
pub const FRESH_WAIT: Duration = Duration::from_secs(2);
/// Messages a slow stream may fall behind before it is closed (the browser
/// reconnects and starts from a fresh snapshot).
const BACKLOG: usize = 64;

/// One broadcast message.
#[derive(Debug, Clone)]
enum Message {
    /// Members and pools changed (frame `seq`).
    Changes { seq: u64, body: Framed },
    /// The catalog's shape changed: the page fetches its topology again.
    Catalog { generation: u64 },
    /// Refreshes ran (the probe matrix fetches its cells again); at most
    /// one per [`TICK_EVERY`].
    Tick,
}

/// The latest frame and its number.
#[derive(Debug, Default)]
struct Latest {
    seq: u64,
    frame: Arc<Frame>,
    /// The catalog generation the frame was taken at.
    generation: u64,
    /// The frame as a snapshot event, once a stream needed it.
    snapshot: Option<Framed>,
    /// A refresh is under way (its frame may predate a stream opening now).
    refreshing: bool,
}

/// Most event streams one session may hold open (tabs of one browser).
pub const MAX_STREAMS_PER_SESSION: usize = 8;
/// Most event streams the sessions of one token may hold open.
pub const MAX_STREAMS_PER_TOKEN: usize = 64;

/// Why a stream was not opened.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamRefusal {
    /// [`MAX_EVENT_STREAMS`] are open.
    Full,
    /// The session holds [`MAX_STREAMS_PER_SESSION`].
    Session,
    /// The token's sessions hold [`MAX_STREAMS_PER_TOKEN`].
    Token,
}

/// A stream counted against its session and its token; given back when
/// dropped.
struct Owned {
    owners: Arc<Mutex<std::collections::HashMap<String, usize>>>,
    keys: [String; 2],
}

impl Owned {
    fn take(
        owners: &Arc<Mutex<std::collections::HashMap<String, usize>>>,
        session: &str,
        token: &str,
    ) -> Result<Self, StreamRefusal> {
        let keys = [format!("s:{session}"), format!("t:{token}")];
        let mut held = super::lock(owners);
        let count = |k: &String| held.get(k).copied().unwrap_or(0);
        if count(&keys[0]) >= MAX_STREAMS_PER_SESSION {
            return Err(StreamRefusal::Session);
        }
        if count(&keys[1]) >= MAX_STREAMS_PER_TOKEN {
            return Err(StreamRefusal::Token);
        }
        for k in &keys {
            *held.entry(k.clone()).or_default() += 1;
        }
        drop(held);
        Ok(Owned {
            owners: Arc::clone(owners),
            keys,
        })
    }
}

impl Drop for Owned {
    fn drop(&mut self) {
        let mut held = super::lock(&self.owners);
        for k in &self.keys {
            if let Some(n) = held.get_mut(k) {
                *n -= 1;
                if *n == 0 {
                    held.remove(k);
                }
            }
        }
    }
}

/// The hub (see the module docs).
#[derive(Debug)]
pub struct Hub {
    latest: Mutex<Latest>,
    tx: broadcast::Sender<Message>,
    wake: Notify,
    streams: Arc<Semaphore>,
    /// Open streams per session and per token (`s:` and `t:` keys).
    owners: Arc<Mutex<std::collections::HashMap<String, usize>>>,
    keep_alive: Duration,
    /// The `seq` of the latest frame, for streams waiting for a newer one.
    refreshed: tokio::sync::watch::Sender<u64>,
    /// Held while a stream makes the latest frame's snapshot text.
    making: tokio::sync::Mutex<()>,
    /// Refreshes done, and the time they took in all (µs): what the live
    /// view costs the aggregator, for `/metrics`.
    refreshes: AtomicU64,
    refresh_micros: AtomicU64,
}

/// The first message of a stream: every member and pool.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Snapshot<'a> {
    seq: u64,
    /// The catalog generation of these states: a page drawn from an older
    /// catalog fetches its topology again.
    generation: u64,
    members: Vec<&'a MemberLive>,
    pools: Vec<&'a PoolLive>,
}

impl Hub {
    /// A hub for `service`, with its task started.
    /// `idle` is the HTTP listener's idle timeout: streams send a comment
    /// well within it.
    pub fn start(service: Arc<Service>, idle: Duration) -> Arc<Hub> {
        let hub = Arc::new(Hub {
            latest: Mutex::default(),
            tx: broadcast::channel(BACKLOG).0,
            wake: Notify::new(),
            streams: Arc::new(Semaphore::new(MAX_EVENT_STREAMS)),
            owners: Arc::default(),
            keep_alive: (idle / 2).clamp(Duration::from_millis(500), Duration::from_secs(15)),
            refreshed: tokio::sync::watch::channel(0).0,
            making: tokio::sync::Mutex::new(()),
            refreshes: AtomicU64::new(0),
            refresh_micros: AtomicU64::new(0),
        });
        tokio::spawn(run(Arc::clone(&hub), service));
        hub
    }

    /// Open a stream: a snapshot taken after it opened (never older than
    /// the page asking, which was rendered before; see [`FRESH_WAIT`]),
    /// then every change after it.
    /// `signed_in` is asked every [`SESSION_CHECK`]: a stream whose session
    /// ended (signed out, expired, its token revoked) closes.
    ///
    /// `narrow`, for a session whose token is limited to some zones and
    /// pools, names the members and pools it may see (asked again when the
    /// catalog changes): its stream carries only those. The shared text is
    /// rewritten per such stream; unlimited streams share it as is.
    pub fn stream<F>(
        self: &Arc<Self>,
        signed_in: F,
        narrow: Option<Narrow>,
        session: &str,
        token: &str,
    ) -> Result<Response, StreamRefusal>
    where
        F: Fn() -> bool + Send + 'static,
    {
        let owned = Owned::take(&self.owners, session, token)?;
        let permit = Arc::clone(&self.streams)
            .try_acquire_owned()
            .map_err(|_| StreamRefusal::Full)?;
        let (mut rx_hub, wanted) = {
            let latest = super::lock(&self.latest);
            // Subscribed under the lock: every change after the frame
            // waited for below is received. A refresh under way may have
            // read the state before the page did: the one after it is
            // waited for then.
            let wanted = latest.seq + if latest.refreshing { 2 } else { 1 };
            (self.tx.subscribe(), wanted)
        };
        let mut refreshed = self.refreshed.subscribe();
        self.wake.notify_one();
        let hub = Arc::clone(self);
        let keep_alive = self.keep_alive;
        let (tx, rx) = mpsc::channel::<Bytes>(1);
        tokio::spawn(async move {
            let _permit = permit;
            let _owned = owned;
            let waited = tokio::time::timeout(FRESH_WAIT, refreshed.wait_for(|s| *s >= wanted));
            if !matches!(waited.await, Ok(Ok(_))) {
                tracing::debug!(
                    "UI stream: no fresh frame within {FRESH_WAIT:?}; sending the latest"
                );
            }
            // One text per frame, shared by every stream that opens on it
            // (at 100,000 members it is megabytes): streams that waited for
            // the same refresh make it one at a time, and all but the first
            // find it made.
            let read = |hub: &Hub| {
                let latest = super::lock(&hub.latest);
                let cached = match &latest.snapshot {
                    Some(framed) => Ok(framed.clone()),
                    None => Err((latest.generation, Arc::clone(&latest.frame))),
                };
                (latest.seq, cached)
            };
            let (seq, first) = match read(&hub) {
                (seq, Ok(text)) => (seq, text),
                (_, Err(_)) => {
                    let _making = hub.making.lock().await;
                    match read(&hub) {
                        (seq, Ok(text)) => (seq, text),
                        (seq, Err((generation, frame))) => {
                            let text =
                                off_worker(move || snapshot_text(seq, generation, &frame)).await;
                            let mut latest = super::lock(&hub.latest);
                            if latest.seq == seq {
                                latest.snapshot = Some(text.clone());
                            }
                            (seq, text)
                        }
                    }
                }
            };
            drop(hub);
            let mut only = narrow.as_ref().map(|n| n());
            // Unlimited streams send the shared bytes, not a copy.
            let first = narrowed(first, only.as_ref()).bytes();
            if tx.send(first).await.is_err() {
                return;
            }
            let mut check = tokio::time::interval(SESSION_CHECK);
            check.tick().await;
            let mut idle = tokio::time::interval(keep_alive);
            idle.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            idle.tick().await;
            loop {
                let message = tokio::select! {
                    m = rx_hub.recv() => m,
                    // The browser went away while nothing changed.
                    () = tx.closed() => return,
                    _ = check.tick() => {
                        if signed_in() {
                            continue;
                        }
                        return;
                    }
                    _ = idle.tick() => {
                        if tx.send(sse::KEEP_ALIVE).await.is_err() {
                            return;
                        }
                        continue;
                    }
                };
                let event = match message {
                    Ok(Message::Changes { seq: s, body }) if s > seq => {
                        narrowed(body, only.as_ref()).bytes()
                    }
                    Ok(Message::Changes { .. }) => continue,
                    Ok(Message::Catalog { generation }) => {
                        if let Some(n) = &narrow {
                            only = Some(n());
                        }
                        Framed::new("catalog", &generation.to_string()).bytes()
                    }
                    Ok(Message::Tick) => Framed::new("tick", "-").bytes(),
                    // Fell behind, or the hub is gone: the browser
                    // reconnects and starts from a fresh snapshot.
                    Err(_) => return,
                };
                if tx.send(event).await.is_err() {
                    return;
                }
                idle.reset();
            }
        });
        Ok(sse::response(rx))
    }

    /// (streams open, refreshes done, seconds they took in all).
    pub fn figures(&self) -> (u64, u64, f64) {
        (
            (MAX_EVENT_STREAMS - self.streams.available_permits()) as u64,
            self.refreshes.load(Ordering::Relaxed),
            self.refresh_micros.load(Ordering::Relaxed) as f64 / 1e6,
        )
    }
}

/// The hub's task: wait for a change, refresh, broadcast; for as long as
/// the runtime runs (or the core's watches close).
async fn run(h: Arc<Hub>, service: Arc<Service>) {
    let mut version = service.watch_version();
    let mut catalog = service.watch_catalog();
    let mut health = service.watch_health();
    // Ticks (the probe matrix refetches on them) go out at most once per
    // TICK_EVERY; one held back is sent when that much time has passed.
    let mut last_tick = Instant::now();
    let mut tick_pending = false;
    loop {
        let tick_due = tokio::time::Instant::from_std(last_tick + TICK_EVERY);
        tokio::select! {
            r = version.changed() => if r.is_err() { return },
            r = catalog.changed() => if r.is_err() { return },
            r = health.changed() => if r.is_err() { return },
            () = h.wake.notified() => {}
            () = tokio::time::sleep_until(tick_due), if tick_pending => {
                tick_pending = false;
                last_tick = Instant::now();
                let _ = h.tx.send(Message::Tick);
                continue;
            }
        }
        // No stream, no frame: a stream that opens wakes this and waits
        // for the refresh it causes.
        if h.tx.receiver_count() == 0 {
            continue;
        }
        super::lock(&h.latest).refreshing = true;
        let started = Instant::now();
        catalog.borrow_and_update();
        version.borrow_and_update();
        health.borrow_and_update();
        let (view, status) = service.status_view().await;
        let generation = view.catalog_generation();
        let next = off_worker(move || {
            let briefs = live::briefs(&view, status);
            live::frame(&view, &briefs)
        })
        .await;
        {
            let mut latest = super::lock(&h.latest);
            let changes = live::diff(&latest.frame, &next);
            latest.seq += 1;
            latest.frame = Arc::new(next);
            latest.snapshot = None;
            latest.refreshing = false;
            h.refreshed.send_replace(latest.seq);
            if !changes.is_empty() {
                let _ = h.tx.send(Message::Changes {
                    seq: latest.seq,
                    body: body(&changes),
                });
            }
            if std::mem::replace(&mut latest.generation, generation) != generation {
                let _ = h.tx.send(Message::Catalog { generation });
            }
        }
        if last_tick.elapsed() >= TICK_EVERY {
            last_tick = Instant::now();
            tick_pending = false;
            let _ = h.tx.send(Message::Tick);
        } else {
            tick_pending = true;
        }
        h.refreshes.fetch_add(1, Ordering::Relaxed);
        h.refresh_micros
            .fetch_add(started.elapsed().as_micros() as u64, Ordering::Relaxed);
        let pause = (started.elapsed() * 4).max(MIN_REFRESH);
        tokio::time::sleep(pause.saturating_sub(started.elapsed())).await;
    }
}

/// The snapshot event of frame `seq`.
fn snapshot_text(seq: u64, generation: u64, frame: &Frame) -> Framed {
    let mut members: Vec<&MemberLive> = frame.members.values().collect();
    members.sort_by_key(|m| m.id);
    let mut pools: Vec<&PoolLive> = frame.pools.values().collect();
    pools.sort_by_key(|p| p.id);
    Framed::json(
        "snapshot",
        &Snapshot {
            seq,
            generation,
            members,
            pools,
        },
    )
}

/// What a scoped stream may carry: member and pool ids.
#[derive(Debug, Default)]
pub struct Only {
    /// Members it may see.
    pub members: std::collections::HashSet<u64>,
    /// Pools it may see.
    pub pools: std::collections::HashSet<u64>,
}

/// Names what a scoped session may see, asked again on catalog changes.
pub type Narrow = Box<dyn Fn() -> Only + Send + Sync>;

/// `event` (a snapshot or changes) with only what `only` names; as is
/// when the stream is not limited.
fn narrowed(event: Framed, only: Option<&Only>) -> Framed {
    let Some(only) = only else {
        return event;
    };
    let name = event.name();
    // Fail closed: a frame that cannot be narrowed is not sent whole.
    let Ok(serde_json::Value::Object(mut map)) = serde_json::from_str(event.data()) else {
        return Framed::new(name, "{}");
    };
    let keep = |v: &serde_json::Value, ids: &std::collections::HashSet<u64>| {
        (v.get("id").or(Some(v)))
            .and_then(serde_json::Value::as_u64)
            .is_some_and(|id| ids.contains(&id))
    };
    for (key, ids) in [
        ("members", &only.members),
        ("removedMembers", &only.members),
        ("pools", &only.pools),
        ("removedPools", &only.pools),
    ] {
        if let Some(serde_json::Value::Array(items)) = map.get_mut(key) {
            items.retain(|v| keep(v, ids));
        }
    }
    Framed::json(name, &map)
}

fn body(changes: &Changes) -> Framed {
    Framed::json("changes", changes)
}
