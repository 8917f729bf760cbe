//! Edge settings: command-line flags and an optional TOML file with the
//! same keys (flags win), validated into an [`EdgeConfig`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;
pub use gslb_shared::config::{ConfigError, LinkTls};
use gslb_shared::config::{duration, invalid};
pub use gslb_shared::telemetry::LogFormat;
use serde::Deserialize;

use crate::rrl::RrlConfig;
use crate::server::tcp::TcpConfig;
use crate::warmup::{self, WarmupConfig};

/// gslb-edge: an authoritative DNS server that answers from the snapshots
/// an aggregator publishes. Every flag can also be set in the --config file
/// under the same name (e.g. `listen-dns = "0.0.0.0:53"`); flags win.
#[derive(Debug, Clone, Default, Parser, Deserialize)]
#[command(name = "gslb-edge", version)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Settings {
    /// TOML file with any of these settings.
    #[arg(long)]
    #[serde(skip)]
    pub config: Option<PathBuf>,
    /// Aggregator gRPC URLs, comma-separated (`http://host:port` or `https://host:port`); tried in turn.
    #[arg(long, value_delimiter = ',')]
    #[serde(default)]
    pub aggregator: Vec<String>,
    /// DNS address (UDP and TCP), bound once a snapshot is applied [default: 127.0.0.1:53].
    #[arg(long)]
    pub listen_dns: Option<SocketAddr>,
    /// Status address (/livez, /readyz, /status/*, /metrics), bound at start [default: 127.0.0.1:8053].
    #[arg(long)]
    pub listen_status: Option<SocketAddr>,
    /// Directory of the snapshot cache (written on every apply, read at start); no cache when unset.
    #[arg(long)]
    pub cache_dir: Option<PathBuf>,
    /// File of `CIDR REGION` lines mapping client addresses to regions.
    #[arg(long)]
    pub geo_file: Option<PathBuf>,
    /// MaxMind DB files (GeoIP2/GeoLite2 Country, City, ASN; DB-IP), comma-separated, for branches on countries, continents, subdivisions and AS numbers; reloaded when they change on disk.
    #[arg(long, value_delimiter = ',')]
    #[serde(default)]
    pub geo_mmdb: Vec<PathBuf>,
    /// Identity reported to the aggregator [default: edge-<random>].
    #[arg(long)]
    pub edge_id: Option<String>,
    /// UDP worker threads, one socket each [default: number of CPUs].
    #[arg(long)]
    pub udp_workers: Option<usize>,
    /// Network interface whose UDP queries to --listen-dns are taken by an
    /// XDP program and answered from AF_XDP sockets, one per queue (needs
    /// root or CAP_BPF + CAP_NET_ADMIN; without them, or without XDP on
    /// the interface, the edge logs why and answers on the kernel path).
    #[arg(long)]
    pub xdp: Option<String>,
    /// Close a DNS TCP connection idle this long [default: 10s].
    #[arg(long)]
    pub tcp_idle_timeout: Option<String>,
    /// Close a DNS TCP connection whose client does not take an answer
    /// within this (a client that never reads) [default: 5s].
    #[arg(long)]
    pub tcp_write_timeout: Option<String>,
    /// After the drain window, wait at most this long for open DNS TCP
    /// connections to finish before exiting; `none` waits with no deadline,
    /// as seed 003 does (the platform's grace period is then the limit) [default: 10s].
    #[arg(long)]
    pub tcp_drain_timeout: Option<String>,
    /// Most DNS TCP connections from one client address [default: 16].
    #[arg(long)]
    pub tcp_max_per_client: Option<usize>,
    /// Most DNS TCP connections in all [default: 1024].
    #[arg(long)]
    pub tcp_max_connections: Option<usize>,
    /// On SIGTERM/SIGINT keep answering at least this many seconds, so load
    /// balancers see /readyz fail before the edge stops (seed 003) [default: 30].
    #[arg(long)]
    pub min_drain_secs: Option<u64>,
    /// Name server identifier (RFC 5001) returned to queries that ask for it, so an operator can tell which edge of an anycast fleet answered: 1 to 64 printable ASCII characters [default: off].
    #[arg(long)]
    pub nsid: Option<String>,
    /// The seed's `[shutdown]` table (`min_drain_secs`), beside `min-drain-secs`.
    #[arg(skip)]
    #[serde(default)]
    pub shutdown: Option<ShutdownTable>,
    /// Responses per second per client subnet; 0 turns rate limiting off [default: 0].
    #[arg(long)]
    pub rrl_rate: Option<u32>,
    /// Responses a subnet may burst above the rate [default: the rate].
    #[arg(long)]
    pub rrl_burst: Option<u32>,
    /// Every Nth rate-limited response is sent truncated (TC) instead of dropped; 0 drops all [default: 2].
    #[arg(long)]
    pub rrl_slip: Option<u32>,
    /// IPv4 subnet length one bucket covers [default: 24].
    #[arg(long)]
    pub rrl_ipv4_prefix: Option<u8>,
    /// IPv6 subnet length one bucket covers (at most 64) [default: 56].
    #[arg(long)]
    pub rrl_ipv6_prefix: Option<u8>,
    /// Client certificate (PEM) for mutual TLS to the aggregator.
    #[arg(long)]
    pub tls_cert: Option<PathBuf>,
    /// Private key (PEM) of --tls-cert.
    #[arg(long)]
    pub tls_key: Option<PathBuf>,
    /// CA bundle (PEM) that signs the aggregator's certificate.
    #[arg(long)]
    pub tls_ca: Option<PathBuf>,
    /// Log format: text or json [default: text].
    #[arg(long)]
    pub log_format: Option<LogFormat>,
    /// Changes each zone's IXFR journal keeps; a secondary further behind
    /// gets the whole zone [default: 64, at most 10000].
    #[arg(long)]
    pub xfr_journal_depth: Option<usize>,
    /// Recent query keys kept for peers to warm up from (seed 001); 0 keeps none [default: 10000, at most 100000].
    #[arg(long)]
    pub hot_keys: Option<usize>,
    /// One answered query (UDP or TCP) in this many is sampled into the hot keys [default: 1, every one; 1 to 65536].
    #[arg(long)]
    pub hot_key_sample: Option<u32>,
    /// File with the bearer token of /internal/warmup: served to peers that present it, and presented to --warmup-from peers.
    #[arg(long)]
    pub warmup_token_file: Option<PathBuf>,
    /// Peers to warm from, comma-separated, tried in turn: status listeners (http://HOST:PORT, hot keys) or TLS warm-up listeners (https://HOST:PORT, hot keys and, with neither an aggregator nor a cache, the snapshot); a name that resolves to the fleet works.
    #[arg(long, value_delimiter = ',')]
    #[serde(default)]
    pub warmup_from: Vec<String>,
    /// Limit on the whole warm-up from peers; past it the edge starts cold [default: 5s, 100ms to 60s].
    #[arg(long)]
    pub warmup_timeout: Option<String>,
    /// TLS listener serving /internal/warmup with the snapshot to peers presenting an edge certificate from --tls-ca (needs --tls-cert, --tls-key, --tls-ca, --warmup-token-file).
    #[arg(long)]
    pub listen_warmup: Option<SocketAddr>,
}

