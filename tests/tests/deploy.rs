//! Every file under `deploy/` is checked against the real parsers: the
//! example configs by each binary's settings parser and validation, the
//! systemd units' and Kubernetes containers' command lines by the binary's
//! own flag parser (with the config file they name), and the operational
//! promises: probes aimed at endpoints the binary serves on the port it
//! listens on, termination grace above the edge's drain window.
#![allow(missing_docs, clippy::unwrap_used)]

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Parser;
use yaml_rust2::{Yaml, YamlLoader};

fn deploy() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy"))
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// What a parsed command line tells the checks below.
#[derive(Debug, Default)]
struct Parsed {
    listen: HashMap<&'static str, u16>,
    min_drain: Option<Duration>,
    location: Option<String>,
    /// An aggregator's node id and initial members (`--peers`).
    cluster: Option<(u64, std::collections::BTreeMap<u64, String>)>,
}

/// Parse `argv` (binary name first) with that binary's settings, reading
/// any `--config` path from `files` (the path as the process would see
/// it -> contents), and validate.
fn parse_command(argv: &[String], files: &HashMap<String, String>, scratch: &Path) -> Parsed {
    let mut argv = argv.to_vec();
    let binary = Path::new(&argv[0])
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    // Point --config at a local copy of the file the deployment provides.
    for i in 0..argv.len() {
        let path = if argv[i] == "--config" {
            argv.get(i + 1).cloned()
        } else {
            argv[i].strip_prefix("--config=").map(str::to_owned)
        };
        if let Some(path) = path {
            let text = files
                .get(&path)
                .unwrap_or_else(|| panic!("{binary}: --config {path} is not provided"));
            let local = scratch.join(format!("{binary}-{}", argv.len() + i));
            std::fs::write(&local, text).unwrap();
            let local = local.to_string_lossy().into_owned();
            if argv[i] == "--config" {
                argv[i + 1] = local;
            } else {
                argv[i] = format!("--config={local}");
            }
        }
    }
    let mut parsed = Parsed::default();
    match binary.as_str() {
        "gslb-aggregator" => {
            let c = gslb_aggregator::config::Settings::try_parse_from(&argv)
                .unwrap_or_else(|e| panic!("{argv:?}: {e}"))
                .merged()
                .and_then(|s| s.validate())
                .unwrap_or_else(|e| panic!("{argv:?}: {e}"));
            parsed.listen.insert("grpc", c.listen_grpc.port());
            parsed.listen.insert("http", c.listen_http.port());
            parsed.cluster = c.cluster.map(|k| (k.node_id, k.peers));
        }
        "gslb-agent" => {
            let c = gslb_agent::config::Settings::try_parse_from(&argv)
                .unwrap_or_else(|e| panic!("{argv:?}: {e}"))
                .merged()
                .and_then(|s| s.validate())
                .unwrap_or_else(|e| panic!("{argv:?}: {e}"));
            if let Some(m) = c.listen_metrics {
                parsed.listen.insert("metrics", m.port());
            }
            parsed.location = Some(c.location.to_string());
        }
        "gslb-edge" => {
            let c = gslb_edge::config::Settings::try_parse_from(&argv)
                .unwrap_or_else(|e| panic!("{argv:?}: {e}"))
                .merged()
                .and_then(|s| s.validate())
                .unwrap_or_else(|e| panic!("{argv:?}: {e}"));
            parsed.listen.insert("dns", c.listen_dns.port());
            parsed.listen.insert("status", c.listen_status.port());
            parsed.min_drain = Some(c.min_drain);
        }
        other => panic!("unknown binary {other}"),
    }
    parsed
}

