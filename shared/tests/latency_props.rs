//! Latency steering in selection: the answer is the members within the
//! band of the fastest, from the client region's locations (every location
//! for other clients), rotated; unmeasured members only when none is
//! measured; explain shows every time compared.
#![allow(clippy::unwrap_used)]

mod support;

use gslb_shared::selection::latency::{Compared, band_limit, keep_fastest};
use gslb_shared::selection::{Candidate, Step};
use gslb_shared::*;
use proptest::prelude::*;
use support::*;

/// Two regions on two continents: `eu` measured from fra and ams, `us`
/// from nyc.
fn world() -> (World, DynamicRecord, [MemberId; 3]) {
    let mut w = World::new();
    let p = w.pool(|_| {});
    let fra = w.member(p, "192.0.2.1", |_| {});
    let nyc = w.member(p, "192.0.2.2", |_| {});
    let sin = w.member(p, "192.0.2.3", |_| {});
    w.rtt(fra, &[("fra", 3_000), ("ams", 9_000), ("nyc", 80_000)]);
    w.rtt(nyc, &[("fra", 85_000), ("ams", 90_000), ("nyc", 4_000)]);
    w.rtt(sin, &[("fra", 150_000), ("ams", 160_000), ("nyc", 210_000)]);
    let mut r = record(&[p]);
    r.steering = Steering::Latency;
    r.region_locations.insert(
        Region::new("eu"),
        vec![LocationId::new("fra"), LocationId::new("ams")],
    );
    r.region_locations
        .insert(Region::new("us"), vec![LocationId::new("nyc")]);
    (w, r, [fra, nyc, sin])
}

#[test]
fn each_region_gets_the_members_fastest_from_its_locations() {
    let (w, r, [fra, nyc, _]) = world();
    assert_eq!(ids(&run(&w, &r, Some("eu")).1), vec![fra]);
    assert_eq!(ids(&run(&w, &r, Some("us")).1), vec![nyc]);
}

#[test]
fn other_clients_compare_the_mean_over_every_location() {
    let (mut w, r, [fra, nyc, _]) = world();
    // Means: fra 30.7 ms, nyc 59.7 ms, sin 173 ms.
    assert_eq!(ids(&run(&w, &r, None).1), vec![fra]);
    assert_eq!(ids(&run(&w, &r, Some("apac")).1), vec![fra]);
    // Within 20% of each other: both answered.
    w.rtt(nyc, &[("fra", 30_000), ("ams", 31_000), ("nyc", 31_000)]);
    assert_eq!(ids(&run(&w, &r, None).1), vec![fra, nyc]);
}

#[test]
fn members_within_the_band_are_answered_together_and_rotated() {
    let (mut w, r, [fra, nyc, _]) = world();
    // nyc 20% slower than fra from eu (and 2 ms is the floor): both.
    w.rtt(nyc, &[("fra", 3_500), ("ams", 9_500), ("nyc", 4_000)]);
    assert_eq!(ids(&run(&w, &r, Some("eu")).1), vec![fra, nyc]);
    let index = w.index();
    let mut firsts = std::collections::BTreeSet::new();
    let mut selector = gslb_shared::selection::Selector::new();
    let mut rng = <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(1);
    let eu = Region::new("eu");
    for rotation in 0..4 {
        let query = gslb_shared::selection::Query {
            family: gslb_shared::selection::Family::V4,
            region: Some(&eu),
            place: Place::UNKNOWN,
            rotation,
            affinity: None,
        };
        let (_, answers) = selector.select(&index, &r, query, &mut rng, None);
        firsts.insert(answers[0].member.unwrap());
    }
    assert_eq!(firsts.len(), 2, "both lead in turn");
}

#[test]
fn unmeasured_members_wait_until_measured_unless_none_is() {
    let (mut w, r, [fra, ..]) = world();
    let p = *w.catalog.pools.keys().next().unwrap();
    let new = w.member(p, "192.0.2.9", |_| {});
    assert!(!ids(&run(&w, &r, Some("eu")).1).contains(&new));
    w.rtt = Map::new();
    let all = ids(&run(&w, &r, Some("eu")).1);
    assert_eq!(all.len(), 4, "nothing measured: every member, rotated");
    assert!(all.contains(&fra) && all.contains(&new));
}