/// Validated edge settings.
#[derive(Debug, Clone)]
pub struct EdgeConfig {
    /// Aggregator URLs (may be empty: serve the cache only).
    pub aggregators: Vec<String>,
    /// DNS address.
    pub listen_dns: SocketAddr,
    /// Status address.
    pub listen_status: SocketAddr,
    /// Snapshot cache directory.
    pub cache_dir: Option<PathBuf>,
    /// Geo table file.
    pub geo_file: Option<PathBuf>,
    /// MaxMind DB files.
    pub geo_mmdb: Vec<PathBuf>,
    /// Edge id.
    pub edge_id: String,
    /// UDP workers.
    pub udp_workers: usize,
    /// Interface of the AF_XDP path, if any.
    pub xdp: Option<String>,
    /// TCP limits.
    pub tcp: TcpConfig,
    /// Minimum drain window.
    pub min_drain: Duration,
    /// Changes each zone's IXFR journal keeps.
    pub xfr_journal_depth: usize,
    /// Longest wait for open TCP connections after the drain window.
    pub tcp_drain: Option<Duration>,
    /// Rate limiting.
    pub rrl: RrlConfig,
    /// TLS to the aggregator.
    pub link_tls: LinkTls,
    /// Log format.
    pub log_format: LogFormat,
    /// Hot keys and warm-up from peers (seed 001).
    pub warmup: WarmupConfig,
    /// The NSID returned to queries that ask (RFC 5001); `None`: off.
    pub nsid: Option<Box<[u8]>>,
}