#[test]
fn every_example_config_is_parsed_by_its_binary() {
    let scratch = gslb_e2e::temp_dir("deploy-examples");
    let examples = deploy().join("examples");
    let mut seen = Vec::new();
    for entry in std::fs::read_dir(&examples).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = read(&path);
        let as_config = |binary: &str| {
            let files = HashMap::from([(path.to_string_lossy().into_owned(), text.clone())]);
            let argv = [binary, "--config", &path.to_string_lossy()].map(str::to_owned);
            parse_command(&argv, &files, &scratch)
        };
        match name.as_str() {
            "agent.toml" => drop(as_config("gslb-agent")),
            "aggregator.toml" | "aggregator-cluster.toml" => drop(as_config("gslb-aggregator")),
            "edge.toml" | "edge-production.toml" => drop(as_config("gslb-edge")),
            "quickstart.toml" => {
                let desired = gslb_aggregator::core::declarative::parse(&text)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
                let empty = gslb_aggregator::core::catalog::CatalogState::default();
                gslb_aggregator::core::declarative::plan(&empty, &desired)
                    .unwrap_or_else(|e| panic!("{name}: {e}"));
            }
            "geo.txt" => {
                gslb_edge::geo::GeoTable::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
            }
            other => panic!("deploy/examples/{other}: no parser knows this file; add it here"),
        }
        seen.push(name);
    }
    assert!(seen.len() >= 6, "examples checked: {seen:?}");
    let _ = std::fs::remove_dir_all(&scratch);
}

/// `Key=value` lines of a systemd unit.
fn unit_values(text: &str) -> HashMap<String, String> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.starts_with('['))
        .filter_map(|l| l.split_once('='))
        .map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned()))
        .collect()
}

#[test]
fn systemd_units_start_their_binary_with_valid_flags_and_a_long_enough_stop() {
    let scratch = gslb_e2e::temp_dir("deploy-systemd");
    let examples = deploy().join("examples");
    // What an operator installs in /etc/gslb, per the units' comments.
    let files: HashMap<String, String> = [
        ("aggregator.toml", "aggregator.toml"),
        ("agent.toml", "agent.toml"),
        ("edge.toml", "edge-production.toml"),
    ]
    .into_iter()
    .map(|(etc, example)| (format!("/etc/gslb/{etc}"), read(&examples.join(example))))
    .collect();
    let mut units = 0;
    for entry in std::fs::read_dir(deploy().join("systemd")).unwrap() {
        let path = entry.unwrap().path();
        let values = unit_values(&read(&path));
        let exec = &values["ExecStart"];
        let argv: Vec<String> = exec.split_whitespace().map(str::to_owned).collect();
        let parsed = parse_command(&argv, &files, &scratch);
        let stop = humantime::parse_duration(&values["TimeoutStopSec"]).unwrap();
        if let Some(drain) = parsed.min_drain {
            assert!(
                stop > drain,
                "{}: TimeoutStopSec {stop:?} must exceed the drain window {drain:?}",
                path.display()
            );
            assert!(
                values.contains_key("StateDirectory"),
                "the edge's cache must persist"
            );
        }
        units += 1;
    }
    assert_eq!(units, 3);
    let _ = std::fs::remove_dir_all(&scratch);
}

/// Every document of every manifest.
fn manifests() -> Vec<(String, Yaml)> {
    let mut docs = Vec::new();
    for entry in std::fs::read_dir(deploy().join("kubernetes")).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        for doc in YamlLoader::load_from_str(&read(&path)).unwrap_or_else(|e| panic!("{name}: {e}"))
        {
            for key in ["apiVersion", "kind"] {
                assert!(
                    doc[key].as_str().is_some(),
                    "{name}: a document without {key}"
                );
            }
            assert!(
                doc["metadata"]["name"].as_str().is_some(),
                "{name}: unnamed"
            );
            docs.push((name.clone(), doc));
        }
    }
    docs
}

