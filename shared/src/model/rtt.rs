//! Round-trip times from probe locations to members: what latency steering
//! compares. The aggregator smooths each location's probe latencies (an
//! EWMA) and publishes a value only when it moved past a hysteresis step,
//! at most once per check cycle; edges receive them in the snapshot, like
//! health facts.

use std::sync::Arc;

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
/// by location (at most [`MAX_RTT_LOCATIONS`]). Held as two columns: the
/// location list is shared by every table measured from the same locations
/// (see [`LocationLists`]), so a member costs its times and not a copy of
/// every location's name. Tables are shared too: one is held by the
/// engine's output, the deferred commit, the feed's delta and its snapshot
/// at once.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default, utoipa::ToSchema)]
#[schema(value_type = Vec<LocationRtt>)]
pub struct Rtts(Columns);

/// The two columns of a [`Rtts`], of equal length.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
struct Columns {
    locations: Arc<[LocationId]>,
    micros: Arc<[u32]>,
}

impl Serialize for Rtts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.rows())
    }
}

impl<'de> Deserialize<'de> for Rtts {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Vec::<LocationRtt>::deserialize(d).map(Self::new)
    }
}

impl Rtts {
    /// A table from its rows (sorted by location, as the type requires).
    pub fn new(table: Vec<LocationRtt>) -> Self {
        let micros = table.iter().map(|r| r.micros).collect();
        Self(Columns {
            locations: table.into_iter().map(|r| r.location).collect(),
            micros,
        })
    }

    /// A table over a shared location list; `micros[i]` is the time from
    /// `locations[i]`. `None` when the lengths differ.
    pub fn with_locations(locations: Arc<[LocationId]>, micros: Vec<u32>) -> Option<Self> {
        (locations.len() == micros.len()).then(|| {
            Self(Columns {
                locations,
                micros: micros.into(),
            })
        })
    }

    /// Its rows, in location order.
    pub fn rows(&self) -> impl ExactSizeIterator<Item = LocationRtt> + '_ {
        (self.0.locations.iter().zip(self.0.micros.iter())).map(|(location, &micros)| LocationRtt {
            location: location.clone(),
            micros,
        })
    }

    /// Its locations, sorted.
    pub fn locations(&self) -> &[LocationId] {
        &self.0.locations
    }

    /// Its times, in the order of [`Rtts::locations`].
    pub fn micros(&self) -> &[u32] {
        &self.0.micros
    }

    /// How many locations measured it.
    pub fn len(&self) -> usize {
        self.0.micros.len()
    }

    /// True when no location measured it.
    pub fn is_empty(&self) -> bool {
        self.0.micros.is_empty()
    }

    /// The time seen from `location`, if it measured one.
    pub fn from(&self, location: &LocationId) -> Option<u32> {
        (self.0.locations.binary_search(location).ok()).and_then(|i| self.0.micros.get(i).copied())
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
                (self.0.micros.iter()).fold((0u64, 0u64), |(s, n), &v| (s + u64::from(v), n + 1))
            }
        };
        (n > 0).then(|| u32::try_from(sum / n).unwrap_or(u32::MAX))
    }

    /// True when sorted by location with no location twice.
    pub fn is_sorted_unique(&self) -> bool {
        self.0.locations.windows(2).all(|w| w[0] < w[1])
    }
}

/// Location lists handed out for [`Rtts::with_locations`]: a list equal to
/// one of the last [`LocationLists::KEPT`] is shared, not allocated again.
/// Members measured from the same locations (nearly all, in a steady mesh)
/// then hold one list between them.
#[derive(Debug, Default)]
pub struct LocationLists {
    recent: std::collections::VecDeque<Arc<[LocationId]>>,
}

impl LocationLists {
    /// Lists remembered: a mesh has a few distinct sets at once (all
    /// locations, all but one that is down or late).
    pub const KEPT: usize = 8;

    /// The shared list equal to `locations`.
    pub fn get(&mut self, locations: &[LocationId]) -> Arc<[LocationId]> {
        if let Some(i) = self.recent.iter().position(|l| **l == *locations) {
            let list = self.recent.remove(i).unwrap_or_else(|| locations.into());
            self.recent.push_front(list.clone());
            return list;
        }
        let list: Arc<[LocationId]> = locations.into();
        self.recent.push_front(list.clone());
        self.recent.truncate(Self::KEPT);
        list
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rtts(entries: &[(&str, u32)]) -> Rtts {
        Rtts::new(
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
    fn equal_location_lists_are_shared_and_tables_compare_by_content() {
        let mut lists = LocationLists::default();
        let names =
            |n: &[&str]| -> Vec<LocationId> { n.iter().map(|l| LocationId::new(*l)).collect() };
        let a = lists.get(&names(&["ams", "fra"]));
        let b = lists.get(&names(&["ams", "fra"]));
        assert!(Arc::ptr_eq(&a, &b));
        for i in 0..LocationLists::KEPT {
            lists.get(&names(&[&format!("x{i}")]));
        }
        assert!(
            !Arc::ptr_eq(&a, &lists.get(&names(&["ams", "fra"]))),
            "forgotten"
        );
        let shared = Rtts::with_locations(a, vec![10, 20]).unwrap();
        assert_eq!(shared, rtts(&[("ams", 10), ("fra", 20)]));
        assert_eq!(shared.from(&LocationId::new("fra")), Some(20));
        assert!(Rtts::with_locations(b, vec![1]).is_none(), "lengths differ");
        let json = serde_json::to_string(&shared).unwrap();
        assert_eq!(
            json,
            r#"[{"location":"ams","micros":10},{"location":"fra","micros":20}]"#
        );
        assert_eq!(serde_json::from_str::<Rtts>(&json).unwrap(), shared);
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
