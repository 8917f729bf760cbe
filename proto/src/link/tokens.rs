//! The admin token file (`gslbctl tokens` writes it, the aggregator reads
//! it): hashed tokens, each with a role, an optional scope of zones and
//! pools, and an optional expiry. A token is
//! `gslb_ID_SECRET`; the file keeps ID and the SHA-256 of SECRET, never the
//! secret. 32 random bytes need no slow hash: there is nothing to guess.

use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use serde::{Deserialize, Serialize};
use subtle::ConstantTimeEq;

/// What a token may do; each role may do everything the ones before it
/// may.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TokenRole {
    /// Reads only.
    Read,
    /// Manual health, pausing decisions, heartbeats: running what exists.
    Operate,
    /// Catalog objects: zones, records, pools, members, checks.
    Write,
    /// Notifiers, TSIG keys, DNSSEC rollovers, cluster membership, backups.
    Admin,
}

impl TokenRole {
    /// Every role, weakest first.
    pub const ALL: [TokenRole; 4] = [
        TokenRole::Read,
        TokenRole::Operate,
        TokenRole::Write,
        TokenRole::Admin,
    ];

    /// Its name in the file and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            TokenRole::Read => "read",
            TokenRole::Operate => "operate",
            TokenRole::Write => "write",
            TokenRole::Admin => "admin",
        }
    }
}

impl std::fmt::Display for TokenRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl std::str::FromStr for TokenRole {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TokenRole::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| format!("{s:?} is not a token role (read, operate, write, admin)"))
    }
}

/// The zones (by apex) and pools (by name) a token is limited to; empty:
/// not limited.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenScope {
    /// Zone apexes: the zone and its record sets.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zones: Vec<String>,
    /// Pool names: the pool and its members.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pools: Vec<String>,
}

impl TokenScope {
    /// Whether it limits nothing.
    pub fn is_empty(&self) -> bool {
        self.zones.is_empty() && self.pools.is_empty()
    }
}

impl std::fmt::Display for TokenScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.zones.is_empty(), self.pools.is_empty()) {
            (true, true) => f.write_str("everything"),
            (false, true) => write!(f, "zones {}", self.zones.join(", ")),
            (true, false) => write!(f, "pools {}", self.pools.join(", ")),
            (false, false) => write!(
                f,
                "zones {} and pools {}",
                self.zones.join(", "),
                self.pools.join(", ")
            ),
        }
    }
}

/// Most zones plus pools a scope may name (the token file is read on every
/// call it changes; a scope is a team's objects, not a catalog).
pub const MAX_SCOPE_NAMES: usize = 256;

/// One token as the file stores it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenEntry {
    /// Public id (the middle of the token), for listing and revoking.
    pub id: String,
    /// What the operator called it.
    pub name: String,
    /// What it may do.
    pub role: TokenRole,
    /// What it may see and change (empty: everything).
    #[serde(default, skip_serializing_if = "TokenScope::is_empty")]
    pub scope: TokenScope,
    /// Hex SHA-256 of the secret part.
    pub sha256: String,
    /// Unix seconds it was created at.
    pub created: u64,
    /// Unix seconds it stops working at, if ever.
    pub expires: Option<u64>,
}

impl TokenEntry {
    /// Whether it has expired at `now`.
    pub fn expired(&self, now: SystemTime) -> bool {
        self.expires.is_some_and(|e| unix(now) >= e)
    }
}

/// The token file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenFile {
    /// Every token, revoked ones removed.
    pub tokens: Vec<TokenEntry>,
}

const PREFIX: &str = "gslb_";

impl TokenFile {
    /// Read `path`; a missing file has no tokens.
    pub fn load(path: &Path) -> anyhow::Result<TokenFile> {
        match std::fs::read_to_string(path) {
            Ok(text) => serde_json::from_str(&text)
                .with_context(|| format!("tokens file {}: not a gslb token file", path.display())),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TokenFile::default()),
            Err(e) => Err(e).with_context(|| format!("reading {}", path.display())),
        }
    }

    /// Write `path` atomically, readable by its owner only.
    pub fn save(&self, path: &Path) -> anyhow::Result<()> {
        let text = serde_json::to_string_pretty(self)?;
        super::pki::write_secret(path, &(text + "\n"))
    }

    /// Add a token; returns the token (shown once) and its entry.
    pub fn create(
        &mut self,
        name: &str,
        role: TokenRole,
        scope: TokenScope,
        ttl: Option<Duration>,
        now: SystemTime,
    ) -> Result<(String, TokenEntry), String> {
        let names = scope.zones.iter().chain(&scope.pools);
        if names.clone().count() > MAX_SCOPE_NAMES {
            return Err(format!(
                "scope: at most {MAX_SCOPE_NAMES} zones and pools together"
            ));
        }
        if let Some(bad) = names.into_iter().find(|n| n.is_empty() || n.len() > 253) {
            return Err(format!(
                "scope: {bad:?} is not a zone apex or pool name (1 to 253 characters)"
            ));
        }
        if name.is_empty()
            || name.len() > 64
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        {
            return Err(format!(
                "name {name:?}: 1 to 64 letters, digits, '-', '_' or '.'"
            ));
        }
        if self.tokens.iter().any(|t| t.name == name) {
            return Err(format!(
                "name {name:?}: a token of that name exists (revoke it first)"
            ));
        }
        let id = loop {
            let id = hex::encode(rand::random::<[u8; 4]>());
            if !self.tokens.iter().any(|t| t.id == id) {
                break id;
            }
        };
        let secret = hex::encode(rand::random::<[u8; 32]>());
        let entry = TokenEntry {
            id: id.clone(),
            name: name.to_owned(),
            role,
            scope,
            sha256: hex::encode(sha256(secret.as_bytes())),
            created: unix(now),
            expires: ttl.map(|t| unix(now + t)),
        };
        self.tokens.push(entry.clone());
        Ok((format!("{PREFIX}{id}_{secret}"), entry))
    }

    /// Remove the token with id or name `which`.
    pub fn revoke(&mut self, which: &str) -> Result<TokenEntry, String> {
        let at = self
            .tokens
            .iter()
            .position(|t| t.id == which || t.name == which)
            .ok_or_else(|| format!("no token has id or name {which:?}"))?;
        Ok(self.tokens.remove(at))
    }

    /// The entry `token` names, if its secret matches (compared in
    /// constant time).
    pub fn verify(&self, token: &str) -> Option<&TokenEntry> {
        let (id, secret) = token.strip_prefix(PREFIX)?.split_once('_')?;
        let entry = self.tokens.iter().find(|t| t.id == id)?;
        let want = hex::decode(&entry.sha256).ok()?;
        let got = sha256(secret.as_bytes());
        bool::from(want.as_slice().ct_eq(got.as_slice())).then_some(entry)
    }
}

fn sha256(data: &[u8]) -> Vec<u8> {
    ring::digest::digest(&ring::digest::SHA256, data)
        .as_ref()
        .to_vec()
}

/// Seconds since the Unix epoch.
pub fn unix(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}