/// The files a ConfigMap mounted at `/etc/gslb` provides.
fn config_maps(docs: &[(String, Yaml)]) -> HashMap<String, HashMap<String, String>> {
    docs.iter()
        .filter(|(_, d)| d["kind"].as_str() == Some("ConfigMap"))
        .map(|(_, d)| {
            let files = d["data"]
                .as_hash()
                .unwrap()
                .iter()
                .map(|(k, v)| {
                    (
                        format!("/etc/gslb/{}", k.as_str().unwrap()),
                        v.as_str().unwrap().to_owned(),
                    )
                })
                .collect();
            (d["metadata"]["name"].as_str().unwrap().to_owned(), files)
        })
        .collect()
}

/// The container port named `name` (or numbered).
fn port(container: &Yaml, name: &Yaml) -> u16 {
    if let Some(n) = name.as_i64() {
        return n as u16;
    }
    let name = name.as_str().unwrap();
    container["ports"]
        .as_vec()
        .unwrap()
        .iter()
        .find(|p| p["name"].as_str() == Some(name))
        .and_then(|p| p["containerPort"].as_i64())
        .unwrap_or_else(|| panic!("no container port {name}")) as u16
}

/// Issue 23: the aggregator StatefulSet is a 3-node Raft cluster. Each
/// replica's command (pod N as node N+1) validates, names itself in
/// `--peers` at its own pod's name under the headless Service, which
/// publishes addresses before readiness (peers elect before any is ready);
/// pods start in parallel (an ordered start would wait forever on the
/// first pod's readiness, which needs a leader); a disruption budget keeps
/// a quorum; the bootstrap is manual (`gslbctl cluster init`).
fn aggregator_cluster(
    file: &str,
    sts: &Yaml,
    docs: &[(String, Yaml)],
    replicas: i64,
    cluster_of: impl Fn(i64) -> Option<(u64, std::collections::BTreeMap<u64, String>)>,
) {
    assert_eq!(replicas, 3, "{file}: the aggregator runs 3 replicas");
    assert_eq!(
        sts["spec"]["podManagementPolicy"].as_str(),
        Some("Parallel"),
        "{file}"
    );
    let name = sts["metadata"]["name"].as_str().unwrap();
    let namespace = sts["metadata"]["namespace"].as_str().unwrap();
    let service = sts["spec"]["serviceName"].as_str().unwrap();
    let headless = docs
        .iter()
        .map(|(_, d)| d)
        .find(|d| {
            d["kind"].as_str() == Some("Service") && d["metadata"]["name"].as_str() == Some(service)
        })
        .unwrap_or_else(|| panic!("{file}: no Service {service}"));
    assert_eq!(
        headless["spec"]["clusterIP"].as_str(),
        Some("None"),
        "{file}: {service} must be headless"
    );
    assert_eq!(
        headless["spec"]["publishNotReadyAddresses"].as_bool(),
        Some(true),
        "{file}"
    );
    let mut all = None;
    for ordinal in 0..replicas {
        let (id, peers) =
            cluster_of(ordinal).unwrap_or_else(|| panic!("{file}: pod {ordinal} runs alone"));
        assert_eq!(id, ordinal as u64 + 1);
        let own = format!("{name}-{ordinal}.{service}.{namespace}.svc.cluster.local:7000");
        assert_eq!(
            peers.get(&id),
            Some(&own),
            "{file}: pod {ordinal} in --peers"
        );
        assert_eq!(
            peers.len() as i64,
            replicas,
            "{file}: --peers lists every replica"
        );
        assert!(
            all.get_or_insert_with(|| peers.clone()) == &peers,
            "{file}: one --peers for all"
        );
    }
    let budget = docs
        .iter()
        .map(|(_, d)| d)
        .find(|d| d["kind"].as_str() == Some("PodDisruptionBudget"))
        .unwrap_or_else(|| panic!("{file}: no PodDisruptionBudget"));
    assert_eq!(
        budget["spec"]["maxUnavailable"].as_i64(),
        Some(1),
        "{file}: keep a quorum of 2"
    );
    let config = docs
        .iter()
        .map(|(_, d)| d)
        .find(|d| {
            d["kind"].as_str() == Some("ConfigMap") && d["metadata"]["name"].as_str() == Some(name)
        })
        .unwrap();
    let toml = config["data"]["aggregator.toml"].as_str().unwrap();
    assert!(toml.contains("bootstrap = \"manual\""), "{file}: {toml}");
}

