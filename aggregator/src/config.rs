//! Aggregator settings: flags and an optional TOML file with the same keys
//! (flags win), validated into an [`AggregatorConfig`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
pub use gslb_shared::config::ConfigError;
use gslb_shared::config::{duration, invalid};
use gslb_shared::telemetry::LogFormat;
use serde::Deserialize;

use gslb_engine::{EngineConfig, QuarantineConfig};

/// gslb-aggregator: decides member health from agents' results and serves
/// the catalog, status and snapshots over gRPC. Every flag can also be set
/// in the --config file under the same name; flags win.
#[derive(Debug, Clone, Default, Parser, Deserialize)]
#[command(name = "gslb-aggregator", version)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Settings {
    /// TOML file with any of these settings.
    #[arg(long)]
    #[serde(skip)]
    pub config: Option<PathBuf>,
    /// Directory of the embedded store (created if missing).
    #[arg(long)]
    pub data_dir: Option<PathBuf>,
    /// Restore FILE (a `gslbctl backup`) into --data-dir, which must hold
    /// no store, and exit without serving.
    #[arg(long, value_name = "FILE")]
    #[serde(skip)]
    pub restore: Option<PathBuf>,
    /// gRPC listener: agents, edges, admin, reflection [default: 127.0.0.1:7000]; port 0 picks one.
    #[arg(long)]
    pub listen_grpc: Option<SocketAddr>,
    /// HTTP listener: /livez, /readyz, /metrics [default: 127.0.0.1:7080]; port 0 picks one.
    #[arg(long)]
    pub listen_http: Option<SocketAddr>,
    /// Engine clock tick, e.g. `100ms` [default: 100ms].
    #[arg(long)]
    pub tick: Option<String>,
    /// Time after interval + timeout before a cycle closes with what arrived [default: 500ms].
    #[arg(long)]
    pub cycle_grace: Option<String>,
    /// Startup gate length; unset derives it from the checks.
    #[arg(long)]
    pub startup_window: Option<String>,
    /// Turn location quarantine off.
    #[arg(long)]
    #[serde(default)]
    pub no_quarantine: bool,
    /// Quarantine: length of one evaluation round, 1s to 1h [default: 10s].
    #[arg(long)]
    pub quarantine_round: Option<String>,
    /// Quarantine: member-cycles a location needs in a round for a verdict,
    /// at least 1 [default: 5].
    #[arg(long)]
    pub quarantine_min_samples: Option<u32>,
    /// Quarantine: a location failing at least this share of its checks is
    /// suspect, in (0, 1] [default: 0.5].
    #[arg(long)]
    pub quarantine_location_fail: Option<f64>,
    /// Quarantine: ...while the other fresh locations fail at most this
    /// share of the same, in [0, location-fail) [default: 0.1].
    #[arg(long)]
    pub quarantine_others_fail_max: Option<f64>,
    /// Quarantine: clean rounds that release a location, at least 1 [default: 3].
    #[arg(long)]
    pub quarantine_clean_rounds: Option<u32>,
    /// Open connections per listener (gRPC, HTTP) at most; more are closed
    /// on arrival [default: 1024].
    #[arg(long)]
    pub max_connections: Option<usize>,
    /// HTTP: close a connection that sends and receives nothing for this
    /// long (idle keep-alives, clients that never read) [default: 60s].
    #[arg(long)]
    pub http_idle_timeout: Option<String>,
    /// HTTP: a request's headers must arrive within this [default: 10s].
    #[arg(long)]
    pub http_header_timeout: Option<String>,
    /// How long a disconnected agent stays listed (gslbctl agents); at
    /// most 1,000 disconnected agents are kept [default: 1h].
    #[arg(long)]
    pub agent_retention: Option<String>,
    /// The store's page cache, in MiB, 8 to 65,536: what it keeps in
    /// memory besides the catalog the core holds anyway [default: 16].
    #[arg(long)]
    pub store_cache_mib: Option<u64>,
    /// Most audit records kept (the oldest are trimmed), 1 to 10,000,000
    /// [default: 50000].
    #[arg(long)]
    pub audit_keep: Option<u64>,
    /// Longest an audit record is kept, in days, 1 to 3,650 [default: 90].
    #[arg(long)]
    pub audit_days: Option<u64>,
    /// Name server (`IP:PORT`) that hostname members of flattened records
    /// are resolved with [default: the system's, from /etc/resolv.conf].
    #[arg(long)]
    pub resolver: Option<SocketAddr>,
    /// MaxMind DB files, comma-separated, that `explain` places a client
    /// address with (the same files the edges use with --geo-mmdb).
    #[arg(long, value_delimiter = ',')]
    #[serde(default)]
    pub geo_mmdb: Vec<PathBuf>,
    /// File of `CIDR REGION` lines that `explain` places a client address
    /// in a region with (the same file the edges use with --geo-file).
    #[arg(long)]
    pub geo_file: Option<PathBuf>,
    /// Log format: text or json [default: text].
    #[arg(long)]
    pub log_format: Option<LogFormat>,
    /// This node's id in a Raft cluster (1 or more); unset runs a single node.
    #[arg(long)]
    pub node_id: Option<u64>,
    /// The cluster's initial members, `ID=HOST:PORT` (their gRPC listeners),
    /// comma-separated, this node included; the lowest id forms the cluster
    /// on its first start. Without it a node with --node-id waits to be
    /// added (`gslbctl cluster join`).
    #[arg(long, value_delimiter = ',')]
    #[serde(default)]
    pub peers: Vec<String>,
    /// Take --node-id from the host name's trailing ordinal: the pod
    /// `NAME-N` of a StatefulSet is node N+1.
    #[arg(long)]
    #[serde(default)]
    pub node_id_from_hostname: bool,
    /// Who forms the cluster of --peers: `auto`, the lowest id on its
    /// first start, or `manual`, an operator with `gslbctl cluster init`
    /// [default: auto].
    #[arg(long, value_enum)]
    pub bootstrap: Option<crate::replication::cluster::Bootstrap>,
    /// Shortest Raft election timeout (the longest is twice it) [default: 600ms].
    #[arg(long)]
    pub election_timeout: Option<String>,
    /// Raft leader heartbeat interval [default: 150ms].
    #[arg(long)]
    pub heartbeat_interval: Option<String>,
    /// Snapshot the state and compact the Raft log every this many entries;
    /// a tenth of it stays in the log for followers briefly away [default: 10000].
    #[arg(long)]
    pub snapshot_every: Option<u64>,
    /// This node's certificate (PEM; role aggregator, valid for the
    /// addresses others dial). Serves gRPC with client certificates
    /// required and HTTP over TLS; reloaded when it changes.
    #[arg(long)]
    pub tls_cert: Option<PathBuf>,
    /// Private key (PEM) of --tls-cert.
    #[arg(long)]
    pub tls_key: Option<PathBuf>,
    /// CA (PEM) whose certificates agents, edges, peers and operators present.
    #[arg(long)]
    pub tls_ca: Option<PathBuf>,
    /// Serve plain text instead of TLS, with no client identities: only on
    /// loopback listeners, for development.
    #[arg(long)]
    #[serde(default)]
    pub insecure: bool,
    /// Admin tokens file (`gslbctl tokens`), reloaded when it changes
    /// [default: DATA_DIR/tokens.json].
    #[arg(long)]
    pub tokens_file: Option<PathBuf>,
}

