//! Config loading shared by every binary: one error type naming the file or
//! the setting, TOML files with unknown keys refused, humane durations.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::de::DeserializeOwned;

/// A setting that cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The config file could not be read or parsed.
    #[error("config file {path}: {error}")]
    File {
        /// File.
        path: String,
        /// Why.
        error: String,
    },
    /// A setting broke a rule.
    #[error("{field}: {rule}")]
    Invalid {
        /// Setting name, as the flag and the file key spell it.
        field: &'static str,
        /// Rule.
        rule: String,
    },
}

/// A broken rule.
pub fn invalid(field: &'static str, rule: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        field,
        rule: rule.into(),
    }
}

/// Read and parse a TOML settings file.
pub fn read_toml<T: DeserializeOwned>(path: &Path) -> Result<T, ConfigError> {
    let err = |error: String| ConfigError::File {
        path: path.display().to_string(),
        error,
    };
    let text = std::fs::read_to_string(path).map_err(|e| err(e.to_string()))?;
    toml::from_str(&text).map_err(|e| err(e.to_string()))
}

/// A humane duration setting (`"100ms"`), or `default` when unset.
pub fn duration(
    field: &'static str,
    text: Option<String>,
    default: Duration,
) -> Result<Duration, ConfigError> {
    match text {
        None => Ok(default),
        Some(t) => humantime::parse_duration(&t).map_err(|e| invalid(field, format!("{t:?}: {e}"))),
    }
}

/// Check an aggregator URL: `http://HOST:PORT` or `https://HOST:PORT`.
pub fn aggregator_url(field: &'static str, url: &str) -> Result<(), ConfigError> {
    let rest = url
        .strip_prefix("http://")
        .or_else(|| url.strip_prefix("https://"));
    let ok = rest.is_some_and(|r| !r.is_empty() && !r.contains(['/', '?', '#', '@']));
    if ok {
        Ok(())
    } else {
        Err(invalid(
            field,
            format!("{url:?} must be http://HOST:PORT or https://HOST:PORT"),
        ))
    }
}

/// Client TLS material for a link to the aggregator (agents and edges).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LinkTls {
    /// Client certificate and key, for mutual TLS.
    pub identity: Option<(PathBuf, PathBuf)>,
    /// CA of the aggregator's certificate.
    pub ca: Option<PathBuf>,
}
