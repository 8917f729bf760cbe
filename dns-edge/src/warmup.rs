//! Temporal warm-up (seed 001): every edge keeps a bounded LRU of recent
//! query keys ([`hot`]); a new edge fetches them from a serving peer
//! through the token-protected `/internal/warmup` ([`endpoint`],
//! [`fetch`]) and answers each one in every UDP worker before it binds
//! DNS, so its first queries are copies of prebuilt replies ([`replay`]).
//! Any failure means a cold start, never no start.

pub mod endpoint;
pub mod fetch;
pub mod hot;
pub mod keys;
pub mod replay;

use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde::Serialize;
use subtle::ConstantTimeEq;

/// Default size of the hot-key LRU.
pub const DEFAULT_HOT_KEYS: usize = 10_000;
/// Largest hot-key LRU (what one endpoint reply may carry).
pub const MAX_HOT_KEYS: usize = 100_000;
/// Default sampling: every answered query, as seed 001 (measured at no
/// more than 3% of the edge's rate: docs/benchmarks.md).
pub const DEFAULT_SAMPLE_EVERY: u32 = 1;
/// Default limit on the whole warm-up (fetch and replay).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);
/// Shortest token accepted.
pub const MIN_TOKEN: usize = 16;

/// Warm-up settings.
#[derive(Debug, Clone)]
pub struct WarmupConfig {
    /// LRU size; 0 keeps no keys (and the endpoint has none to give).
    pub hot_keys: usize,
    /// One query in this many is sampled.
    pub sample_every: u32,
    /// File holding the bearer token of `/internal/warmup` (served and
    /// asked for with it); without one the endpoint answers 404 and no
    /// peer is asked.
    pub token_file: Option<PathBuf>,
    /// Peers to warm from, tried in turn: status listeners (`http://`,
    /// keys only) or TLS warm-up listeners (`https://`, keys, and the
    /// snapshot when the edge has neither an aggregator nor a cache).
    pub from: Vec<String>,
    /// Limit on the whole warm-up.
    pub timeout: Duration,
    /// The TLS warm-up listener (keys and the snapshot, to edge
    /// certificates), if any.
    pub listen: Option<std::net::SocketAddr>,
}

impl Default for WarmupConfig {
    fn default() -> Self {
        Self {
            hot_keys: DEFAULT_HOT_KEYS,
            sample_every: DEFAULT_SAMPLE_EVERY,
            token_file: None,
            from: Vec::new(),
            timeout: DEFAULT_TIMEOUT,
            listen: None,
        }
    }
}

/// The shared secret of `/internal/warmup`.
#[derive(Clone)]
pub struct Token(Arc<[u8]>);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

impl Token {
    /// Read a token file: its content, surrounding white space trimmed.
    pub fn read(path: &Path) -> Result<Token, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("warmup-token-file {}: {e}", path.display()))?;
        let token = text.trim();
        if token.len() < MIN_TOKEN || token.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(format!(
                "warmup-token-file {}: the token must be at least {MIN_TOKEN} characters, \
                 without white space",
                path.display()
            ));
        }
        Ok(Token(token.as_bytes().into()))
    }

    /// True when `authorization` is `Bearer <this token>` (compared in
    /// constant time).
    pub fn admits(&self, authorization: Option<&[u8]>) -> bool {
        let sent = authorization.and_then(|a| a.strip_prefix(b"Bearer "));
        sent.is_some_and(|s| bool::from(s.ct_eq(&self.0)))
    }

    /// The token as a header value's text.
    pub fn bearer(&self) -> String {
        format!("Bearer {}", String::from_utf8_lossy(&self.0))
    }
}

/// The edge's warm-up state: its hot keys and token, set at start.
#[derive(Debug, Default)]
pub struct Warmup {
    /// The LRU of recent keys (unset when `hot_keys` is 0).
    pub hot: OnceLock<Arc<hot::HotKeys>>,
    /// The endpoint's token.
    pub token: OnceLock<Token>,
    /// Wrong tokens per source address (guessing is throttled).
    pub guesses: gslb_shared::guesses::Guesses,
}

/// What `/status/config` reports of the start.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    /// The peer the keys came from.
    pub source: Option<String>,
    /// Keys the peer gave.
    pub keys_fetched: usize,
    /// Keys answered in every worker before DNS was bound.
    pub keys_replayed: usize,
    /// Fetch and replay, ms.
    pub duration_ms: u64,
    /// True when the edge started without replaying anything.
    pub cold: bool,
    /// Why it started cold.
    pub reason: Option<String>,
}
