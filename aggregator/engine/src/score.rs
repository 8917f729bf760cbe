//! Exact scores: a cycle's pass fraction is kept as two counts, a window's
//! mean is compared with `rise` and `fall` in integers, so a mean exactly
//! at a threshold is at it (floating-point averaging made 0.6, 0, 0 read
//! 0.19999999999999998 against a fall of 0.2).
//!
//! Thresholds are read to [`THRESHOLD_SCALE`] (six decimal places): the
//! operator wrote `0.2`, not the binary double nearest to it.

use std::cmp::Ordering;

use num_bigint::BigUint;
use num_integer::Integer;

/// Thresholds are compared as `round(t × THRESHOLD_SCALE) / THRESHOLD_SCALE`.
pub const THRESHOLD_SCALE: u64 = 1_000_000;

/// One cycle's pass fraction: `passed` of `of` counting locations (`of > 0`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fraction {
    /// Locations that passed.
    pub passed: u16,
    /// Locations counted.
    pub of: u16,
}

impl Fraction {
    /// The fraction as a float (display and logs only).
    pub fn as_f64(self) -> f64 {
        f64::from(self.passed) / f64::from(self.of)
    }

    /// Compare with a threshold, exactly.
    pub fn cmp_threshold(self, t: f64) -> Ordering {
        Mean::of(&[self]).against(t)
    }
}

/// A threshold in millionths.
fn scaled(t: f64) -> u128 {
    (t.clamp(0.0, 1.0) * THRESHOLD_SCALE as f64).round() as u128
}

/// A window's mean, exact: `sum / denominator`, with every fraction over
/// the least common multiple of the counts (`denominator` = that times the
/// number of fractions). Computed once per window, compared with each
/// threshold. In 128-bit integers when it fits (any window whose counts
/// vary little), else in big integers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mean {
    /// Fits in u128.
    Narrow {
        /// Numerator.
        sum: u128,
        /// Denominator.
        denominator: u128,
    },
    /// Does not.
    Wide {
        /// Numerator.
        sum: BigUint,
        /// Denominator.
        denominator: BigUint,
    },
}

impl Mean {
    /// The mean of `fractions` (at least one).
    pub fn of(fractions: &[Fraction]) -> Mean {
        Mean::narrow(fractions).unwrap_or_else(|| Mean::wide(fractions))
    }

    /// [`Mean::of`] in u128; `None` on overflow.
    fn narrow(fractions: &[Fraction]) -> Option<Mean> {
        let mut lcm: u128 = 1;
        for f in fractions {
            let of = u128::from(f.of.max(1));
            lcm = lcm.checked_mul(of / lcm.gcd(&of))?;
        }
        let mut sum: u128 = 0;
        for f in fractions {
            let term = u128::from(f.passed).checked_mul(lcm / u128::from(f.of.max(1)))?;
            sum = sum.checked_add(term)?;
        }
        let denominator = lcm.checked_mul(fractions.len() as u128)?;
        Some(Mean::Narrow { sum, denominator })
    }

    /// [`Mean::of`] in big integers (never overflows).
    fn wide(fractions: &[Fraction]) -> Mean {
        let lcm = fractions.iter().fold(BigUint::from(1u32), |lcm, f| {
            lcm.lcm(&BigUint::from(f.of.max(1)))
        });
        let sum = fractions.iter().fold(BigUint::from(0u32), |sum, f| {
            sum + BigUint::from(f.passed) * (&lcm / BigUint::from(f.of.max(1)))
        });
        Mean::Wide {
            sum,
            denominator: lcm * BigUint::from(fractions.len()),
        }
    }

    /// The mean against threshold `t`, exactly: the sign of
    /// `sum · SCALE − t_scaled · denominator`.
    pub fn against(&self, t: f64) -> Ordering {
        let t = scaled(t);
        match self {
            Mean::Narrow { sum, denominator } => {
                match (
                    sum.checked_mul(u128::from(THRESHOLD_SCALE)),
                    t.checked_mul(*denominator),
                ) {
                    (Some(left), Some(right)) => left.cmp(&right),
                    _ => big_cmp(BigUint::from(*sum), BigUint::from(*denominator), t),
                }
            }
            Mean::Wide { sum, denominator } => big_cmp(sum.clone(), denominator.clone(), t),
        }
    }
}

