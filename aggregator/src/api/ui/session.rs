//! Web UI sessions: an admin token exchanged for a random session id that
//! the browser keeps in an `HttpOnly` cookie. The token itself stays on
//! the server, so every request checks it again (a revoked or expired
//! token ends its sessions at once). Each session has its own CSRF value,
//! which the page carries and every change must send back.
//!
//! Pure: the caller passes the time and the random bytes.

use std::collections::HashMap;

use ring::digest::{SHA256, digest};
use subtle::ConstantTimeEq;

/// Sessions held at most; a sign-in beyond it is refused.
pub const MAX_SESSIONS: usize = 10_000;
/// Sessions of one token at most; a new one ends that token's oldest.
pub const MAX_SESSIONS_PER_TOKEN: usize = 64;
/// A session ends this long after sign-in, whatever its use.
pub const SESSION_LIFETIME_MS: u64 = 8 * 3_600_000;
/// A session unused for this long ends.
pub const SESSION_IDLE_MS: u64 = 3_600_000;
/// Random bytes in a session id and in a CSRF value.
pub const SECRET_BYTES: usize = 32;
/// The cookie's name.
pub const COOKIE: &str = "gslb_session";

/// One signed-in browser.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The admin token it signed in with (never sent back to the browser).
    pub token: String,
    /// The CSRF value its pages carry.
    pub csrf: String,
    /// Sign-in time, ms since the Unix epoch.
    pub created_ms: u64,
    /// Last request.
    pub used_ms: u64,
}

/// Why a sign-in was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// [`MAX_SESSIONS`] are open.
    #[error(
        "sessions: {MAX_SESSIONS} are open, the most this aggregator keeps; sign out elsewhere or wait for idle ones to end"
    )]
    Full,
}

/// The open sessions, by the SHA-256 of their id (a lookup never compares
/// the secret itself, and a memory dump holds no usable cookie).
#[derive(Debug, Default)]
pub struct Sessions {
    by_digest: HashMap<[u8; 32], Session>,
}

/// The session's SHA-256: what the server keeps instead of the id.
pub(super) fn key(id: &str) -> [u8; 32] {
    let mut out = [0; 32];
    out.copy_from_slice(digest(&SHA256, id.as_bytes()).as_ref());
    out
}

impl Sessions {
    /// Open a session for `token` at `now_ms` with the random `id` and
    /// `csrf` values (hex of [`SECRET_BYTES`] bytes each).
    pub fn open(
        &mut self,
        token: &str,
        id: &str,
        csrf: &str,
        now_ms: u64,
    ) -> Result<(), SessionError> {
        self.expire(now_ms);
        let mine: Vec<([u8; 32], u64)> = self
            .by_digest
            .iter()
            .filter(|(_, s)| s.token == token)
            .map(|(k, s)| (*k, s.created_ms))
            .collect();
        if mine.len() >= MAX_SESSIONS_PER_TOKEN
            && let Some((oldest, _)) = mine.iter().min_by_key(|(_, at)| *at)
        {
            self.by_digest.remove(oldest);
        }
        if self.by_digest.len() >= MAX_SESSIONS {
            return Err(SessionError::Full);
        }
        self.by_digest.insert(
            key(id),
            Session {
                token: token.to_owned(),
                csrf: csrf.to_owned(),
                created_ms: now_ms,
                used_ms: now_ms,
            },
        );
        Ok(())
    }

    /// The live session of cookie value `id`, marked used at `now_ms`.
    pub fn use_session(&mut self, id: &str, now_ms: u64) -> Option<Session> {
        let k = key(id);
        let session = self.by_digest.get_mut(&k)?;
        if !alive(session, now_ms) {
            self.by_digest.remove(&k);
            return None;
        }
        session.used_ms = now_ms;
        Some(session.clone())
    }

    /// End the session of cookie value `id`.
    pub fn close(&mut self, id: &str) {
        self.by_digest.remove(&key(id));
    }

    /// Sessions open now (expired ones not yet swept included).
    pub fn len(&self) -> usize {
        self.by_digest.len()
    }

    /// Whether none is open.
    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.by_digest.is_empty()
    }

    fn expire(&mut self, now_ms: u64) {
        self.by_digest.retain(|_, s| alive(s, now_ms));
    }
}

fn alive(s: &Session, now_ms: u64) -> bool {
    now_ms.saturating_sub(s.created_ms) < SESSION_LIFETIME_MS
        && now_ms.saturating_sub(s.used_ms) < SESSION_IDLE_MS
}

