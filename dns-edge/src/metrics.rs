//! Prometheus metrics of the edge. The query path only bumps relaxed
//! atomics in its own worker's [`Counters`] (no shared cache line, no lock);
//! a collector sums the workers at scrape time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::answer::{QTYPES, RCODES, Summary};

/// Upper bounds of the latency histogram, seconds.
pub const LATENCY_BUCKETS: [f64; 10] = [
    0.000_005, 0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.01, 0.1,
];

/// What became of a frame on the AF_XDP path (`gslb_edge_xdp_frames`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XdpOutcome {
    /// Answered from the ring.
    Answered = 0,
    /// The reply did not fit a frame (or the MTU): sent through the
    /// kernel's UDP socket instead, which fragments.
    KernelSent = 1,
    /// Its headers failed the checks (dropped).
    Rejected = 2,
    /// The handler sent nothing (a response, RRL, no snapshot).
    Unanswered = 3,
    /// The reply was dropped: the TX ring was full.
    TxFull = 4,
}

/// The label of each [`XdpOutcome`], in order.
pub const XDP_OUTCOMES: [&str; 5] = [
    "answered",
    "kernel_sent",
    "rejected",
    "unanswered",
    "tx_full",
];

/// The start-up window whose answers are counted apart.
pub const FIRST_MINUTE: Duration = Duration::from_secs(60);

/// One worker's counters (or the TCP listener's).
#[derive(Debug)]
pub struct Counters {
    pub(crate) queries: [[AtomicU64; RCODES.len()]; QTYPES.len()],
    pub(crate) latency: [AtomicU64; LATENCY_BUCKETS.len() + 1],
    pub(crate) latency_sum_ns: AtomicU64,
    pub(crate) truncated: AtomicU64,
    pub(crate) dropped: AtomicU64,
    pub(crate) rrl_dropped: AtomicU64,
    pub(crate) rrl_slipped: AtomicU64,
    /// Answers copied from a prebuilt reply.
    pub(crate) prebuilt: AtomicU64,
    /// Answers in the first minute after the DNS listeners were bound:
    /// copied from a prebuilt reply (0) or encoded (1). How warm a start
    /// was, in the figures that matter.
    pub(crate) first_minute: [AtomicU64; 2],
    /// Frames of the AF_XDP path, by [`XdpOutcome`].
    pub(crate) xdp: [AtomicU64; XDP_OUTCOMES.len()],
    /// When the DNS listeners were bound (or these counters made).
    ready_at: Instant,
    /// Queries this worker is answering right now (for the drain's count).
    in_flight: AtomicU64,
    /// Keeps two workers' counters off one cache line.
    _pad: [u64; 8],
}

impl Default for Counters {
    fn default() -> Self {
        Self {
            queries: std::array::from_fn(|_| std::array::from_fn(|_| AtomicU64::new(0))),
            latency: std::array::from_fn(|_| AtomicU64::new(0)),
            latency_sum_ns: AtomicU64::new(0),
            truncated: AtomicU64::new(0),
            dropped: AtomicU64::new(0),
            rrl_dropped: AtomicU64::new(0),
            rrl_slipped: AtomicU64::new(0),
            prebuilt: AtomicU64::new(0),
            first_minute: std::array::from_fn(|_| AtomicU64::new(0)),
            xdp: std::array::from_fn(|_| AtomicU64::new(0)),
            ready_at: Instant::now(),
            in_flight: AtomicU64::new(0),
            _pad: [0; 8],
        }
    }
}

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

impl Counters {
    /// One answered query, whose answering began at `started`.
    pub fn answered(&self, s: &Summary, started: Instant) {
        let now = Instant::now();
        let took = now.saturating_duration_since(started);
        bump(&self.queries[s.qtype][s.rcode]);
        if s.prebuilt {
            bump(&self.prebuilt);
        }
        if now.saturating_duration_since(self.ready_at) < FIRST_MINUTE {
            bump(&self.first_minute[usize::from(!s.prebuilt)]);
        }
        if s.truncated {
            bump(&self.truncated);
        }
        let secs = took.as_secs_f64();
        let bucket = LATENCY_BUCKETS
            .iter()
            .position(|&b| secs <= b)
            .unwrap_or(LATENCY_BUCKETS.len());
        bump(&self.latency[bucket]);
        self.latency_sum_ns
            .fetch_add(took.as_nanos() as u64, Ordering::Relaxed);
    }

