//! Status views ↔ protobuf: the one place gRPC's status messages are built
//! and read, and the JSON names of their enums (REST and gslbctl).

use gslb_shared::status::{
    ExplainClientView, LocationStatusView, MemberStatusView, PoolStatusView,
};
use gslb_shared::validate::ValidationError;
use serde_json::{Value, json};

use super::{fail_reason_from_pb, fail_reason_to_pb, health_from_pb, health_to_pb};
use crate::pb;

impl From<ExplainClientView> for pb::ExplainClient {
    fn from(c: ExplainClientView) -> Self {
        pb::ExplainClient {
            asked: c.asked,
            region: c.region,
            region_from: c.region_from,
            prefix_len: u32::from(c.prefix_len),
            country: c.country,
            continent: c.continent,
            subdivision: c.subdivision,
            asn: c.asn,
            files: c.files,
            note: c.note,
        }
    }
}

impl From<pb::ExplainClient> for ExplainClientView {
    fn from(c: pb::ExplainClient) -> Self {
        ExplainClientView {
            asked: c.asked,
            region: c.region,
            region_from: c.region_from,
            // A prefix is at most 128 bits long.
            prefix_len: u8::try_from(c.prefix_len.min(128)).unwrap_or(128),
            country: c.country,
            continent: c.continent,
            subdivision: c.subdivision,
            asn: c.asn,
            files: c.files,
            note: c.note,
        }
    }
}

impl From<&MemberStatusView> for pb::MemberStatus {
    fn from(s: &MemberStatusView) -> Self {
        pb::MemberStatus {
            member_id: s.member_id,
            enabled: s.enabled,
            healthy: s.healthy,
            health: health_to_pb(s.health) as i32,
            score: s.score,
            warming: s.warming,
            warmup_passes: s.warmup_passes,
            warmup_threshold: s.warmup_threshold,
            protected: s.protected,
            fail_open: s.fail_open,
            manual: s.manual.map_or(0, |h| health_to_pb(h) as i32),
            suppressed: s.suppressed,
            since_ms: s.since_ms,
            locations: s
                .locations
                .iter()
                .map(|l| pb::LocationResult {
                    location: l.location.clone(),
                    cycle: l.cycle,
                    failure: fail_reason_to_pb(l.failure) as i32,
                    latency_us: l.latency_us,
                    stale: l.stale,
                    quarantined: l.quarantined,
                    rtt_us: l.rtt_us.unwrap_or(0),
                    received_ms: l.received_ms.unwrap_or(0),
                })
                .collect(),
            decisions_paused: s.decisions_paused,
            ramp_percent: s.ramp.map_or(0, u32::from),
        }
    }
}

impl TryFrom<&pb::MemberStatus> for MemberStatusView {
    type Error = ValidationError;

    fn try_from(s: &pb::MemberStatus) -> Result<Self, ValidationError> {
        Ok(MemberStatusView {
            member_id: s.member_id,
            enabled: s.enabled,
            state: gslb_shared::status::MemberState::Unknown,
            label: String::new(),
            gate: None,
            healthy: s.healthy,
            health: health_from_pb("health", s.health)?.unwrap_or_default(),
            score: s.score,
            warming: s.warming,
            warmup_passes: s.warmup_passes,
            warmup_threshold: s.warmup_threshold,
            protected: s.protected,
            fail_open: s.fail_open,
            manual: health_from_pb("manual", s.manual)?,
            suppressed: s.suppressed,
            since_ms: s.since_ms,
            decisions_paused: s.decisions_paused,
            ramp: super::ramp_from_pb(s.ramp_percent)?,
            locations: s
                .locations
                .iter()
                .map(|l| {
                    let failure = fail_reason_from_pb(l.failure)?;
                    Ok(LocationStatusView {
                        location: l.location.clone(),
                        cycle: l.cycle,
                        passed: failure.is_none(),
                        failure,
                        latency_us: l.latency_us,
                        received_ms: (l.received_ms > 0).then_some(l.received_ms),
                        rtt_us: (l.rtt_us > 0).then_some(l.rtt_us),
                        stale: l.stale,
                        quarantined: l.quarantined,
                    })
                })
                .collect::<Result<_, ValidationError>>()?,
        }
        .name_state())
    }
}

impl From<&PoolStatusView> for pb::PoolStatus {
    fn from(s: &PoolStatusView) -> Self {
        pb::PoolStatus {
            pool_id: s.pool_id,
            eligible: s.eligible,
            protected: s.protected,
            fail_open: s.fail_open,
            members: s.members.iter().map(Into::into).collect(),
            decisions_paused: s.decisions_paused,
        }
    }
}

impl TryFrom<&pb::PoolStatus> for PoolStatusView {
    type Error = ValidationError;

    fn try_from(s: &pb::PoolStatus) -> Result<Self, ValidationError> {
        Ok(PoolStatusView {
            pool_id: s.pool_id,
            eligible: s.eligible,
            protected: s.protected,
            fail_open: s.fail_open,
            decisions_paused: s.decisions_paused,
            members: s
                .members
                .iter()
                .map(TryFrom::try_from)
                .collect::<Result<_, _>>()?,
        })
    }
}
/// A proto health as its lower-case name.
pub fn health_name(value: i32) -> Value {
    match pb::Health::try_from(value) {
        Ok(pb::Health::Up) => json!("up"),
        Ok(pb::Health::Down) => json!("down"),
        Ok(pb::Health::Unknown) => json!("unknown"),
        _ => Value::Null,
    }
}

/// A proto failure reason as its kebab-case name.
pub fn failure_name(value: i32) -> Value {
    match fail_reason_from_pb(value) {
        Ok(Some(reason)) => json!(reason.as_str()),
        _ => Value::Null,
    }
}

/// The operator's decision hold as JSON (REST and `gslbctl -o json`).
pub fn decisions_json(paused_since_ms: u64, pools: &[pb::PausedPool]) -> Value {
    json!({
        "paused": paused_since_ms != 0,
        "pausedSinceMs": (paused_since_ms != 0).then_some(paused_since_ms),
        "pools": pools.iter().map(|p| json!({"poolId": p.pool_id, "sinceMs": p.since_ms})).collect::<Vec<_>>(),
    })
}
