//! Exponential backoff with jitter for reconnects: 1 s doubling to 60 s by
//! default, each delay drawn from `[d·(1 − jitter), d]` so a fleet that lost
//! its aggregator at once does not come back at once.

use std::time::Duration;

use rand::RngExt;

/// A validated backoff policy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backoff {
    min: Duration,
    max: Duration,
    jitter: f64,
}

/// A backoff policy that cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BackoffError {
    /// `min` is zero or above `max`.
    #[error("backoff min must be greater than 0 and at most max")]
    Range,
    /// `jitter` is outside 0..=1.
    #[error("backoff jitter must be between 0 and 1")]
    Jitter,
}

impl Default for Backoff {
    fn default() -> Self {
        Self {
            min: Duration::from_secs(1),
            max: Duration::from_secs(60),
            jitter: 0.5,
        }
    }
}

impl Backoff {
    /// A policy; refuses values that cannot work.
    pub fn try_new(min: Duration, max: Duration, jitter: f64) -> Result<Self, BackoffError> {
        if min.is_zero() || min > max {
            return Err(BackoffError::Range);
        }
        if !(0.0..=1.0).contains(&jitter) {
            return Err(BackoffError::Jitter);
        }
        Ok(Self { min, max, jitter })
    }

    /// The un-jittered delay before retry number `attempt` (0-based).
    pub fn ceiling(&self, attempt: u32) -> Duration {
        let factor = 2u32.saturating_pow(attempt.min(31));
        self.min.saturating_mul(factor).min(self.max)
    }

    /// The delay before retry number `attempt`, jittered with `rng`.
    pub fn delay<R: rand::Rng + ?Sized>(&self, attempt: u32, rng: &mut R) -> Duration {
        let ceiling = self.ceiling(attempt);
        let low = 1.0 - self.jitter * rng.random_range(0.0..=1.0);
        ceiling.mul_f64(low)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use rand::SeedableRng;

    #[test]
    fn doubles_from_one_second_to_sixty() {
        let b = Backoff::default();
        let ceilings: Vec<_> = (0..8).map(|a| b.ceiling(a).as_secs()).collect();
        assert_eq!(ceilings, vec![1, 2, 4, 8, 16, 32, 60, 60]);
        assert_eq!(b.ceiling(1000), Duration::from_secs(60));
    }

    #[test]
    fn invalid_policies_are_refused() {
        assert_eq!(
            Backoff::try_new(Duration::ZERO, Duration::from_secs(1), 0.5),
            Err(BackoffError::Range)
        );
        assert_eq!(
            Backoff::try_new(Duration::from_secs(2), Duration::from_secs(1), 0.5),
            Err(BackoffError::Range)
        );
        assert_eq!(
            Backoff::try_new(Duration::from_secs(1), Duration::from_secs(2), 1.5),
            Err(BackoffError::Jitter)
        );
    }

    proptest! {
        #[test]
        fn jittered_delay_stays_within_its_band(attempt in 0u32..40, seed in any::<u64>(), jitter in 0.0f64..=1.0) {
            let b = Backoff::try_new(Duration::from_secs(1), Duration::from_secs(60), jitter).unwrap();
            let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
            let d = b.delay(attempt, &mut rng);
            let ceiling = b.ceiling(attempt);
            prop_assert!(d <= ceiling);
            prop_assert!(d >= ceiling.mul_f64(1.0 - jitter) - Duration::from_micros(1));
        }
    }
}
