//! Restarts: the aggregator restarts while the edge keeps answering, agents
//! reconnect, the startup gate keeps health from flipping and the edge's
//! versions only rise; then the edge restarts with the aggregator down and
//! answers from its cache.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use gslb_e2e::catalog::{a_record, http_check, member, pool};
use gslb_e2e::dns::{http_get, query_a};
use gslb_e2e::{Aggregator, Backend, Edge, LocalMesh, ZONE, wait_until};

fn config(a: &Backend, b: &Backend) -> String {
    format!(
        "{ZONE}{}{}{}",
        http_check("http", "1s", "500ms"),
        pool(
            "web",
            Some("http"),
            "",
            &[member("web-1", a.addr, ""), member("web-2", b.addr, "")]
        ),
        a_record("www.example.test", &["web"])
    )
}

/// Number of health-log entries of `pool`/`name`.
fn transitions(agg: &Aggregator, pool: &str, name: &str) -> usize {
    let id = agg.member(pool, name)["id"].as_u64().unwrap().to_string();
    agg.ctl_json(&["logs", &id]).as_array().map_or(0, Vec::len)
}

/// Every connected agent, per `gslbctl agents`.
fn connected_agents(agg: &Aggregator) -> usize {
    let agents = agg.ctl_json(&["agents"]);
    agents
        .as_array()
        .into_iter()
        .flatten()
        .filter(|a| a["connected"] == true)
        .count()
}

/// Queries the edge and reads its version in a loop until stopped,
/// counting unanswered queries and version decreases.
struct Watcher {
    stop: Arc<AtomicBool>,
    failures: Arc<AtomicU64>,
    decreases: Arc<AtomicU64>,
    queries: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Watcher {
    fn start(edge: &Edge, dns: std::net::SocketAddr, want: Vec<std::net::Ipv4Addr>) -> Watcher {
        let stop = Arc::new(AtomicBool::new(false));
        let failures = Arc::new(AtomicU64::new(0));
        let decreases = Arc::new(AtomicU64::new(0));
        let queries = Arc::new(AtomicU64::new(0));
        let status = edge.status;
        let (s, f, d, q) = (
            stop.clone(),
            failures.clone(),
            decreases.clone(),
            queries.clone(),
        );
        let thread = std::thread::spawn(move || {
            let mut version = 0;
            while !s.load(Ordering::Relaxed) {
                let mut got =
                    query_a(dns, "www.example.test", Duration::from_secs(1)).unwrap_or_default();
                got.sort();
                if got != want {
                    f.fetch_add(1, Ordering::Relaxed);
                }
                q.fetch_add(1, Ordering::Relaxed);
                let body = http_get(status, "/status/config").1;
                let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
                let now = v["version"].as_u64().unwrap_or(0);
                if now < version {
                    d.fetch_add(1, Ordering::Relaxed);
                }
                version = version.max(now);
                std::thread::sleep(Duration::from_millis(10));
            }
        });
        Watcher {
            stop,
            failures,
            decreases,
            queries,
            thread: Some(thread),
        }
    }

    /// Stop; returns (queries, wrong or missing answers, version decreases).
    fn finish(mut self) -> (u64, u64, u64) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            t.join().unwrap();
        }
        (
            self.queries.load(Ordering::Relaxed),
            self.failures.load(Ordering::Relaxed),
            self.decreases.load(Ordering::Relaxed),
        )
    }
}

/// The value of the aggregator metric whose name starts with `name`.
fn metric(agg: &Aggregator, name: &str) -> u64 {
    let text = http_get(agg.http, "/metrics").1;
    text.lines()
        .filter(|l| l.starts_with(name))
        .find_map(|l| l.rsplit(' ').next().and_then(|v| v.parse().ok()))
        .unwrap_or(0)
}

#[test]
fn the_mesh_survives_an_aggregator_restart_and_an_edge_restart_without_it() {
    let a = Backend::start(None, "127.0.4.1:0");
    let b = Backend::start(None, "127.0.4.2:0");
    let mut mesh = LocalMesh::start(
        "restart",
        &config(&a, &b),
        &[("fra1", "eu"), ("iad1", "us"), ("sin1", "ap")],
    );
    let want = vec!["127.0.4.1".parse().unwrap(), "127.0.4.2".parse().unwrap()];
    // Up, not merely answered (with both unknown the pool fails open).
    wait_until(20, "both members up", || {
        mesh.agg.health("web", "web-1") == "up" && mesh.agg.health("web", "web-2") == "up"
    });
    wait_until(10, "three agents connected", || {
        connected_agents(&mesh.agg) == 3
    });
    let before = (
        transitions(&mesh.agg, "web", "web-1"),
        transitions(&mesh.agg, "web", "web-2"),
    );

    let watcher = Watcher::start(&mesh.edge, mesh.dns, want.clone());
    let grpc = mesh.agg.grpc.to_string();
    let store = mesh.dir.join("store");
    mesh.agg.stop();
    // Down: the edge still answers and stays ready.
    wait_until(10, "the edge to notice the aggregator is gone", || {
        mesh.edge.status_config()["state"] != "synced"
    });
    assert_eq!(http_get(mesh.edge.status, "/readyz").0, 200);

    // Back on the same address with the default startup gate.
    mesh.agg = Aggregator::start_with(None, &store, &grpc, &[]);
    wait_until(30, "three agents reconnected", || {
        connected_agents(&mesh.agg) == 3
    });
    wait_until(30, "the edge synced again", || {
        mesh.edge.status_config()["state"] == "synced"
    });
    wait_until(30, "the startup gate to open", || {
        metric(&mesh.agg, "gslb_aggregator_decisions_enabled") == 1
    });
    // Two more cycles of results (3 locations x 2 members each) with
    // decisions enabled, then nothing may have flipped.
    let accepted = metric(&mesh.agg, "gslb_aggregator_results_accepted");
    wait_until(10, "two cycles after the gate", || {
        metric(&mesh.agg, "gslb_aggregator_results_accepted") >= accepted + 12
    });
    let after = (
        transitions(&mesh.agg, "web", "web-1"),
        transitions(&mesh.agg, "web", "web-2"),
    );
    assert_eq!(before, after, "health changed across the restart");
    assert_eq!(mesh.agg.health("web", "web-1"), "up");

    let (queries, failures, decreases) = watcher.finish();
    assert!(queries > 50, "only {queries} queries during the restart");
    assert_eq!(
        failures, 0,
        "{failures} of {queries} queries unanswered or wrong"
    );
    assert_eq!(decreases, 0, "the edge's version went down");

    // The edge restarts while the aggregator is down: it binds from cache.
    let version = mesh.edge.version();
    mesh.agg.stop();
    mesh.edge.stop();
    let url = format!("http://{grpc}");
    let edge = Edge::start(None, Some(&url), &mesh.edge.cache, "127.0.0.1:0", &[]);
    let dns = edge.dns();
    let config = edge.status_config();
    assert_eq!(config["version"], version);
    assert_eq!(config["state"], "stale", "{config}");
    assert!(
        config["source"].as_str().unwrap_or("").starts_with("cache"),
        "{config}"
    );
    let mut got = query_a(dns, "www.example.test", Duration::from_secs(2)).unwrap();
    got.sort();
    assert_eq!(got, want);
}
