//! Slow start (pool `slowStart`): when a member enters rotation the engine
//! publishes its ramp in nine 10% steps over the duration, then its full
//! weight; state restored or replicated carries the step it had reached.
#![allow(clippy::unwrap_used)]

mod support;

use std::time::Duration;

use gslb_engine::*;
use gslb_shared::*;
use support::*;

/// Nine steps of 100 s each: a harness cycle (which decides when its
/// results are in, then moves the clock to the cycle's deadline) stays
/// well inside the first.
const RAMP: Duration = Duration::from_secs(900);
const STEP: Duration = Duration::from_secs(100);

fn harness(warmup: u32) -> (Harness, u64) {
    let mut h = Harness::new(3, check_with(|_| {}));
    h.slow_start = Some(RAMP);
    h.add(&member(1, |m| m.warmup_threshold = warmup));
    (h, 1)
}

/// The ramp of every facts output for member 1, in order.
fn published(h: &Harness) -> Vec<Option<u8>> {
    h.out
        .iter()
        .filter_map(|o| match o {
            Output::Facts { member, facts } if *member == MemberId(1) => Some(facts.ramp),
            _ => None,
        })
        .collect()
}

/// When member 1 last came up.
fn entered(h: &Harness) -> Timestamp {
    h.transitions().last().unwrap().at
}

/// Tick every 10 s until the ramp is over (bounded).
fn run_ramp(h: &mut Harness) {
    for _ in 0..120 {
        h.advance(Duration::from_secs(10));
        if h.status(1).ramp.is_none() {
            return;
        }
    }
    panic!("the ramp did not end");
}

#[test]
fn coming_up_ramps_in_nine_steps_then_takes_the_full_weight() {
    let (mut h, id) = harness(0);
    h.all(id, true);
    assert_eq!(h.health(id), Health::Up);
    assert_eq!(h.status(id).ramp, Some(10));
    run_ramp(&mut h);
    let steps: Vec<Option<u8>> = (1..=9).map(|k| Some(10 * k)).chain([None]).collect();
    let ups: Vec<_> = published(&h).into_iter().skip(1).collect(); // first: unknown
    assert_eq!(ups, steps, "one publication per step");
}

#[test]
fn steps_follow_the_clock() {
    let (mut h, id) = harness(0);
    h.all(id, true);
    let at = entered(&h);
    h.now = at;
    h.advance(Duration::from_secs(250));
    assert_eq!(h.status(id).ramp, Some(30), "250 s of 900: third step");
    h.now = at;
    h.advance(RAMP - Duration::from_millis(1));
    assert_eq!(h.status(id).ramp, Some(90));
    h.advance(Duration::from_millis(1));
    assert_eq!(h.status(id).ramp, None);
}

#[test]
fn going_down_mid_ramp_drops_it_and_coming_back_starts_over() {
    let (mut h, id) = harness(0);
    h.all(id, true);
    h.now = entered(&h);
    h.advance(STEP * 5);
    assert_eq!(h.status(id).ramp, Some(60));
    h.all(id, false);
    assert_eq!(h.health(id), Health::Down);
    assert_eq!(h.status(id).ramp, None);
    h.all(id, true);
    assert_eq!(h.status(id).ramp, Some(10));
}

#[test]
fn warming_members_ramp_from_the_gate_opening() {
    let (mut h, id) = harness(2);
    h.all(id, true);
    assert_eq!(h.health(id), Health::Up);
    assert!(h.status(id).warming);
    assert_eq!(h.status(id).ramp, None, "not in rotation yet");
    h.all(id, true);
    let s = h.status(id);
    assert!(!s.warming);
    assert_eq!(s.ramp, Some(10), "the gate opened: rotation starts");
}

#[test]
fn members_of_pools_without_slow_start_never_ramp() {
    let mut h = Harness::new(3, check_with(|_| {}));
    h.add(&member(1, |_| {}));
    h.all(1, true);
    h.advance(Duration::from_secs(5));
    assert!(published(&h).iter().all(Option::is_none));
}

#[test]
fn turning_slow_start_off_gives_the_full_weight_at_once() {
    let (mut h, id) = harness(0);
    h.all(id, true);
    assert_eq!(h.status(id).ramp, Some(10));
    h.slow_start = None;
    h.add(&member(id, |_| {}));
    assert_eq!(h.status(id).ramp, None);
    assert_eq!(published(&h).last(), Some(&None));
}

