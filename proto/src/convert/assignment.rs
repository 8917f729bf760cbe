//! Agent assignments and their keys. A set or delta goes to an agent in
//! one of two forms: every assignment with its check inline, or (for an
//! agent registered with `checks_by_id`) each check once in the message's
//! `checks` and assignments naming it by id, which keeps a location with
//! 100,000 targets of one check from carrying that check 100,000 times.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use gslb_shared::assignment::{Assignment, Offered, TargetKey};
use gslb_shared::validate::ValidationError;
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
        let check = a
            .check
            .as_ref()
            .map(|c| (c, Check::try_from(c.clone()).map(Arc::new)));
        offered(a, check)
    }
}

/// Assignments as sent to an agent: with each check inline, or (`by_id`)
/// naming their checks, which are listed once in the second vector.
pub fn assignments_to_pb<'a>(
    assignments: impl IntoIterator<Item = &'a Assignment>,
    by_id: bool,
) -> (Vec<pb::Assignment>, Vec<pb::Check>) {
    let mut checks: HashMap<CheckId, pb::Check> = HashMap::new();
    let mut out = Vec::new();
    for a in assignments {
        let mut wire = pb::Assignment {
            member_id: a.member.0,
            check_id: a.check.id.0,
            address: a.address.to_string(),
            port: u32::from(a.port),
            check: None,
        };
        if by_id {
            checks
                .entry(a.check.id)
                .or_insert_with(|| pb::Check::from(a.check.as_ref()));
        } else {
            wire.check = Some(pb::Check::from(a.check.as_ref()));
        }
        out.push(wire);
    }
    let mut checks: Vec<pb::Check> = checks.into_values().collect();
    checks.sort_by_key(|c| c.id);
    (out, checks)
}

/// What an agent is offered by `assignments` and the message's `checks`:
/// each check is decoded once and shared by the targets that run it.
pub fn offers_from_pb(assignments: &[pb::Assignment], checks: &[pb::Check]) -> Vec<Offered> {
    type Decoded<'a> = (&'a pb::Check, Result<Arc<Check>, ValidationError>);
    let listed: HashMap<u64, Decoded<'_>> = checks
        .iter()
        .map(|c| (c.id, (c, Check::try_from(c.clone()).map(Arc::new))))
        .collect();
    assignments
        .iter()
        .map(|a| match &a.check {
            Some(_) => Offered::from(a),
            None => offered(a, listed.get(&a.check_id).map(|(c, d)| (*c, d.clone()))),
        })
        .collect()
}

/// The offer of `a` with its check (as sent, and decoded), if it has one.
fn offered(
    a: &pb::Assignment,
    check: Option<(&pb::Check, Result<Arc<Check>, ValidationError>)>,
) -> Offered {
    let key = TargetKey {
        member: MemberId(a.member_id),
        check: CheckId(a.check_id),
    };
    let interval = check.as_ref().map_or(MISSING_CHECK_INTERVAL, |(c, _)| {
        Duration::from_millis(c.interval_ms)
    });
    let assignment = match check {
        None => Err(bad("check", "is missing")),
        Some((_, decoded)) => decoded.and_then(|check| assignment_from_pb(a, check)),
    };
    Offered {
        key,
        interval,
        assignment,
    }
}

fn assignment_from_pb(
    a: &pb::Assignment,
    check: Arc<Check>,
) -> Result<Assignment, ValidationError> {
    let address = super::member_address("address", &a.address)?;
    let port = u16::try_from(a.port)
        .ok()
        .filter(|p| *p != 0)
        .ok_or_else(|| bad("port", "must be between 1 and 65535"))?;
    Ok(Assignment {
        member: MemberId(a.member_id),
        address,
        port,
        check,
    })
}
