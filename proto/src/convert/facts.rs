//! Health and member facts.

use gslb_shared::validate::ValidationError;
use gslb_shared::{Health, MemberFacts, MemberId};

use super::bad;
use crate::pb;

/// Domain health as the proto enum.
pub fn health_to_pb(h: Health) -> pb::Health {
    match h {
        Health::Up => pb::Health::Up,
        Health::Down => pb::Health::Down,
        Health::Unknown => pb::Health::Unknown,
    }
}

/// A proto health value; `UNSPECIFIED` is `None` (e.g. "clear the override").
pub fn health_from_pb(field: &str, value: i32) -> Result<Option<Health>, ValidationError> {
    match pb::Health::try_from(value) {
        Ok(pb::Health::Unspecified) => Ok(None),
        Ok(pb::Health::Up) => Ok(Some(Health::Up)),
        Ok(pb::Health::Down) => Ok(Some(Health::Down)),
        Ok(pb::Health::Unknown) => Ok(Some(Health::Unknown)),
        Err(_) => Err(bad(field, "must be up, down or unknown")),
    }
}

/// A slow-start step from the wire: 0 is the full weight.
pub fn ramp_from_pb(percent: u32) -> Result<Option<u8>, ValidationError> {
    match percent {
        0 => Ok(None),
        p @ 1..=99 => Ok(Some(p as u8)),
        _ => Err(bad("rampPercent", "must be 0 (full weight) or 1 to 99")),
    }
}

impl From<(MemberId, MemberFacts)> for pb::MemberFacts {
    fn from((id, f): (MemberId, MemberFacts)) -> Self {
        pb::MemberFacts {
            member_id: id.0,
            health: health_to_pb(f.health) as i32,
            warming: f.warming,
            ramp_percent: f.ramp.map_or(0, u32::from),
        }
    }
}

impl TryFrom<pb::MemberFacts> for (MemberId, MemberFacts) {
    type Error = ValidationError;

    fn try_from(f: pb::MemberFacts) -> Result<Self, Self::Error> {
        let health =
            health_from_pb("health", f.health)?.ok_or_else(|| bad("health", "is required"))?;
        let ramp = ramp_from_pb(f.ramp_percent)?;
        Ok((
            MemberId(f.member_id),
            MemberFacts {
                health,
                warming: f.warming,
                ramp,
            },
        ))
    }
}
