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

/// Validate a pool on its own.
pub fn pool(pool: &Pool) -> Result<(), ValidationError> {
    let mut f = Findings::new("");
    human_name(&mut f, "name", &pool.name);
    in_range(&mut f, "minHealthy", pool.min_healthy, 1, 10_000);
    if !pool.protect_threshold.is_finite() || !(0.0..=1.0).contains(&pool.protect_threshold) {
        f.add(
            "protectThreshold",
            "must be between 0.0 and 1.0 (0 turns protection off)",
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
