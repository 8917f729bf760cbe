//! Agent settings: command-line flags and an optional TOML file with the
//! same keys (flags win), validated into an [`AgentConfig`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
pub use gslb_shared::config::{ConfigError, LinkTls};
use gslb_shared::config::{duration, invalid};
pub use gslb_shared::telemetry::LogFormat;
use gslb_shared::{LocationId, Region, validate};
use serde::Deserialize;

/// gslb-agent: probes backends from one location and streams the results to
/// an aggregator. Every flag can also be set in the --config file under the
/// same name (e.g. `listen-metrics = "127.0.0.1:9100"`); flags win.
#[derive(Debug, Clone, Default, Parser, Deserialize)]
#[command(name = "gslb-agent", version)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Settings {
    /// TOML file with any of these settings.
    #[arg(long)]
    #[serde(skip)]
    pub config: Option<PathBuf>,
    /// Location id of this agent, e.g. `fra1` (lower-case letters, digits, '-', '_').
    #[arg(long)]
    pub location: Option<String>,
    /// Region of this location, e.g. `eu`.
    #[arg(long)]
    pub region: Option<String>,
    /// Aggregator gRPC URLs, comma-separated (`http://host:port` or `https://host:port`); tried in turn.
    #[arg(long, value_delimiter = ',')]
    #[serde(default)]
    pub aggregator: Vec<String>,
    /// Serve /metrics, /livez and /readyz on this address (off when unset).
    #[arg(long)]
    pub listen_metrics: Option<SocketAddr>,
    /// Most probes in flight at once [default: 1024].
    #[arg(long)]
    pub concurrency: Option<usize>,
    /// Most results per batch sent to the aggregator [default: 1000].
    #[arg(long)]
    pub batch_size: Option<usize>,
    /// Longest a result waits before it is sent, e.g. `100ms` [default: 100ms].
    #[arg(long)]
    pub batch_interval: Option<String>,
    /// Results kept while the aggregator is unreachable; the oldest are dropped beyond it [default: 100000].
    #[arg(long)]
    pub buffer_capacity: Option<usize>,
    /// Extra CA bundle (PEM) trusted by HTTPS checks, besides the system roots.
    #[arg(long)]
    pub probe_ca_file: Option<PathBuf>,
    /// Do not trust the system root store in HTTPS checks (only --probe-ca-file).
    #[arg(long)]
    #[serde(default)]
    pub no_system_roots: bool,
    /// Client certificate (PEM) for mutual TLS to the aggregator.
    #[arg(long)]
    pub tls_cert: Option<PathBuf>,
    /// Private key (PEM) of --tls-cert.
    #[arg(long)]
    pub tls_key: Option<PathBuf>,
    /// CA bundle (PEM) that signs the aggregator's certificate.
    #[arg(long)]
    pub tls_ca: Option<PathBuf>,
    /// Identity reported to the aggregator [default: random per process].
    #[arg(long)]
    pub agent_id: Option<String>,
    /// Address ranges probes never reach, comma-separated CIDRs, checked
    /// against the address connected to (IPv4-mapped forms included); the
    /// aggregators' own listeners are always denied
    /// [default: 169.254.0.0/16,fe80::/10].
    #[arg(long, value_delimiter = ',')]
    #[serde(default)]
    pub deny_destination: Vec<ipnet::IpNet>,
    /// Name server (`IP:PORT`) that hostname members are resolved with
    /// [default: the system's, from /etc/resolv.conf].
    #[arg(long)]
    pub resolver: Option<SocketAddr>,
    /// Log format: text or json [default: text].
    #[arg(long)]
    pub log_format: Option<LogFormat>,
}

