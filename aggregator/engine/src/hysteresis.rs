//! The 85% / 20% hysteresis on the score (DESIGN.md "Health engine" 4).

use std::cmp::Ordering;

use gslb_shared::Health;

/// The next health for a score, given how it compares (exactly: see
/// [`super::score`]) with `rise` and with `fall`: `down`/`unknown` rise to
/// `up` at `score >= rise`; `up` falls to `down` at `score < fall`; an
/// `unknown` member below `fall` is `down`; otherwise the state holds.
pub fn decide(current: Health, vs_rise: Ordering, vs_fall: Ordering) -> Health {
    let (rises, falls) = (vs_rise != Ordering::Less, vs_fall == Ordering::Less);
    match current {
        Health::Up if falls => Health::Down,
        Health::Up => Health::Up,
        Health::Down | Health::Unknown if rises => Health::Up,
        Health::Unknown if falls => Health::Down,
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `decide` on float scores (test values sit well away from rounding).
    fn decide_f(current: Health, score: f64, rise: f64, fall: f64) -> Health {
        let cmp = |t: f64| score.partial_cmp(&t).unwrap_or(Ordering::Less);
        decide(current, cmp(rise), cmp(fall))
    }

    #[test]
    fn up_member_stays_up_at_quarter_and_goes_down_below_fall() {
        assert_eq!(decide_f(Health::Up, 0.25, 0.85, 0.20), Health::Up);
        assert_eq!(decide_f(Health::Up, 0.20, 0.85, 0.20), Health::Up);
        assert_eq!(decide_f(Health::Up, 0.15, 0.85, 0.20), Health::Down);
    }

    #[test]
    fn down_member_stays_down_at_eighty_and_rises_at_rise() {
        assert_eq!(decide_f(Health::Down, 0.80, 0.85, 0.20), Health::Down);
        assert_eq!(decide_f(Health::Down, 0.85, 0.85, 0.20), Health::Up);
    }

    #[test]
    fn unknown_member_resolves_only_outside_the_band() {
        assert_eq!(decide_f(Health::Unknown, 0.5, 0.85, 0.20), Health::Unknown);
        assert_eq!(decide_f(Health::Unknown, 1.0, 0.85, 0.20), Health::Up);
        assert_eq!(decide_f(Health::Unknown, 0.0, 0.85, 0.20), Health::Down);
    }

    proptest! {
        #[test]
        fn never_flips_inside_the_band(
            fall in 0.0f64..0.5, gap in 0.01f64..0.5, t in 0.0f64..1.0,
            current in prop_oneof![Just(Health::Up), Just(Health::Down), Just(Health::Unknown)],
        ) {
            let rise = (fall + gap).min(1.0);
            let score = fall + (rise - fall) * t;
            prop_assume!(score >= fall && score < rise);
            prop_assert_eq!(decide_f(current, score, rise, fall), current);
        }

        #[test]
        fn outside_the_band_the_score_decides(fall in 0.0f64..0.5, gap in 0.01f64..0.5, up in any::<bool>()) {
            let rise = (fall + gap).min(1.0);
            prop_assert_eq!(decide_f(Health::Down, rise, rise, fall), Health::Up);
            if fall > 0.0 {
                let current = if up { Health::Up } else { Health::Unknown };
                prop_assert_eq!(decide_f(current, fall / 2.0, rise, fall), Health::Down);
            }
        }
    }
}
