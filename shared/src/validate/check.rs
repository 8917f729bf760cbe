//! Health check rules: timing, quorum, and each protocol's target settings.

use std::collections::HashSet;
use std::time::Duration;

use super::error::{Findings, ValidationError, in_range};
use super::text::human_name;
use super::{MAX_WINDOW, location_id, probe};
use crate::model::{Check, FlapDamping, Probe};

/// Shortest check interval.
pub const MIN_INTERVAL: Duration = Duration::from_millis(100);
/// Longest check interval.
pub const MAX_INTERVAL: Duration = Duration::from_secs(3600);
/// Most retries within a cycle.
pub const MAX_RETRIES: u32 = 5;

/// Validate a health check on its own.
pub fn check(check: &Check) -> Result<(), ValidationError> {
    let mut f = Findings::new("");
    human_name(&mut f, "name", &check.name);
    if check.interval < MIN_INTERVAL || check.interval > MAX_INTERVAL {
        f.add("interval", "must be between 100ms and 1h");
    }
    if check.timeout.is_zero() {
        f.add("timeout", "must be greater than 0");
    } else if check.timeout >= check.interval {
        f.add("timeout", "must be shorter than interval");
    }
    in_range(&mut f, "retries", check.retries, 0, MAX_RETRIES);
    if check.retries > 0 && check.retries <= MAX_RETRIES {
        // Attempts run one after another, each with the whole timeout.
        f.require(
            check.timeout.saturating_mul(check.retries + 1) < check.interval,
            "retries",
            "(retries + 1) × timeout must be shorter than interval",
        );
    }
    if let Some(threshold) = check.latency_threshold {
        f.require(
            !threshold.is_zero() && threshold < check.timeout,
            "latencyThreshold",
            "must be greater than 0 and shorter than timeout",
        );
    }
    f.require(
        !check.inverted || (check.is_active() && !check.control),
        "inverted",
        "an inverted check must actively probe and cannot be a control check",
    );
    quorum(&mut f, check.rise, check.fall);
    in_range(&mut f, "window", check.window, 1, MAX_WINDOW);
    f.require(check.port != Some(0), "port", "must be between 1 and 65535");
    let mut seen = HashSet::new();
    for (i, location) in check.locations.iter().enumerate() {
        if let Err(rule) = location_id(location) {
            f.add(&format!("locations[{i}]"), rule);
        }
        f.require(
            seen.insert(location),
            &format!("locations[{i}]"),
            "must not be listed twice",
        );
    }
    f.require(
        !check.control || check.is_active(),
        "control",
        "a control check must actively probe (protocol other than none)",
    );
    match &check.probe {
        Probe::Http(http) | Probe::Https(http) => probe::http(&mut f, http),
        Probe::Tcp(stream) | Probe::Udp(stream) => probe::stream(&mut f, stream),
        Probe::Dns(dns) => probe::dns(&mut f, dns),
        Probe::Grpc(grpc) => probe::grpc(&mut f, grpc),
        Probe::None | Probe::Icmp | Probe::Mysql => {}
    }
    if let Some(damping) = &check.damping {
        flap_damping(&mut f, damping);
    }
    f.finish()
}

fn quorum(f: &mut Findings, rise: f64, fall: f64) {
    let unit = |v: f64| v.is_finite() && (0.0..=1.0).contains(&v);
    f.require(
        unit(rise) && rise > 0.0,
        "rise",
        "must be greater than 0 and at most 1",
    );
    f.require(
        unit(fall) && fall < 1.0,
        "fall",
        "must be at least 0 and less than 1",
    );
    if unit(rise) && unit(fall) {
        f.require(rise > fall, "rise", "must be greater than fall");
    }
}

fn flap_damping(f: &mut Findings, d: &FlapDamping) {
    let positive = |v: f64| v.is_finite() && v > 0.0;
    f.require(
        positive(d.penalty),
        "damping.penalty",
        "must be greater than 0",
    );
    f.require(positive(d.reuse), "damping.reuse", "must be greater than 0");
    f.require(
        positive(d.suppress) && d.suppress > d.reuse,
        "damping.suppress",
        "must be greater than reuse",
    );
    f.require(
        positive(d.max_penalty) && d.max_penalty >= d.suppress,
        "damping.maxPenalty",
        "must be at least suppress",
    );
    f.require(
        d.half_life >= Duration::from_secs(1),
        "damping.halfLife",
        "must be at least 1s",
    );
}
