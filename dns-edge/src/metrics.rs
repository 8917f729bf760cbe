//! Prometheus metrics of the edge. The query path only bumps relaxed
//! atomics in its own worker's [`Counters`] (no shared cache line, no lock);
//! a collector sums the workers at scrape time.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;

use crate::answer::{QTYPES, RCODES, Summary};
use crate::state::Shared;

/// Upper bounds of the latency histogram, seconds.
pub const LATENCY_BUCKETS: [f64; 10] = [
    0.000_005, 0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.01, 0.1,
];

/// One worker's counters (or the TCP listener's).
#[derive(Debug)]
pub struct Counters {
    queries: [[AtomicU64; RCODES.len()]; QTYPES.len()],
    latency: [AtomicU64; LATENCY_BUCKETS.len() + 1],
    latency_sum_ns: AtomicU64,
    truncated: AtomicU64,
    dropped: AtomicU64,
    rrl_dropped: AtomicU64,
    rrl_slipped: AtomicU64,
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
            in_flight: AtomicU64::new(0),
            _pad: [0; 8],
        }
    }
}

fn bump(c: &AtomicU64) {
    c.fetch_add(1, Ordering::Relaxed);
}

impl Counters {
    /// One answered query and how long it took.
    pub fn answered(&self, s: &Summary, took: Duration) {
        bump(&self.queries[s.qtype][s.rcode]);
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

/// Every worker's counters.
#[derive(Debug, Default)]
pub struct Metrics {
    workers: Mutex<Vec<Arc<Counters>>>,
}

impl Metrics {
    /// Counters for a new worker.
    pub fn worker(&self) -> Arc<Counters> {
        let c = Arc::new(Counters::default());
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

    fn sum(&self, read: impl Fn(&Counters) -> u64) -> u64 {
        let workers = self.workers.lock().unwrap_or_else(|e| e.into_inner());
        workers.iter().map(|w| read(w)).sum()
    }
}

fn load(c: &AtomicU64) -> u64 {
    c.load(Ordering::Relaxed)
}

#[derive(Debug)]
struct Collect(Arc<Shared>);

fn gauge(e: &mut DescriptorEncoder, name: &str, help: &str, v: i64) -> std::fmt::Result {
    let m = ConstGauge::new(v);
    m.encode(e.encode_descriptor(name, help, None, m.metric_type())?)
}

fn counter(e: &mut DescriptorEncoder, name: &str, help: &str, v: u64) -> std::fmt::Result {
    let m = ConstCounter::new(v);
    m.encode(e.encode_descriptor(name, help, None, m.metric_type())?)
}

impl Collector for Collect {
    fn encode(&self, mut e: DescriptorEncoder) -> std::fmt::Result {
        let shared = &self.0;
        let m = &shared.metrics;
        {
            let mut family = e.encode_descriptor(
                "gslb_edge_queries",
                "DNS queries answered, by query type and response code",
                None,
                MetricType::Counter,
            )?;
            for (t, qtype) in QTYPES.iter().enumerate() {
                for (r, rcode) in RCODES.iter().enumerate() {
                    let v = m.sum(|c| load(&c.queries[t][r]));
                    if v > 0 {
                        let labels = [("qtype", *qtype), ("rcode", *rcode)];
                        ConstCounter::new(v).encode(family.encode_family(&labels)?)?;
                    }
                }
            }
        }
        {
            // Per-bucket counts: the encoder accumulates them.
            let mut buckets = Vec::with_capacity(LATENCY_BUCKETS.len() + 1);
            let mut count = 0;
            for (i, bound) in LATENCY_BUCKETS
                .iter()
                .copied()
                .chain([f64::INFINITY])
                .enumerate()
            {
                let n = m.sum(|c| load(&c.latency[i]));
                count += n;
                buckets.push((bound, n));
            }
            let sum = m.sum(|c| load(&c.latency_sum_ns)) as f64 / 1e9;
            let mut h = e.encode_descriptor(
                "gslb_edge_query_duration_seconds",
                "Time from receiving a query to its response being ready",
                None,
                MetricType::Histogram,
            )?;
            h.encode_histogram::<NoLabelSet>(sum, count, &buckets, None)?;
        }
        counter(
            &mut e,
            "gslb_edge_truncated",
            "UDP responses sent with TC set",
            m.sum(|c| load(&c.truncated)),
        )?;
        counter(
            &mut e,
            "gslb_edge_dropped",
            "Messages not answered (responses, shorter than a header)",
            m.sum(|c| load(&c.dropped)),
        )?;
        counter(
            &mut e,
            "gslb_edge_rrl_dropped",
            "Responses withheld by rate limiting",
            m.sum(|c| load(&c.rrl_dropped)),
        )?;
        counter(
            &mut e,
            "gslb_edge_rrl_slipped",
            "Rate-limited responses sent truncated instead",
            m.sum(|c| load(&c.rrl_slipped)),
        )?;
        let status = shared.status();
        gauge(
            &mut e,
            "gslb_edge_snapshot_version",
            "Version of the applied snapshot (0: none)",
            status.version as i64,
        )?;
        gauge(
            &mut e,
            "gslb_edge_snapshot_age_seconds",
            "Seconds since the applied snapshot was published",
            status.age_ms.map_or(-1, |a| (a / 1000) as i64),
        )?;
        for state in crate::state::FeedState::ALL {
            gauge(
                &mut e,
                &format!("gslb_edge_feed_state_{}", state.as_str()),
                "1 when the snapshot feed is in this state",
                i64::from(status.state == state),
            )?;
        }
        gauge(
            &mut e,
            "gslb_edge_tcp_connections",
            "Open DNS TCP connections",
            shared.tcp_open() as i64,
        )?;
        counter(
            &mut e,
            "gslb_edge_tcp_write_timeouts",
            "DNS TCP connections closed because the client did not take its answer in time",
            shared.tcp_write_timeouts(),
        )?;
        gauge(
            &mut e,
            "gslb_edge_in_flight",
            "Queries being answered",
            m.in_flight() as i64,
        )?;
        gauge(
            &mut e,
            "gslb_edge_draining",
            "1 while draining",
            i64::from(shared.draining()),
        )?;
        Ok(())
    }
}

/// A registry that reads `shared` on every scrape.
pub fn registry(shared: Arc<Shared>) -> Registry {
    let mut r = Registry::default();
    r.register_collector(Box::new(Collect(shared)));
    r
}