/// How the listeners are secured.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    /// TLS with these files.
    Tls(crate::net::tls::TlsFiles),
    /// Plain text on loopback (`--insecure`).
    Insecure,
}

pub use crate::replication::cluster::ClusterConfig;

/// Validated settings.
#[derive(Debug, Clone, PartialEq)]
pub struct AggregatorConfig {
    /// Store directory.
    pub data_dir: PathBuf,
    /// gRPC address.
    pub listen_grpc: SocketAddr,
    /// HTTP address.
    pub listen_http: SocketAddr,
    /// Engine tick.
    pub tick: Duration,
    /// Engine settings.
    pub engine: EngineConfig,
    /// Log format.
    pub log_format: LogFormat,
    /// Raft cluster membership; `None` for a single node.
    pub cluster: Option<ClusterConfig>,
    /// TLS or plain text.
    pub transport: Transport,
    /// Admin tokens file.
    pub tokens_file: PathBuf,
    /// Connection caps and HTTP timeouts.
    pub limits: crate::api::server::ServeLimits,
    /// How long a disconnected agent stays listed.
    pub agent_retention: Duration,
    /// The store's page cache, in MiB.
    pub store_cache_mib: u64,
    /// Most audit records kept.
    pub audit_keep: u64,
    /// Longest an audit record is kept, in days.
    pub audit_days: u64,
    /// Name server for flattened records' hostnames (`None`: the system's).
    pub resolver: Option<SocketAddr>,
    /// MaxMind DB files for explain.
    pub geo_mmdb: Vec<PathBuf>,
    /// The CIDR region table for explain.
    pub geo_file: Option<PathBuf>,
}

