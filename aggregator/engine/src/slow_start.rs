//! Slow start (pool `slowStart`): a member entering rotation takes 10% of
//! its weight, then 20%, … 90% in nine equal steps, and its full weight
//! once the duration has passed. Whole steps keep the published facts (and
//! so the snapshot feed) to nine changes per entry.

use std::time::Duration;

use super::Timestamp;

/// The first step: what a member takes the moment it enters rotation.
pub const FIRST_PERCENT: u8 = 10;
/// Steps before the full weight.
const STEPS: u64 = 9;

/// The percent of its weight a member that entered rotation at `since`
/// takes at `now`, or `None` once the ramp is over.
pub fn percent(since: Timestamp, now: Timestamp, duration: Duration) -> Option<u8> {
    let total = duration.as_millis() as u64;
    let elapsed = now.0.saturating_sub(since.0);
    if total == 0 || elapsed >= total {
        return None;
    }
    // elapsed < total, so the step is 0..=8.
    let step = elapsed * STEPS / total;
    Some(FIRST_PERCENT + 10 * step as u8)
}

/// The entry time at which a member would take `percent` at `now`: how a
/// restored or replicated step continues on this node's clock.
pub fn since_for(percent: u8, now: Timestamp, duration: Duration) -> Timestamp {
    let step = u64::from(percent.clamp(FIRST_PERCENT, 90) - FIRST_PERCENT) / 10;
    let total = duration.as_millis() as u64;
    // The first millisecond of the step (rounded up, so integer division in
    // `percent` lands in it, not in the step before).
    let elapsed = (step * total).div_ceil(STEPS);
    Timestamp(now.0.saturating_sub(elapsed))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const MIN: Duration = Duration::from_secs(60);

    #[test]
    fn nine_steps_then_full() {
        let t0 = Timestamp(1_000_000);
        let at = |ms| percent(t0, Timestamp(t0.0 + ms), MIN);
        assert_eq!(at(0), Some(10));
        assert_eq!(at(6_666), Some(10));
        assert_eq!(at(6_667), Some(20));
        assert_eq!(at(30_000), Some(50));
        assert_eq!(at(59_999), Some(90));
        assert_eq!(at(60_000), None);
        assert_eq!(at(600_000), None);
    }

    #[test]
    fn a_clock_behind_the_entry_stays_on_the_first_step() {
        assert_eq!(percent(Timestamp(5_000), Timestamp(4_000), MIN), Some(10));
    }

    proptest! {
        #[test]
        fn steps_only_rise_and_stay_in_range(
            a in 0u64..200_000,
            b in 0u64..200_000,
            secs in 1u64..3600,
        ) {
            let d = Duration::from_secs(secs);
            let t0 = Timestamp(10_000_000);
            let (early, late) = (a.min(b), a.max(b));
            let p1 = percent(t0, Timestamp(t0.0 + early), d);
            let p2 = percent(t0, Timestamp(t0.0 + late), d);
            let rank = |p: Option<u8>| p.map_or(100, u32::from);
            prop_assert!(rank(p1) <= rank(p2));
            for p in [p1, p2].into_iter().flatten() {
                prop_assert!((10..=90).contains(&p) && p % 10 == 0);
            }
        }

        #[test]
        fn a_step_carried_over_resumes_where_it_was(
            step in 0u8..9,
            ms in 900u64..3_600_000,
            now in 10_000_000u64..20_000_000,
        ) {
            let d = Duration::from_millis(ms);
            let p = 10 + 10 * step;
            let since = since_for(p, Timestamp(now), d);
            prop_assert_eq!(percent(since, Timestamp(now), d), Some(p));
        }
    }
}
