//! The cycle arithmetic agents and the engine share. A check's cycle `c`
//! covers `[c·interval, (c+1)·interval)` in ms since the Unix epoch; an
//! agent probes a target once per cycle at a stable phase offset derived
//! from the target's id, so probes spread evenly over the interval and a
//! restart keeps each target's slot. Due times are computed from the cycle
//! number, never from "last run + interval", so drift cannot build up.

use std::hash::{Hash, Hasher};
use std::time::Duration;

use crate::assignment::TargetKey;

/// The cycle of a check with `interval` that contains `ms`.
pub fn of(ms: u64, interval: Duration) -> u64 {
    ms / interval_ms(interval)
}

/// When cycle `cycle` of a check with `interval` opens, in ms.
pub fn start(cycle: u64, interval: Duration) -> u64 {
    cycle.saturating_mul(interval.as_millis() as u64)
}

/// The target's offset inside each interval, in ms: a stable hash of its id.
pub fn phase_offset(key: TargetKey, interval: Duration) -> u64 {
    let mut hasher = rustc_hash::FxHasher::default();
    key.hash(&mut hasher);
    // FxHash's low bits are weak; mix before reducing.
    let mixed = hasher
        .finish()
        .wrapping_mul(0x9E37_79B9_7F4A_7C15)
        .rotate_left(29);
    mixed % interval_ms(interval)
}

fn interval_ms(interval: Duration) -> u64 {
    (interval.as_millis() as u64).max(1)
}

/// The first cycle whose scheduled start (`cycle·interval + offset`) is at or
/// after `now_ms`, and that start.
pub fn next_slot(now_ms: u64, interval: Duration, offset: u64) -> (u64, u64) {
    let i = interval_ms(interval);
    let mut cycle = now_ms / i;
    if cycle * i + offset < now_ms {
        cycle += 1;
    }
    (cycle, cycle * i + offset)
}

/// The scheduled start of `cycle`.
pub fn slot_start(cycle: u64, interval: Duration, offset: u64) -> u64 {
    cycle
        .saturating_mul(interval_ms(interval))
        .saturating_add(offset)
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::{CheckId, MemberId};

    fn key(m: u64) -> TargetKey {
        TargetKey {
            member: MemberId(m),
            check: CheckId(1),
        }
    }

    #[test]
    fn offsets_spread_evenly_over_the_interval() {
        let interval = Duration::from_secs(10);
        let mut buckets = [0u32; 10];
        for m in 0..10_000 {
            buckets[(phase_offset(key(m), interval) / 1_000) as usize] += 1;
        }
        for (i, n) in buckets.iter().enumerate() {
            assert!(
                (850..=1150).contains(n),
                "second {i} has {n} of 10000 targets"
            );
        }
    }

    #[test]
    fn offset_is_stable_for_a_target() {
        let interval = Duration::from_secs(30);
        assert_eq!(
            phase_offset(key(42), interval),
            phase_offset(key(42), interval)
        );
    }

    #[test]
    fn next_slot_rounds_up_to_the_targets_phase() {
        let i = Duration::from_secs(10);
        assert_eq!(next_slot(100_000, i, 3_000), (10, 103_000));
        assert_eq!(next_slot(103_000, i, 3_000), (10, 103_000));
        assert_eq!(next_slot(103_001, i, 3_000), (11, 113_000));
    }

    proptest! {
        #[test]
        fn slot_is_at_or_after_now_and_within_one_interval(now in 0u64..1u64 << 45, i in 500u64..3_600_000, seed in any::<u64>()) {
            let interval = Duration::from_millis(i);
            let offset = phase_offset(key(seed), interval);
            let (cycle, start) = next_slot(now, interval, offset);
            prop_assert!(start >= now && start < now + i);
            prop_assert_eq!(start / i, cycle, "the cycle number is the start divided by the interval");
            prop_assert_eq!(slot_start(cycle, interval, offset), start);
            prop_assert_eq!(of(start, interval), cycle, "a probe's start lies in its own cycle");
        }

        #[test]
        fn a_cycle_holds_every_instant_from_its_start(ms in 0u64..1u64 << 50, i in 1u64..3_600_000) {
            let interval = Duration::from_millis(i);
            let c = of(ms, interval);
            prop_assert!(start(c, interval) <= ms && ms < start(c + 1, interval));
        }
    }
}
