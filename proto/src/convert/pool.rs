//! Pools.

use gslb_shared::validate::ValidationError;
use gslb_shared::{CheckId, FailMode, Pool, PoolId};

use super::{bad, ip};
use crate::pb;

impl From<&Pool> for pb::Pool {
    fn from(p: &Pool) -> Self {
        pb::Pool {
            // Views set the revision; requests read the precondition and mask.
            revision: 0,
            expected_revision: 0,
            update_mask: None,
            id: p.id.0,
            name: p.name.clone(),
            check_id: p.check.map(|c| c.0),
            min_healthy: p.min_healthy,
            protect_threshold: p.protect_threshold,
            fail_mode: match p.fail_mode {
                FailMode::Open => pb::FailMode::Open,
                FailMode::Closed => pb::FailMode::Closed,
                FailMode::Static => pb::FailMode::Static,
            } as i32,
            fallback: p.fallback.iter().map(ToString::to_string).collect(),
            slow_start_ms: p.slow_start.map(|d| d.as_millis() as u64),
        }
    }
}

impl TryFrom<pb::Pool> for Pool {
    type Error = ValidationError;

    fn try_from(p: pb::Pool) -> Result<Self, Self::Error> {
        Ok(Pool {
            id: PoolId(p.id),
            name: p.name,
            check: p.check_id.map(CheckId),
            min_healthy: p.min_healthy,
            protect_threshold: p.protect_threshold,
            fail_mode: match pb::FailMode::try_from(p.fail_mode) {
                Ok(pb::FailMode::Open) => FailMode::Open,
                Ok(pb::FailMode::Closed) => FailMode::Closed,
                Ok(pb::FailMode::Static) => FailMode::Static,
                _ => return Err(bad("failMode", "must be open, closed or static")),
            },
            fallback: p
                .fallback
                .iter()
                .enumerate()
                .map(|(i, a)| ip(&format!("fallback[{i}]"), a))
                .collect::<Result<_, _>>()?,
            slow_start: p.slow_start_ms.map(std::time::Duration::from_millis),
        })
    }
}