fn big_cmp(sum: BigUint, denominator: BigUint, t: u128) -> Ordering {
    (sum * BigUint::from(THRESHOLD_SCALE)).cmp(&(BigUint::from(t) * denominator))
}

/// Compare the mean of `fractions` (at least one) with threshold `t`, exactly.
pub fn mean_cmp(fractions: &[Fraction], t: f64) -> Ordering {
    Mean::of(fractions).against(t)
}

/// The mean of `fractions` as a float (display and logs only).
pub fn mean_f64(fractions: &[Fraction]) -> Option<f64> {
    if fractions.is_empty() {
        return None;
    }
    Some(fractions.iter().map(|f| f.as_f64()).sum::<f64>() / fractions.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn f(passed: u16, of: u16) -> Fraction {
        Fraction { passed, of }
    }

    #[test]
    fn the_reported_window_is_exactly_at_fall() {
        let window = [f(3, 5), f(0, 5), f(0, 5)];
        assert!(
            mean_f64(&window).unwrap() < 0.2,
            "floating point reads it below"
        );
        assert_eq!(mean_cmp(&window, 0.2), Ordering::Equal);
        assert_eq!(mean_cmp(&[f(17, 20)], 0.85), Ordering::Equal);
    }

    #[test]
    fn the_big_integer_path_takes_over_when_the_common_denominator_overflows() {
        // Primes up to 251: their product is far beyond u128.
        let primes: Vec<u16> = (2u16..=251)
            .filter(|n| (2..*n).all(|d| n % d != 0))
            .collect();
        let window: Vec<Fraction> = primes.iter().map(|&p| f(p - 1, p)).collect();
        assert!(Mean::narrow(&window).is_none());
        assert_eq!(mean_cmp(&window, 0.5), Ordering::Greater);
        assert_eq!(mean_cmp(&window, 1.0), Ordering::Less);
    }

    /// Every boundary for windows 1–10 and 1–50 locations: a window whose
    /// mean is exactly `k`/100 is equal to it, one pass less is below.
    #[test]
    fn every_boundary_of_windows_up_to_ten_and_locations_up_to_fifty() {
        for window in 1u16..=10 {
            for locations in 1u16..=50 {
                let cells = u32::from(window) * u32::from(locations);
                for k in 1u32..100 {
                    if (k * cells) % 100 != 0 {
                        continue; // k/100 is no mean of this shape
                    }
                    let passes = k * cells / 100;
                    let spread = |total: u32| -> Vec<Fraction> {
                        let mut left = total;
                        (0..window)
                            .map(|_| {
                                let p = left.min(u32::from(locations));
                                left -= p;
                                f(p as u16, locations)
                            })
                            .collect()
                    };
                    let t = f64::from(k) / 100.0;
                    assert_eq!(mean_cmp(&spread(passes), t), Ordering::Equal);
                    if passes > 0 {
                        assert_eq!(mean_cmp(&spread(passes - 1), t), Ordering::Less);
                    }
                    if passes < cells {
                        assert_eq!(mean_cmp(&spread(passes + 1), t), Ordering::Greater);
                    }
                }
            }
        }
    }

    proptest! {
        /// The 128-bit path agrees with the big-integer one wherever it
        /// answers, and both agree with floating point away from the
        /// threshold.
        #[test]
        fn both_paths_agree(
            cells in proptest::collection::vec((0u16..=50, 1u16..=50), 1..=64),
            k in 0u32..=100,
        ) {
            let window: Vec<Fraction> =
                cells.iter().map(|&(p, of)| f(p.min(of), of)).collect();
            let t = f64::from(k) / 100.0;
            let exact = Mean::wide(&window).against(t);
            if let Some(fast) = Mean::narrow(&window).map(|m| m.against(t)) {
                prop_assert_eq!(fast, exact);
            }
            let float = mean_f64(&window).unwrap();
            if (float - t).abs() > 1e-9 {
                prop_assert_eq!(exact, float.partial_cmp(&t).unwrap());
            }
        }
    }
}
