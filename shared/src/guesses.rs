//! Throttling secret guessing (a UI sign-in token, the edge's warm-up
//! token): a source address with [`MAX_FAILURES`] wrong tries within
//! [`WINDOW_MS`] is refused for [`BLOCK_MS`] without its secret being
//! looked at, and the burst is logged once (the caller logs when
//! [`Guesses::failed`] says a burst began). Pure: the caller passes the
//! clock.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;

/// Wrong tries a source may make within [`WINDOW_MS`].
pub const MAX_FAILURES: u32 = 10;
/// The window failures are counted in, ms.
pub const WINDOW_MS: u64 = 10_000;
/// How long a source that went past [`MAX_FAILURES`] is refused, ms.
pub const BLOCK_MS: u64 = 60_000;
/// Sources tracked at most (the stalest forgotten past it).
pub const MAX_SOURCES: usize = 10_000;

#[derive(Debug, Clone, Copy)]
struct Source {
    window_start: u64,
    failures: u32,
    blocked_until: u64,
}

/// Wrong tries per source address.
#[derive(Debug, Default)]
pub struct Guesses {
    sources: Mutex<HashMap<IpAddr, Source>>,
}

/// What a failure started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// The first wrong try of a burst: log it.
    First,
    /// More of the same burst: count, do not log.
    Again,
    /// This try crossed the limit: the source is now refused; log it.
    Blocked,
}

impl Guesses {
    /// Whether `ip` may try now; `Err(ms)` is how long it must wait.
    pub fn check(&self, ip: IpAddr, now_ms: u64) -> Result<(), u64> {
        let sources = self.sources.lock().unwrap_or_else(|p| p.into_inner());
        match sources.get(&ip.to_canonical()) {
            Some(s) if s.blocked_until > now_ms => Err(s.blocked_until - now_ms),
            _ => Ok(()),
        }
    }

    /// Count a wrong try by `ip`.
    pub fn failed(&self, ip: IpAddr, now_ms: u64) -> Failure {
        let mut sources = self.sources.lock().unwrap_or_else(|p| p.into_inner());
        if sources.len() >= MAX_SOURCES {
            sources.retain(|_, s| s.blocked_until > now_ms || s.window_start + WINDOW_MS > now_ms);
            if sources.len() >= MAX_SOURCES
                && let Some(stalest) = sources
                    .iter()
                    .min_by_key(|(_, s)| s.window_start)
                    .map(|(ip, _)| *ip)
            {
                sources.remove(&stalest);
            }
        }
        let s = sources.entry(ip.to_canonical()).or_insert(Source {
            window_start: now_ms,
            failures: 0,
            blocked_until: 0,
        });
        if now_ms >= s.window_start + WINDOW_MS {
            s.window_start = now_ms;
            s.failures = 0;
        }
        s.failures += 1;
        if s.failures > MAX_FAILURES {
            s.blocked_until = now_ms + BLOCK_MS;
            s.failures = 0;
            s.window_start = now_ms;
            Failure::Blocked
        } else if s.failures == 1 {
            Failure::First
        } else {
            Failure::Again
        }
    }

    /// A right try by `ip`: its count starts again.
    pub fn succeeded(&self, ip: IpAddr) {
        let mut sources = self.sources.lock().unwrap_or_else(|p| p.into_inner());
        sources.remove(&ip.to_canonical());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_is_logged_once_blocked_past_the_limit_and_released() {
        let g = Guesses::default();
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        let other: IpAddr = "192.0.2.2".parse().unwrap();
        assert_eq!(g.failed(ip, 0), Failure::First);
        for t in 1..MAX_FAILURES {
            assert_eq!(g.failed(ip, u64::from(t)), Failure::Again);
            assert!(g.check(ip, u64::from(t)).is_ok());
        }
        assert_eq!(g.failed(ip, 100), Failure::Blocked);
        assert_eq!(g.check(ip, 101), Err(BLOCK_MS - 1));
        assert!(g.check(other, 101).is_ok(), "per source");
        assert!(g.check(ip, 100 + BLOCK_MS).is_ok(), "released");
        // Slow tries never block: the window starts again.
        let slow: IpAddr = "192.0.2.3".parse().unwrap();
        for i in 0..100 {
            g.failed(slow, i * WINDOW_MS);
            assert!(g.check(slow, i * WINDOW_MS).is_ok());
        }
        g.succeeded(ip);
        assert!(g.check(ip, 102).is_ok());
    }

    #[test]
    fn the_table_is_bounded() {
        let g = Guesses::default();
        for i in 0..(MAX_SOURCES as u32 + 50) {
            g.failed(IpAddr::from(i.to_be_bytes()), 0);
        }
        assert!(g.sources.lock().unwrap().len() <= MAX_SOURCES);
    }
}
