//! Pool rules.

use std::time::Duration;

use super::error::{Findings, ValidationError, in_range};
use super::text::human_name;
use crate::model::{FailMode, Pool};

/// Most static fallback addresses.
pub const MAX_FALLBACK: usize = 16;

/// Shortest slow start: a ramp of nine 10% steps, each at least 100 ms.
pub const MIN_SLOW_START: Duration = Duration::from_millis(900);
/// Longest slow start.
pub const MAX_SLOW_START: Duration = Duration::from_secs(3600);

/// Smallest non-zero protection threshold: one member in 10,000 (the most a
/// pool holds); anything smaller (a subnormal such as 5e-324) means nothing.
pub const MIN_PROTECT_THRESHOLD: f64 = 0.0001;

/// Validate a pool on its own.
pub fn pool(pool: &Pool) -> Result<(), ValidationError> {
    let mut f = Findings::new("");
    human_name(&mut f, "name", &pool.name);
    in_range(&mut f, "minHealthy", pool.min_healthy, 1, 10_000);
    let t = pool.protect_threshold;
    // -0.0 compares equal to 0.0 but prints as "-0" and hashes differently.
    let off = t == 0.0 && t.is_sign_positive();
    let on = (MIN_PROTECT_THRESHOLD..=1.0).contains(&t);
    if !(off || on) {
        f.add(
            "protectThreshold",
            "must be 0 (protection off) or between 0.0001 and 1.0 (not -0, not subnormal)",
        );
    }
    match pool.fail_mode {
        FailMode::Static => {
            f.require(
                !pool.fallback.is_empty(),
                "fallback",
                "must list at least one address when failMode is static",
            );
            f.require(
                pool.fallback.len() <= MAX_FALLBACK,
                "fallback",
                format!("must list at most {MAX_FALLBACK} addresses"),
            );
            for (i, ip) in pool.fallback.iter().enumerate() {
                if let Some(rule) = super::address::unanswerable(ip) {
                    f.add(&format!("fallback[{i}]"), rule);
                }
            }
        }
        FailMode::Open | FailMode::Closed => {
            f.require(
                pool.fallback.is_empty(),
                "fallback",
                "is used only when failMode is static",
            );
        }
    }
    if let Some(d) = pool.slow_start {
        f.require(
            (MIN_SLOW_START..=MAX_SLOW_START).contains(&d),
            "slowStart",
            "must be between 900ms and 1h",
        );
    }
    f.finish()
}