/// An interface name as Linux takes it: 1 to 15 bytes, no `/`, no
/// whitespace, not `.` or `..`.
fn validate_iface(name: &str) -> Result<(), ConfigError> {
    let bad = name.is_empty()
        || name.len() > 15
        || name == "."
        || name == ".."
        || name
            .chars()
            .any(|c| c == '/' || c == ':' || c.is_whitespace() || c.is_control());
    if bad {
        return Err(invalid(
            "xdp",
            "must be a network interface name: 1 to 15 bytes, without '/', ':' or whitespace",
        ));
    }
    Ok(())
}

/// The seed's `[shutdown]` table in the TOML file (seed 003).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ShutdownTable {
    /// Seconds to keep answering after SIGTERM/SIGINT: `min-drain-secs`.
    pub min_drain_secs: Option<u64>,
}

/// Longest NSID: what a DNS operator puts there is a host or site name.
pub const MAX_NSID: usize = 64;

/// Check `--nsid`: printable ASCII, 1 to [`MAX_NSID`] bytes.
fn nsid(text: Option<&str>) -> Result<Option<Box<[u8]>>, ConfigError> {
    let Some(text) = text else {
        return Ok(None);
    };
    if text.is_empty()
        || text.len() > MAX_NSID
        || !text.bytes().all(|b| b.is_ascii_graphic() || b == b' ')
    {
        return Err(invalid(
            "nsid",
            format!("must be 1 to {MAX_NSID} printable ASCII characters"),
        ));
    }
    Ok(Some(text.as_bytes().into()))
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
            aggregator: if self.aggregator.is_empty() {
                file.aggregator
            } else {
                self.aggregator
            },
            listen_dns: self.listen_dns.or(file.listen_dns),
            listen_status: self.listen_status.or(file.listen_status),
            cache_dir: self.cache_dir.or(file.cache_dir),
            geo_file: self.geo_file.or(file.geo_file),
            geo_mmdb: if self.geo_mmdb.is_empty() {
                file.geo_mmdb
            } else {
                self.geo_mmdb
            },
            edge_id: self.edge_id.or(file.edge_id),
            udp_workers: self.udp_workers.or(file.udp_workers),
            xdp: self.xdp.or(file.xdp),
            tcp_idle_timeout: self.tcp_idle_timeout.or(file.tcp_idle_timeout),
            tcp_write_timeout: self.tcp_write_timeout.or(file.tcp_write_timeout),
            tcp_drain_timeout: self.tcp_drain_timeout.or(file.tcp_drain_timeout),
            tcp_max_per_client: self.tcp_max_per_client.or(file.tcp_max_per_client),
            tcp_max_connections: self.tcp_max_connections.or(file.tcp_max_connections),
            min_drain_secs: self.min_drain_secs.or(file.min_drain_secs),
            nsid: self.nsid.or(file.nsid),
            shutdown: file.shutdown,
            rrl_rate: self.rrl_rate.or(file.rrl_rate),
            rrl_burst: self.rrl_burst.or(file.rrl_burst),
            rrl_slip: self.rrl_slip.or(file.rrl_slip),
            rrl_ipv4_prefix: self.rrl_ipv4_prefix.or(file.rrl_ipv4_prefix),
            rrl_ipv6_prefix: self.rrl_ipv6_prefix.or(file.rrl_ipv6_prefix),
            tls_cert: self.tls_cert.or(file.tls_cert),
            tls_key: self.tls_key.or(file.tls_key),
            tls_ca: self.tls_ca.or(file.tls_ca),
            log_format: self.log_format.or(file.log_format),
            xfr_journal_depth: self.xfr_journal_depth.or(file.xfr_journal_depth),
            hot_keys: self.hot_keys.or(file.hot_keys),
            hot_key_sample: self.hot_key_sample.or(file.hot_key_sample),
            warmup_token_file: self.warmup_token_file.or(file.warmup_token_file),
            warmup_from: if self.warmup_from.is_empty() {
                file.warmup_from
            } else {
                self.warmup_from
            },
            warmup_timeout: self.warmup_timeout.or(file.warmup_timeout),
            listen_warmup: self.listen_warmup.or(file.listen_warmup),
        })
    }

    /// Validate into an [`EdgeConfig`].
    pub fn validate(self) -> Result<EdgeConfig, ConfigError> {
        for url in &self.aggregator {
            gslb_shared::config::aggregator_url("aggregator", url)?;
        }
        if self.aggregator.is_empty() && self.cache_dir.is_none() {
            return Err(invalid(
                "aggregator",
                "needs at least one URL (or a --cache-dir to serve from)",
            ));
        }
        let warmup = self.warmup()?;
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        let udp_workers = self.udp_workers.unwrap_or(cpus);
        if !(1..=256).contains(&udp_workers) {
            return Err(invalid("udp-workers", "must be between 1 and 256"));
        }
        let idle = duration(
            "tcp-idle-timeout",
            self.tcp_idle_timeout,
            Duration::from_secs(10),
        )?;
        if idle < Duration::from_millis(100) || idle > Duration::from_secs(300) {
            return Err(invalid(
                "tcp-idle-timeout",
                "must be between 100ms and 300s",
            ));
        }
        let write = duration(
            "tcp-write-timeout",
            self.tcp_write_timeout,
            Duration::from_secs(5),
        )?;
        if write < Duration::from_millis(100) || write > Duration::from_secs(60) {
            return Err(invalid(
                "tcp-write-timeout",
                "must be between 100ms and 60s",
            ));
        }
        let tcp_drain = if self.tcp_drain_timeout.as_deref() == Some("none") {
            None
        } else {
            let d = duration(
                "tcp-drain-timeout",
                self.tcp_drain_timeout,
                Duration::from_secs(10),
            )?;
            if d > Duration::from_secs(600) {
                return Err(invalid(
                    "tcp-drain-timeout",
                    "must be at most 600s, or none (no deadline)",
                ));
            }
            Some(d)
        };
        let max_per_client = self.tcp_max_per_client.unwrap_or(16);
        let max_connections = self.tcp_max_connections.unwrap_or(1024);
        if max_per_client == 0 || max_connections == 0 {
            return Err(invalid(
                "tcp-max-per-client",
                "connection limits must be at least 1",
            ));
        }
        let seed_key = self.shutdown.as_ref().and_then(|s| s.min_drain_secs);
        if let (Some(a), Some(b)) = (self.min_drain_secs, seed_key)
            && a != b
        {
            return Err(invalid(
                "shutdown.min_drain_secs",
                format!("is {b} but min-drain-secs is {a}: give one of them"),
            ));
        }
        let min_drain_secs = self.min_drain_secs.or(seed_key).unwrap_or(30);
        if min_drain_secs > 3600 {
            return Err(invalid("min-drain-secs", "must be at most 3600"));
        }
        let rate = self.rrl_rate.unwrap_or(0);
        let rrl = RrlConfig {
            rate,
            burst: self.rrl_burst.unwrap_or(rate),
            slip: self.rrl_slip.unwrap_or(2),
            v4_prefix: self.rrl_ipv4_prefix.unwrap_or(24),
            v6_prefix: self.rrl_ipv6_prefix.unwrap_or(56),
        };
        if rrl.v4_prefix > 32 {
            return Err(invalid("rrl-ipv4-prefix", "must be at most 32"));
        }
        if rrl.v6_prefix > 64 {
            return Err(invalid("rrl-ipv6-prefix", "must be at most 64"));
        }
        if rrl.slip > 10 {
            return Err(invalid("rrl-slip", "must be between 0 and 10"));
        }
        let identity = match (self.tls_cert, self.tls_key) {
            (Some(cert), Some(key)) => Some((cert, key)),
            (None, None) => None,
            _ => return Err(invalid("tls-cert", "--tls-cert and --tls-key go together")),
        };
        let xfr_journal_depth = self
            .xfr_journal_depth
            .unwrap_or(crate::xfr::DEFAULT_JOURNAL_DEPTH);
        if xfr_journal_depth > crate::xfr::MAX_JOURNAL_DEPTH {
            return Err(invalid(
                "xfr-journal-depth",
                format!("must be at most {}", crate::xfr::MAX_JOURNAL_DEPTH),
            ));
        }
        if let Some(iface) = &self.xdp {
            validate_iface(iface)?;
        }
        let edge_id = self
            .edge_id
            .unwrap_or_else(|| format!("edge-{:08x}", rand::random::<u32>()));
        // The aggregator's rule, checked here so a bad id fails at start.
        gslb_shared::validate::edge_id(&edge_id).map_err(|rule| invalid("edge-id", rule))?;
        Ok(EdgeConfig {
            aggregators: self.aggregator,
            listen_dns: self
                .listen_dns
                .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 53))),
            listen_status: self
                .listen_status
                .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 8053))),
            cache_dir: self.cache_dir,
            geo_file: self.geo_file,
            geo_mmdb: self.geo_mmdb,
            edge_id,
            udp_workers,
            xdp: self.xdp,
            tcp_drain,
            tcp: TcpConfig {
                idle_timeout: idle,
                write_timeout: write,
                max_per_client,
                max_connections,
            },
            min_drain: Duration::from_secs(min_drain_secs),
            nsid: nsid(self.nsid.as_deref())?,
            xfr_journal_depth,
            rrl,
            link_tls: LinkTls {
                identity,
                ca: self.tls_ca,
            },
            log_format: self.log_format.unwrap_or_default(),
            warmup,
        })
    }

    fn warmup(&self) -> Result<WarmupConfig, ConfigError> {
        let hot_keys = self.hot_keys.unwrap_or(warmup::DEFAULT_HOT_KEYS);
        if hot_keys > warmup::MAX_HOT_KEYS {
            return Err(invalid(
                "hot-keys",
                format!("must be at most {}", warmup::MAX_HOT_KEYS),
            ));
        }
        let sample_every = self.hot_key_sample.unwrap_or(warmup::DEFAULT_SAMPLE_EVERY);
        if !(1..=65_536).contains(&sample_every) {
            return Err(invalid("hot-key-sample", "must be between 1 and 65536"));
        }
        for url in &self.warmup_from {
            crate::warmup::fetch::authority(url).map_err(|e| invalid("warmup-from", e))?;
        }
        if !self.warmup_from.is_empty() && self.warmup_token_file.is_none() {
            return Err(invalid(
                "warmup-from",
                "needs --warmup-token-file (the token peers ask for)",
            ));
        }
        let timeout = duration(
            "warmup-timeout",
            self.warmup_timeout.clone(),
            warmup::DEFAULT_TIMEOUT,
        )?;
        if timeout < Duration::from_millis(100) || timeout > Duration::from_secs(60) {
            return Err(invalid("warmup-timeout", "must be between 100ms and 60s"));
        }
        let tls_complete =
            self.tls_cert.is_some() && self.tls_key.is_some() && self.tls_ca.is_some();
        if self.listen_warmup.is_some() && (!tls_complete || self.warmup_token_file.is_none()) {
            return Err(invalid(
                "listen-warmup",
                "needs --tls-cert, --tls-key, --tls-ca (peers are checked against the CA) and --warmup-token-file",
            ));
        }
        if self.warmup_from.iter().any(|u| u.starts_with("https://")) && !tls_complete {
            return Err(invalid(
                "warmup-from",
                "https:// peers need --tls-cert, --tls-key and --tls-ca (this edge's certificate)",
            ));
        }
        Ok(WarmupConfig {
            listen: self.listen_warmup,
            hot_keys,
            sample_every,
            token_file: self.warmup_token_file.clone(),
            from: self.warmup_from.clone(),
            timeout,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(args: &[&str]) -> Result<EdgeConfig, ConfigError> {
        Settings::try_parse_from(std::iter::once("gslb-edge").chain(args.iter().copied()))
            .unwrap()
            .merged()?
            .validate()
    }

    #[test]
    fn flags_validate_with_defaults() {
        let c = settings(&["--aggregator", "http://127.0.0.1:7000"]).unwrap();
        assert_eq!(c.listen_dns, "127.0.0.1:53".parse().unwrap());
        assert_eq!(c.min_drain, Duration::from_secs(30));
        assert_eq!(c.rrl.rate, 0, "rate limiting is off unless asked for");
        assert_eq!(c.tcp.idle_timeout, Duration::from_secs(10));
    }

    #[test]
    fn the_seeds_shutdown_table_sets_the_drain_window() {
        let dir = std::env::temp_dir().join(format!("gslb-edge-shutdown-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let read = |text: &str, flags: &[&str]| {
            let path = dir.join("edge.toml");
            std::fs::write(&path, text).unwrap();
            let mut args = vec!["gslb-edge", "--config", path.to_str().unwrap()];
            args.extend_from_slice(flags);
            Settings::try_parse_from(args).unwrap().merged()?.validate()
        };
        let seed = "aggregator = [\"http://127.0.0.1:7000\"]\n[shutdown]\nmin_drain_secs = 5\n";
        assert_eq!(read(seed, &[]).unwrap().min_drain, Duration::from_secs(5));
        assert_eq!(
            read(seed, &["--min-drain-secs", "5"]).unwrap().min_drain,
            Duration::from_secs(5)
        );
        let clash = read(seed, &["--min-drain-secs", "7"])
            .unwrap_err()
            .to_string();
        assert!(clash.contains("shutdown.min_drain_secs"), "{clash}");
        let nsid = read(
            "aggregator = [\"http://127.0.0.1:7000\"]\nnsid = \"edge-1\"\n",
            &[],
        )
        .unwrap();
        assert_eq!(nsid.nsid.as_deref(), Some(&b"edge-1"[..]));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn the_xdp_interface_is_a_linux_interface_name() {
        let base = ["--aggregator", "http://127.0.0.1:7000", "--xdp"];
        let ok = |name: &str| {
            let mut args = base.to_vec();
            args.push(name);
            settings(&args).map(|c| c.xdp)
        };
        assert_eq!(ok("eth0").unwrap(), Some("eth0".to_owned()));
        assert_eq!(ok("enp1s0f1np1").unwrap(), Some("enp1s0f1np1".to_owned()));
        for bad in ["", "a-name-of-16-byt", "eth0/1", "eth 0", "..", "eth0:1"] {
            let e = ok(bad).expect_err(bad).to_string();
            assert!(
                e.contains("xdp") && e.contains("interface name"),
                "{bad}: {e}"
            );
        }
        assert_eq!(
            settings(&base[..2]).unwrap().xdp,
            None,
            "off unless asked for"
        );
    }

    #[test]
    fn every_example_config_parses_and_validates() {
        for name in ["edge.toml", "edge-production.toml"] {
            let path = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../deploy/examples"))
                .join(name);
            let config = Settings {
                config: Some(path.clone()),
                ..Settings::default()
            }
            .merged()
            .and_then(Settings::validate)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            if name == "edge-production.toml" {
                assert!(config.rrl.rate > 0, "rate limiting is on in production");
            } else {
                assert_eq!(config.rrl.rate, 0, "and off on loopback");
            }
        }
        let geo = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../deploy/examples/geo.txt"
        ))
        .unwrap();
        assert_eq!(crate::geo::GeoTable::parse(&geo).unwrap().len(), 5);
    }

    #[test]
    fn each_bad_setting_is_named() {
        let cases: [(&[&str], &str); 13] = [
            (&["--aggregator", "http://a:1", "--nsid", ""], "nsid"),
            (
                &["--aggregator", "http://a:1", "--nsid", &"x".repeat(65)],
                "nsid",
            ),
            (
                &["--aggregator", "http://a:1", "--hot-keys", "100001"],
                "hot-keys",
            ),
            (
                &["--aggregator", "http://a:1", "--hot-key-sample", "0"],
                "hot-key-sample",
            ),
            (
                &["--aggregator", "http://a:1", "--warmup-from", "http://b:2"],
                "warmup-from",
            ),
            (
                &[
                    "--aggregator",
                    "http://a:1",
                    "--warmup-token-file",
                    "t",
                    "--warmup-timeout",
                    "10ms",
                ],
                "warmup-timeout",
            ),
            (&[], "aggregator"),
            (&["--aggregator", "ftp://x:1"], "aggregator"),
            (
                &["--aggregator", "http://a:1", "--udp-workers", "0"],
                "udp-workers",
            ),
            (
                &["--aggregator", "http://a:1", "--tcp-idle-timeout", "1ms"],
                "tcp-idle-timeout",
            ),
            (
                &["--aggregator", "http://a:1", "--rrl-ipv4-prefix", "33"],
                "rrl-ipv4-prefix",
            ),
            (
                &["--aggregator", "http://a:1", "--tls-cert", "c.pem"],
                "tls-cert",
            ),
            (
                &["--aggregator", "http://a:1", "--min-drain-secs", "99999"],
                "min-drain-secs",
            ),
        ];
        for (args, field) in cases {
            let err = settings(args).unwrap_err().to_string();
            assert!(err.starts_with(field), "{args:?}: {err}");
        }
    }
}
