//! What a probe location runs: one assignment per (member, check) target,
//! as the aggregator computes them and an agent schedules them.

use std::sync::Arc;
use std::time::Duration;

use crate::validate::ValidationError;
use crate::{Check, CheckId, MemberAddress, MemberId};

/// A (member, check) target id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TargetKey {
    /// Member.
    pub member: MemberId,
    /// Check.
    pub check: CheckId,
}

/// One target for one location.
#[derive(Debug, Clone, PartialEq)]
pub struct Assignment {
    /// Member probed.
    pub member: MemberId,
    /// Its member address or hostname (the check may name another probe
    /// address).
    pub address: MemberAddress,
    /// The member's port (the check may override it).
    pub port: u16,
    /// The check to run (shared: one location may hold 100,000 targets of
    /// one check).
    pub check: Arc<Check>,
}

impl Assignment {
    /// Its target id.
    pub fn key(&self) -> TargetKey {
        TargetKey {
            member: self.member,
            check: self.check.id,
        }
    }
}

/// An assignment as an agent received it: its key and cadence even when
/// the rest is not a valid assignment, so the agent can report it (an
/// invalid-target result every cycle, and a rejection naming the field).
#[derive(Debug, Clone, PartialEq)]
pub struct Offered {
    /// The target.
    pub key: TargetKey,
    /// How often it is due (from the check, even an invalid one).
    pub interval: Duration,
    /// The assignment, or why it is not one.
    pub assignment: Result<Assignment, ValidationError>,
}