/// Validated agent settings.
#[derive(Debug, Clone, PartialEq)]
pub struct AgentConfig {
    /// Location id.
    pub location: LocationId,
    /// Region.
    pub region: Region,
    /// Aggregator URLs.
    pub aggregators: Vec<String>,
    /// Metrics listener.
    pub listen_metrics: Option<SocketAddr>,
    /// Probes in flight at most.
    pub concurrency: usize,
    /// Results per batch.
    pub batch_size: usize,
    /// Batch wait.
    pub batch_interval: Duration,
    /// Buffer capacity.
    pub buffer_capacity: usize,
    /// Extra CA for HTTPS checks.
    pub probe_ca_file: Option<PathBuf>,
    /// Trust the system roots in HTTPS checks.
    pub system_roots: bool,
    /// TLS to the aggregator.
    pub link_tls: LinkTls,
    /// Agent id.
    pub agent_id: String,
    /// Ranges probes never reach.
    pub deny_destinations: Vec<ipnet::IpNet>,
    /// Name server for hostname members (`None`: the system's).
    pub resolver: Option<SocketAddr>,
    /// Log format.
    pub log_format: LogFormat,
}

impl Settings {
    /// Read `--config` (if given) and let the flags in `self` override it.
    pub fn merged(self) -> Result<Settings, ConfigError> {
        let Some(path) = self.config.clone() else {
            return Ok(self);
        };
        let file = gslb_shared::config::read_toml::<Settings>(&path)?;
        Ok(Settings {
            config: Some(path),
            location: self.location.or(file.location),
            region: self.region.or(file.region),
            aggregator: if self.aggregator.is_empty() {
                file.aggregator
            } else {
                self.aggregator
            },
            listen_metrics: self.listen_metrics.or(file.listen_metrics),
            concurrency: self.concurrency.or(file.concurrency),
            batch_size: self.batch_size.or(file.batch_size),
            batch_interval: self.batch_interval.or(file.batch_interval),
            buffer_capacity: self.buffer_capacity.or(file.buffer_capacity),
            probe_ca_file: self.probe_ca_file.or(file.probe_ca_file),
            no_system_roots: self.no_system_roots || file.no_system_roots,
            tls_cert: self.tls_cert.or(file.tls_cert),
            tls_key: self.tls_key.or(file.tls_key),
            tls_ca: self.tls_ca.or(file.tls_ca),
            agent_id: self.agent_id.or(file.agent_id),
            deny_destination: if self.deny_destination.is_empty() {
                file.deny_destination
            } else {
                self.deny_destination
            },
            resolver: self.resolver.or(file.resolver),
            log_format: self.log_format.or(file.log_format),
        })
    }

