//! Status views: a member's and a pool's health as every API shows them
//! (seed 000's fields plus protection, fail-open and the operator's hold).
//! REST serialises these; gRPC converts them (`gslb_proto::convert`), and
//! gslbctl converts back and renders them.

use serde::{Deserialize, Serialize};

use crate::{FailReason, Health};

/// A member's state as every view names it (seed 000's labels). Health
/// decides first: a member failing its checks is `unhealthy` even while
/// its warm-up gate is closed; `warming` is for a member in the gate
/// that is not failing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum MemberState {
    /// Up and in rotation (green).
    Healthy,
    /// In the warm-up gate and not failing (amber `warming X/N`).
    Warming,
    /// Failing its checks (red), whatever its gate.
    Unhealthy,
    /// Switched off by an operator (grey).
    Disabled,
    /// No decision yet.
    Unknown,
}

impl MemberState {
    /// The state of a member `enabled` or not, with `health` and its gate
    /// closed (`warming`) or open.
    pub fn of(enabled: bool, health: Health, warming: bool) -> MemberState {
        match (enabled, health, warming) {
            (false, _, _) => MemberState::Disabled,
            (true, Health::Down, _) => MemberState::Unhealthy,
            (true, _, true) => MemberState::Warming,
            (true, Health::Up, false) => MemberState::Healthy,
            (true, Health::Unknown, false) => MemberState::Unknown,
        }
    }

    /// The word for it (`warming` without its count).
    pub fn word(self) -> &'static str {
        match self {
            MemberState::Healthy => "healthy",
            MemberState::Warming => "warming",
            MemberState::Unhealthy => "unhealthy",
            MemberState::Disabled => "disabled",
            MemberState::Unknown => "unknown",
        }
    }

    /// Seed 000's label: `warming X/N` with the gate's `passes` of
    /// `threshold`, else the word.
    pub fn label(self, passes: u32, threshold: u32) -> String {
        match self {
            MemberState::Warming => format!("warming {passes}/{threshold}"),
            other => other.word().to_owned(),
        }
    }

    /// The secondary mark of an `unhealthy` member whose gate is closed
    /// (`warming 0/3`): what it must pass once it stops failing.
    pub fn gate_mark(self, warming: bool, passes: u32, threshold: u32) -> Option<String> {
        (self == MemberState::Unhealthy && warming)
            .then(|| MemberState::Warming.label(passes, threshold))
    }
}

/// One member's health.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberStatusView {
    /// Member id.
    pub member_id: u64,
    /// Whether an operator has it enabled.
    pub enabled: bool,
    /// Its state, health first ([`MemberState::of`]).
    pub state: MemberState,
    /// Seed 000's label (`healthy`, `unhealthy`, `warming X/N`, ...).
    pub label: String,
    /// Beside `unhealthy`, the closed gate's `warming X/N`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gate: Option<String>,
    /// Up (what selection counts as healthy).
    pub healthy: bool,
    /// Effective health.
    pub health: Health,
    /// Mean pass fraction over the score window, once there is data.
    pub score: Option<f64>,
    /// Held back by its warm-up gate.
    pub warming: bool,
    /// Consecutive passing cycles counted by the gate.
    pub warmup_passes: u32,
    /// The gate's threshold.
    pub warmup_threshold: u32,
    /// Its pool is under protection (seed 004).
    pub protected: bool,
    /// Its pool fails open.
    pub fail_open: bool,
    /// An operator's manual health, if set.
    pub manual: Option<Health>,
    /// Held down by flap damping.
    pub suppressed: bool,
    /// When its health last changed (ms since the Unix epoch).
    pub since_ms: u64,
    /// An operator has paused health decisions for its pool.
    pub decisions_paused: bool,
    /// In slow start: the percent of its weight it takes now.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp: Option<u8>,
    /// The latest result per location.
    pub locations: Vec<LocationStatusView>,
}

impl MemberStatusView {
    /// Set `state`, `label` and `gate` from the other fields.
    pub fn name_state(mut self) -> Self {
        self.state = MemberState::of(self.enabled, self.health, self.warming);
        self.label = self.state.label(self.warmup_passes, self.warmup_threshold);
        self.gate = self
            .state
            .gate_mark(self.warming, self.warmup_passes, self.warmup_threshold);
        self
    }
}

/// One location's latest result for a member.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LocationStatusView {
    /// Location.
    pub location: String,
    /// Cycle of the result.
    pub cycle: u64,
    /// Passed.
    pub passed: bool,
    /// Why it failed.
    pub failure: Option<FailReason>,
    /// Probe latency.
    pub latency_us: u32,
    /// When the aggregator received it (ms since the Unix epoch): the
    /// result's age, where `cycle` gives only its schedule.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub received_ms: Option<u64>,
    /// The smoothed round-trip time published for latency steering.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt_us: Option<u32>,
    /// Not heard for two cycles.
    pub stale: bool,
    /// The location is quarantined.
    pub quarantined: bool,
}

/// A pool's flags with each member's status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolStatusView {
    /// Pool id.
    pub pool_id: u64,
    /// Selection may answer from it.
    pub eligible: bool,
    /// Protection is on.
    pub protected: bool,
    /// It fails open.
    pub fail_open: bool,
    /// An operator has paused health decisions for it.
    pub decisions_paused: bool,
    /// Its members, in id order.
    pub members: Vec<MemberStatusView>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn health_decides_before_the_gate() {
        use MemberState as S;
        for (enabled, health, warming, state, label, gate) in [
            (false, Health::Down, true, S::Disabled, "disabled", None),
            (
                true,
                Health::Down,
                true,
                S::Unhealthy,
                "unhealthy",
                Some("warming 0/3"),
            ),
            (true, Health::Down, false, S::Unhealthy, "unhealthy", None),
            (true, Health::Up, true, S::Warming, "warming 0/3", None),
            (true, Health::Unknown, true, S::Warming, "warming 0/3", None),
            (true, Health::Up, false, S::Healthy, "healthy", None),
            (true, Health::Unknown, false, S::Unknown, "unknown", None),
        ] {
            let s = MemberState::of(enabled, health, warming);
            assert_eq!(s, state, "{enabled} {health:?} {warming}");
            assert_eq!(s.label(0, 3), label);
            assert_eq!(s.gate_mark(warming, 0, 3).as_deref(), gate);
        }
    }
}

/// The client of an explain as selection saw it: the region used and where
/// it came from, what the MaxMind files say, the files, and one sentence.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExplainClientView {
    /// The client as asked: a region or an address ("" for none).
    pub asked: String,
    /// The region selection used ("" for none).
    pub region: String,
    /// Where that region came from: `asked`, `geo-file` or "" (none).
    pub region_from: String,
    /// The geo-file prefix length that matched.
    pub prefix_len: u8,
    /// What the MaxMind files say ("" where they do not).
    pub country: String,
    /// Continent code.
    pub continent: String,
    /// Subdivision code.
    pub subdivision: String,
    /// Autonomous system number (0: unknown).
    pub asn: u32,
    /// The files the aggregator placed the client with.
    pub files: Vec<String>,
    /// What placed the client, or why it could not be placed.
    pub note: String,
}
