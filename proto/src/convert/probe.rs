//! Probe results.

use gslb_shared::validate::ValidationError;
use gslb_shared::{CheckId, FailReason, MemberId, ProbeResult};

use super::bad;
use crate::pb;

/// A failure reason as the proto enum (`None` = passed = UNSPECIFIED).
pub fn fail_reason_to_pb(reason: Option<FailReason>) -> pb::FailReason {
    match reason {
        None => pb::FailReason::Unspecified,
        Some(FailReason::Timeout) => pb::FailReason::Timeout,
        Some(FailReason::Refused) => pb::FailReason::Refused,
        Some(FailReason::Reset) => pb::FailReason::Reset,
        Some(FailReason::Unreachable) => pb::FailReason::Unreachable,
        Some(FailReason::Tls) => pb::FailReason::Tls,
        Some(FailReason::Status) => pb::FailReason::Status,
        Some(FailReason::BodyMismatch) => pb::FailReason::BodyMismatch,
        Some(FailReason::Protocol) => pb::FailReason::Protocol,
        Some(FailReason::InvalidTarget) => pb::FailReason::InvalidTarget,
        Some(FailReason::DeniedDestination) => pb::FailReason::DeniedDestination,
        Some(FailReason::Resolve) => pb::FailReason::Resolve,
        Some(FailReason::Slow) => pb::FailReason::Slow,
        Some(FailReason::Inverted) => pb::FailReason::Inverted,
        Some(FailReason::Other) => pb::FailReason::Other,
    }
}

/// A proto failure reason; an unknown value is an error, not a pass.
pub fn fail_reason_from_pb(value: i32) -> Result<Option<FailReason>, ValidationError> {
    Ok(
        match pb::FailReason::try_from(value)
            .map_err(|_| bad("failure", "is not a known failure reason"))?
        {
            pb::FailReason::Unspecified => None,
            pb::FailReason::Timeout => Some(FailReason::Timeout),
            pb::FailReason::Refused => Some(FailReason::Refused),
            pb::FailReason::Reset => Some(FailReason::Reset),
            pb::FailReason::Unreachable => Some(FailReason::Unreachable),
            pb::FailReason::Tls => Some(FailReason::Tls),
            pb::FailReason::Status => Some(FailReason::Status),
            pb::FailReason::BodyMismatch => Some(FailReason::BodyMismatch),
            pb::FailReason::Protocol => Some(FailReason::Protocol),
            pb::FailReason::InvalidTarget => Some(FailReason::InvalidTarget),
            pb::FailReason::DeniedDestination => Some(FailReason::DeniedDestination),
            pb::FailReason::Resolve => Some(FailReason::Resolve),
            pb::FailReason::Slow => Some(FailReason::Slow),
            pb::FailReason::Inverted => Some(FailReason::Inverted),
            pb::FailReason::Other => Some(FailReason::Other),
        },
    )
}

impl From<&ProbeResult> for pb::ProbeResult {
    fn from(r: &ProbeResult) -> Self {
        pb::ProbeResult {
            member_id: r.member.0,
            check_id: r.check.0,
            cycle: r.cycle,
            failure: fail_reason_to_pb(r.failure) as i32,
            latency_us: r.latency_us,
            detail: String::new(),
        }
    }
}

impl TryFrom<&pb::ProbeResult> for ProbeResult {
    type Error = ValidationError;

    fn try_from(r: &pb::ProbeResult) -> Result<Self, Self::Error> {
        Ok(ProbeResult {
            member: MemberId(r.member_id),
            check: CheckId(r.check_id),
            cycle: r.cycle,
            failure: fail_reason_from_pb(r.failure)?,
            latency_us: r.latency_us,
        })
    }
}
