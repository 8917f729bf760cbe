//! Round-trip times per member and location for latency steering.
//!
//! Each passing result feeds its location's EWMA (kept beside the
//! location's latest result, so a result touches no other memory). When
//! one of the member's cycles closes, a location's published time moves
//! only if the EWMA has left the hysteresis step around it, and a location
//! that has not measured the member for [`RTT_STALE_CYCLES`] cycles is
//! dropped: so the table changes at most once per cycle, and noise within
//! the step never reaches the edges.

/// Weight of a new sample in the moving average.
pub const RTT_EWMA_ALPHA: f32 = 0.3;
/// A published time moves when the average differs from it by more than
/// this percentage of it ...
pub const RTT_HYSTERESIS_PERCENT: u64 = 10;
/// ... and by more than this (microseconds).
pub const RTT_HYSTERESIS_FLOOR_US: u64 = 500;
/// A location that has not measured the member for this many of its cycles
/// is dropped from its table.
pub const RTT_STALE_CYCLES: u32 = 5;

/// `LocRtt::published` before anything was published.
const UNPUBLISHED: u32 = u32::MAX;
/// `LocRtt::ewma` before the first sample.
const NO_SAMPLE: f32 = -1.0;

/// One location's average for one member and what was published of it
/// (12 bytes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LocRtt {
    /// Moving average, microseconds ([`NO_SAMPLE`] before the first).
    ewma: f32,
    /// The time published ([`UNPUBLISHED`] before the first).
    published: u32,
    /// The low 32 bits of the cycle of the last sample (staleness is a
    /// difference of a few cycles, so wrapping arithmetic is exact).
    sampled: u32,
}

impl Default for LocRtt {
    fn default() -> Self {
        Self {
            ewma: NO_SAMPLE,
            published: UNPUBLISHED,
            sampled: 0,
        }
    }
}

/// True when `value` has left the hysteresis step around `published`.
pub fn moved(published: u32, value: u32) -> bool {
    let step = (u64::from(published) * RTT_HYSTERESIS_PERCENT / 100).max(RTT_HYSTERESIS_FLOOR_US);
    u64::from(published.abs_diff(value)) > step
}

impl LocRtt {
    /// A passing probe in `cycle` took `micros`.
    pub fn sample(&mut self, cycle: u64, micros: u32) {
        let (value, low) = (micros as f32, cycle as u32);
        if self.ewma < 0.0 {
            self.ewma = value;
            self.sampled = low;
            return;
        }
        self.ewma += RTT_EWMA_ALPHA * (value - self.ewma);
        // Late results of an older cycle do not move it back.
        if low.wrapping_sub(self.sampled) < u32::MAX / 2 {
            self.sampled = low;
        }
    }

    /// At the close of `cycle`: forget a stale average, move a published
    /// time that left its step. True when what is published changed.
    pub fn settle(&mut self, cycle: u64) -> bool {
        if self.ewma < 0.0 {
            return false;
        }
        // Cycles since the last sample; a sample of a newer cycle (it
        // arrived before this one closed) wraps to a huge age and is fresh.
        let age = (cycle as u32).wrapping_sub(self.sampled);
        if (RTT_STALE_CYCLES..u32::MAX / 2).contains(&age) {
            let had = self.published != UNPUBLISHED;
            *self = Self::default();
            return had;
        }
        let now = self.ewma.round().clamp(0.0, (UNPUBLISHED - 1) as f32) as u32;
        if self.published == UNPUBLISHED || moved(self.published, now) {
            self.published = now;
            return true;
        }
        false
    }

    /// The time published, if any.
    pub fn published(&self) -> Option<u32> {
        (self.published != UNPUBLISHED).then_some(self.published)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_step_has_a_floor_and_a_share() {
        assert!(!moved(1_000, 1_500));
        assert!(moved(1_000, 1_501));
        assert!(!moved(50_000, 55_000));
        assert!(moved(50_000, 55_001));
        assert!(moved(50_000, 44_999));
    }

    #[test]
    fn the_first_sample_publishes_and_noise_within_the_step_does_not() {
        let mut r = LocRtt::default();
        assert!(!r.settle(1), "nothing measured yet");
        r.sample(1, 20_000);
        assert!(r.settle(1));
        assert_eq!(r.published(), Some(20_000));
        for (cycle, v) in (2..50).zip([21_500, 18_500].into_iter().cycle()) {
            r.sample(cycle, v);
            assert!(!r.settle(cycle), "cycle {cycle}");
        }
    }

    #[test]
    fn a_lasting_change_is_published_at_once_and_converges() {
        let mut r = LocRtt::default();
        r.sample(1, 20_000);
        r.settle(1);
        r.sample(2, 60_000);
        assert!(r.settle(2), "20 ms to 60 ms leaves the 2 ms step at once");
        let mut settled = 0;
        for cycle in 3..30 {
            r.sample(cycle, 60_000);
            settled += u32::from(r.settle(cycle));
        }
        assert!(
            settled <= 4,
            "converging takes a few publications: {settled}"
        );
        assert!(r.published().unwrap().abs_diff(60_000) <= 6_000);
    }

    #[test]
    fn a_sample_of_the_next_cycle_is_not_stale_when_this_one_closes() {
        let mut r = LocRtt::default();
        r.sample(100, 5_000);
        assert!(r.settle(100));
        // Cycle 102's result arrives before cycle 101 closes (by its
        // deadline, another location being slow).
        r.sample(102, 5_000);
        assert!(!r.settle(101), "nothing moved");
        assert_eq!(r.published(), Some(5_000));
    }

    #[test]
    fn a_silent_location_is_dropped_after_its_stale_cycles() {
        let mut r = LocRtt::default();
        r.sample(100, 5_000);
        assert!(r.settle(100));
        for cycle in 101..100 + u64::from(RTT_STALE_CYCLES) {
            assert!(!r.settle(cycle));
        }
        assert!(r.settle(100 + u64::from(RTT_STALE_CYCLES)));
        assert_eq!(r.published(), None);
        assert!(!r.settle(200), "forgotten: nothing more to drop");
    }

    #[test]
    fn cycle_numbers_past_32_bits_are_fine() {
        let mut r = LocRtt::default();
        let base = (1u64 << 32) - 2;
        r.sample(base, 5_000);
        r.settle(base);
        for cycle in base + 1..base + 4 {
            r.sample(cycle, 5_000);
            assert!(!r.settle(cycle), "{cycle}");
        }
        assert_eq!(r.published(), Some(5_000));
    }
}
