//! Round-trip times for latency steering: each location's passing results
//! feed an average, published per location only when it leaves the
//! hysteresis step, at most once per cycle, never from a quarantined
//! location, and not while an operator holds the pool.
#![allow(clippy::unwrap_used)]

mod support;

use gslb_engine::rtt::{RTT_STALE_CYCLES, moved};
use gslb_engine::*;
use gslb_shared::*;
use support::*;

fn harness(locations: usize) -> Harness {
    let mut h = Harness::new(locations, check_with(|_| {}));
    h.add(&member(1, |_| {}));
    h
}

fn table(rtt: &Rtts) -> Vec<(String, u32)> {
    rtt.rows()
        .map(|r| (r.location.to_string(), r.micros))
        .collect()
}

#[test]
fn the_first_cycle_publishes_each_locations_time() {
    let mut h = harness(3);
    h.timed_cycle(1, &[Some(5_000), Some(40_000), None]);
    let published = h.rtt_published(1);
    assert_eq!(published.len(), 1);
    assert_eq!(
        table(&published[0]),
        vec![("loc0".into(), 5_000), ("loc1".into(), 40_000)]
    );
}

#[test]
fn jitter_within_the_step_publishes_nothing_more() {
    let mut h = harness(2);
    h.timed_cycle(1, &[Some(20_000), Some(60_000)]);
    h.clear();
    // ±1.5 ms around 20 ms and ±5 ms around 60 ms: inside the 2 ms and
    // 6 ms steps, whatever the order.
    let noise = [
        (21_500, 55_000),
        (18_500, 65_000),
        (20_900, 59_000),
        (19_100, 61_000),
    ];
    for (a, b) in noise.iter().cycle().take(60) {
        h.timed_cycle(1, &[Some(*a), Some(*b)]);
    }
    assert!(h.rtt_published(1).is_empty(), "{:?}", h.rtt_published(1));
}

#[test]
fn a_lasting_change_is_published_at_the_next_close_and_at_most_once_per_cycle() {
    let mut h = harness(2);
    h.timed_cycle(1, &[Some(20_000), Some(60_000)]);
    h.clear();
    let mut cycles = 0;
    for _ in 0..20 {
        h.timed_cycle(1, &[Some(80_000), Some(60_000)]);
        cycles += 1;
    }
    let published = h.rtt_published(1);
    assert!(published.len() <= cycles, "once per cycle at most");
    assert!(!published.is_empty());
    let first = published[0].from(&LocationId::new("loc0")).unwrap();
    assert!(first > 30_000, "moved at the first close: {first}");
    let last = published.last().unwrap();
    let settled = last.from(&LocationId::new("loc0")).unwrap();
    assert!(!moved(settled, 80_000), "converged near 80 ms: {settled}");
    assert_eq!(last.from(&LocationId::new("loc1")), Some(60_000));
}

#[test]
fn a_location_that_stops_measuring_is_dropped() {
    let mut h = harness(2);
    h.timed_cycle(1, &[Some(5_000), Some(9_000)]);
    h.clear();
    for _ in 0..RTT_STALE_CYCLES {
        h.timed_cycle(1, &[None, Some(9_000)]);
    }
    let published = h.rtt_published(1);
    assert_eq!(published.len(), 1, "{published:?}");
    assert_eq!(
        table(&published[0]),
        vec![("loc1".into(), 9_000)],
        "loc0 dropped, loc1 unchanged"
    );
}

#[test]
fn failed_probes_are_not_times() {
    let mut h = harness(2);
    h.cycle(1, &[Some(false), Some(false)]);
    assert!(h.rtt_published(1).is_empty());
}

#[test]
fn a_held_pool_publishes_no_new_times() {
    let mut h = harness(2);
    h.timed_cycle(1, &[Some(5_000), Some(9_000)]);
    h.step(Input::Hold {
        all: true,
        pools: &[],
    })
    .unwrap();
    h.clear();
    for _ in 0..5 {
        h.timed_cycle(1, &[Some(90_000), Some(9_000)]);
    }
    assert!(h.rtt_published(1).is_empty());
    h.step(Input::Hold {
        all: false,
        pools: &[],
    })
    .unwrap();
    h.timed_cycle(1, &[Some(90_000), Some(9_000)]);
    assert_eq!(
        h.rtt_published(1).len(),
        1,
        "released: the next close publishes"
    );
}

#[test]
fn a_follower_publishes_no_times_of_its_own() {
    let mut h = harness(2);
    h.engine.set_follower(true);
    h.timed_cycle(1, &[Some(5_000), Some(9_000)]);
    assert!(h.rtt_published(1).is_empty());
}

#[test]
fn steady_times_from_twenty_locations_are_published_once() {
    let mut h = harness(20);
    for _ in 0..30 {
        h.timed_cycle(1, &[Some(500); 20]);
    }
    let p = h.rtt_published(1);
    assert_eq!(p.len(), 1, "{p:?}");
}