#[test]
fn re_enabling_a_member_ramps_it() {
    let (mut h, id) = harness(0);
    h.all(id, true);
    run_ramp(&mut h);
    h.add(&member(id, |m| m.enabled = false));
    assert_eq!(h.status(id).ramp, None);
    h.add(&member(id, |_| {}));
    assert_eq!(h.status(id).ramp, Some(10));
}

/// Add member `id` to a pool without a check (up the moment it is added)
/// and with slow start.
fn add_unchecked(h: &mut Harness, id: u64) {
    let m = member(id, |_| {});
    h.step(Input::UpsertMember {
        member: &m,
        check: None,
        slow_start: Some(RAMP),
    })
    .unwrap();
}

#[test]
fn a_new_member_up_from_the_start_ramps_once_decisions_are_made() {
    let mut h = Harness::new(3, check_with(|_| {}));
    add_unchecked(&mut h, 5);
    assert_eq!(h.status(5).ramp, Some(10));
}

fn restored(ramp: Option<u8>) -> [RestoredMember; 1] {
    [RestoredMember {
        member: MemberId(1),
        health: Health::Up,
        gate_open: true,
        manual: None,
        ramp,
    }]
}

#[test]
fn a_restart_resumes_the_step_it_had_reached() {
    let mut h = Harness::with_config(3, check_with(|_| {}), EngineConfig::default(), false);
    h.slow_start = Some(RAMP);
    h.add(&member(1, |_| {}));
    h.step(Input::Restore {
        members: &restored(Some(50)),
        first_start: false,
    })
    .unwrap();
    assert_eq!(h.status(1).ramp, Some(50), "not back to 10");
    h.advance(STEP);
    assert_eq!(h.status(1).ramp, Some(60));
}

#[test]
fn a_restart_does_not_ramp_members_that_were_in_rotation() {
    let mut h = Harness::with_config(3, check_with(|_| {}), EngineConfig::default(), false);
    h.slow_start = Some(RAMP);
    h.add(&member(1, |_| {}));
    h.step(Input::Restore {
        members: &restored(None),
        first_start: false,
    })
    .unwrap();
    assert_eq!(h.status(1).ramp, None);
    for _ in 0..3 {
        h.all(1, true); // fresh data opens the startup gate
    }
    assert!(h.engine.decisions_enabled());
    assert_eq!(h.status(1).ramp, None);
}

#[test]
fn a_follower_publishes_the_leaders_step_as_is() {
    let mut h = Harness::new(3, check_with(|_| {}));
    h.slow_start = Some(RAMP);
    h.add(&member(1, |_| {}));
    h.clear();
    h.step(Input::Replicated(&restored(Some(70)))).unwrap();
    assert_eq!(published(&h), vec![Some(70)]);
    h.step(Input::Replicated(&restored(None))).unwrap();
    assert_eq!(published(&h), vec![Some(70), None]);
}

#[test]
fn a_follower_starts_no_ramp_of_its_own() {
    let mut h = Harness::new(3, check_with(|_| {}));
    h.slow_start = Some(RAMP);
    h.engine.set_follower(true);
    add_unchecked(&mut h, 5);
    assert_eq!(h.health(5), Health::Up);
    assert_eq!(h.status(5).ramp, None, "the leader's step comes replicated");
    h.engine.set_follower(false);
    h.add(&member(6, |_| {}));
    h.all(6, true);
    assert_eq!(h.status(6).ramp, Some(10), "a promoted node decides");
}

#[test]
fn a_hold_freezes_the_ramp() {
    let (mut h, id) = harness(0);
    h.all(id, true);
    h.step(Input::Hold {
        all: true,
        pools: &[],
    })
    .unwrap();
    h.advance(RAMP);
    assert_eq!(h.status(id).ramp, Some(10), "held");
    h.step(Input::Hold {
        all: false,
        pools: &[],
    })
    .unwrap();
    h.advance(Duration::from_millis(1));
    assert_eq!(
        h.status(id).ramp,
        None,
        "released: the ramp's time has passed"
    );
}
