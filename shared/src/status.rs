//! Status views: a member's and a pool's health as every API shows them
//! (seed 000's fields plus protection, fail-open and the operator's hold).
//! REST serialises these; gRPC converts them (`gslb_proto::convert`), and
//! gslbctl converts back and renders them.

use serde::{Deserialize, Serialize};

use crate::{FailReason, Health};

/// One member's health.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberStatusView {
    /// Member id.
    pub member_id: u64,
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
