//! Agent assignments and their keys.

use std::sync::Arc;
use std::time::Duration;

use gslb_shared::assignment::{Assignment, Offered, TargetKey};
use gslb_shared::validate::{self, ValidationError};
use gslb_shared::{Check, CheckId, MemberId};

use super::bad;
use crate::pb;

/// The cadence of an assignment whose check is missing: its invalid-target
/// reports still need one.
const MISSING_CHECK_INTERVAL: Duration = Duration::from_secs(10);

impl From<&Assignment> for pb::Assignment {
    fn from(a: &Assignment) -> Self {
        pb::Assignment {
            member_id: a.member.0,
            check_id: a.check.id.0,
            address: a.address.to_string(),
            port: u32::from(a.port),
            check: Some(pb::Check::from(a.check.as_ref())),
        }
    }
}

impl From<TargetKey> for pb::AssignmentKey {
    fn from(k: TargetKey) -> Self {
        pb::AssignmentKey {
            member_id: k.member.0,
            check_id: k.check.0,
        }
    }
}

impl From<&pb::AssignmentKey> for TargetKey {
    fn from(k: &pb::AssignmentKey) -> Self {
        TargetKey {
            member: MemberId(k.member_id),
            check: CheckId(k.check_id),
        }
    }
}

impl From<&pb::Assignment> for Offered {
    fn from(a: &pb::Assignment) -> Self {
        let key = TargetKey {
            member: MemberId(a.member_id),
            check: CheckId(a.check_id),
        };
        let interval = a.check.as_ref().map_or(MISSING_CHECK_INTERVAL, |c| {
            Duration::from_millis(c.interval_ms)
        });
        Offered {
            key,
            interval,
            assignment: assignment_from_pb(a),
        }
    }
}

fn assignment_from_pb(a: &pb::Assignment) -> Result<Assignment, ValidationError> {
    let check = a.check.clone().ok_or_else(|| bad("check", "is missing"))?;
    let check = Check::try_from(check)?;
    let address = validate::plain_ip(&a.address).map_err(|e| bad("address", e.to_string()))?;
    let port = u16::try_from(a.port)
        .ok()
        .filter(|p| *p != 0)
        .ok_or_else(|| bad("port", "must be between 1 and 65535"))?;
    Ok(Assignment {
        member: MemberId(a.member_id),
        address,
        port,
        check: Arc::new(check),
    })
}