    /// A message we did not reply to (a response, or shorter than a header).
    pub fn dropped(&self) {
        bump(&self.dropped);
    }

    /// A query is being answered; the guard ends it.
    pub fn begin(&self) -> InFlight<'_> {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        InFlight(&self.in_flight)
    }

    /// One frame of the AF_XDP path and what became of it.
    pub fn xdp(&self, outcome: XdpOutcome) {
        bump(&self.xdp[outcome as usize]);
    }

    /// `n` frames with the same outcome.
    pub fn xdp_n(&self, outcome: XdpOutcome, n: usize) {
        self.xdp[outcome as usize].fetch_add(n as u64, Ordering::Relaxed);
    }

    /// A response rate limiting withheld.
    pub fn rrl_dropped(&self) {
        bump(&self.rrl_dropped);
    }

    /// A response rate limiting replaced by a truncated one.
    pub fn rrl_slipped(&self) {
        bump(&self.rrl_slipped);
    }
}

/// One query being answered.
#[derive(Debug)]
pub struct InFlight<'a>(&'a AtomicU64);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Every worker's counters, and how snapshots were applied.
#[derive(Debug, Default)]
pub struct Metrics {
    workers: Mutex<Vec<Arc<Counters>>>,
    /// When the DNS listeners were bound.
    ready_at: std::sync::OnceLock<Instant>,
    /// Snapshots applied by a full compile, and by a health-only refresh.
    pub(crate) applies: [AtomicU64; 2],
    /// How long the last of each took, µs.
    pub(crate) last_apply_us: [AtomicU64; 2],
    /// The AF_XDP path: attached (1) or not, sockets bound, of which
    /// zero-copy.
    pub(crate) xdp_attached: AtomicU64,
    pub(crate) xdp_sockets: AtomicU64,
    pub(crate) xdp_zero_copy: AtomicU64,
}

impl Metrics {
    /// The DNS listeners are bound: the first minute starts now.
    pub fn set_ready(&self) {
        let _ = self.ready_at.set(Instant::now());
    }

    /// A snapshot was applied, by a refresh or not, in `us` µs.
    pub fn applied(&self, refresh: bool, us: u64) {
        let i = usize::from(refresh);
        bump(&self.applies[i]);
        self.last_apply_us[i].store(us, Ordering::Relaxed);
    }

    /// The AF_XDP path is attached with `sockets` sockets, `zero_copy` of
    /// them in zero-copy mode; or detached (`None`).
    pub fn set_xdp(&self, sockets: Option<(usize, usize)>) {
        let (attached, n, zc) = match sockets {
            Some((n, zc)) => (1, n as u64, zc as u64),
            None => (0, 0, 0),
        };
        self.xdp_attached.store(attached, Ordering::Relaxed);
        self.xdp_sockets.store(n, Ordering::Relaxed);
        self.xdp_zero_copy.store(zc, Ordering::Relaxed);
    }

    /// Counters for a new worker.
    pub fn worker(&self) -> Arc<Counters> {
        let c = Arc::new(Counters {
            ready_at: self.ready_at.get().copied().unwrap_or_else(Instant::now),
            ..Counters::default()
        });
        self.workers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(Arc::clone(&c));
        c
    }

    /// Queries being answered right now, over every worker.
    pub fn in_flight(&self) -> u64 {
        self.sum(|c| load(&c.in_flight))
    }

    pub(crate) fn sum(&self, read: impl Fn(&Counters) -> u64) -> u64 {
        let workers = self.workers.lock().unwrap_or_else(|e| e.into_inner());
        workers.iter().map(|w| read(w)).sum()
    }
}

/// A counter's value (relaxed: a scrape needs no ordering).
pub(crate) fn load(c: &AtomicU64) -> u64 {
    c.load(Ordering::Relaxed)
}
