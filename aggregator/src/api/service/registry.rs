//! The agent registry: one row per agent id, owned by the stream that
//! registered it last (a reconnect that overtakes its old stream's end is
//! not marked disconnected by that end), disconnected rows kept for a
//! retention period and never more than [`MAX_DISCONNECTED`] of them.
//!
//! Pure: the caller passes the time.

use std::collections::BTreeMap;
use std::time::Duration;

use super::AgentInfo;

/// Most disconnected rows kept (the oldest go first): reconnects under
/// new ids cannot grow the registry without bound.
pub const MAX_DISCONNECTED: usize = 1_000;
/// Longest agent id, in characters.
pub const MAX_AGENT_ID: usize = 128;
/// Longest agent version, in characters.
pub const MAX_AGENT_VERSION: usize = 64;

/// A field's rule when an agent's registration breaks it.
pub fn check_text(field: &str, value: &str, max: usize) -> Result<(), String> {
    if value.is_empty() || value.chars().count() > max {
        return Err(format!("{field}: must be 1 to {max} characters"));
    }
    if value
        .chars()
        .any(|c| c.is_control() || gslb_shared::validate::invisible(c))
    {
        return Err(format!(
            "{field}: must not hold control, bidirectional or zero-width characters"
        ));
    }
    Ok(())
}

/// Length of the window over which an agent's result rate is measured.
pub const RATE_WINDOW_MS: u64 = 10_000;

/// Results received from an agent and their rate over the last completed
/// [`RATE_WINDOW_MS`] window (a rate from whole windows does not jump with
/// each batch).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Rate {
    /// Results received since the stream registered.
    pub total: u64,
    window_start_ms: u64,
    window_start_total: u64,
    per_second: f64,
}

impl Rate {
    /// A rate that starts counting at `now_ms`.
    pub fn starting(now_ms: u64) -> Self {
        Self {
            window_start_ms: now_ms,
            ..Self::default()
        }
    }

    /// `n` results arrived at `now_ms`.
    pub fn add(&mut self, n: u64, now_ms: u64) {
        self.total += n;
        let elapsed = now_ms.saturating_sub(self.window_start_ms);
        if elapsed >= RATE_WINDOW_MS {
            self.per_second =
                (self.total - self.window_start_total) as f64 * 1000.0 / elapsed as f64;
            self.window_start_ms = now_ms;
            self.window_start_total = self.total;
        }
    }

    /// Results per second at `now_ms`: the last completed window's, or 0
    /// once no batch arrived for two windows.
    pub fn per_second(&self, now_ms: u64) -> f64 {
        if now_ms.saturating_sub(self.window_start_ms) >= 2 * RATE_WINDOW_MS {
            0.0
        } else {
            self.per_second
        }
    }
}

/// Agents by id.
#[derive(Debug, Default)]
pub struct Registry {
    rows: BTreeMap<String, AgentInfo>,
    next_stream: u64,
}

impl Registry {
    /// A stream registered `info`; returns the stream's number.
    pub fn connect(&mut self, mut info: AgentInfo) -> u64 {
        self.next_stream += 1;
        info.stream = self.next_stream;
        info.connected = true;
        self.rows.insert(info.agent_id.clone(), info);
        self.next_stream
    }

    /// Stream `stream` of `agent_id` ended at `now_ms`; a row taken over
    /// by a newer stream stays connected.
    pub fn disconnect(&mut self, agent_id: &str, stream: u64, now_ms: u64) {
        if let Some(row) = self.rows.get_mut(agent_id)
            && row.stream == stream
        {
            row.connected = false;
            row.last_seen_ms = now_ms;
        }
    }

    /// The row of `agent_id` if `stream` still owns it.
    pub fn owned(&mut self, agent_id: &str, stream: u64) -> Option<&mut AgentInfo> {
        self.rows.get_mut(agent_id).filter(|r| r.stream == stream)
    }

    /// Drop disconnected rows older than `retention`, then the oldest
    /// disconnected ones beyond [`MAX_DISCONNECTED`].
    pub fn evict(&mut self, now_ms: u64, retention: Duration) {
        let horizon = now_ms.saturating_sub(retention.as_millis() as u64);
        self.rows
            .retain(|_, r| r.connected || r.last_seen_ms >= horizon);
        let mut gone: Vec<(u64, String)> = self
            .rows
            .values()
            .filter(|r| !r.connected)
            .map(|r| (r.last_seen_ms, r.agent_id.clone()))
            .collect();
        if gone.len() > MAX_DISCONNECTED {
            gone.sort_unstable();
            for (_, id) in &gone[..gone.len() - MAX_DISCONNECTED] {
                self.rows.remove(id);
            }
        }
    }

    /// Every row, by id.
    pub fn rows(&self) -> impl Iterator<Item = &AgentInfo> {
        self.rows.values()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gslb_shared::LocationId;

    fn info(id: &str) -> AgentInfo {
        AgentInfo {
            agent_id: id.into(),
            location: LocationId::new("fra1"),
            region: "eu".into(),
            version: "1".into(),
            last_seen_ms: 0,
            connected: false,
            assignments: 0,
            stream: 0,
            connected_since_ms: 0,
            results: Rate::default(),
        }
    }

    #[test]
    fn the_rate_is_the_last_whole_windows() {
        let mut rate = Rate::starting(1_000);
        rate.add(500, 2_000);
        assert_eq!(rate.per_second(2_000), 0.0, "no window completed yet");
        rate.add(500, 11_000);
        assert_eq!(rate.per_second(11_000), 100.0);
        rate.add(5_000, 12_000);
        assert_eq!(
            rate.per_second(12_000),
            100.0,
            "the window under way does not count yet"
        );
        assert_eq!(rate.total, 6_000);
        assert_eq!(rate.per_second(31_000), 0.0, "silent for two windows");
    }

    #[test]
    fn an_old_streams_end_does_not_disconnect_a_newer_one() {
        let mut r = Registry::default();
        let old = r.connect(info("a"));
        let new = r.connect(info("a"));
        r.disconnect("a", old, 5);
        assert!(r.rows().all(|x| x.connected));
        r.disconnect("a", new, 6);
        assert!(r.rows().all(|x| !x.connected));
    }

    #[test]
    fn disconnected_rows_expire_and_are_capped() {
        let mut r = Registry::default();
        for i in 0..(MAX_DISCONNECTED + 500) {
            let id = format!("agent-{i}");
            let s = r.connect(info(&id));
            r.disconnect(&id, s, i as u64);
        }
        let live = r.connect(info("live"));
        r.evict(2_000, Duration::from_secs(3600));
        assert_eq!(r.rows().count(), MAX_DISCONNECTED + 1);
        assert!(r.rows().any(|x| x.agent_id == "agent-1499"));
        assert!(!r.rows().any(|x| x.agent_id == "agent-0"));
        r.evict(10_000_000, Duration::from_secs(1));
        assert_eq!(r.rows().count(), 1, "only the connected one is left");
        assert!(r.owned("live", live).is_some());
    }

    #[test]
    fn registration_text_is_bounded_and_visible() {
        assert!(check_text("agentId", "fra1-a", MAX_AGENT_ID).is_ok());
        assert!(check_text("agentId", "", MAX_AGENT_ID).is_err());
        assert!(check_text("agentId", &"x".repeat(65_536), MAX_AGENT_ID).is_err());
        assert!(check_text("version", "1\u{202e}", MAX_AGENT_VERSION).is_err());
        assert!(check_text("version", "1\n", MAX_AGENT_VERSION).is_err());
    }
}
