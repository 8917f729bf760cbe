//! A thread that queries an edge and reads its snapshot version in a loop,
//! counting wrong or missing answers and version decreases: what "the edge
//! answered every query throughout" means in the scenarios.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::dns::{http_get, query_a};
use crate::mesh::Edge;

/// The name every watcher asks for.
const NAME: &str = "www.example.test";

/// Counters shared with the watching thread.
#[derive(Default)]
struct Counts {
    stop: AtomicBool,
    queries: AtomicU64,
    failures: AtomicU64,
    decreases: AtomicU64,
}

/// What a watcher saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Watched {
    /// Queries sent.
    pub queries: u64,
    /// Answers missing or different from the expected addresses.
    pub failures: u64,
    /// Times the edge's version was lower than one seen before.
    pub decreases: u64,
}

/// The running watcher.
pub struct Watcher {
    counts: Arc<Counts>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watcher {
    /// Ask `dns` for `www.example.test` A every 10 ms, expecting `want`
    /// (in any order), and read `edge`'s version as often (from inside the
    /// edge's network namespace, if it has one).
    pub fn start(edge: &Edge, dns: SocketAddr, mut want: Vec<Ipv4Addr>) -> Watcher {
        want.sort();
        let counts = Arc::new(Counts::default());
        let status = edge.status;
        let netns = edge.netns.clone();
        let c = counts.clone();
        let thread = std::thread::spawn(move || {
            if let Some(ns) = netns {
                crate::netns::enter(&ns);
            }
            let mut version = 0;
            while !c.stop.load(Ordering::Relaxed) {
                let mut got = query_a(dns, NAME, Duration::from_secs(1)).unwrap_or_default();
                got.sort();
                if got != want {
                    c.failures.fetch_add(1, Ordering::Relaxed);
                }
                c.queries.fetch_add(1, Ordering::Relaxed);
                let body = http_get(status, "/status/config").1;
                let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
                let now = v["version"].as_u64().unwrap_or(0);
                if now < version {
                    c.decreases.fetch_add(1, Ordering::Relaxed);
                }
                version = version.max(now);
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        Watcher {
            counts,
            thread: Some(thread),
        }
    }

    /// Stop and report.
    pub fn finish(mut self) -> Watched {
        self.counts.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        Watched {
            queries: self.counts.queries.load(Ordering::Relaxed),
            failures: self.counts.failures.load(Ordering::Relaxed),
            decreases: self.counts.decreases.load(Ordering::Relaxed),
        }
    }
}

impl Drop for Watcher {
    fn drop(&mut self) {
        self.counts.stop.store(true, Ordering::Relaxed);
    }
}
