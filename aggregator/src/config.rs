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

use crate::engine::{EngineConfig, QuarantineConfig};

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
    /// Log format: text or json [default: text].
    #[arg(long)]
    pub log_format: Option<LogFormat>,
}

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
            listen_grpc: self.listen_grpc.or(file.listen_grpc),
            listen_http: self.listen_http.or(file.listen_http),
            tick: self.tick.or(file.tick),
            cycle_grace: self.cycle_grace.or(file.cycle_grace),
            startup_window: self.startup_window.or(file.startup_window),
            no_quarantine: self.no_quarantine || file.no_quarantine,
            log_format: self.log_format.or(file.log_format),
        })
    }

    /// Validate.
    pub fn validate(self) -> Result<AggregatorConfig, ConfigError> {
        let data_dir = self
            .data_dir
            .ok_or_else(|| invalid("data-dir", "is required (e.g. --data-dir /var/lib/gslb)"))?;
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
            quarantine: QuarantineConfig {
                enabled: !self.no_quarantine,
                ..QuarantineConfig::default()
            },
        }
        .validate()
        .map_err(|e| ConfigError::Invalid {
            field: e.field,
            rule: e.rule.into(),
        })?;
        Ok(AggregatorConfig {
            data_dir,
            listen_grpc: self
                .listen_grpc
                .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 7000))),
            listen_http: self
                .listen_http
                .unwrap_or_else(|| SocketAddr::from(([127, 0, 0, 1], 7080))),
            tick,
            engine,
            log_format: self.log_format.unwrap_or_default(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn a_missing_data_dir_and_a_bad_tick_are_named() {
        let err = Settings::default().validate().unwrap_err();
        assert!(
            err.to_string().starts_with("data-dir: is required"),
            "{err}"
        );
        let s = Settings {
            data_dir: Some("/tmp/x".into()),
            tick: Some("5s".into()),
            ..Settings::default()
        };
        assert_eq!(
            s.validate().unwrap_err().to_string(),
            "tick: must be between 10ms and 1s"
        );
    }
}
