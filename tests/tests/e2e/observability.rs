//! Issue 23: every metric the shipped alert rules
//! (`deploy/prometheus/alerts.yml`) and Grafana dashboard
//! (`deploy/grafana/gslb.json`) name is exported by a running component: a
//! one-node Raft cluster (so the cluster's metrics are there), an agent
//! probing two members, and an edge following the cluster.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use gslb_e2e::catalog::{member, pool, web_pair};
use gslb_e2e::cluster::Cluster;
use gslb_e2e::dns::{http_get, query_a};
use gslb_e2e::{Agent, Backend, Edge, temp_dir, wait_until};

fn deploy(path: &str) -> String {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../deploy")
        .join(path);
    std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
}

/// The `gslb_…` metric names a rule file or dashboard mentions.
fn referenced(text: &str) -> BTreeSet<String> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| w.starts_with("gslb_"))
        .map(str::to_owned)
        .collect()
}

/// Every series name a query can use against `exposition`: each family's
/// samples, and the names a family of its type is queried by even while
/// it has no sample (`_total` of a counter; `_bucket`, `_sum`, `_count` of
/// a histogram; a gauge's own name).
fn exported(exposition: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in exposition.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let mut parts = rest.split(' ');
            let (Some(name), Some(kind)) = (parts.next(), parts.next()) else {
                continue;
            };
            let suffixes: &[&str] = match kind {
                "counter" => &["_total"],
                "histogram" => &["_bucket", "_sum", "_count"],
                _ => &[""],
            };
            names.extend(suffixes.iter().map(|s| format!("{name}{s}")));
        } else if !line.starts_with('#')
            && let Some(name) = line.split(['{', ' ']).next().filter(|n| !n.is_empty())
        {
            names.insert(name.to_owned());
        }
    }
    names
}

#[test]
fn every_metric_the_alert_rules_and_dashboard_name_is_exported() {
    let dir = temp_dir("observability");
    let a = Backend::start(None, "127.0.23.101:0");
    let b = Backend::start(None, "127.0.23.102:0");
    // An HTTPS member, so the agent reports a certificate's expiry.
    let cert = gslb_e2e::pki::cert("edge", "observability-backend", &["127.0.23.103"]);
    let (cert_path, key_path) = (cert.cert.to_str().unwrap(), cert.key.to_str().unwrap());
    let secure = Backend::start_with(
        None,
        "127.0.23.103:0",
        &["--tls-cert", cert_path, "--tls-key", key_path],
    );
    let cluster = Cluster::start(&dir, 23, 1, &["--startup-window", "1s"]);
    let leader = cluster.leader(30);
    let node = cluster.node(leader);
    let https = r#"{ type = "https", method = "GET", path = "/health", tlsVerify = false }"#;
    let config = format!(
        "{}\n[[check]]\nname = \"https\"\nprobe = {https}\ninterval = \"1s\"\ntimeout = \"500ms\"\n{}",
        web_pair(a.addr, b.addr),
        pool(
            "api",
            Some("https"),
            "",
            &[member("api-1", secure.addr, "")]
        ),
    );
    let version = node.apply(&config, &dir);
    let agent = Agent::start(None, "fra1", "eu", &cluster.urls());
    let edge = Edge::start(
        None,
        Some(&cluster.urls()),
        &dir.join("cache"),
        "127.0.0.1:0",
        &[],
    );
    edge.wait_version(version);
    wait_until(30, "both members up", || {
        ["web-1", "web-2"]
            .iter()
            .all(|m| node.health("web", m) == "up")
            && node.health("api", "api-1") == "up"
    });
    // A query, so the edge's per-rcode and latency series have samples.
    let answer = query_a(edge.dns(), "www.example.test", Duration::from_secs(2));
    assert_eq!(answer.unwrap().len(), 2);

    let scrape = |addr| {
        let (status, body) = http_get(addr, "/metrics");
        assert_eq!(status, 200, "{body}");
        body
    };
    let mut names = BTreeSet::new();
    for text in [
        scrape(node.http),
        scrape(agent.metrics),
        scrape(edge.status),
    ] {
        names.extend(exported(&text));
    }
    // The health gauges carry the catalog's names.
    let aggregator = scrape(node.http);
    for line in [
        r#"gslb_aggregator_member_up{pool="web",member="web-1"} 1"#,
        r#"gslb_aggregator_pool_eligible{pool="web"} 1"#,
        r#"gslb_aggregator_location_quarantined{location="fra1"} 0"#,
        r#"gslb_aggregator_agent_connected{agent="#,
        "gslb_aggregator_raft_leader 1",
    ] {
        assert!(aggregator.contains(line), "{line} in:\n{aggregator}");
    }

    for (file, text) in [
        ("prometheus/alerts.yml", deploy("prometheus/alerts.yml")),
        ("grafana/gslb.json", deploy("grafana/gslb.json")),
    ] {
        let named = referenced(&text);
        assert!(named.len() > 10, "{file} names {named:?}");
        let missing: Vec<&String> = named.difference(&names).collect();
        assert!(
            missing.is_empty(),
            "{file} names metrics no component exports: {missing:?}\nexported: {names:?}"
        );
    }
    drop((edge, agent, cluster));
    let _ = std::fs::remove_dir_all(&dir);
}
