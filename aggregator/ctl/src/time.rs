//! Times as gslbctl prints them: RFC 3339 with milliseconds, in UTC unless
//! `--local` asks for the system's zone (`TZ`, else `/etc/localtime`).

use std::sync::OnceLock;

use jiff::Timestamp;
use jiff::tz::{Offset, TimeZone};

/// The zone times are shown in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Zone {
    /// Coordinated universal time, `Z`.
    #[default]
    Utc,
    /// The system's zone, with its offset at each time.
    Local,
}

static ZONE: OnceLock<Zone> = OnceLock::new();

/// Choose the zone for this process (the first choice stays).
pub fn set_zone(zone: Zone) {
    let _ = ZONE.set(zone);
}

/// `ms` since the Unix epoch in the process's zone (UTC unless set).
pub fn at_ms(ms: u64) -> String {
    let zone = ZONE.get().copied().unwrap_or_default();
    let offset = |t: Timestamp| match zone {
        Zone::Utc => Offset::UTC,
        Zone::Local => TimeZone::system().to_offset(t),
    };
    format_ms(ms, offset)
}

/// `secs` since the Unix epoch, as [`at_ms`].
pub fn at_secs(secs: u64) -> String {
    at_ms(secs.saturating_mul(1000))
}

/// `ms` since the Unix epoch in RFC 3339 with milliseconds, at the offset
/// `offset` gives for that instant (`Z` for UTC).
pub fn format_ms(ms: u64, offset: impl Fn(Timestamp) -> Offset) -> String {
    let Ok(t) = i64::try_from(ms)
        .map_err(drop)
        .and_then(|ms| Timestamp::from_millisecond(ms).map_err(drop))
    else {
        return format!("{ms} ms after the epoch (out of range)");
    };
    let offset = offset(t);
    if offset == Offset::UTC {
        format!("{t:.3}")
    } else {
        format!("{:.3}", t.display_with_offset(offset))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utc_is_rfc3339_with_milliseconds_and_z() {
        let utc = |_| Offset::UTC;
        assert_eq!(format_ms(0, utc), "1970-01-01T00:00:00.000Z");
        assert_eq!(
            format_ms(1_796_160_686_938, utc),
            "2026-12-01T21:31:26.938Z"
        );
    }

    #[test]
    fn other_zones_carry_their_offset_at_that_instant() {
        let ist = |_| Offset::from_seconds(5 * 3600 + 1800).unwrap();
        assert_eq!(
            format_ms(1_796_160_686_938, ist),
            "2026-12-02T03:01:26.938+05:30"
        );
        // A zone with daylight saving time: the offset follows the date.
        // (A POSIX rule: no zone database needed.)
        let berlin = TimeZone::posix("CET-1CEST,M3.5.0,M10.5.0/3").unwrap();
        let at = |t| berlin.to_offset(t);
        assert_eq!(
            format_ms(1_796_160_686_938, at),
            "2026-12-01T22:31:26.938+01:00"
        );
        assert_eq!(
            format_ms(1_785_622_286_938, at),
            "2026-08-02T00:11:26.938+02:00"
        );
    }

    #[test]
    fn an_instant_past_what_a_calendar_holds_is_said_so() {
        assert!(format_ms(u64::MAX, |_| Offset::UTC).contains("out of range"));
    }
}
