//! Issue 23: every metric the shipped alert rules
//! (`deploy/prometheus/alerts.yml`) and Grafana dashboard
//! (`deploy/grafana/gslb.json`) name is exported by a running component: a
//! mesh on mutual TLS (aggregator, an agent probing HTTP and HTTPS members,
//! an edge), and a one-node Raft cluster for the cluster's metrics.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::Duration;

use gslb_e2e::catalog::{member, pool, web_pair};
use gslb_e2e::cluster::Cluster;
use gslb_e2e::dns::{http_get, query_a};
use gslb_e2e::{Backend, LocalMesh, temp_dir, wait_until};

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

/// The aggregator's `/metrics` over its HTTPS listener (curl, trusting the
/// mesh's CA).
fn scrape_https(mesh: &LocalMesh) -> String {
    let ca = mesh.agg.operator.as_ref().unwrap().ca.clone();
    let out = std::process::Command::new("curl")
        .args(["-sS", "--max-time", "10", "--cacert"])
        .arg(ca)
        .arg(format!("https://{}/metrics", mesh.agg.http))
        .output()
        .expect("curl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn scrape(addr: std::net::SocketAddr) -> String {
    let (status, body) = http_get(addr, "/metrics");
    assert_eq!(status, 200, "{body}");
    body
}

/// The value of the unlabelled sample `name` in `text`.
fn sample(text: &str, name: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
}

#[test]
fn every_metric_the_alert_rules_and_dashboard_name_is_exported() {
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
    // The mesh on mutual TLS, so each component has a certificate of its own.
    let mesh = LocalMesh::start_tls("observability", &config, &[("fra1", "eu")]);
    wait_until(30, "every member up", || {
        ["web-1", "web-2"]
            .iter()
            .all(|m| mesh.agg.health("web", m) == "up")
            && mesh.agg.health("api", "api-1") == "up"
    });
    // A query, so the edge's per-rcode and latency series have samples.
    let answer = query_a(mesh.dns, "www.example.test", Duration::from_secs(2));
    assert_eq!(answer.unwrap().len(), 2);
    // The cluster's metrics come from a one-node Raft cluster.
    let dir = temp_dir("observability-raft");
    let cluster = Cluster::start(&dir, 23, 1, &[]);
    let node = cluster.node(cluster.leader(30));

    let aggregator = scrape_https(&mesh);
    let agent = scrape(mesh.agents[0].metrics);
    let edge = scrape(mesh.edge.status);
    let raft = scrape(node.http);
    let mut names = BTreeSet::new();
    for text in [&aggregator, &agent, &edge, &raft] {
        names.extend(exported(text));
    }
    // The health gauges carry the catalog's names.
    for line in [
        r#"gslb_aggregator_member_up{pool="web",member="web-1"} 1"#,
        r#"gslb_aggregator_pool_eligible{pool="web"} 1"#,
        r#"gslb_aggregator_location_quarantined{location="fra1"} 0"#,
        r#"gslb_aggregator_agent_connected{agent="#,
    ] {
        assert!(aggregator.contains(line), "{line} in:\n{aggregator}");
    }
    assert!(raft.contains("gslb_aggregator_raft_leader 1"), "{raft}");
    // Each component's own certificate (issued for 365 days).
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs_f64();
    for (text, name) in [
        (
            &aggregator,
            "gslb_aggregator_tls_cert_expiry_timestamp_seconds",
        ),
        (&agent, "gslb_agent_tls_cert_expiry_timestamp_seconds"),
        (&edge, "gslb_edge_tls_cert_expiry_timestamp_seconds"),
    ] {
        let days = (sample(text, name).unwrap_or_else(|| panic!("no {name} in:\n{text}")) - now)
            / 86_400.0;
        assert!((363.0..=366.0).contains(&days), "{name}: {days} days");
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
    drop(cluster);
    let _ = std::fs::remove_dir_all(&dir);
}