/// Whether `sent` is the session's CSRF value (compared in constant time).
pub fn csrf_matches(session: &Session, sent: Option<&[u8]>) -> bool {
    sent.is_some_and(|sent| bool::from(sent.ct_eq(session.csrf.as_bytes())))
}

/// The session cookie's value among a request's `Cookie` headers.
pub fn cookie_value<'a>(headers: impl Iterator<Item = &'a [u8]>) -> Option<&'a str> {
    headers
        .filter_map(|h| std::str::from_utf8(h).ok())
        .flat_map(|h| h.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == COOKIE)
        .map(|(_, value)| value)
        .filter(|v| v.len() == SECRET_BYTES * 2 && v.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// The `Set-Cookie` value that stores `id` (or, with `None`, clears it).
pub fn set_cookie(id: Option<&str>) -> String {
    let (value, age) = match id {
        Some(id) => (id, SESSION_LIFETIME_MS / 1000),
        None => ("", 0),
    };
    format!("{COOKIE}={value}; Path=/ui; Max-Age={age}; HttpOnly; Secure; SameSite=Strict")
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn id(n: usize) -> String {
        format!("{n:064x}")
    }

    #[test]
    fn a_session_ends_when_idle_or_old() {
        let mut s = Sessions::default();
        s.open("t", &id(1), "c", 0).unwrap();
        assert!(s.use_session(&id(1), SESSION_IDLE_MS - 1).is_some());
        assert!(
            s.use_session(&id(1), 2 * SESSION_IDLE_MS).is_none(),
            "idle for an hour"
        );
        s.open("t", &id(2), "c", 0).unwrap();
        let mut at = 0;
        while at + SESSION_IDLE_MS / 2 < SESSION_LIFETIME_MS {
            at += SESSION_IDLE_MS / 2;
            assert!(s.use_session(&id(2), at).is_some());
        }
        assert!(s.use_session(&id(2), SESSION_LIFETIME_MS).is_none());
        assert!(s.is_empty());
    }

    #[test]
    fn one_token_holds_a_bounded_number_and_the_whole_is_capped() {
        let mut s = Sessions::default();
        for n in 0..MAX_SESSIONS_PER_TOKEN + 5 {
            s.open("same", &id(n), "c", n as u64).unwrap();
        }
        assert_eq!(s.len(), MAX_SESSIONS_PER_TOKEN);
        assert!(
            s.use_session(&id(0), 100).is_none(),
            "the oldest went first"
        );
        assert!(
            s.use_session(&id(MAX_SESSIONS_PER_TOKEN + 4), 100)
                .is_some()
        );
        for n in s.len()..MAX_SESSIONS {
            s.open(&format!("t{n}"), &id(1_000_000 + n), "c", 200)
                .unwrap();
        }
        assert_eq!(s.open("another", &id(9), "c", 300), Err(SessionError::Full));
        s.close(&id(1_000_000 + MAX_SESSIONS - 1));
        assert!(s.open("another", &id(9), "c", 300).is_ok());
    }

    #[test]
    fn cookies_and_csrf_values_are_checked_exactly() {
        let value = id(7);
        let header = format!("a=b; {COOKIE}={value}; c=d");
        assert_eq!(
            cookie_value([header.as_bytes()].into_iter()),
            Some(value.as_str())
        );
        let short = format!("{COOKIE}=abc");
        assert_eq!(cookie_value([short.as_bytes()].into_iter()), None);
        let other = format!("x{COOKIE}={value}");
        assert_eq!(cookie_value([other.as_bytes()].into_iter()), None);
        let session = Session {
            token: "t".into(),
            csrf: "abcd".into(),
            created_ms: 0,
            used_ms: 0,
        };
        assert!(csrf_matches(&session, Some(b"abcd")));
        assert!(!csrf_matches(&session, Some(b"abce")));
        assert!(!csrf_matches(&session, Some(b"abc")));
        assert!(!csrf_matches(&session, None));
        let set = set_cookie(Some(&value));
        for attribute in [
            "HttpOnly",
            "Secure",
            "SameSite=Strict",
            "Path=/ui",
            "Max-Age=28800",
        ] {
            assert!(set.contains(attribute), "{set}");
        }
        assert!(set_cookie(None).contains("Max-Age=0"));
    }
}