impl Settings {
    /// Read `--config` (if given) under the flags.
    pub fn merged(self) -> Result<Settings, ConfigError> {
        let Some(path) = self.config.clone() else {
            return Ok(self);
        };
        let file: Settings = gslb_shared::config::read_toml(&path)?;
        Ok(Settings {
            config: Some(path),
            data_dir: self.data_dir.or(file.data_dir),
            restore: self.restore,
            listen_grpc: self.listen_grpc.or(file.listen_grpc),
            listen_http: self.listen_http.or(file.listen_http),
            tick: self.tick.or(file.tick),
            cycle_grace: self.cycle_grace.or(file.cycle_grace),
            startup_window: self.startup_window.or(file.startup_window),
            no_quarantine: self.no_quarantine || file.no_quarantine,
            quarantine_round: self.quarantine_round.or(file.quarantine_round),
            quarantine_min_samples: self.quarantine_min_samples.or(file.quarantine_min_samples),
            quarantine_location_fail: self
                .quarantine_location_fail
                .or(file.quarantine_location_fail),
            quarantine_others_fail_max: self
                .quarantine_others_fail_max
                .or(file.quarantine_others_fail_max),
            quarantine_clean_rounds: self
                .quarantine_clean_rounds
                .or(file.quarantine_clean_rounds),
            max_connections: self.max_connections.or(file.max_connections),
            http_idle_timeout: self.http_idle_timeout.or(file.http_idle_timeout),
            http_header_timeout: self.http_header_timeout.or(file.http_header_timeout),
            agent_retention: self.agent_retention.or(file.agent_retention),
            store_cache_mib: self.store_cache_mib.or(file.store_cache_mib),
            audit_keep: self.audit_keep.or(file.audit_keep),
            audit_days: self.audit_days.or(file.audit_days),
            resolver: self.resolver.or(file.resolver),
            geo_mmdb: if self.geo_mmdb.is_empty() {
                file.geo_mmdb
            } else {
                self.geo_mmdb
            },
            geo_file: self.geo_file.or(file.geo_file),
            log_format: self.log_format.or(file.log_format),
            node_id: self.node_id.or(file.node_id),
            node_id_from_hostname: self.node_id_from_hostname || file.node_id_from_hostname,
            bootstrap: self.bootstrap.or(file.bootstrap),
            peers: if self.peers.is_empty() {
                file.peers
            } else {
                self.peers
            },
            election_timeout: self.election_timeout.or(file.election_timeout),
            heartbeat_interval: self.heartbeat_interval.or(file.heartbeat_interval),
            snapshot_every: self.snapshot_every.or(file.snapshot_every),
            tls_cert: self.tls_cert.or(file.tls_cert),
            tls_key: self.tls_key.or(file.tls_key),
            tls_ca: self.tls_ca.or(file.tls_ca),
            insecure: self.insecure || file.insecure,
            tokens_file: self.tokens_file.or(file.tokens_file),
        })
    }

