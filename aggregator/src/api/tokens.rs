//! Admin bearer tokens as the aggregator checks them: the token file
//! (`gslb_proto::link::tokens`, written by `gslbctl tokens`), reloaded when
//! it changes, and why a call is refused.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

pub use gslb_proto::link::tokens::{TokenEntry, TokenFile, TokenRole, TokenScope};

use crate::net::watch::{Stamp, stamp};

/// Why a call was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No `Authorization: Bearer` header.
    Missing,
    /// A header that names no valid token.
    Invalid,
    /// The token expired.
    Expired(String),
    /// A token whose role is weaker than the call needs: (name, its role,
    /// the role needed).
    Role(String, TokenRole, TokenRole),
}

impl Refusal {
    /// Whether the caller is unknown (401 / UNAUTHENTICATED) rather than
    /// known but not allowed (403 / PERMISSION_DENIED).
    pub fn unauthenticated(&self) -> bool {
        !matches!(self, Refusal::Role(..))
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
            Refusal::Role(name, has, needs) => write!(
                f,
                "authorization: token {name:?} has role {has}; this call needs role {needs}"
            ),
        }
    }
}

/// A token that passed a check.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    /// What it may do.
    pub role: TokenRole,
    /// Its name.
    pub name: String,
    /// Its public id.
    pub id: String,
    /// The zones and pools it is limited to (empty: none).
    pub scope: TokenScope,
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
        self.check_entry(header, need, now).map(|c| c.role)
    }

    /// [`Tokens::check`], naming the token that passed.
    pub fn check_entry(
        &self,
        header: Option<&[u8]>,
        need: TokenRole,
        now: SystemTime,
    ) -> Result<Checked, Refusal> {
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
        let loaded = self.current();
        let entry = loaded.1.verify(token).ok_or(Refusal::Invalid)?;
        passes(entry, need, now)
    }

    /// The token whose public id is `id` (a UI session keeps the id, never
    /// the secret), checked as [`Tokens::check_entry`] checks a secret: a
    /// revoked token is [`Refusal::Invalid`].
    pub fn check_id(&self, id: &str, need: TokenRole, now: SystemTime) -> Result<Checked, Refusal> {
        let loaded = self.current();
        let entry = (loaded.1.tokens.iter())
            .find(|t| t.id == id)
            .ok_or(Refusal::Invalid)?;
        passes(entry, need, now)
    }

    /// The file's tokens as they are now (no secrets: the file holds
    /// their digests only).
    pub fn file(&self) -> TokenFile {
        self.current().1.clone()
    }

    /// The tokens as the file holds them now (reloaded if it changed).
    fn current(&self) -> std::sync::MutexGuard<'_, (Stamp, TokenFile)> {
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
        loaded
    }

    fn stamp_now(&self) -> Stamp {
        stamp(&[&self.path])
    }
}

/// `entry` if it is not expired and has at least role `need`.
fn passes(entry: &TokenEntry, need: TokenRole, now: SystemTime) -> Result<Checked, Refusal> {
    if entry.expired(now) {
        return Err(Refusal::Expired(entry.name.clone()));
    }
    if entry.role < need {
        return Err(Refusal::Role(entry.name.clone(), entry.role, need));
    }
    Ok(Checked {
        role: entry.role,
        name: entry.name.clone(),
        id: entry.id.clone(),
        scope: entry.scope.clone(),
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::time::Duration;

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
        let (write, write_entry) = file
            .create("ci", TokenRole::Write, TokenScope::default(), None, now)
            .unwrap();
        let (read, _) = file
            .create("dash", TokenRole::Read, TokenScope::default(), None, now)
            .unwrap();
        let (short, _) = file
            .create(
                "short",
                TokenRole::Write,
                TokenScope::default(),
                Some(Duration::from_secs(60)),
                now,
            )
            .unwrap();
        assert!(
            file.create("ci", TokenRole::Read, TokenScope::default(), None, now)
                .is_err()
        );
        assert!(
            file.create("a b", TokenRole::Read, TokenScope::default(), None, now)
                .is_err()
        );
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
            Err(Refusal::Role(
                "dash".into(),
                TokenRole::Read,
                TokenRole::Write
            ))
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
        // A session's check by public id: the same rules, no secret.
        let by_id = |id: &str, need, at| tokens.check_id(id, need, at).map(|c| c.name);
        assert_eq!(
            by_id(&write_entry.id, TokenRole::Write, now),
            Ok("ci".into())
        );
        assert_eq!(by_id("nope", TokenRole::Read, now), Err(Refusal::Invalid));
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
        assert_eq!(
            by_id(&write_entry.id, TokenRole::Read, now),
            Err(Refusal::Invalid)
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
