//! What the edge's tasks share: the current answer table (swapped whole,
//! never edited in place), the geo table, the feed's status, drain state
//! and metrics.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use arc_swap::ArcSwapOption;
use serde::Serialize;

use crate::geo::GeoTable;
use crate::metrics::Metrics;
use crate::table::Table;

/// How current the served snapshot is (seed 003's states).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FeedState {
    /// No snapshot has been applied yet.
    #[default]
    NeverLoaded,
    /// Subscribed, and the latest update is applied.
    Synced,
    /// Serving a snapshot while no aggregator is reachable.
    Stale,
    /// Subscribed, but the latest update could not be applied: serving the
    /// previous snapshot while resyncing.
    Degraded,
    /// Subscribed, but behind the aggregator: a delta did not follow the
    /// held version (a gap) or did not decode, so a full snapshot is asked
    /// for while the held one keeps serving (seed 003's `out_of_sync`).
    OutOfSync,
}

impl FeedState {
    /// The state's name, as `/status/config` shows it.
    pub fn name(self) -> &'static str {
        match self {
            FeedState::NeverLoaded => "never_loaded",
            FeedState::Synced => "synced",
            FeedState::Stale => "stale",
            FeedState::Degraded => "degraded",
            FeedState::OutOfSync => "out_of_sync",
        }
    }
}

impl FeedState {
    /// Every state, for metrics.
    pub const ALL: [FeedState; 5] = [
        FeedState::NeverLoaded,
        FeedState::Synced,
        FeedState::Stale,
        FeedState::Degraded,
        FeedState::OutOfSync,
    ];

    /// The name status and metrics use.
    pub fn as_str(self) -> &'static str {
        match self {
            FeedState::NeverLoaded => "never_loaded",
            FeedState::Synced => "synced",
            FeedState::Stale => "stale",
            FeedState::Degraded => "degraded",
            FeedState::OutOfSync => "out_of_sync",
        }
    }
}

/// The last failure of the feed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Failure {
    /// When, ms since the Unix epoch.
    pub at_ms: u64,
    /// What went wrong.
    pub error: String,
}

/// What `/status/config` reports.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Status {
    /// Feed state.
    pub state: FeedState,
    /// Applied snapshot version (0: none).
    pub version: u64,
    /// Where the applied snapshot came from: an aggregator URL,
    /// `cache:PATH`, or `peer:URL` (seeded from a peer, seed 001).
    pub source: Option<String>,
    /// When the aggregator was last heard from, ms since the Unix epoch.
    pub last_contact_ms: Option<u64>,
    /// The last failure.
    pub last_failure: Option<Failure>,
    /// When the snapshot was applied, ms since the Unix epoch.
    pub applied_at_ms: Option<u64>,
    /// When it was published by the aggregator.
    pub published_at_ms: Option<u64>,
    /// Now minus the publication time.
    pub age_ms: Option<u64>,
    /// Record sets of the applied snapshot that could not be compiled and
    /// are not served (the rest is): the state is `degraded` while any are.
    pub skipped: Vec<String>,
    /// How the start warmed up from a peer (seed 001), when one was asked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub warmup: Option<crate::warmup::Report>,
}

impl Status {
    /// Synced, or degraded while part of the snapshot is not served.
    fn in_sync(&self) -> FeedState {
        if self.skipped.is_empty() {
            FeedState::Synced
        } else {
            FeedState::Degraded
        }
    }
}

pub use gslb_shared::clock::now_ms;

/// The question's name and type, and the id, of a query as logged
/// (empty when it does not parse).
fn question_of(query: &[u8]) -> (String, String, u16) {
    let message = domain::base::Message::from_octets(query).ok();
    let question = message.as_ref().and_then(|m| m.first_question());
    let (qname, qtype) = question.map_or((String::new(), String::new()), |q| {
        (q.qname().to_string(), q.qtype().to_string())
    });
    (
        qname,
        qtype,
        message.as_ref().map_or(0, |m| m.header().id()),
    )
}

/// What an installed table changes in the status.
struct Applied {
    version: u64,
    published: u64,
    skipped: Vec<String>,
    source: String,
}

impl Applied {
    fn of(table: &Table, source: &str) -> Self {
        Self {
            version: table.version,
            published: table.published_at_ms,
            skipped: table.skipped.iter().map(ToString::to_string).collect(),
            source: source.to_owned(),
        }
    }

    fn record(self, s: &mut Status, live: bool) {
        s.version = self.version;
        s.source = Some(self.source);
        s.applied_at_ms = Some(now_ms());
        s.published_at_ms = Some(self.published);
        s.skipped = self.skipped;
        s.state = if live { s.in_sync() } else { FeedState::Stale };
    }
}

