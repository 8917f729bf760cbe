//! What the engine decides: facts to publish, and log entries that say why.

use gslb_shared::{FailReason, Health, LocationId, MemberFacts, MemberId, Rtts};
use serde::{Deserialize, Serialize};

use super::Timestamp;

/// One decision of the engine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    tag = "kind"
)]
pub enum Output {
    /// The facts selection reads changed for a member: publish them.
    Facts {
        /// Member.
        member: MemberId,
        /// New facts.
        facts: MemberFacts,
    },
    /// A member's round-trip times moved (latency steering): publish them.
    /// An empty table: no location measures it any more.
    Rtt {
        /// Member.
        member: MemberId,
        /// Its published times, sorted by location.
        rtt: Rtts,
    },
    /// A health transition, for the health log.
    Transition(Transition),
    /// The warm-up gate opened or restarted, for the health log.
    Warmup {
        /// Member.
        member: MemberId,
        /// When.
        at: Timestamp,
        /// Opened or restarted.
        event: WarmupEvent,
        /// Consecutive passes at that moment.
        passes: u32,
        /// The member's threshold.
        threshold: u32,
    },
    /// An ephemeral member missed heartbeats for its delete timeout: remove it.
    Expired {
        /// Member.
        member: MemberId,
        /// When.
        at: Timestamp,
    },
    /// A location was set aside as a broken vantage point, or counts again.
    Quarantine {
        /// Location.
        location: LocationId,
        /// When.
        at: Timestamp,
        /// True when entering quarantine.
        quarantined: bool,
    },
    /// The startup gate opened: decisions are made from now on.
    StartupGateOpened {
        /// When.
        at: Timestamp,
    },
}

/// A warm-up gate event.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum WarmupEvent {
    /// The threshold was reached; the member enters rotation.
    Opened,
    /// The gate closed again (re-enabled, or down with `rewarmAfterDown`).
    Restarted,
}

/// A change of a member's health with the evidence behind it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Transition {
    /// Member.
    pub member: MemberId,
    /// When it was decided.
    pub at: Timestamp,
    /// Previous health.
    pub from: Health,
    /// New health.
    pub to: Health,
    /// Why.
    pub reason: Reason,
    /// The cycle whose close decided it, for quorum decisions.
    pub cycle: Option<u64>,
    /// Per-location results of that cycle.
    pub evidence: Vec<Evidence>,
}

impl Transition {
    /// A transition decided by something other than a closed cycle (manual
    /// health, heartbeats, damping release, configuration): no evidence.
    pub fn without_evidence(
        member: MemberId,
        at: Timestamp,
        from: Health,
        to: Health,
        reason: Reason,
    ) -> Self {
        Self {
            member,
            at,
            from,
            to,
            reason,
            cycle: None,
            evidence: Vec::new(),
        }
    }
}

/// Why a transition happened.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    tag = "kind"
)]
pub enum Reason {
    /// The score crossed `rise` or `fall`.
    Quorum {
        /// Score after the cycle.
        score: f64,
        /// Pass fraction of the cycle itself.
        pass_fraction: f64,
        /// The check's rise.
        rise: f64,
        /// The check's fall.
        fall: f64,
    },
    /// Flap damping released a member whose score was already above rise.
    DampingReleased {
        /// Score at release.
        score: f64,
    },
    /// A heartbeat arrived.
    Heartbeat,
    /// No heartbeat within the timeout.
    HeartbeatTimeout {
        /// Milliseconds since the last heartbeat.
        silent_ms: u64,
    },
    /// An operator set the health.
    Manual,
    /// Configuration changed who owns the health (check added or removed).
    Config,
}

/// One location's part in a decision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Evidence {
    /// Location.
    pub location: LocationId,
    /// What it contributed.
    pub outcome: EvidenceOutcome,
    /// Probe latency (0 without a result).
    pub latency_us: u32,
}

/// What a location contributed to a cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    tag = "result"
)]
pub enum EvidenceOutcome {
    /// Passed.
    Pass,
    /// Failed, with the reason.
    Fail {
        /// Why.
        reason: FailReason,
    },
    /// Reported, but the location is quarantined: set aside.
    Quarantined {
        /// Whether its probe passed.
        passed: bool,
    },
    /// Did not report this cycle (late, or not probing).
    Missing,
    /// Has not reported for two cycles: counted neither way.
    Stale,
}
