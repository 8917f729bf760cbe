//! Health facts: what the aggregator has decided about each member, which is
//! all that selection needs to know about health.

use serde::{Deserialize, Serialize};

/// A member's health as decided by the engine.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub struct MemberFacts {
    /// Effective health (manual override and check `none` already applied).
    pub health: Health,
    /// Held back by the warm-up gate.
    pub warming: bool,
}

impl MemberFacts {
    /// Facts of a member that is up and not warming.
    pub const UP: MemberFacts = MemberFacts {
        health: Health::Up,
        warming: false,
    };
    /// Facts of a member that is down.
    pub const DOWN: MemberFacts = MemberFacts {
        health: Health::Down,
        warming: false,
    };
}
