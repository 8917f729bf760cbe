//! Route-flap damping (DESIGN.md "Health engine" 8): every transition adds a
//! penalty that decays exponentially; above `suppress` a member is held down
//! until the penalty decays below `reuse`.

use gslb_shared::FlapDamping;

use super::Timestamp;

/// One member's damping state.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Damping {
    penalty: f64,
    at: Timestamp,
    suppressed: bool,
}

impl Damping {
    /// The penalty decayed to `now`.
    pub fn penalty(&self, params: &FlapDamping, now: Timestamp) -> f64 {
        let half_lives =
            now.since(self.at).as_secs_f64() / params.half_life.as_secs_f64().max(1e-3);
        self.penalty * 0.5f64.powf(half_lives)
    }

    /// Charge one transition at `now`; returns whether the member is now
    /// suppressed.
    pub fn charge(&mut self, params: &FlapDamping, now: Timestamp) -> bool {
        self.penalty = (self.penalty(params, now) + params.penalty).min(params.max_penalty);
        self.at = now;
        if self.penalty > params.suppress {
            self.suppressed = true;
        }
        self.suppressed
    }

    /// Whether recovery is held at `now` (releases once below `reuse`).
    pub fn suppressed(&mut self, params: &FlapDamping, now: Timestamp) -> bool {
        if self.suppressed && self.penalty(params, now) < params.reuse {
            self.suppressed = false;
        }
        self.suppressed
    }

    /// True while suppressed, without re-evaluating decay.
    pub fn is_suppressed(&self) -> bool {
        self.suppressed
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn penalty_halves_every_half_life() {
        let params = FlapDamping::default();
        let mut d = Damping::default();
        d.charge(&params, Timestamp(0));
        let later = Timestamp(0).plus(params.half_life);
        assert!((d.penalty(&params, later) - 500.0).abs() < 1e-6);
    }

    #[test]
    fn suppressed_after_repeated_flaps_and_released_below_reuse() {
        let params = FlapDamping::default();
        let mut d = Damping::default();
        let t0 = Timestamp(1_000_000);
        assert!(!d.charge(&params, t0));
        assert!(!d.charge(&params, t0), "2000 is not above suppress");
        assert!(d.charge(&params, t0), "3000 > 2000");
        // 3000 -> below 750 needs two half-lives plus a little.
        assert!(d.suppressed(&params, t0.plus(Duration::from_secs(120))));
        assert!(!d.suppressed(&params, t0.plus(Duration::from_secs(121))));
    }

    #[test]
    fn penalty_is_capped() {
        let params = FlapDamping::default();
        let mut d = Damping::default();
        for _ in 0..100 {
            d.charge(&params, Timestamp(0));
        }
        assert_eq!(d.penalty(&params, Timestamp(0)), params.max_penalty);
    }
}