/// State shared by the feed, the DNS workers and the status listener.
#[derive(Debug)]
pub struct Shared {
    /// The table queries are answered from; `None` before the first snapshot.
    pub table: Arc<ArcSwapOption<Table>>,
    /// Client regions.
    pub geo: Arc<GeoTable>,
    /// Query counters.
    pub metrics: Metrics,
    /// Zone transfer state (journals, allow lists, NOTIFY).
    pub transfers: crate::xfr::Transfers,
    /// Hot keys and the warm-up endpoint's token (seed 001).
    pub warmup: crate::warmup::Warmup,
    /// Feed status; written by the feed task only.
    status: Mutex<Status>,
    /// Set at SIGTERM/SIGINT: `/readyz` answers 503 from then on.
    draining: AtomicBool,
    /// The DNS address, once bound (after the first snapshot).
    dns_bound: Arc<std::sync::OnceLock<std::net::SocketAddr>>,
    /// The second (since the Unix epoch) of the last query logged while
    /// draining, and how many were not logged since: one sample a second.
    drain_sampled: AtomicU64Pair,
    /// Open DNS TCP connections.
    tcp_open: AtomicUsize,
    /// DNS TCP connections closed by the write timeout.
    tcp_write_timeouts: std::sync::atomic::AtomicU64,
    /// Wakes whoever waits for the first snapshot.
    first: tokio::sync::Notify,
    /// The NSID answered to queries that ask (`--nsid`); unset: off.
    pub nsid: std::sync::OnceLock<Box<[u8]>>,
}

impl Shared {
    /// Shared state with no snapshot yet.
    pub fn new(geo: GeoTable) -> Arc<Self> {
        Arc::new(Self {
            table: Arc::new(ArcSwapOption::empty()),
            geo: Arc::new(geo),
            metrics: Metrics::default(),
            transfers: crate::xfr::Transfers::new(crate::xfr::DEFAULT_JOURNAL_DEPTH),
            warmup: crate::warmup::Warmup::default(),
            status: Mutex::new(Status::default()),
            draining: AtomicBool::new(false),
            dns_bound: Arc::default(),
            drain_sampled: AtomicU64Pair::default(),
            tcp_open: AtomicUsize::new(0),
            tcp_write_timeouts: std::sync::atomic::AtomicU64::new(0),
            first: tokio::sync::Notify::new(),
            nsid: std::sync::OnceLock::new(),
        })
    }