    /// Validate.
    pub fn validate(self) -> Result<AggregatorConfig, ConfigError> {
        let data_dir = self
            .data_dir
            .clone()
            .ok_or_else(|| invalid("data-dir", "is required (e.g. --data-dir /var/lib/gslb)"))?;
        let cluster = self.cluster()?;
        let listen_grpc = self
            .listen_grpc
            .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 7000)));
        let listen_http = self
            .listen_http
            .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 7080)));
        let transport = self.transport(listen_grpc, listen_http, cluster.as_ref())?;
        let tick = duration("tick", self.tick, Duration::from_millis(100))?;
        if tick < Duration::from_millis(10) || tick > Duration::from_secs(1) {
            return Err(invalid("tick", "must be between 10ms and 1s"));
        }
        let startup_window = self
            .startup_window
            .map(|t| duration("startup-window", Some(t), Duration::ZERO))
            .transpose()?;
        let engine = EngineConfig {
            cycle_grace: duration("cycle-grace", self.cycle_grace, Duration::from_millis(500))?,
            startup_window,
            quarantine: {
                let d = QuarantineConfig::default();
                QuarantineConfig {
                    enabled: !self.no_quarantine,
                    round: duration("quarantine-round", self.quarantine_round, d.round)?,
                    min_samples: self.quarantine_min_samples.unwrap_or(d.min_samples),
                    location_fail: self.quarantine_location_fail.unwrap_or(d.location_fail),
                    others_fail_max: self.quarantine_others_fail_max.unwrap_or(d.others_fail_max),
                    clean_rounds: self.quarantine_clean_rounds.unwrap_or(d.clean_rounds),
                }
            },
        }
        .validate()
        .map_err(|e| ConfigError::Invalid {
            // Named as the operator sets it (flag and TOML key).
            field: match e.field {
                "cycleGrace" => "cycle-grace",
                "quarantine.round" => "quarantine-round",
                "quarantine.minSamples" => "quarantine-min-samples",
                "quarantine.locationFail" => "quarantine-location-fail",
                "quarantine.othersFailMax" => "quarantine-others-fail-max",
                "quarantine.cleanRounds" => "quarantine-clean-rounds",
                other => other,
            },
            rule: e.rule.into(),
        })?;
        let max_connections = self.max_connections.unwrap_or(1024);
        if !(16..=1_000_000).contains(&max_connections) {
            return Err(invalid("max-connections", "must be between 16 and 1000000"));
        }
        let bounded = |field: &'static str, value: Option<String>, default: Duration| {
            let d = duration(field, value, default)?;
            if d < Duration::from_secs(1) || d > Duration::from_secs(3600) {
                return Err(invalid(field, "must be between 1s and 1h"));
            }
            Ok(d)
        };
        let limits = crate::api::server::ServeLimits {
            max_connections,
            http_idle: bounded(
                "http-idle-timeout",
                self.http_idle_timeout,
                Duration::from_secs(60),
            )?,
            http_header: bounded(
                "http-header-timeout",
                self.http_header_timeout,
                Duration::from_secs(10),
            )?,
        };
        let agent_retention = duration(
            "agent-retention",
            self.agent_retention,
            Duration::from_secs(3600),
        )?;
        if agent_retention > Duration::from_secs(30 * 24 * 3600) {
            return Err(invalid("agent-retention", "must be at most 30 days"));
        }
        let store_cache_mib = self
            .store_cache_mib
            .unwrap_or(crate::core::store::DEFAULT_CACHE_MIB);
        if !(8..=65_536).contains(&store_cache_mib) {
            return Err(invalid("store-cache-mib", "must be between 8 and 65536"));
        }
        let audit_keep = self.audit_keep.unwrap_or(crate::core::audit::DEFAULT_KEEP);
        if !(1..=10_000_000).contains(&audit_keep) {
            return Err(invalid("audit-keep", "must be between 1 and 10000000"));
        }
        let audit_days = self.audit_days.unwrap_or(90);
        if !(1..=3_650).contains(&audit_days) {
            return Err(invalid("audit-days", "must be between 1 and 3650"));
        }
        Ok(AggregatorConfig {
            limits,
            agent_retention,
            store_cache_mib,
            audit_keep,
            audit_days,
            resolver: self.resolver,
            geo_mmdb: self.geo_mmdb,
            geo_file: self.geo_file,
            tokens_file: self
                .tokens_file
                .unwrap_or_else(|| data_dir.join("tokens.json")),
            data_dir,
            listen_grpc,
            listen_http,
            transport,
            tick,
            engine,
            log_format: self.log_format.unwrap_or_default(),
            cluster,
        })
    }

    fn transport(
        &self,
        grpc: SocketAddr,
        http: SocketAddr,
        cluster: Option<&ClusterConfig>,
    ) -> Result<Transport, ConfigError> {
        let files = [&self.tls_cert, &self.tls_key, &self.tls_ca];
        if self.insecure {
            if files.iter().any(|f| f.is_some()) {
                return Err(invalid(
                    "insecure",
                    "cannot be combined with --tls-cert, --tls-key or --tls-ca",
                ));
            }
            for (field, addr) in [("listen-grpc", grpc), ("listen-http", http)] {
                if !addr.ip().is_loopback() {
                    return Err(invalid(
                        field,
                        format!(
                            "{addr} is not a loopback address: --insecure (plain text) is only allowed on loopback; give --tls-cert, --tls-key and --tls-ca"
                        ),
                    ));
                }
            }
            let remote_peer = cluster
                .into_iter()
                .flat_map(|c| c.peers.values())
                .find(|a| {
                    a.rsplit_once(':')
                        .and_then(|(h, _)| {
                            h.trim_matches(['[', ']']).parse::<std::net::IpAddr>().ok()
                        })
                        .is_none_or(|ip| !ip.is_loopback())
                });
            if let Some(peer) = remote_peer {
                return Err(invalid(
                    "peers",
                    format!(
                        "{peer} is not a loopback address: --insecure (plain text) is only allowed on loopback"
                    ),
                ));
            }
            return Ok(Transport::Insecure);
        }
        match (&self.tls_cert, &self.tls_key, &self.tls_ca) {
            (Some(cert), Some(key), Some(ca)) => Ok(Transport::Tls(crate::net::tls::TlsFiles {
                cert: cert.clone(),
                key: key.clone(),
                ca: ca.clone(),
            })),
            (None, None, None) => Err(invalid(
                "tls-cert",
                "is required with --tls-key and --tls-ca (see `gslbctl certs`); or --insecure for plain text on loopback",
            )),
            _ => Err(invalid(
                "tls-cert",
                "--tls-cert, --tls-key and --tls-ca go together",
            )),
        }
    }

    fn cluster(&self) -> Result<Option<ClusterConfig>, ConfigError> {
        let node_id = match (self.node_id, self.node_id_from_hostname) {
            (Some(_), true) => {
                return Err(invalid(
                    "node-id-from-hostname",
                    "conflicts with --node-id (one of them names this node)",
                ));
            }
            (None, true) => Some(ordinal_node_id(&hostname())?),
            (id, false) => id,
        };
        let Some(node_id) = node_id else {
            if !self.peers.is_empty() {
                return Err(invalid(
                    "peers",
                    "needs --node-id (this node's id among them)",
                ));
            }
            return Ok(None);
        };
        if node_id == 0 {
            return Err(invalid("node-id", "must be 1 or more"));
        }
        let mut peers = std::collections::BTreeMap::new();
        for peer in &self.peers {
            let (id, addr) = peer
                .split_once('=')
                .ok_or_else(|| invalid("peers", format!("{peer:?} is not ID=HOST:PORT")))?;
            let id: u64 =
                id.trim().parse().ok().filter(|id| *id > 0).ok_or_else(|| {
                    invalid("peers", format!("{peer:?}: the id must be 1 or more"))
                })?;
            let addr = addr.trim();
            if addr
                .rsplit_once(':')
                .and_then(|(_, p)| p.parse::<u16>().ok())
                .is_none()
            {
                return Err(invalid(
                    "peers",
                    format!("{peer:?}: the address must be HOST:PORT"),
                ));
            }
            if peers.insert(id, addr.to_string()).is_some() {
                return Err(invalid("peers", format!("node {id} is listed twice")));
            }
        }
        if !peers.is_empty() && !peers.contains_key(&node_id) {
            return Err(invalid(
                "peers",
                format!("must include this node ({node_id})"),
            ));
        }
        let election = duration(
            "election-timeout",
            self.election_timeout.clone(),
            Duration::from_millis(600),
        )?;
        let heartbeat = duration(
            "heartbeat-interval",
            self.heartbeat_interval.clone(),
            Duration::from_millis(150),
        )?;
        if heartbeat < Duration::from_millis(10) || heartbeat * 3 > election {
            return Err(invalid(
                "heartbeat-interval",
                "must be at least 10ms and at most a third of election-timeout",
            ));
        }
        if election > Duration::from_secs(60) {
            return Err(invalid("election-timeout", "must be at most 60s"));
        }
        let snapshot_every = self.snapshot_every.unwrap_or(10_000);
        if !(10..=10_000_000).contains(&snapshot_every) {
            return Err(invalid("snapshot-every", "must be between 10 and 10000000"));
        }
        Ok(Some(ClusterConfig {
            node_id,
            peers,
            heartbeat,
            election: (election, election * 2),
            snapshot_every,
            bootstrap: self.bootstrap.unwrap_or_default(),
        }))
    }
}

