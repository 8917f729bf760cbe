//! Engine time: milliseconds since the Unix epoch, supplied by the caller.
//! Cycle numbers are derived from it, so agents and the engine agree on
//! which cycle a probe belongs to without talking about it.

use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

/// A point in time, in milliseconds since the Unix epoch.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Serialize, Deserialize,
)]
pub struct Timestamp(pub u64);

impl Timestamp {
    /// Read a wall clock value (for the IO shell; logic never calls this).
    pub fn from_system(time: SystemTime) -> Self {
        Self(gslb_shared::clock::ms_of(time))
    }

    /// `self + d`, saturating.
    pub fn plus(self, d: Duration) -> Self {
        Self(self.0.saturating_add(d.as_millis() as u64))
    }

    /// Time elapsed since `earlier` (zero if `earlier` is later).
    pub fn since(self, earlier: Timestamp) -> Duration {
        Duration::from_millis(self.0.saturating_sub(earlier.0))
    }

    /// The cycle of a check with this interval that contains `self`.
    pub fn cycle(self, interval: Duration) -> u64 {
        gslb_shared::cycle::of(self.0, interval)
    }

    /// When cycle `cycle` of a check with this interval opens.
    pub fn cycle_start(cycle: u64, interval: Duration) -> Self {
        Self(gslb_shared::cycle::start(cycle, interval))
    }
}