    fn with_status<R>(&self, f: impl FnOnce(&mut Status) -> R) -> R {
        f(&mut self.status.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// A copy of the status, with the age computed now.
    pub fn status(&self) -> Status {
        let mut s = self.with_status(|s| s.clone());
        s.age_ms = s.published_at_ms.map(|p| now_ms().saturating_sub(p));
        s
    }

    /// Swap in a new table from `source`.
    pub fn install(&self, table: Table, source: &str, live: bool) {
        let applied = Applied::of(&table, source);
        self.table.store(Some(Arc::new(table)));
        self.with_status(|s| applied.record(s, live));
        // A waiter creates its `Notified` before checking, so this reaches it.
        self.first.notify_waiters();
    }

    /// Swap in `table` from `source` (not live) only while no table is
    /// installed: a peer's snapshot must never replace one the feed
    /// installed meanwhile. False when one was.
    pub fn install_first(&self, table: Table, source: &str) -> bool {
        let applied = Applied::of(&table, source);
        let none: Option<Arc<Table>> = None;
        // Under the status lock: the feed records its install after its
        // swap, so whichever swaps last also writes the status last.
        let installed = self.with_status(|s| {
            let before = self.table.compare_and_swap(&none, Some(Arc::new(table)));
            let installed = before.is_none();
            if installed {
                applied.record(s, false);
            }
            installed
        });
        if installed {
            self.first.notify_waiters();
        }
        installed
    }

    /// Record how the start warmed up.
    pub fn set_warmup(&self, report: crate::warmup::Report) {
        self.with_status(|s| s.warmup = Some(report));
    }

    /// A feed stream is established for `held`, the version the feed
    /// holds: that snapshot is now in sync (the aggregator sends only what
    /// changed after it). With none held (0: a peer's snapshot is served,
    /// or nothing), the served table stays stale until the aggregator's
    /// full snapshot applies: an aggregator that is slow to send it must
    /// not make a peer's older table look synced.
    pub fn subscribed(&self, held: u64) {
        self.with_status(|s| {
            s.last_contact_ms = Some(now_ms());
            if s.state != FeedState::NeverLoaded && held > 0 {
                s.state = s.in_sync();
            }
        });
    }

    /// The aggregator was heard from.
    pub fn contact(&self) {
        self.with_status(|s| s.last_contact_ms = Some(now_ms()));
    }

    /// Record that the held snapshot is behind the aggregator's (a gap, an
    /// update that did not decode): `out_of_sync` until a snapshot applies.
    pub fn out_of_sync(&self, error: String) {
        self.with_status(|s| {
            s.last_failure = Some(Failure {
                at_ms: now_ms(),
                error,
            });
            if s.state != FeedState::NeverLoaded {
                s.state = FeedState::OutOfSync;
            }
        });
    }

    /// Record a failure; `live` says whether a stream is still up (degraded)
    /// or not (stale).
    pub fn failure(&self, error: String, live: bool) {
        self.with_status(|s| {
            s.last_failure = Some(Failure {
                at_ms: now_ms(),
                error,
            });
            if s.state != FeedState::NeverLoaded {
                s.state = if live {
                    FeedState::Degraded
                } else {
                    FeedState::Stale
                };
            }
        });
    }

    /// True once a snapshot is applied.
    pub fn loaded(&self) -> bool {
        self.table.load().is_some()
    }

    /// Wait until a snapshot is applied.
    pub async fn wait_loaded(&self) {
        loop {
            let notified = self.first.notified();
            if self.loaded() {
                return;
            }
            notified.await;
        }
    }

    /// Start draining.
    pub fn start_drain(&self) {
        self.draining.store(true, Ordering::SeqCst);
    }

    /// Record the bound DNS address (once).
    pub fn set_dns_bound(&self, addr: std::net::SocketAddr) {
        let _ = self.dns_bound.set(addr);
    }

    /// The DNS address, once bound.
    pub fn dns_bound(&self) -> Option<std::net::SocketAddr> {
        self.dns_bound.get().copied()
    }

    /// The cell the DNS address is set in, for a task that waits for it.
    pub fn dns_bound_cell(&self) -> Arc<std::sync::OnceLock<std::net::SocketAddr>> {
        Arc::clone(&self.dns_bound)
    }

    /// True while draining.
    pub fn draining(&self) -> bool {
        self.draining.load(Ordering::SeqCst)
    }

    /// Log a query that arrived while draining (name, type, id, peer): at
    /// most one a second, with the count of those not logged since, so a
    /// flood cannot fill the disk. Does nothing unless draining.
    pub fn log_drain_query(&self, query: &[u8], peer: std::net::SocketAddr, transport: &str) {
        if !self.draining() {
            return;
        }
        // Every arrival at DEBUG (seed 003 logs each); INFO gets one
        // sample a second, so a flood cannot fill the disk.
        if tracing::enabled!(tracing::Level::DEBUG) {
            let (qname, qtype, id) = question_of(query);
            tracing::debug!(%qname, %qtype, id, %peer, transport, "query arrived while draining");
        }
        let second = now_ms() / 1_000;
        let last = self.drain_sampled.second.load(Ordering::Relaxed);
        if last == second
            || self
                .drain_sampled
                .second
                .compare_exchange(last, second, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            self.drain_sampled.skipped.fetch_add(1, Ordering::Relaxed);
            return;
        }
        let skipped = self.drain_sampled.skipped.swap(0, Ordering::Relaxed);
        let (qname, qtype, id) = question_of(query);
        tracing::info!(%qname, %qtype, id, %peer, transport, not_logged_since = skipped, "query while draining (one sample a second)");
    }

    /// A TCP connection opened; the guard counts it until dropped.
    pub fn tcp_opened(self: &Arc<Self>) -> TcpGuard {
        self.tcp_open.fetch_add(1, Ordering::SeqCst);
        TcpGuard(Arc::clone(self))
    }

    /// Open TCP connections.
    pub fn tcp_open(&self) -> usize {
        self.tcp_open.load(Ordering::SeqCst)
    }

    /// A TCP connection was closed: its client did not read in time.
    pub fn tcp_write_timed_out(&self) {
        self.tcp_write_timeouts.fetch_add(1, Ordering::Relaxed);
    }

    /// TCP connections closed by the write timeout so far.
    pub fn tcp_write_timeouts(&self) -> u64 {
        self.tcp_write_timeouts.load(Ordering::Relaxed)
    }
}

/// Counts one open TCP connection.
#[derive(Debug)]
pub struct TcpGuard(Arc<Shared>);

impl Drop for TcpGuard {
    fn drop(&mut self) {
        self.0.tcp_open.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The drain log's sampler: the second last logged, and the queries not
/// logged since.
#[derive(Debug, Default)]
struct AtomicU64Pair {
    second: std::sync::atomic::AtomicU64,
    skipped: std::sync::atomic::AtomicU64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(version: u64) -> Table {
        let snapshot = gslb_shared::Snapshot {
            version,
            ..gslb_shared::Snapshot::default()
        };
        Table::compile(&snapshot).unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn a_peer_table_goes_in_only_while_none_is_installed() {
        let shared = Shared::new(GeoTable::new());
        assert!(shared.install_first(table(3), "peer:https://a:1"));
        assert_eq!(shared.status().source.as_deref(), Some("peer:https://a:1"));
        assert_eq!(shared.status().state, FeedState::Stale);
        // The feed subscribes holding nothing: the peer's table is not the
        // aggregator's, and stays stale until the aggregator's applies.
        shared.subscribed(0);
        assert_eq!(shared.status().state, FeedState::Stale);
        shared.install(table(5), "http://agg:1", true);
        assert_eq!(shared.status().state, FeedState::Synced);
        shared.subscribed(5);
        assert_eq!(shared.status().state, FeedState::Synced);
        assert!(!shared.install_first(table(4), "peer:https://a:1"));
        let status = shared.status();
        assert_eq!(
            (status.version, status.source.as_deref()),
            (5, Some("http://agg:1"))
        );
    }
}
