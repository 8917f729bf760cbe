//! Member rules.

use std::time::Duration;

use super::error::{Findings, ValidationError, in_range};
use super::text::human_name;
use super::{MAX_WARMUP_THRESHOLD, MAX_WEIGHT, region};
use crate::model::{Member, MemberKind};

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
    f.require(
        !member.address.is_unspecified() && !member.address.is_multicast(),
        "address",
        "must be a unicast address (not 0.0.0.0, :: or multicast)",
    );
    if let MemberKind::Ephemeral(policy) = member.kind {
        f.require(
            policy.heartbeat_timeout >= Duration::from_secs(1),
            "kind.ephemeral.heartbeatTimeout",
            "must be at least 1s",
        );
        f.require(
            policy.delete_timeout >= policy.heartbeat_timeout,
            "kind.ephemeral.deleteTimeout",
            "must not be shorter than heartbeatTimeout",
        );
    }
    f.finish()
}
