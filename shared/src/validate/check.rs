//! Health check rules: timing, quorum, and each protocol's target settings.

use std::collections::HashSet;
use std::time::Duration;

use super::error::{Findings, ValidationError, in_range};
use super::text::human_name;
use super::{MAX_WINDOW, header, http_path, location_id, method};
use crate::model::{Check, DnsName, FlapDamping, HttpProbe, Probe, StreamProbe};

/// Shortest check interval.
pub const MIN_INTERVAL: Duration = Duration::from_millis(500);
/// Longest check interval.
pub const MAX_INTERVAL: Duration = Duration::from_secs(3600);
/// Largest TCP/UDP payload.
pub const MAX_PAYLOAD: usize = 4096;
/// Largest compiled regular expression, in bytes.
pub const MAX_REGEX_SIZE: usize = 64 * 1024;
/// Most custom headers.
pub const MAX_HEADERS: usize = 32;

/// Validate a health check on its own.
pub fn check(check: &Check) -> Result<(), ValidationError> {
    let mut f = Findings::new("");
    human_name(&mut f, "name", &check.name);
    if check.interval < MIN_INTERVAL || check.interval > MAX_INTERVAL {
        f.add("interval", "must be between 500ms and 1h");
    }
    if check.timeout.is_zero() {
        f.add("timeout", "must be greater than 0");
    } else if check.timeout >= check.interval {
        f.add("timeout", "must be shorter than interval");
    }
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
        Probe::Http(http) | Probe::Https(http) => http_probe(&mut f, http),
        Probe::Tcp(stream) => stream_probe(&mut f, stream, false),
        Probe::Udp(stream) => stream_probe(&mut f, stream, true),
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

fn regex(f: &mut Findings, field: &str, pattern: &str) {
    if let Err(err) = regex::RegexBuilder::new(pattern)
        .size_limit(MAX_REGEX_SIZE)
        .build()
    {
        f.add(field, format!("must be a valid regular expression: {err}"));
    }
}

fn http_probe(f: &mut Findings, http: &HttpProbe) {
    if let Err(err) = method(&http.method) {
        f.add("probe.method", err.to_string());
    }
    if let Err(err) = http_path(&http.path) {
        f.add("probe.path", err.to_string());
    }
    f.require(
        http.headers.len() <= MAX_HEADERS,
        "probe.headers",
        format!("must hold at most {MAX_HEADERS} headers"),
    );
    for (i, h) in http.headers.iter().enumerate() {
        if let Err(err) = header(&h.name, &h.value) {
            f.add(&format!("probe.headers[{i}]"), err.to_string());
        }
    }
    for (i, range) in http.expected_status.iter().enumerate() {
        let at = format!("probe.expectedStatus[{i}]");
        f.require(
            (100..=599).contains(&range.from) && (100..=599).contains(&range.to),
            &at,
            "status codes must be between 100 and 599",
        );
        f.require(
            range.from <= range.to,
            &at,
            "from must not be greater than to",
        );
    }
    if let Some(pattern) = &http.body_regex {
        regex(f, "probe.bodyRegex", pattern);
    }
    if let Some(name) = &http.tls_server_name
        && let Err(err) = DnsName::parse(name)
    {
        f.add("probe.tlsServerName", format!("must be a DNS name: {err}"));
    }
}

fn stream_probe(f: &mut Findings, stream: &StreamProbe, udp: bool) {
    f.require(
        stream.send.len() <= MAX_PAYLOAD,
        "probe.send",
        format!("must be at most {MAX_PAYLOAD} bytes"),
    );
    f.require(
        !(udp && stream.send.is_empty()),
        "probe.send",
        "must not be empty for a UDP check",
    );
    if let Some(pattern) = &stream.expect {
        regex(f, "probe.expect", pattern);
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
