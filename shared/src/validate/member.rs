//! Member rules.

use std::time::Duration;

use super::error::{Findings, ValidationError, in_range};
use super::text::human_name;
use super::{MAX_WARMUP_THRESHOLD, MAX_WEIGHT, region};
use crate::model::{Member, MemberKind};

/// Longest heartbeat or delete timeout of an ephemeral member.
pub const MAX_EPHEMERAL_TIMEOUT: Duration = Duration::from_secs(7 * 24 * 3600);

/// Validate a member on its own.
pub fn member(member: &Member) -> Result<(), ValidationError> {
    let mut f = Findings::new("");
    human_name(&mut f, "name", &member.name);
    f.require(member.port != 0, "port", "must be between 1 and 65535");
    in_range(&mut f, "weight", member.weight, 0, MAX_WEIGHT);
    in_range(
        &mut f,
        "warmupThreshold",
        member.warmup_threshold,
        0,
        MAX_WARMUP_THRESHOLD,
    );
    if let Some(r) = &member.region
        && let Err(rule) = region(r)
    {
        f.add("region", rule);
    }
    if let Some(ip) = member.address.ip()
        && let Some(rule) = super::address::unanswerable(&ip)
    {
        f.add("address", rule);
    }
    if let MemberKind::Ephemeral(policy) = member.kind {
        f.require(
            policy.heartbeat_timeout >= Duration::from_secs(1)
                && policy.heartbeat_timeout <= MAX_EPHEMERAL_TIMEOUT,
            "kind.ephemeral.heartbeatTimeout",
            "must be between 1s and 7 days",
        );
        f.require(
            policy.heartbeat_interval >= Duration::from_millis(100),
            "kind.ephemeral.heartbeatInterval",
            "must be at least 100ms",
        );
        f.require(
            policy.heartbeat_timeout > policy.heartbeat_interval,
            "kind.ephemeral.heartbeatTimeout",
            "must be longer than heartbeatInterval (a member would go down between two heartbeats)",
        );
        f.require(
            policy.delete_timeout <= MAX_EPHEMERAL_TIMEOUT,
            "kind.ephemeral.deleteTimeout",
            "must be at most 7 days",
        );
        f.require(
            policy.delete_timeout >= policy.heartbeat_timeout,
            "kind.ephemeral.deleteTimeout",
            "must not be shorter than heartbeatTimeout",
        );
    }
    f.finish()
}