#[test]
fn kubernetes_manifests_run_valid_commands_with_probes_the_binaries_serve() {
    let scratch = gslb_e2e::temp_dir("deploy-kubernetes");
    let docs = manifests();
    let maps = config_maps(&docs);
    let mut kinds = HashMap::<String, usize>::new();
    let mut locations = Vec::new();
    for (file, doc) in &docs {
        let kind = doc["kind"].as_str().unwrap().to_owned();
        *kinds.entry(kind.clone()).or_default() += 1;
        if !matches!(kind.as_str(), "Deployment" | "StatefulSet") {
            continue;
        }
        let spec = &doc["spec"]["template"]["spec"];
        let files: HashMap<String, String> = spec["volumes"]
            .as_vec()
            .into_iter()
            .flatten()
            .filter_map(|v| v["configMap"]["name"].as_str())
            .flat_map(|m| maps.get(m).cloned().unwrap_or_default())
            .collect();
        let grace = spec["terminationGracePeriodSeconds"]
            .as_i64()
            .unwrap_or_else(|| panic!("{file}: set terminationGracePeriodSeconds"));
        for container in spec["containers"].as_vec().unwrap() {
            let argv: Vec<String> = container["command"]
                .as_vec()
                .unwrap()
                .iter()
                .chain(container["args"].as_vec().into_iter().flatten())
                .map(|a| a.as_str().unwrap().to_owned())
                .collect();
            // A pod takes its node id from its name: check the command
            // each replica runs (pod N is node N+1).
            let replicas = doc["spec"]["replicas"].as_i64().unwrap_or(1);
            let per_pod = |ordinal: i64| -> Vec<String> {
                argv.iter()
                    .flat_map(|a| match a.as_str() {
                        "--node-id-from-hostname" => {
                            vec!["--node-id".to_owned(), (ordinal + 1).to_string()]
                        }
                        _ => vec![a.clone()],
                    })
                    .collect()
            };
            let parsed = parse_command(&per_pod(0), &files, &scratch);
            let probe = |name: &str| {
                let p = &container[name]["httpGet"];
                (p["path"].as_str().map(str::to_owned), p["port"].clone())
            };
            let serves = |(path, port_name): (Option<String>, Yaml), listener: &str| {
                let path = path.unwrap_or_else(|| panic!("{file}: probe without a path"));
                assert!(
                    ["/livez", "/readyz", "/status/ready"].contains(&path.as_str()),
                    "{file}: {path} is not an endpoint the binary serves"
                );
                assert_eq!(
                    Some(&port(container, &port_name)),
                    parsed.listen.get(listener),
                    "{file}: probe {path} not on the {listener} listener"
                );
                path
            };
            match argv[0].as_str() {
                "gslb-edge" => {
                    assert_eq!(serves(probe("startupProbe"), "status"), "/status/ready");
                    assert_eq!(serves(probe("livenessProbe"), "status"), "/livez");
                    assert_eq!(serves(probe("readinessProbe"), "status"), "/readyz");
                    let drain = parsed.min_drain.unwrap().as_secs() as i64;
                    assert!(grace > drain, "{file}: grace {grace}s <= drain {drain}s");
                    let ready = &container["readinessProbe"];
                    let detect = ready["periodSeconds"].as_i64().unwrap()
                        * ready["failureThreshold"].as_i64().unwrap();
                    assert!(
                        drain > detect,
                        "{file}: drain {drain}s <= readiness detection {detect}s"
                    );
                    assert_eq!(
                        port(container, &Yaml::String("dns-udp".into())),
                        parsed.listen["dns"]
                    );
                }
                "gslb-aggregator" => {
                    assert_eq!(
                        kind, "StatefulSet",
                        "{file}: the store needs a stable volume"
                    );
                    assert!(doc["spec"]["volumeClaimTemplates"].as_vec().is_some());
                    serves(probe("livenessProbe"), "http");
                    serves(probe("readinessProbe"), "http");
                    assert_eq!(
                        port(container, &Yaml::String("grpc".into())),
                        parsed.listen["grpc"]
                    );
                    aggregator_cluster(file, doc, &docs, replicas, |ordinal| {
                        parse_command(&per_pod(ordinal), &files, &scratch).cluster
                    });
                }
                "gslb-agent" => {
                    serves(probe("livenessProbe"), "metrics");
                    serves(probe("readinessProbe"), "metrics");
                    locations.push(parsed.location.clone().unwrap());
                    assert!(
                        spec["nodeSelector"]["topology.kubernetes.io/region"]
                            .as_str()
                            .is_some(),
                        "{file}: an agent must be pinned to its region"
                    );
                }
                other => panic!("{file}: unexpected command {other}"),
            }
        }
    }
    assert_eq!(kinds.get("StatefulSet"), Some(&1));
    assert!(kinds.get("Deployment").copied().unwrap_or(0) >= 2);
    locations.sort();
    locations.dedup();
    assert!(locations.len() >= 3, "agents in {locations:?}");
    let _ = std::fs::remove_dir_all(&scratch);
}

