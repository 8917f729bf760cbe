//! Admin bearer tokens: a file of hashed tokens (`gslbctl tokens`), each
//! with a role and an optional expiry, reloaded when it changes. A token is
//! `gslb_ID_SECRET`; the file keeps ID and the SHA-256 of SECRET, never
//! the secret. 32 random bytes need no slow hash: there is nothing to guess.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::Context;
use serde::{Deserialize, Serialize};
use subtle::ConstantTimeEq;

use crate::net::watch::{Stamp, stamp};

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TokenRole {
    /// Reads only.
    Read,
    /// Reads and writes.
    Write,
}

impl std::fmt::Display for TokenRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            TokenRole::Read => "read",
            TokenRole::Write => "write",
        })
    }
}

impl std::str::FromStr for TokenRole {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "read" => Ok(TokenRole::Read),
            "write" => Ok(TokenRole::Write),
            _ => Err(format!("{s:?} is not a token role (read, write)")),
        }
    }
}

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
        crate::net::pki::write_secret(path, &(text + "\n"))
    }

    /// Add a token; returns the token (shown once) and its entry.
    pub fn create(
        &mut self,
        name: &str,
        role: TokenRole,
        ttl: Option<Duration>,
        now: SystemTime,
    ) -> Result<(String, TokenEntry), String> {
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

/// Why a call was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No `Authorization: Bearer` header.
    Missing,
    /// A header that names no valid token.
    Invalid,
    /// The token expired.
    Expired(String),
    /// A read token on a write.
    ReadOnly(String),
}

impl Refusal {
    /// Whether the caller is unknown (401 / UNAUTHENTICATED) rather than
    /// known but not allowed (403 / PERMISSION_DENIED).
    pub fn unauthenticated(&self) -> bool {
        !matches!(self, Refusal::ReadOnly(_))
    }
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refusal::Missing => f.write_str(
                "authorization: admin calls need `Authorization: Bearer TOKEN` (gslbctl --token or GSLB_TOKEN)",
            ),
            Refusal::Invalid => f.write_str("authorization: the bearer token is not valid"),
            Refusal::Expired(name) => write!(f, "authorization: token {name:?} has expired"),
            Refusal::ReadOnly(name) => write!(
                f,
                "authorization: token {name:?} has role read; this call writes and needs role write"
            ),
        }
    }
}

/// The aggregator's tokens, reloaded when the file changes.
pub struct Tokens {
    path: PathBuf,
    loaded: Mutex<(Stamp, TokenFile)>,
}

impl Tokens {
    /// Load `path` (missing: no tokens yet, every admin call refused).
    pub fn load(path: PathBuf) -> anyhow::Result<Tokens> {
        let file = TokenFile::load(&path)?;
        Ok(Tokens {
            loaded: Mutex::new((stamp(&[&path]), file)),
            path,
        })
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Check an `Authorization` header value for a call that needs `need`.
    pub fn check(
        &self,
        header: Option<&[u8]>,
        need: TokenRole,
        now: SystemTime,
    ) -> Result<TokenRole, Refusal> {
        // The scheme is case-insensitive (RFC 9110 11.1).
        let header = header.ok_or(Refusal::Missing)?;
        let token = header
            .get(..7)
            .filter(|scheme| scheme.eq_ignore_ascii_case(b"bearer "))
            .and_then(|_| header.get(7..))
            .ok_or(Refusal::Missing)?;
        let token = std::str::from_utf8(token)
            .map_err(|_| Refusal::Invalid)?
            .trim();
        let current = self.stamp_now();
        let mut loaded = self.loaded.lock().unwrap_or_else(|p| p.into_inner());
        if loaded.0 != current {
            loaded.0 = current;
            match TokenFile::load(&self.path) {
                Ok(file) => {
                    tracing::info!(path = %self.path.display(), tokens = file.tokens.len(), "tokens reloaded");
                    loaded.1 = file;
                }
                Err(e) => tracing::error!(
                    error = format!("{e:#}"),
                    "the tokens file changed but does not load; still using the previous tokens"
                ),
            }
        }
        let entry = loaded.1.verify(token).ok_or(Refusal::Invalid)?;
        if entry.expired(now) {
            return Err(Refusal::Expired(entry.name.clone()));
        }
        if entry.role < need {
            return Err(Refusal::ReadOnly(entry.name.clone()));
        }
        Ok(entry.role)
    }

    fn stamp_now(&self) -> Stamp {
        stamp(&[&self.path])
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn header(token: &str) -> Vec<u8> {
        format!("Bearer {token}").into_bytes()
    }

    #[test]
    fn tokens_verify_by_role_and_expiry() {
        let dir = std::env::temp_dir().join(format!("gslb-tokens-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tokens.json");
        let now = SystemTime::now();
        let mut file = TokenFile::default();
        let (write, _) = file.create("ci", TokenRole::Write, None, now).unwrap();
        let (read, _) = file.create("dash", TokenRole::Read, None, now).unwrap();
        let (short, _) = file
            .create(
                "short",
                TokenRole::Write,
                Some(Duration::from_secs(60)),
                now,
            )
            .unwrap();
        assert!(file.create("ci", TokenRole::Read, None, now).is_err());
        assert!(file.create("a b", TokenRole::Read, None, now).is_err());
        file.save(&path).unwrap();
        // The secret is not in the file.
        let stored = std::fs::read_to_string(&path).unwrap();
        for token in [&write, &read, &short] {
            assert!(!stored.contains(token.rsplit('_').next().unwrap()));
        }
        let tokens = Tokens::load(path.clone()).unwrap();
        let check = |h: Option<&[u8]>, need, at| tokens.check(h, need, at);
        assert_eq!(
            check(Some(&header(&write)), TokenRole::Write, now),
            Ok(TokenRole::Write)
        );
        assert_eq!(
            check(Some(&header(&read)), TokenRole::Read, now),
            Ok(TokenRole::Read)
        );
        assert_eq!(
            check(Some(&header(&read)), TokenRole::Write, now),
            Err(Refusal::ReadOnly("dash".into()))
        );
        assert_eq!(check(None, TokenRole::Read, now), Err(Refusal::Missing));
        assert_eq!(
            check(Some(write.as_bytes()), TokenRole::Read, now),
            Err(Refusal::Missing)
        );
        let mut wrong = write.clone();
        wrong.pop();
        wrong.push(if write.ends_with('0') { '1' } else { '0' });
        assert_eq!(
            check(Some(&header(&wrong)), TokenRole::Read, now),
            Err(Refusal::Invalid)
        );
        assert_eq!(
            check(Some(b"Bearer gslb_x"), TokenRole::Read, now),
            Err(Refusal::Invalid)
        );
        let later = now + Duration::from_secs(61);
        assert_eq!(
            check(Some(&header(&short)), TokenRole::Read, later),
            Err(Refusal::Expired("short".into()))
        );
        // Revoking rewrites the file; the next check reloads it.
        let mut file = TokenFile::load(&path).unwrap();
        file.revoke("ci").unwrap();
        assert!(file.revoke("ci").is_err());
        // Same size as before would hide the change from the stamp only if
        // the mtime also stood still; the entry count changes the size.
        file.save(&path).unwrap();
        assert_eq!(
            check(Some(&header(&write)), TokenRole::Read, now),
            Err(Refusal::Invalid)
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
