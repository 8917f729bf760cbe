//! Health facts: what the aggregator has decided about each member, which is
//! all that selection needs to know about health.

use serde::{Deserialize, Serialize};

/// A member's health as decided by the engine.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default, utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Health {
    /// Passing: answered.
    Up,
    /// Failing: not answered (unless a fail mode or protection applies).
    Down,
    /// No decision yet.
    #[default]
    Unknown,
}

impl Health {
    /// Lower-case name as shown in status and logs.
    pub fn as_str(self) -> &'static str {
        match self {
            Health::Up => "up",
            Health::Down => "down",
            Health::Unknown => "unknown",
        }
    }
}

/// The facts about one member that decide whether it may be answered.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default, utoipa::ToSchema,
)]
#[serde(rename_all = "camelCase")]
pub struct MemberFacts {
    /// Effective health (manual override and check `none` already applied).
    pub health: Health,
    /// Held back by the warm-up gate.
    pub warming: bool,
    /// In slow start: the percent of its weight it takes now (10 to 90, in
    /// steps of 10); `None` once it has its full weight.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ramp: Option<u8>,
}

impl MemberFacts {
    /// Facts of a member that is up and not warming.
    pub const UP: MemberFacts = MemberFacts {
        health: Health::Up,
        warming: false,
        ramp: None,
    };
    /// Facts of a member that is down.
    pub const DOWN: MemberFacts = MemberFacts {
        health: Health::Down,
        warming: false,
        ramp: None,
    };

    /// The weight steering uses: `weight` cut to the slow-start ramp, never
    /// below 1 so a ramping member is never dropped by weight alone.
    pub fn effective_weight(&self, weight: u32) -> u32 {
        ramped_weight(weight, self.ramp)
    }
}

/// `weight` cut to a slow-start step (see [`MemberFacts::effective_weight`]).
pub fn ramped_weight(weight: u32, ramp: Option<u8>) -> u32 {
    match ramp {
        Some(percent) if weight > 0 => {
            let cut = u64::from(weight) * u64::from(percent.min(100)) / 100;
            u32::try_from(cut).unwrap_or(weight).max(1)
        }
        _ => weight,
    }
}