/// Issue 23: the alert rules load in Prometheus' own checker and pass
/// their unit tests (`deploy/prometheus/alerts_test.yml`: each rule fires
/// on the series that should raise it, after its `for`, and only then).
#[test]
fn alert_rules_pass_promtool_check_and_unit_tests() {
    let dir = deploy().join("prometheus");
    for args in [
        ["check", "rules", "alerts.yml"],
        ["test", "rules", "alerts_test.yml"],
    ] {
        let out = std::process::Command::new("promtool")
            .args(args)
            .current_dir(&dir)
            .output()
            .expect("promtool (Debian package prometheus; scripts/packages.sh)");
        assert!(
            out.status.success(),
            "promtool {}:\n{}{}",
            args.join(" "),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Issue 23: the Grafana dashboard is one that Grafana imports: unique
/// panel ids, every panel on the 24-column grid without overlapping
/// another, every query on the dashboard's Prometheus data source. (That
/// every metric it names exists is checked against running components in
/// the e2e suite, `observability.rs`.)
#[test]
fn the_grafana_dashboard_is_well_formed() {
    let text = read(&deploy().join("grafana/gslb.json"));
    let dash: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(dash["uid"], "gslb-overview");
    let panels = dash["panels"].as_array().unwrap();
    let mut ids = std::collections::HashSet::new();
    let mut cells = std::collections::HashSet::new();
    for p in panels {
        let title = p["title"].as_str().unwrap();
        assert!(ids.insert(p["id"].as_u64().unwrap()), "{title}: id reused");
        let g = &p["gridPos"];
        let [x, y, w, h] = ["x", "y", "w", "h"].map(|k| g[k].as_u64().unwrap());
        assert!(w > 0 && h > 0 && x + w <= 24, "{title}: {g}");
        for cell in (x..x + w).flat_map(|cx| (y..y + h).map(move |cy| (cx, cy))) {
            assert!(
                cells.insert(cell),
                "{title} overlaps another panel at {cell:?}"
            );
        }
        if p["type"] == "row" {
            continue;
        }
        assert_eq!(p["datasource"]["uid"], "${datasource}", "{title}");
        let targets = p["targets"].as_array().unwrap();
        assert!(!targets.is_empty(), "{title}: no query");
        for t in targets {
            assert!(
                t["expr"].as_str().is_some_and(|e| e.contains("gslb_")),
                "{title}: {t}"
            );
        }
    }
    let variables = dash["templating"]["list"].as_array().unwrap();
    assert!(
        variables
            .iter()
            .any(|v| v["name"] == "datasource" && v["query"] == "prometheus")
    );
}
