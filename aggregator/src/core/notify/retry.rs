//! When to try a failed delivery again: 1 s doubling to at most an hour
//! (jittered), for 24 hours after the event; then the event is given up
//! for that target (counted and shown by `gslbctl notifications status`)
//! so one dead receiver cannot hold its later events forever.

use std::time::Duration;

use gslb_shared::backoff::Backoff;

/// How long an event is retried, from when it happened.
pub const GIVE_UP_AFTER: Duration = Duration::from_secs(24 * 3600);
/// The first retry's delay.
pub const FIRST_RETRY: Duration = Duration::from_secs(1);
/// The longest delay between two tries.
pub const LONGEST_RETRY: Duration = Duration::from_secs(3600);
/// Each delay is drawn from `[d·(1 − JITTER), d]`.
pub const JITTER: f64 = 0.2;

/// The retry policy.
pub fn backoff() -> Backoff {
    Backoff::try_new(FIRST_RETRY, LONGEST_RETRY, JITTER).unwrap_or_default()
}

/// What to do after a failed try.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Next {
    /// Try again at this time (ms since the Unix epoch).
    At(u64),
    /// Stop: the event is older than [`GIVE_UP_AFTER`], or will be by then.
    GiveUp,
}

/// After failed try number `failures` (1 for the first) of an event made at
/// `event_ms`, at `now_ms`, with `delay` drawn from [`backoff`].
pub fn after_failure(event_ms: u64, now_ms: u64, delay: Duration) -> Next {
    let give_up = event_ms.saturating_add(GIVE_UP_AFTER.as_millis() as u64);
    let at = now_ms.saturating_add(delay.as_millis() as u64);
    if now_ms >= give_up {
        Next::GiveUp
    } else {
        // The last try lands at the deadline rather than past it.
        Next::At(at.min(give_up))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delays_double_to_an_hour_and_tries_stop_a_day_after_the_event() {
        let b = backoff();
        assert_eq!(b.ceiling(0), Duration::from_secs(1));
        assert_eq!(b.ceiling(3), Duration::from_secs(8));
        assert_eq!(b.ceiling(40), LONGEST_RETRY);
        let day = GIVE_UP_AFTER.as_millis() as u64;
        assert_eq!(
            after_failure(0, 10, Duration::from_secs(1)),
            Next::At(1_010)
        );
        assert_eq!(after_failure(0, day - 5, LONGEST_RETRY), Next::At(day));
        assert_eq!(after_failure(0, day, Duration::from_secs(1)), Next::GiveUp);
    }

    #[test]
    fn a_full_day_of_failures_takes_a_bounded_number_of_tries() {
        let b = backoff();
        let (mut now, mut tries) = (0u64, 0u32);
        while let Next::At(at) = after_failure(0, now, b.ceiling(tries)) {
            now = at;
            tries += 1;
            assert!(tries < 100, "unbounded");
        }
        // 1 s doubling to an hour: 13 tries reach the hour, then one an hour.
        assert!((30..=40).contains(&tries), "{tries}");
    }
}