#[test]
fn health_comes_first_a_down_member_is_never_the_fastest() {
    let (mut w, r, [fra, nyc, _]) = world();
    w.set(fra, Health::Down, false);
    assert_eq!(ids(&run(&w, &r, Some("eu")).1), vec![nyc]);
}

#[test]
fn explain_shows_the_times_compared() {
    let (w, r, [fra, nyc, sin]) = world();
    let (_, _, trace) = run(&w, &r, Some("eu"));
    let step = trace
        .iter()
        .find(|s| matches!(s, Step::Latency { .. }))
        .unwrap();
    let Step::Latency {
        region,
        locations,
        fastest_micros,
        limit_micros,
        compared,
    } = step
    else {
        unreachable!()
    };
    assert_eq!(region.as_ref().map(Region::as_str), Some("eu"));
    assert_eq!(locations.as_ref().unwrap().len(), 2);
    assert_eq!(*fastest_micros, Some(6_000));
    assert_eq!(*limit_micros, Some(8_000));
    assert_eq!(
        compared,
        &vec![
            Compared {
                member: fra,
                rtt_micros: Some(6_000),
                kept: true
            },
            Compared {
                member: nyc,
                rtt_micros: Some(87_500),
                kept: false
            },
            Compared {
                member: sin,
                rtt_micros: Some(155_000),
                kept: false
            },
        ]
    );
    let json = serde_json::to_value(step).unwrap();
    assert_eq!(json["step"], "latency");
    assert_eq!(json["compared"][0]["rttMicros"], 6_000);
}

fn candidate(id: u64) -> Candidate {
    Candidate {
        id: MemberId(id),
        address: None,
        weight: 1,
        priority: 0,
        backup: false,
        health: Health::Up,
    }
}

proptest! {
    /// Whatever the times: the fastest is kept, everything kept is within
    /// the band, everything measured and dropped is beyond it, and the
    /// kept are in time order.
    #[test]
    fn the_band_is_exact(times in prop::collection::vec(prop::option::of(0u32..500_000), 1..12)) {
        let mut rtt = Map::new();
        for (i, t) in times.iter().enumerate() {
            if let Some(t) = t {
                rtt.insert(MemberId(i as u64), Rtts::new(vec![LocationRtt {
                    location: LocationId::new("here"),
                    micros: *t,
                }]));
            }
        }
        let mut set: Vec<_> = (0..times.len() as u64).map(candidate).collect();
        let mut compared = Vec::new();
        let fastest = keep_fastest(&mut set, None, &rtt, Some(&mut compared));
        let measured: Vec<u32> = times.iter().flatten().copied().collect();
        prop_assert_eq!(fastest, measured.iter().min().copied());
        prop_assert_eq!(compared.len(), times.len());
        match fastest {
            None => prop_assert_eq!(set.len(), times.len()),
            Some(f) => {
                let limit = band_limit(f);
                let time = |c: &Candidate| times[c.id.0 as usize];
                prop_assert!(set.iter().all(|c| time(c).is_some_and(|t| t <= limit)));
                prop_assert!(set.iter().any(|c| time(c) == Some(f)));
                let kept = set.len();
                let within = measured.iter().filter(|t| **t <= limit).count();
                prop_assert_eq!(kept, within);
                prop_assert!(set.windows(2).all(|w| time(&w[0]) <= time(&w[1])));
                for c in &compared {
                    prop_assert_eq!(c.kept, set.iter().any(|s| s.id == c.member));
                }
            }
        }
    }
}

#[test]
fn large_sets_keep_the_band_in_time_order() {
    let mut rtt = Map::new();
    let n = 200u64;
    for i in 0..n {
        // 100 members at 10–11.9 ms (inside the band), the rest far slower.
        let micros = if i % 2 == 0 {
            10_000 + (i as u32 * 37) % 1_900
        } else {
            90_000
        };
        rtt.insert(
            MemberId(i),
            Rtts::new(vec![LocationRtt {
                location: LocationId::new("here"),
                micros,
            }]),
        );
    }
    let mut set: Vec<_> = (0..n).map(candidate).collect();
    keep_fastest(&mut set, None, &rtt, None);
    let times: Vec<u32> = set
        .iter()
        .map(|c| rtt.get(&c.id).unwrap().micros()[0])
        .collect();
    assert_eq!(set.len(), 100);
    assert!(times.windows(2).all(|w| w[0] <= w[1]));
    assert!(times.iter().all(|t| *t <= band_limit(10_000)));
}