    /// Validate into an [`AgentConfig`].
    pub fn validate(self) -> Result<AgentConfig, ConfigError> {
        let location = LocationId::new(
            self.location
                .ok_or_else(|| invalid("location", "is required (e.g. --location fra1)"))?,
        );
        validate::location_id(&location).map_err(|rule| invalid("location", rule))?;
        let region = Region::new(
            self.region
                .ok_or_else(|| invalid("region", "is required (e.g. --region eu)"))?,
        );
        validate::region(&region).map_err(|rule| invalid("region", rule))?;
        if self.aggregator.is_empty() {
            return Err(invalid(
                "aggregator",
                "needs at least one URL (e.g. --aggregator http://127.0.0.1:7000)",
            ));
        }
        for url in &self.aggregator {
            gslb_shared::config::aggregator_url("aggregator", url)?;
        }
        let concurrency = self.concurrency.unwrap_or(1024);
        if !(1..=100_000).contains(&concurrency) {
            return Err(invalid("concurrency", "must be between 1 and 100000"));
        }
        let batch_size = self.batch_size.unwrap_or(1000);
        if !(1..=50_000).contains(&batch_size) {
            return Err(invalid("batch-size", "must be between 1 and 50000"));
        }
        let batch_interval = duration(
            "batch-interval",
            self.batch_interval,
            Duration::from_millis(100),
        )?;
        if batch_interval < Duration::from_millis(10) || batch_interval > Duration::from_secs(10) {
            return Err(invalid("batch-interval", "must be between 10ms and 10s"));
        }
        let buffer_capacity = self.buffer_capacity.unwrap_or(100_000);
        if buffer_capacity < batch_size {
            return Err(invalid("buffer-capacity", "must be at least batch-size"));
        }
        let identity = match (self.tls_cert, self.tls_key) {
            (Some(cert), Some(key)) => Some((cert, key)),
            (None, None) => None,
            _ => return Err(invalid("tls-cert", "--tls-cert and --tls-key go together")),
        };
        let agent_id = self
            .agent_id
            .unwrap_or_else(|| format!("{}-{:08x}", location, rand::random::<u32>()));
        Ok(AgentConfig {
            location,
            region,
            aggregators: self.aggregator,
            listen_metrics: self.listen_metrics,
            concurrency,
            batch_size,
            batch_interval,
            buffer_capacity,
            probe_ca_file: self.probe_ca_file,
            system_roots: !self.no_system_roots,
            link_tls: LinkTls {
                identity,
                ca: self.tls_ca,
            },
            agent_id,
            deny_destinations: if self.deny_destination.is_empty() {
                crate::checker::destination::default_ranges()
            } else {
                self.deny_destination
            },
            resolver: self.resolver,
            log_format: self.log_format.unwrap_or_default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(args: &[&str]) -> Settings {
        Settings::try_parse_from(std::iter::once("gslb-agent").chain(args.iter().copied())).unwrap()
    }

    #[test]
    fn flags_validate_with_defaults() {
        let c = settings(&[
            "--location",
            "fra1",
            "--region",
            "eu",
            "--aggregator",
            "http://127.0.0.1:1,http://127.0.0.1:2",
        ])
        .merged()
        .unwrap()
        .validate()
        .unwrap();
        assert_eq!(c.aggregators.len(), 2);
        assert_eq!(
            (c.concurrency, c.batch_size, c.batch_interval),
            (1024, 1000, Duration::from_millis(100))
        );
    }

    #[test]
    fn each_bad_setting_is_named() {
        let cases: [(&[&str], &str); 6] = [
            (
                &["--region", "eu", "--aggregator", "http://a:1"],
                "location",
            ),
            (
                &[
                    "--location",
                    "FRA 1",
                    "--region",
                    "eu",
                    "--aggregator",
                    "http://a:1",
                ],
                "location",
            ),
            (&["--location", "fra1", "--region", "eu"], "aggregator"),
            (
                &[
                    "--location",
                    "fra1",
                    "--region",
                    "eu",
                    "--aggregator",
                    "a:1",
                ],
                "aggregator",
            ),
            (
                &[
                    "--location",
                    "fra1",
                    "--region",
                    "eu",
                    "--aggregator",
                    "http://a:1",
                    "--batch-interval",
                    "5ms",
                ],
                "batch-interval",
            ),
            (
                &[
                    "--location",
                    "fra1",
                    "--region",
                    "eu",
                    "--aggregator",
                    "http://a:1",
                    "--tls-cert",
                    "c.pem",
                ],
                "tls-cert",
            ),
        ];
        for (args, field) in cases {
            match settings(args).validate() {
                Err(ConfigError::Invalid { field: f, .. }) => assert_eq!(f, field, "{args:?}"),
                other => panic!("{args:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn file_values_apply_and_flags_win() {
        let dir = std::env::temp_dir().join(format!("gslb-agent-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("agent.toml");
        std::fs::write(&path, "location = \"iad1\"\nregion = \"us\"\naggregator = [\"http://127.0.0.1:7000\"]\nbatch-size = 50\n").unwrap();
        let c = settings(&["--config", path.to_str().unwrap(), "--location", "sin1"])
            .merged()
            .unwrap()
            .validate()
            .unwrap();
        assert_eq!(
            (c.location.as_str(), c.region.as_str(), c.batch_size),
            ("sin1", "us", 50)
        );
        std::fs::write(&path, "locaton = \"x\"\n").unwrap();
        let err = settings(&["--config", path.to_str().unwrap()])
            .merged()
            .unwrap_err();
        assert!(err.to_string().contains("unknown field `locaton`"), "{err}");
    }
}

#[cfg(test)]
mod example {
    use super::*;

    #[test]
    fn the_example_config_parses_and_validates() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy/examples/agent.toml");
        let c = Settings {
            config: Some(path.into()),
            ..Settings::default()
        }
        .merged()
        .unwrap()
        .validate()
        .unwrap();
        assert_eq!(
            (c.location.as_str(), c.log_format),
            ("fra1", LogFormat::Json)
        );
    }
}
