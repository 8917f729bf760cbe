//! Round-trip times from probe locations to members: what latency steering
//! compares. The aggregator smooths each location's probe latencies (an
//! EWMA) and publishes a value only when it moved past a hysteresis step,
//! at most once per check cycle; edges receive them in the snapshot, like
//! health facts.

use serde::{Deserialize, Serialize};

use super::LocationId;

/// Most locations a member's table holds (the engine tracks 256).
pub const MAX_RTT_LOCATIONS: usize = 256;

/// One location's smoothed round-trip time to a member.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct LocationRtt {
    /// The probe location.
    pub location: LocationId,
    /// Smoothed round-trip time, microseconds.
    pub micros: u32,
}

/// A member's round-trip times, one per location that measured it, sorted
/// by location (at most [`MAX_RTT_LOCATIONS`]). Shared: a table is held by
/// the engine's output, the deferred commit, the feed's delta and its
/// snapshot at once, and at 100,000 members a copy each was most of the
/// aggregator's memory.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, utoipa::ToSchema)]
#[schema(value_type = Vec<LocationRtt>)]
pub struct Rtts(pub std::sync::Arc<[LocationRtt]>);

impl Serialize for Rtts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Rtts {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<LocationRtt>::deserialize(d).map(|table| Self(table.into()))
    }
}

impl Rtts {
    /// A table from its rows (sorted by location, as the type requires).
    pub fn new(table: Vec<LocationRtt>) -> Self {
        Self(table.into())
    }

    /// The time seen from `location`, if it measured one.
    pub fn from(&self, location: &LocationId) -> Option<u32> {
        self.0
            .binary_search_by(|r| r.location.cmp(location))
            .ok()
            .map(|i| self.0[i].micros)
    }

    /// The mean over `locations` that measured it (every location it has
    /// when `locations` is `None`); `None` when none did.
    pub fn mean(&self, locations: Option<&[LocationId]>) -> Option<u32> {
        let (sum, n) = match locations {
            Some(wanted) => wanted
                .iter()
                .filter_map(|l| self.from(l))
                .fold((0u64, 0u64), |(s, n), v| (s + u64::from(v), n + 1)),
            None => {
                (self.0.iter()).fold((0u64, 0u64), |(s, n), r| (s + u64::from(r.micros), n + 1))
            }
        };
        (n > 0).then(|| u32::try_from(sum / n).unwrap_or(u32::MAX))
    }

    /// True when sorted by location with no location twice.
    pub fn is_sorted_unique(&self) -> bool {
        self.0.windows(2).all(|w| w[0].location < w[1].location)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rtts(entries: &[(&str, u32)]) -> Rtts {
        Rtts(
            entries
                .iter()
                .map(|(l, m)| LocationRtt {
                    location: LocationId::new(*l),
                    micros: *m,
                })
                .collect(),
        )
    }

    #[test]
    fn the_mean_is_over_the_locations_that_measured() {
        let r = rtts(&[("ams", 10_000), ("fra", 20_000), ("nyc", 90_000)]);
        let eu = [LocationId::new("fra"), LocationId::new("ams")];
        assert_eq!(r.mean(Some(&eu)), Some(15_000));
        let one = [LocationId::new("fra"), LocationId::new("sfo")];
        assert_eq!(r.mean(Some(&one)), Some(20_000));
        assert_eq!(r.mean(Some(&[LocationId::new("sfo")])), None);
        assert_eq!(r.mean(None), Some(40_000));
        assert_eq!(Rtts::default().mean(None), None);
        assert!(r.is_sorted_unique());
        assert!(!rtts(&[("fra", 1), ("ams", 2)]).is_sorted_unique());
    }
}
