//! Wall-clock milliseconds anchored to tokio's monotonic clock.
//!
//! Cycle numbers come from the wall clock (agents and the aggregator agree on
//! them without talking), but sleeping uses tokio's `Instant`, so paused-time
//! tests drive the scheduler and a wall-clock step never makes it spin.

use std::time::Duration;

use tokio::time::Instant;

/// Converts between wall-clock milliseconds and tokio instants.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    anchor: Instant,
    anchor_ms: u64,
}

impl Clock {
    /// Anchor at the system clock's current time.
    pub fn system() -> Self {
        Self::at(gslb_shared::clock::now_ms())
    }

    /// Anchor "now" at `anchor_ms` (tests).
    pub fn at(anchor_ms: u64) -> Self {
        Self {
            anchor: Instant::now(),
            anchor_ms,
        }
    }

    /// Wall-clock milliseconds now.
    pub fn now_ms(&self) -> u64 {
        self.anchor_ms + self.anchor.elapsed().as_millis() as u64
    }

    /// The tokio instant of a wall-clock millisecond (the anchor, if it is
    /// past; a year ahead at most, so no input can overflow the clock).
    pub fn instant_at(&self, ms: u64) -> Instant {
        let ahead = Duration::from_millis(ms.saturating_sub(self.anchor_ms))
            .min(Duration::from_secs(366 * 86_400));
        self.anchor + ahead
    }
}
