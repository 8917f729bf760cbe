//! Restarts: the aggregator restarts while the edge keeps answering, agents
//! reconnect, the startup gate keeps health from flipping and the edge's
//! versions only rise; then the edge restarts with the aggregator down and
//! answers from its cache.

use std::time::Duration;

use gslb_e2e::catalog::web_pair;
use gslb_e2e::dns::{http_get, query_a};
use gslb_e2e::{Aggregator, Backend, Edge, LocalMesh, Watcher, wait_until};

#[test]
fn the_mesh_survives_an_aggregator_restart_and_an_edge_restart_without_it() {
    let a = Backend::start(None, "127.0.4.1:0");
    let b = Backend::start(None, "127.0.4.2:0");
    let mut mesh = LocalMesh::start(
        "restart",
        &web_pair(a.addr, b.addr),
        &[("fra1", "eu"), ("iad1", "us"), ("sin1", "ap")],
    );
    let want = vec!["127.0.4.1".parse().unwrap(), "127.0.4.2".parse().unwrap()];
    // Up, not merely answered (with both unknown the pool fails open).
    wait_until(20, "both members up", || {
        mesh.agg.health("web", "web-1") == "up" && mesh.agg.health("web", "web-2") == "up"
    });
    wait_until(10, "three agents connected", || {
        mesh.agg.connected_agents() == 3
    });
    let before = (
        mesh.agg.log_len("web", "web-1"),
        mesh.agg.log_len("web", "web-2"),
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
        mesh.agg.connected_agents() == 3
    });
    wait_until(30, "the edge synced again", || {
        mesh.edge.status_config()["state"] == "synced"
    });
    wait_until(30, "the startup gate to open", || {
        mesh.agg.metric("gslb_aggregator_decisions_enabled") == 1
    });
    // Two more cycles of results (3 locations x 2 members each) with
    // decisions enabled, then nothing may have flipped.
    let accepted = mesh.agg.metric("gslb_aggregator_results_accepted");
    wait_until(10, "two cycles after the gate", || {
        mesh.agg.metric("gslb_aggregator_results_accepted") >= accepted + 12
    });
    let after = (
        mesh.agg.log_len("web", "web-1"),
        mesh.agg.log_len("web", "web-2"),
    );
    assert_eq!(before, after, "health changed across the restart");
    assert_eq!(mesh.agg.health("web", "web-1"), "up");

    let gslb_e2e::Watched {
        queries,
        failures,
        decreases,
    } = watcher.finish();
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
