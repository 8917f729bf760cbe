//! Logging setup shared by every binary: `tracing` to stderr, text or JSON,
//! filtered by `RUST_LOG` (default `info`).

use std::str::FromStr;

use serde::Deserialize;

/// Log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines (colour only on a terminal).
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

impl FromStr for LogFormat {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "text" => Ok(LogFormat::Text),
            "json" => Ok(LogFormat::Json),
            other => Err(format!("log format {other:?} must be text or json")),
        }
    }
}

/// Install the global subscriber.
pub fn init(format: LogFormat) {
    // openraft narrates every vote and append at info; its warnings and
    // errors are what an operator needs, unless RUST_LOG asks for more.
    let mut spec = std::env::var("RUST_LOG").unwrap_or_else(|_| "info".into());
    if !spec.contains("openraft") {
        spec.push_str(",openraft=warn");
    }
    let filter = tracing_subscriber::EnvFilter::try_new(&spec)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,openraft=warn"));
    let ansi = std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    match format {
        LogFormat::Json => builder.json().init(),
        LogFormat::Text => builder.with_ansi(ansi).init(),
    }
}

/// An error and its causes, `a: b: c`, skipping a cause its parent already
/// quotes (tonic's transport errors say little on their own).
pub fn error_chain(err: &dyn std::error::Error) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}
