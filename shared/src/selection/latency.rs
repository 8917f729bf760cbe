//! Latency steering: of the members selection chose, keep those whose
//! round-trip time from the client's locations is within a tolerance band
//! of the fastest; steering then rotates among them.
//!
//! A member's time is the mean of its published times from the locations
//! its record maps the client's region to (`regionLocations`), or from
//! every location when the region is not mapped. Members no such location
//! measured are dropped while any member is measured; when none is, all
//! stay. Noise is kept out twice: the aggregator publishes a location's
//! smoothed time only when it moved past a hysteresis step, and members
//! within the band of the fastest are answered together rather than one
//! of them winning by a hair.

use serde::Serialize;

use super::Candidate;
use crate::model::{LocationId, Map, MemberId, Rtts};

/// The band, in percent of the fastest time, within which members count
/// as equally fast.
pub const LATENCY_BAND_PERCENT: u32 = 20;
/// The band's floor (microseconds): on short paths a few percent is noise.
pub const LATENCY_BAND_FLOOR_US: u32 = 2_000;

/// The slowest time that is still answered when the fastest is `fastest`.
pub fn band_limit(fastest: u32) -> u32 {
    let band = (u64::from(fastest) * u64::from(LATENCY_BAND_PERCENT) / 100)
        .max(u64::from(LATENCY_BAND_FLOOR_US));
    u32::try_from(u64::from(fastest) + band).unwrap_or(u32::MAX)
}

/// What latency steering compared for one member.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Compared {
    /// Member.
    pub member: MemberId,
    /// Its mean time from the client's locations (µs), if measured.
    pub rtt_micros: Option<u32>,
    /// Within the band: answered.
    pub kept: bool,
}

/// Sets up to this size are timed on the stack.
const TIMED: usize = 64;

/// Keep the members of `set` within the band of the fastest, fastest first
/// (stable for equal times). Returns the fastest time, `None` when no
/// member is measured (the set is then left as it was). Fills `compared`
/// with every member's time when given. Each member's time is looked up
/// once.
pub fn keep_fastest(
    set: &mut Vec<Candidate>,
    locations: Option<&[LocationId]>,
    rtts: &Map<MemberId, Rtts>,
    compared: Option<&mut Vec<Compared>>,
) -> Option<u32> {
    let mut stack = [None; TIMED];
    let mut heap = Vec::new();
    let times: &mut [Option<u32>] = if set.len() <= TIMED {
        &mut stack[..set.len()]
    } else {
        heap.resize(set.len(), None);
        &mut heap
    };
    for (t, c) in times.iter_mut().zip(set.iter()) {
        *t = rtts.get(&c.id).and_then(|r| r.mean(locations));
    }
    let fastest = times.iter().flatten().min().copied();
    let limit = fastest.map(band_limit);
    let inside = |t: Option<u32>| match (t, limit) {
        (Some(t), Some(limit)) => t <= limit,
        (_, None) => true,
        (None, Some(_)) => false,
    };
    if let Some(out) = compared {
        out.extend(set.iter().zip(times.iter()).map(|(c, t)| Compared {
            member: c.id,
            rtt_micros: *t,
            kept: inside(*t),
        }));
    }
    fastest?;
    // Keep the members inside the band, in order, then sort them by time
    // (stable; insertion sort for the usual small sets).
    let mut kept = 0;
    for i in 0..set.len() {
        if inside(times[i]) {
            set.swap(kept, i);
            times.swap(kept, i);
            kept += 1;
        }
    }
    set.truncate(kept);
    if kept > TIMED {
        let mut pairs: Vec<_> = times.iter().copied().zip(set.iter().copied()).collect();
        pairs.sort_by_key(|(t, _)| *t);
        set.clear();
        set.extend(pairs.into_iter().map(|(_, c)| c));
        return fastest;
    }
    for i in 1..kept {
        let mut j = i;
        while j > 0 && times[j - 1] > times[j] {
            set.swap(j - 1, j);
            times.swap(j - 1, j);
            j -= 1;
        }
    }
    fastest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_band_has_a_floor_and_a_share() {
        assert_eq!(band_limit(1_000), 3_000);
        assert_eq!(band_limit(50_000), 60_000);
        assert_eq!(band_limit(u32::MAX), u32::MAX);
    }
}
