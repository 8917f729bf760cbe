//! Web UI sessions as the durable, replicated state keeps them, so a
//! session outlives a restart and is valid on every cluster node. Each is
//! kept under the SHA-256 of its id (hex) with the public id of the token
//! it signed in with and two times; no secret is stored: the id is known
//! only to the browser's cookie, and the page's CSRF value is derived from
//! it. The rules (lifetime, idle time, how many) are here, pure: the
//! caller passes the time.

use serde::{Deserialize, Serialize};

/// Sessions kept at most; a sign-in beyond it is refused.
pub const MAX_SESSIONS: usize = 10_000;
/// Sessions of one token at most; a new one ends that token's oldest.
pub const MAX_SESSIONS_PER_TOKEN: usize = 64;
/// A session ends this long after sign-in, whatever its use.
pub const SESSION_LIFETIME_MS: u64 = 8 * 3_600_000;
/// A session unused for this long ends.
pub const SESSION_IDLE_MS: u64 = 3_600_000;
/// How stale a session's stored last use may get before the node that
/// writes (a single node, the leader) stores a newer one: use is counted
/// in memory per request, and written at most this often per session.
pub const TOUCH_EVERY_MS: u64 = 5 * 60_000;

/// One signed-in browser, as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SessionRecord {
    /// The public id of the token it signed in with (checked again on
    /// every request: a revoked or expired token ends its sessions).
    pub token: String,
    /// Sign-in time, ms since the Unix epoch.
    pub created_ms: u64,
    /// Last use as stored (a node also counts uses it has seen since).
    pub used_ms: u64,
}

impl SessionRecord {
    /// Whether the session is open at `now_ms`, last used at the later of
    /// its stored use and `seen_ms` (a use this node saw).
    pub fn alive(&self, seen_ms: u64, now_ms: u64) -> bool {
        let used = self.used_ms.max(seen_ms);
        now_ms.saturating_sub(self.created_ms) < SESSION_LIFETIME_MS
            && now_ms.saturating_sub(used) < SESSION_IDLE_MS
    }
}

/// A change to the stored sessions, applied in one transaction in this
/// order: opened, touched (existing ones only: a touch never brings back
/// a session closed meanwhile), closed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionWrite {
    /// New sessions by digest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub open: Vec<(String, SessionRecord)>,
    /// Newer last uses by digest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub touch: Vec<(String, u64)>,
    /// Sessions ended, by digest.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub close: Vec<String>,
}

/// Why a sign-in was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SessionError {
    /// [`MAX_SESSIONS`] are open.
    #[error(
        "sessions: {MAX_SESSIONS} are open, the most the aggregators keep; sign out elsewhere or wait for idle ones to end"
    )]
    Full,
}

/// The write that opens session `digest` for `token` at `now_ms`, given
/// the stored sessions: those ended [`TOUCH_EVERY_MS`] ago are swept (a
/// use another node saw may not be stored yet; a session ended since is
/// refused at use all the same), and the token's oldest is ended when it
/// holds [`MAX_SESSIONS_PER_TOKEN`].
pub fn open(
    stored: &[(String, SessionRecord)],
    digest: String,
    token: &str,
    now_ms: u64,
) -> Result<SessionWrite, SessionError> {
    let mut write = SessionWrite::default();
    let swept_at = now_ms.saturating_sub(TOUCH_EVERY_MS);
    let mut open: Vec<&(String, SessionRecord)> = Vec::new();
    for entry in stored {
        if entry.1.alive(0, swept_at) {
            open.push(entry);
        } else {
            write.close.push(entry.0.clone());
        }
    }
    let mut kept = open.len();
    let mine: Vec<&&(String, SessionRecord)> =
        open.iter().filter(|(_, s)| s.token == token).collect();
    if mine.len() >= MAX_SESSIONS_PER_TOKEN
        && let Some(oldest) = mine.iter().min_by_key(|(_, s)| s.created_ms)
    {
        write.close.push(oldest.0.clone());
        kept -= 1;
    }
    if kept >= MAX_SESSIONS {
        return Err(SessionError::Full);
    }
    write.open.push((
        digest,
        SessionRecord {
            token: token.to_owned(),
            created_ms: now_ms,
            used_ms: now_ms,
        },
    ));
    Ok(write)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn stored(n: usize, token: &str, at: u64) -> Vec<(String, SessionRecord)> {
        (0..n)
            .map(|i| {
                let record = SessionRecord {
                    token: token.to_owned(),
                    created_ms: at + i as u64,
                    used_ms: at + i as u64,
                };
                (format!("{token}-{i}"), record)
            })
            .collect()
    }

    #[test]
    fn a_session_ends_when_idle_or_old_counting_uses_seen_here() {
        let s = SessionRecord {
            token: "t".into(),
            created_ms: 0,
            used_ms: 0,
        };
        assert!(s.alive(0, SESSION_IDLE_MS - 1));
        assert!(!s.alive(0, SESSION_IDLE_MS));
        assert!(s.alive(SESSION_IDLE_MS, SESSION_IDLE_MS + 1), "seen here");
        assert!(!s.alive(SESSION_LIFETIME_MS, SESSION_LIFETIME_MS));
    }

    #[test]
    fn opening_sweeps_ended_sessions_and_ends_the_tokens_oldest() {
        let now = SESSION_LIFETIME_MS * 2;
        let mut all = stored(3, "old", 0);
        all.extend(stored(MAX_SESSIONS_PER_TOKEN, "busy", now - 1_000));
        let write = open(&all, "new".into(), "busy", now).unwrap();
        let mut closed = write.close.clone();
        closed.sort();
        assert_eq!(closed, ["busy-0", "old-0", "old-1", "old-2"]);
        assert_eq!(write.open.len(), 1);
        assert_eq!(write.open[0].0, "new");
        assert_eq!(write.open[0].1.token, "busy");
        // Idle but within the sweep's grace: kept (another node may have
        // seen a use it has not stored yet).
        let idle = stored(1, "quiet", now - SESSION_IDLE_MS - 1);
        assert!(open(&idle, "x".into(), "t", now).unwrap().close.is_empty());
        let gone = stored(1, "quiet", now - SESSION_IDLE_MS - TOUCH_EVERY_MS - 1);
        assert_eq!(
            open(&gone, "x".into(), "t", now).unwrap().close,
            ["quiet-0"]
        );
    }

    #[test]
    fn the_whole_is_capped_after_the_sweep() {
        let now = 2 * SESSION_LIFETIME_MS;
        let mut all: Vec<(String, SessionRecord)> = (0..MAX_SESSIONS)
            .map(|i| {
                let record = SessionRecord {
                    token: format!("t{i}"),
                    created_ms: now,
                    used_ms: now,
                };
                (format!("s{i}"), record)
            })
            .collect();
        assert_eq!(
            open(&all, "x".into(), "another", now),
            Err(SessionError::Full)
        );
        // One ended: its place is free.
        all[7].1.created_ms = 0;
        let write = open(&all, "x".into(), "another", now).unwrap();
        assert_eq!(write.close, ["s7"]);
        // A token at its own limit makes room by ending its oldest.
        all[7].1.created_ms = now;
        for entry in all.iter_mut().take(MAX_SESSIONS_PER_TOKEN) {
            entry.1.token = "busy".into();
        }
        let write = open(&all, "x".into(), "busy", now).unwrap();
        assert_eq!(write.close.len(), 1);
    }
}
