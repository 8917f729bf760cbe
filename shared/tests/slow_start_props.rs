//! Slow start in selection: a ramping member is answered in proportion to
//! the part of its weight its step gives it, never less than weight 1, and
//! explain shows the step and the weight used.
#![allow(clippy::unwrap_used)]

mod support;

use gslb_shared::selection::{Family, Query, Ramping, Selector, Step};
use gslb_shared::*;
use proptest::prelude::*;
use rand::SeedableRng;
use rand::rngs::StdRng;
use support::*;

const QUERY: Query = Query {
    family: Family::V4,
    region: None,
    place: Place::UNKNOWN,
    rotation: 0,
    affinity: None,
};

/// Share of `n` weighted answers whose first address is member `a`'s.
fn first_share(w: &World, r: &DynamicRecord, a: MemberId, n: u32, seed: u64) -> f64 {
    let index = w.index();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut selector = Selector::new();
    let mut hits = 0u32;
    for _ in 0..n {
        if selector.select(&index, r, QUERY, &mut rng, None).1[0].member == Some(a) {
            hits += 1;
        }
    }
    f64::from(hits) / f64::from(n)
}

/// A pool of two members, `a` ramping at `percent` of `wa`, `b` at full `wb`.
fn two(wa: u32, wb: u32, percent: Option<u8>) -> (World, DynamicRecord, MemberId) {
    let mut w = World::new();
    let p = w.pool(|_| {});
    let a = w.member(p, "192.0.2.1", |m| m.weight = wa);
    w.member(p, "192.0.2.2", |m| m.weight = wb);
    if let Some(percent) = percent {
        w.ramp(a, percent);
    }
    let mut r = record(&[p]);
    r.steering = Steering::Weighted;
    r.first_n = 1;
    (w, r, a)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn a_ramping_member_takes_its_steps_share(
        wa in 1u32..1_000,
        wb in 1u32..1_000,
        step in 0u8..9,
        seed in any::<u64>(),
    ) {
        let percent = 10 + 10 * step;
        let (w, r, a) = two(wa, wb, Some(percent));
        let effective = MemberFacts { ramp: Some(percent), ..MemberFacts::UP }.effective_weight(wa);
        prop_assert!(effective >= 1 && effective <= wa);
        let expected = f64::from(effective) / f64::from(effective + wb);
        let observed = first_share(&w, &r, a, 20_000, seed);
        // 20,000 draws: four standard deviations are below 0.015.
        prop_assert!((observed - expected).abs() < 0.015, "{observed} vs {expected}");
    }
}

#[test]
fn answer_frequencies_rise_step_by_step_to_the_full_weight() {
    // Equal weights: at full weight each member is first half of the time;
    // a member ramping at p% is first p/(p+100) of the time.
    let mut shares = Vec::new();
    let steps: Vec<Option<u8>> = (1..=9).map(|k| Some(10 * k)).chain([None]).collect();
    for (i, step) in steps.iter().enumerate() {
        let (w, r, a) = two(100, 100, *step);
        let share = first_share(&w, &r, a, 40_000, i as u64);
        let p = f64::from(step.unwrap_or(100));
        let expected = p / (p + 100.0);
        assert!(
            (share - expected).abs() < 0.012,
            "step {step:?}: {share} vs {expected}"
        );
        shares.push(share);
    }
    for pair in shares.windows(2) {
        assert!(pair[0] < pair[1], "shares must rise: {shares:?}");
    }
}

#[test]
fn a_weight_of_one_ramps_at_one_and_is_still_answered() {
    let (w, r, a) = two(1, 1, Some(10));
    let share = first_share(&w, &r, a, 20_000, 7);
    assert!((share - 0.5).abs() < 0.02, "{share}");
}

#[test]
fn explain_shows_the_step_and_the_weight_used() {
    let (w, r, a) = two(40, 100, Some(30));
    let index = w.index();
    let mut rng = StdRng::seed_from_u64(1);
    let mut trace = Vec::new();
    Selector::new().select(&index, &r, QUERY, &mut rng, Some(&mut trace));
    let ramping = trace
        .iter()
        .find_map(|s| match s {
            Step::Candidates { ramping, .. } => Some(ramping.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        ramping,
        vec![Ramping {
            member: a,
            percent: 30,
            weight: 40,
            effective_weight: 12,
        }]
    );
    let json = serde_json::to_value(&trace).unwrap();
    assert_eq!(json[1]["ramping"][0]["effectiveWeight"], 12, "{json}");
}
