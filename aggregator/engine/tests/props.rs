//! Property tests for the health engine.
#![allow(clippy::unwrap_used)]

mod support;

use gslb_engine::*;
use gslb_shared::*;
use proptest::prelude::*;
use support::*;

/// One step of a random scenario.
#[derive(Debug, Clone)]
enum Op {
    /// Each location reports pass, fail or nothing for member `m`.
    Cycle(u64, Vec<Option<bool>>),
    Disable(u64),
    Enable(u64),
    Weight(u64, u32),
    Advance(u64),
    /// An operator pauses (true) or resumes every pool's decisions.
    Hold(bool),
}

fn op(locations: usize) -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (1u64..4, prop::collection::vec(prop::option::weighted(0.9, prop::bool::weighted(0.7)), locations))
            .prop_map(|(m, p)| Op::Cycle(m, p)),
        1 => (1u64..4).prop_map(Op::Disable),
        1 => (1u64..4).prop_map(Op::Enable),
        1 => (1u64..4, 0u32..200).prop_map(|(m, w)| Op::Weight(m, w)),
        1 => (1u64..60_000).prop_map(Op::Advance),
        1 => any::<bool>().prop_map(Op::Hold),
    ]
}

/// Outputs, final statuses, and the outputs made while decisions were held.
type Run = (Vec<Output>, Vec<MemberStatus>, Vec<Output>);

fn run(ops: &[Op], window: u32) -> Run {
    let mut h = Harness::new(5, check_with(|c| c.window = window));
    let mut members: Vec<Member> = (1..4)
        .map(|id| member(id, |m| m.warmup_threshold = id as u32 - 1))
        .collect();
    for m in &members {
        h.add(m);
    }
    let mut held = false;
    let mut while_held = Vec::new();
    for op in ops {
        let before = h.out.len();
        match op {
            Op::Cycle(m, pattern) => h.cycle(*m, pattern),
            Op::Disable(m) | Op::Enable(m) | Op::Weight(m, _) => {
                let member = &mut members[*m as usize - 1];
                match op {
                    Op::Disable(_) => member.enabled = false,
                    Op::Enable(_) => member.enabled = true,
                    Op::Weight(_, w) => member.weight = *w,
                    _ => unreachable!(),
                }
                let member = member.clone();
                h.add(&member);
            }
            Op::Advance(ms) => h.advance(std::time::Duration::from_millis(*ms)),
            Op::Hold(on) => {
                h.step(Input::Hold {
                    all: *on,
                    pools: &[],
                })
                .unwrap();
                held = *on;
                continue; // a resume decides: that is not "while held"
            }
        }
        if held {
            while_held.extend_from_slice(&h.out[before..]);
        }
    }
    // A held gate may count past its threshold; the resume opens it.
    h.step(Input::Hold {
        all: false,
        pools: &[],
    })
    .unwrap();
    let statuses = (1..4).map(|id| h.status(id)).collect();
    (h.out, statuses, while_held)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn same_inputs_at_the_same_times_give_the_same_outputs(ops in prop::collection::vec(op(5), 0..60), window in 1u32..4) {
        let a = run(&ops, window);
        let b = run(&ops, window);
        prop_assert_eq!(a, b);
    }

    #[test]
    fn quorum_transitions_only_cross_the_thresholds(ops in prop::collection::vec(op(5), 0..80), window in 1u32..4) {
        let (outputs, _, _) = run(&ops, window);
        for o in &outputs {
            if let Output::Transition(t) = o
                && let Reason::Quorum { score, rise, fall, .. } = t.reason
            {
                match t.to {
                    Health::Up => prop_assert!(score >= rise, "rose at {score}"),
                    Health::Down => prop_assert!(score < fall, "fell at {score}"),
                    Health::Unknown => prop_assert!(false, "never transitions to unknown"),
                }
            }
        }
    }

    #[test]
    fn warming_is_exactly_gate_closed_with_a_threshold(ops in prop::collection::vec(op(5), 0..80)) {
        let (_, statuses, _) = run(&ops, 1);
        for s in statuses {
            if s.warmup_threshold == 0 {
                prop_assert!(!s.warming);
            }
            if s.warming {
                prop_assert!(s.warmup_passes < s.warmup_threshold);
            }
        }
    }

    #[test]
    fn while_held_no_health_changes_and_no_gate_opens(ops in prop::collection::vec(op(5), 0..80), window in 1u32..4) {
        let (_, _, while_held) = run(&ops, window);
        for o in &while_held {
            prop_assert!(!matches!(o, Output::Transition(_)), "{o:?}");
            prop_assert!(
                !matches!(o, Output::Warmup { event: WarmupEvent::Opened, .. }),
                "{o:?}"
            );
        }
    }
}