/// This host's name: the kernel's (a pod's name in Kubernetes), else `HOSTNAME`.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_default()
}

/// The node id of a StatefulSet pod named `NAME-N`: N+1 (ids start at 1).
pub fn ordinal_node_id(host: &str) -> Result<u64, ConfigError> {
    host.rsplit_once('-')
        .and_then(|(_, n)| n.parse::<u64>().ok())
        .and_then(|n| n.checked_add(1))
        .ok_or_else(|| {
            invalid(
                "node-id-from-hostname",
                format!("the host name {host:?} does not end in -N (a StatefulSet pod's ordinal)"),
            )
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_statefulset_pod_is_node_its_ordinal_plus_one() {
        assert_eq!(ordinal_node_id("gslb-aggregator-0").unwrap(), 1);
        assert_eq!(ordinal_node_id("gslb-aggregator-2").unwrap(), 3);
        for bad in [
            "gslb-aggregator",
            "host",
            "",
            "a-b",
            "x-18446744073709551615",
        ] {
            let e = ordinal_node_id(bad).unwrap_err().to_string();
            assert!(
                e.contains("node-id-from-hostname") && e.contains("-N"),
                "{bad}: {e}"
            );
        }
        let both = Settings::try_parse_from([
            "gslb-aggregator",
            "--data-dir",
            "/tmp/x",
            "--node-id",
            "1",
            "--node-id-from-hostname",
        ])
        .unwrap()
        .validate()
        .unwrap_err();
        assert!(
            both.to_string().contains("conflicts with --node-id"),
            "{both}"
        );
    }

    #[test]
    fn the_example_config_parses_and_validates() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../deploy/examples/aggregator.toml"
        );
        let settings = Settings {
            config: Some(path.into()),
            ..Settings::default()
        };
        let c = settings.merged().unwrap().validate().unwrap();
        assert_eq!(c.listen_grpc.port(), 7000);
        assert_eq!(c.tick, Duration::from_millis(100));
    }

    #[test]
    fn quarantine_thresholds_are_settings_validated_by_name() {
        let base = || Settings {
            data_dir: Some("/tmp/x".into()),
            insecure: true,
            ..Settings::default()
        };
        let c = Settings {
            quarantine_round: Some("2s".into()),
            quarantine_min_samples: Some(2),
            quarantine_location_fail: Some(0.6),
            quarantine_others_fail_max: Some(0.05),
            quarantine_clean_rounds: Some(1),
            ..base()
        }
        .validate()
        .unwrap();
        let q = c.engine.quarantine;
        assert_eq!(
            (
                q.round,
                q.min_samples,
                q.location_fail,
                q.others_fail_max,
                q.clean_rounds
            ),
            (Duration::from_secs(2), 2, 0.6, 0.05, 1)
        );
        let refused = |s: Settings| s.validate().unwrap_err().to_string();
        let e = refused(Settings {
            quarantine_others_fail_max: Some(0.7),
            ..base()
        });
        assert!(
            e.contains("quarantine-others-fail-max") && e.contains("less than locationFail"),
            "{e}"
        );
        let e = refused(Settings {
            quarantine_min_samples: Some(0),
            ..base()
        });
        assert!(
            e.contains("quarantine-min-samples") && e.contains("at least 1"),
            "{e}"
        );
        let e = refused(Settings {
            quarantine_round: Some("500ms".into()),
            ..base()
        });
        assert!(e.contains("quarantine-round"), "{e}");
        // TOML keys are the flags' names.
        let dir = std::env::temp_dir().join(format!("gslb-quarantine-toml-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("aggregator.toml");
        std::fs::write(
            &file,
            "quarantine-round = \"3s\"\nquarantine-clean-rounds = 2\n",
        )
        .unwrap();
        let c = Settings {
            config: Some(file),
            ..base()
        }
        .merged()
        .unwrap()
        .validate()
        .unwrap();
        assert_eq!(
            (c.engine.quarantine.round, c.engine.quarantine.clean_rounds),
            (Duration::from_secs(3), 2)
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    fn clustered(node: Option<u64>, peers: &[&str]) -> Result<AggregatorConfig, ConfigError> {
        Settings {
            data_dir: Some("/tmp/x".into()),
            node_id: node,
            peers: peers.iter().map(|p| p.to_string()).collect(),
            insecure: true,
            ..Settings::default()
        }
        .validate()
    }

    #[test]
    fn plain_text_only_on_loopback_and_tls_files_go_together() {
        let base = || Settings {
            data_dir: Some("/tmp/x".into()),
            ..Settings::default()
        };
        let err = |s: Settings| s.validate().unwrap_err().to_string();
        assert!(
            err(base()).starts_with("tls-cert: is required"),
            "{}",
            err(base())
        );
        let open = Settings {
            insecure: true,
            listen_grpc: Some("0.0.0.0:7000".parse().unwrap()),
            ..base()
        };
        assert!(err(open).starts_with("listen-grpc: 0.0.0.0:7000 is not a loopback address"));
        let open_http = Settings {
            insecure: true,
            listen_http: Some("10.0.0.1:7080".parse().unwrap()),
            ..base()
        };
        assert!(err(open_http).starts_with("listen-http: 10.0.0.1:7080"));
        let remote_peer = Settings {
            insecure: true,
            node_id: Some(1),
            peers: vec!["1=127.0.0.1:7000".into(), "2=10.0.0.2:7000".into()],
            ..base()
        };
        assert!(err(remote_peer).starts_with("peers: 10.0.0.2:7000 is not a loopback"));
        let half = Settings {
            tls_cert: Some("c.pem".into()),
            ..base()
        };
        assert_eq!(
            err(half),
            "tls-cert: --tls-cert, --tls-key and --tls-ca go together"
        );
        let both = Settings {
            insecure: true,
            tls_cert: Some("c.pem".into()),
            ..base()
        };
        assert!(err(both).starts_with("insecure: cannot be combined"));
        let tls = Settings {
            tls_cert: Some("c.pem".into()),
            tls_key: Some("k.pem".into()),
            tls_ca: Some("ca.pem".into()),
            listen_grpc: Some("0.0.0.0:7000".parse().unwrap()),
            ..base()
        }
        .validate()
        .unwrap();
        assert!(matches!(tls.transport, Transport::Tls(_)));
        assert_eq!(tls.tokens_file, std::path::Path::new("/tmp/x/tokens.json"));
    }

    #[test]
    fn cluster_flags_are_checked() {
        assert_eq!(clustered(None, &[]).unwrap().cluster, None);
        let c = clustered(Some(2), &["1=127.0.0.1:7000", "2=127.0.0.1:7001"])
            .unwrap()
            .cluster
            .unwrap();
        assert_eq!(c.peers.len(), 2);
        assert_eq!(c.election.1, Duration::from_millis(1200));
        for (node, peers, message) in [
            (None, &["1=a:1"][..], "peers: needs --node-id"),
            (Some(0), &[][..], "node-id: must be 1 or more"),
            (
                Some(3),
                &["1=a:1", "2=b:2"][..],
                "peers: must include this node (3)",
            ),
            (
                Some(1),
                &["1=a:1", "1=b:2"][..],
                "peers: node 1 is listed twice",
            ),
            (
                Some(1),
                &["1=a"][..],
                "peers: \"1=a\": the address must be HOST:PORT",
            ),
            (
                Some(1),
                &["x=a:1"][..],
                "peers: \"x=a:1\": the id must be 1 or more",
            ),
            (Some(1), &["a:1"][..], "peers: \"a:1\" is not ID=HOST:PORT"),
        ] {
            let err = clustered(node, peers).unwrap_err().to_string();
            assert!(err.starts_with(message), "{err}");
        }
    }

    #[test]
    fn a_missing_data_dir_and_a_bad_tick_are_named() {
        let err = Settings::default().validate().unwrap_err();
        assert!(
            err.to_string().starts_with("data-dir: is required"),
            "{err}"
        );
        let s = Settings {
            data_dir: Some("/tmp/x".into()),
            tick: Some("5s".into()),
            insecure: true,
            ..Settings::default()
        };
        assert_eq!(
            s.validate().unwrap_err().to_string(),
            "tick: must be between 10ms and 1s"
        );
    }

    #[test]
    fn the_store_cache_is_a_bounded_setting() {
        let with = |mib| Settings {
            data_dir: Some("/tmp/x".into()),
            insecure: true,
            store_cache_mib: mib,
            ..Settings::default()
        };
        assert_eq!(with(None).validate().unwrap().store_cache_mib, 16);
        assert_eq!(with(Some(8)).validate().unwrap().store_cache_mib, 8);
        for bad in [0, 7, 65_537] {
            assert_eq!(
                with(Some(bad)).validate().unwrap_err().to_string(),
                "store-cache-mib: must be between 8 and 65536"
            );
        }
    }
}
