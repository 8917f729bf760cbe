//! Web UI sessions at the HTTP edge: an admin token exchanged for a random
//! session id that the browser keeps in an `HttpOnly` cookie. The store
//! keeps the session under the id's SHA-256 with the token's public id
//! (`core::sessions`), so it outlives a restart and holds on every cluster
//! node; every request checks the token again (a revoked or expired token
//! ends its sessions at once). The page's CSRF value is derived from the
//! id, so no node stores it. Here: the cookie, the digest, the CSRF value,
//! and the uses this node has seen since the store last recorded one.
//!
//! Pure: the caller passes the time.

use std::collections::HashMap;

use ring::digest::{SHA256, digest};
use subtle::ConstantTimeEq;

pub use crate::core::sessions::{
    MAX_SESSIONS, MAX_SESSIONS_PER_TOKEN, SESSION_IDLE_MS, SESSION_LIFETIME_MS, TOUCH_EVERY_MS,
};

/// Random bytes in a session id.
pub const SECRET_BYTES: usize = 32;
/// The cookie's name.
pub const COOKIE: &str = "gslb_session";

/// One signed-in browser, as a request finds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// The public id of the token it signed in with.
    pub token: String,
    /// The CSRF value its pages carry.
    pub csrf: String,
}

/// The session's SHA-256, hex: what the store keeps instead of the id (a
/// lookup never compares the secret itself, and neither the store nor a
/// memory dump holds a usable cookie).
pub fn key(id: &str) -> String {
    hex::encode(digest(&SHA256, id.as_bytes()).as_ref())
}

/// The CSRF value of session `id`: a digest of it in its own domain, so
/// it is the same on every node and tells nothing of the id or its key.
pub fn csrf_of(id: &str) -> String {
    let mut input = b"gslb-ui-csrf\0".to_vec();
    input.extend_from_slice(id.as_bytes());
    hex::encode(digest(&SHA256, &input).as_ref())
}

/// The uses of each session this node saw, by digest: idle time counts
/// from the later of these and the stored last use, and the node that
/// writes stores a use at most every [`TOUCH_EVERY_MS`].
#[derive(Debug, Default)]
pub struct Seen {
    by_digest: HashMap<String, Use>,
}

#[derive(Debug, Clone, Copy)]
struct Use {
    at_ms: u64,
    /// When this node last asked the store to record a use.
    stored_ms: u64,
}

impl Seen {
    /// The last use this node saw of `digest` (0: none).
    pub fn last(&self, digest: &str) -> u64 {
        self.by_digest.get(digest).map_or(0, |u| u.at_ms)
    }

    /// Count a use of `digest` at `now_ms`; whether the store should be
    /// told (its last use, `stored_ms`, and this node's last request to
    /// store one are both [`TOUCH_EVERY_MS`] old).
    pub fn used(&mut self, digest: &str, stored_ms: u64, now_ms: u64) -> bool {
        if self.by_digest.len() >= 2 * MAX_SESSIONS && !self.by_digest.contains_key(digest) {
            // Bounded: forget uses too old to keep any session open.
            self.by_digest
                .retain(|_, u| now_ms.saturating_sub(u.at_ms) < SESSION_IDLE_MS);
        }
        let entry = self.by_digest.entry(digest.to_owned()).or_insert(Use {
            at_ms: now_ms,
            stored_ms,
        });
        entry.at_ms = entry.at_ms.max(now_ms);
        let due = now_ms.saturating_sub(stored_ms.max(entry.stored_ms)) >= TOUCH_EVERY_MS;
        if due {
            entry.stored_ms = now_ms;
        }
        due
    }

    /// Forget `digest` (its session ended).
    pub fn forget(&mut self, digest: &str) {
        self.by_digest.remove(digest);
    }
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
    fn a_use_is_stored_at_most_every_few_minutes_and_the_map_is_bounded() {
        let mut seen = Seen::default();
        assert!(!seen.used("a", 0, 1_000), "stored at sign-in");
        assert_eq!(seen.last("a"), 1_000);
        assert!(seen.used("a", 0, TOUCH_EVERY_MS));
        assert!(!seen.used("a", 0, TOUCH_EVERY_MS + 1), "asked already");
        assert!(seen.used("a", 0, 2 * TOUCH_EVERY_MS + 1));
        seen.forget("a");
        assert_eq!(seen.last("a"), 0);
        for n in 0..2 * MAX_SESSIONS {
            seen.used(&n.to_string(), 0, 0);
        }
        seen.used("late", SESSION_IDLE_MS, SESSION_IDLE_MS);
        assert_eq!(seen.by_digest.len(), 1, "uses an hour old are forgotten");
    }

    #[test]
    fn the_csrf_value_is_the_ids_own_and_not_its_key() {
        let (a, b) = (id(1), id(2));
        assert_eq!(csrf_of(&a), csrf_of(&a));
        assert_ne!(csrf_of(&a), csrf_of(&b));
        assert_ne!(csrf_of(&a), key(&a));
        assert_eq!(key(&a).len(), 64);
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
