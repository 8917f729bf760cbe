//! Table tests for DESIGN.md "Health engine", one per rule.
#![allow(clippy::unwrap_used)]

mod support;

use std::time::Duration;

use gslb_engine::*;
use gslb_shared::*;
use support::*;

fn up_member(h: &mut Harness, id: u64) {
    h.add(&member(id, |_| {}));
    h.all(id, true);
    assert_eq!(h.health(id), Health::Up);
}

#[test]
fn five_locations_one_failing_stays_up() {
    let mut h = Harness::new(5, check_with(|_| {}));
    up_member(&mut h, 1);
    for _ in 0..5 {
        h.fraction(1, 4);
        assert_eq!(h.health(1), Health::Up);
    }
}

#[test]
fn new_member_rises_to_up_only_at_rise() {
    let mut h = Harness::new(20, check_with(|_| {}));
    h.add(&member(1, |_| {}));
    assert_eq!(h.health(1), Health::Unknown);
    h.fraction(1, 16);
    assert_eq!(h.health(1), Health::Unknown, "0.80 holds unknown");
    h.fraction(1, 17);
    assert_eq!(h.health(1), Health::Up, "0.85 rises");
}

#[test]
fn up_member_at_quarter_stays_up_and_below_fall_goes_down() {
    let mut h = Harness::new(20, check_with(|_| {}));
    up_member(&mut h, 1);
    h.fraction(1, 5); // 0.25
    assert_eq!(h.health(1), Health::Up);
    h.fraction(1, 4); // 0.20: not below fall
    assert_eq!(h.health(1), Health::Up);
    h.fraction(1, 3); // 0.15
    assert_eq!(h.health(1), Health::Down);
}

#[test]
fn down_member_at_eighty_stays_down_and_at_rise_goes_up() {
    let mut h = Harness::new(20, check_with(|_| {}));
    up_member(&mut h, 1);
    h.all(1, false);
    assert_eq!(h.health(1), Health::Down);
    h.fraction(1, 16); // 0.80
    assert_eq!(h.health(1), Health::Down);
    h.fraction(1, 17); // 0.85
    assert_eq!(h.health(1), Health::Up);
}

#[test]
fn transition_carries_per_location_evidence() {
    let mut h = Harness::new(3, check_with(|_| {}));
    up_member(&mut h, 1);
    h.clear();
    h.cycle(1, &[Some(false), Some(false), None]);
    let t = h.transitions();
    assert_eq!(t.len(), 1);
    let t = t[0];
    assert_eq!((t.from, t.to), (Health::Up, Health::Down));
    assert!(
        matches!(t.reason, Reason::Quorum { score, pass_fraction, .. } if score == 0.0 && pass_fraction == 0.0)
    );
    let outcomes: Vec<_> = t
        .evidence
        .iter()
        .map(|e| (e.location.as_str().to_owned(), e.outcome))
        .collect();
    assert_eq!(
        outcomes,
        vec![
            (
                "loc0".into(),
                EvidenceOutcome::Fail {
                    reason: FailReason::Timeout
                }
            ),
            (
                "loc1".into(),
                EvidenceOutcome::Fail {
                    reason: FailReason::Timeout
                }
            ),
            ("loc2".into(), EvidenceOutcome::Missing),
        ]
    );
    assert_eq!(t.evidence[0].latency_us, 1_000);
}

#[test]
fn cycle_closes_as_soon_as_every_expected_location_reported() {
    let mut h = Harness::new(3, check_with(|_| {}));
    h.add(&member(1, |_| {}));
    let k = h.next_cycle;
    h.now = Timestamp(k * INTERVAL_MS + 1_000);
    for i in 0..h.locations.len() {
        h.report(i, 1, k, None);
    }
    assert_eq!(h.health(1), Health::Up, "closed before any deadline tick");
}

#[test]
fn cycle_with_missing_reports_closes_at_its_deadline() {
    let mut h = Harness::new(3, check_with(|_| {}));
    h.add(&member(1, |_| {}));
    let k = h.next_cycle;
    h.now = Timestamp(k * INTERVAL_MS + 1_000);
    h.report(0, 1, k, None);
    h.now = Timestamp((k + 1) * INTERVAL_MS + 5_499);
    h.step(Input::Tick).unwrap();
    assert_eq!(
        h.health(1),
        Health::Unknown,
        "still open before interval + timeout + grace"
    );
    h.now = Timestamp((k + 1) * INTERVAL_MS + 5_500);
    h.step(Input::Tick).unwrap();
    assert_eq!(h.health(1), Health::Up, "1 of 1 reporting passed");
}

#[test]
fn stale_locations_count_neither_way() {
    let mut h = Harness::new(5, check_with(|_| {}));
    up_member(&mut h, 1);
    // Two locations stop reporting; the other three still pass.
    for _ in 0..4 {
        h.cycle(1, &[Some(true), Some(true), Some(true), None, None]);
        assert_eq!(h.status(1).last_pass_fraction, Some(1.0));
    }
    let status = h.status(1);
    let stale: Vec<_> = status
        .locations
        .iter()
        .filter(|l| l.stale)
        .map(|l| l.location.as_str().to_owned())
        .collect();
    assert_eq!(stale, vec!["loc3", "loc4"]);
    // A down member with three passing fresh locations out of five rises.
    h.cycle(1, &[Some(false), Some(false), Some(false), None, None]);
    assert_eq!(h.health(1), Health::Down);
    h.cycle(1, &[Some(true), Some(true), Some(true), None, None]);
    assert_eq!(
        h.health(1),
        Health::Up,
        "3/3 reporting = 1.0; the silent two are not failures"
    );
}

#[test]
fn no_data_cycles_change_nothing() {
    let mut h = Harness::new(3, check_with(|_| {}));
    h.add(&member(1, |m| m.warmup_threshold = 3));
    h.all(1, true);
    h.all(1, true);
    let before = h.status(1);
    h.clear();
    for _ in 0..5 {
        h.cycle(1, &[None, None, None]);
    }
    let after = h.status(1);
    assert_eq!(after.health, before.health);
    assert_eq!(
        after.warmup_passes, 2,
        "no-data cycles neither count nor reset"
    );
    assert_eq!(after.score, before.score);
    assert!(
        h.out
            .iter()
            .all(|o| !matches!(o, Output::Transition(_) | Output::Facts { .. }))
    );
}

#[test]
fn a_cycle_whose_only_reporters_are_quarantined_is_no_data() {
    let mut h = Harness::new(3, check_with(|c| c.control = true));
    h.add(&member(1, |m| m.warmup_threshold = 5));
    h.all(1, true);
    h.all(1, true);
    h.cycle(1, &[Some(true), Some(true), Some(false)]); // loc2 fails the control check
    h.advance(Duration::from_secs(10));
    assert_eq!(
        h.engine.quarantined_locations(),
        vec![LocationId::new("loc2")]
    );
    let before = h.status(1);
    h.clear();
    h.cycle(1, &[None, None, Some(false)]);
    let after = h.status(1);
    assert_eq!(
        (after.health, after.score, after.last_pass_fraction),
        (before.health, before.score, before.last_pass_fraction)
    );
    assert!(h.transitions().is_empty());
}

#[test]
fn score_is_the_mean_over_the_window() {
    let mut h = Harness::new(4, check_with(|c| c.window = 3));
    up_member(&mut h, 1);
    h.fraction(1, 0); // window [1, 0] -> 0.5
    assert_eq!(h.health(1), Health::Up);
    h.fraction(1, 0); // [1, 0, 0] -> 0.33
    assert_eq!(h.health(1), Health::Up);
    h.fraction(1, 0); // [0, 0, 0] -> 0
    assert_eq!(h.health(1), Health::Down);
    assert_eq!(h.status(1).score, Some(0.0));
}

#[test]
fn warming_member_is_excluded_even_when_healthy() {
    let mut h = Harness::new(3, check_with(|_| {}));
    h.add(&member(1, |m| m.warmup_threshold = 3));
    h.all(1, true);
    let s = h.status(1);
    assert_eq!(
        (s.health, s.warming, s.warmup_passes, s.warmup_threshold),
        (Health::Up, true, 1, 3)
    );
    assert!(h.out.contains(&Output::Facts {
        member: MemberId(1),
        facts: MemberFacts {
            health: Health::Up,
            warming: true,
            ramp: None,
        }
    }));
}

#[test]
fn warm_up_gate_opens_after_threshold_passing_cycles_and_latches() {
    let mut h = Harness::new(3, check_with(|_| {}));
    h.add(&member(1, |m| m.warmup_threshold = 3));
    h.all(1, true);
    h.all(1, true);
    assert!(h.status(1).warming);
    h.all(1, true);
    let s = h.status(1);
    assert!(!s.warming && s.warmup_passes == 3);
    assert!(h.out.iter().any(|o| matches!(
        o,
        Output::Warmup {
            event: WarmupEvent::Opened,
            passes: 3,
            threshold: 3,
            ..
        }
    )));
    h.all(1, false);
    h.all(1, true);
    assert!(
        !h.status(1).warming,
        "the latch stays open across a down/up"
    );
}

#[test]
fn a_single_failed_cycle_during_warm_up_resets_the_counter() {
    let mut h = Harness::new(3, check_with(|_| {}));
    h.add(&member(1, |m| m.warmup_threshold = 3));
    h.all(1, true);
    h.all(1, true);
    h.fraction(1, 2); // 0.67 < rise: raw fraction fails the cycle
    assert_eq!(h.status(1).warmup_passes, 0);
    assert!(h.status(1).warming);
}

#[test]
fn warm_up_counts_raw_results_not_the_score() {
    // A window of 4 keeps the score above rise after one 3/4 cycle; the
    // gate still resets because that cycle's raw fraction was below rise.
    let mut h = Harness::new(4, check_with(|c| c.window = 4));
    h.add(&member(1, |m| m.warmup_threshold = 10));
    for _ in 0..4 {
        h.all(1, true);
    }
    assert_eq!(h.status(1).warmup_passes, 4);
    h.fraction(1, 3);
    let s = h.status(1);
    assert!(s.score.unwrap() > 0.85, "score {:?}", s.score);
    assert_eq!(s.warmup_passes, 0);
    // And the other way: a low score does not stop a passing raw cycle counting.
    for _ in 0..4 {
        h.all(1, false);
    }
    h.all(1, true);
    let s = h.status(1);
    assert!(s.score.unwrap() < 0.85);
    assert_eq!(s.warmup_passes, 1);
}

#[test]
fn re_enable_resets_warmup_passes_to_zero() {
    let mut h = Harness::new(3, check_with(|_| {}));
    let mut m = member(1, |m| m.warmup_threshold = 2);
    h.add(&m);
    h.all(1, true);
    h.all(1, true);
    assert!(!h.status(1).warming);
    m.enabled = false;
    h.add(&m);
    h.all(1, true);
    m.enabled = true;
    h.add(&m);
    let s = h.status(1);
    assert_eq!((s.warming, s.warmup_passes), (true, 0));
    assert!(h.out.iter().any(|o| matches!(
        o,
        Output::Warmup {
            event: WarmupEvent::Restarted,
            ..
        }
    )));
}

#[test]
fn weight_priority_region_and_name_changes_keep_the_counter() {
    let mut h = Harness::new(3, check_with(|_| {}));
    let mut m = member(1, |m| m.warmup_threshold = 3);
    h.add(&m);
    h.all(1, true);
    h.all(1, true);
    m.weight = 5;
    m.priority = 7;
    m.region = Some(Region::new("eu"));
    m.name = "renamed".into();
    h.add(&m);
    assert_eq!(h.status(1).warmup_passes, 2);
    h.all(1, true);
    assert!(!h.status(1).warming);
}

#[test]
fn members_without_a_check_skip_the_gate() {
    let mut h = Harness::new(3, check_with(|_| {}));
    h.step(Input::UpsertMember {
        member: &member(1, |m| m.warmup_threshold = 5),
        check: None,
        slow_start: None,
    })
    .unwrap();
    let s = h.status(1);
    assert_eq!((s.health, s.warming), (Health::Up, false));
    let none = Check::new(CheckId(2), "none", Probe::None);
    h.step(Input::UpsertCheck(&none)).unwrap();
    h.step(Input::UpsertMember {
        member: &member(2, |m| m.warmup_threshold = 5),
        check: Some(CheckId(2)),
        slow_start: None,
    })
    .unwrap();
    assert!(!h.status(2).warming);
}

#[test]
fn rewarm_after_down_closes_the_gate_again() {
    let mut h = Harness::new(3, check_with(|_| {}));
    h.add(&member(1, |m| {
        m.warmup_threshold = 1;
        m.rewarm_after_down = true;
    }));
    h.all(1, true);
    assert!(!h.status(1).warming);
    h.all(1, false);
    assert!(h.status(1).warming);
    h.all(1, true);
    assert!(!h.status(1).warming);
}

#[test]
fn without_rewarm_after_down_the_gate_stays_open() {
    let mut h = Harness::new(3, check_with(|_| {}));
    h.add(&member(1, |m| m.warmup_threshold = 1));
    h.all(1, true);
    h.all(1, false);
    assert!(!h.status(1).warming);
}

#[test]
fn manual_health_is_rejected_when_a_check_is_configured() {
    let mut h = Harness::new(3, check_with(|_| {}));
    h.add(&member(1, |_| {}));
    let err = h
        .step(Input::ManualHealth {
            member: MemberId(1),
            health: Some(Health::Down),
        })
        .unwrap_err();
    assert!(matches!(err, EngineError::ManualHealthRefused { .. }));
    assert!(err.to_string().contains("active health check"), "{err}");
}

#[test]
fn manual_health_applies_when_the_check_is_none() {
    let mut h = Harness::new(3, check_with(|_| {}));
    let none = Check::new(CheckId(2), "none", Probe::None);
    h.step(Input::UpsertCheck(&none)).unwrap();
    h.step(Input::UpsertMember {
        member: &member(1, |_| {}),
        check: Some(CheckId(2)),
        slow_start: None,
    })
    .unwrap();
    assert_eq!(h.health(1), Health::Up, "check none: up unless set down");
    h.step(Input::ManualHealth {
        member: MemberId(1),
        health: Some(Health::Down),
    })
    .unwrap();
    assert_eq!(h.health(1), Health::Down);
    assert!(
        h.transitions()
            .iter()
            .any(|t| t.reason == Reason::Manual && t.to == Health::Down)
    );
    h.step(Input::ManualHealth {
        member: MemberId(1),
        health: None,
    })
    .unwrap();
    assert_eq!(h.health(1), Health::Up);
}

#[test]
fn manual_health_is_rejected_for_ephemeral_members() {
    let mut h = Harness::new(1, check_with(|_| {}));
    let eph = member(1, |m| {
        m.kind = MemberKind::Ephemeral(EphemeralPolicy::default())
    });
    h.step(Input::UpsertMember {
        member: &eph,
        check: None,
        slow_start: None,
    })
    .unwrap();
    let err = h
        .step(Input::ManualHealth {
            member: MemberId(1),
            health: Some(Health::Down),
        })
        .unwrap_err();
    assert!(err.to_string().contains("heartbeats"), "{err}");
}

#[test]
fn ephemeral_member_goes_down_after_heartbeat_timeout_and_is_deleted_later() {
    let mut h = Harness::new(1, check_with(|_| {}));
    let eph = member(1, |m| {
        m.kind = MemberKind::Ephemeral(EphemeralPolicy::default())
    });
    h.step(Input::UpsertMember {
        member: &eph,
        check: None,
        slow_start: None,
    })
    .unwrap();
    assert_eq!(h.health(1), Health::Up);
    h.advance(Duration::from_secs(10));
    h.step(Input::Heartbeat(MemberId(1))).unwrap();
    h.advance(Duration::from_millis(14_999));
    assert_eq!(h.health(1), Health::Up);
    h.advance(Duration::from_millis(1));
    assert_eq!(h.health(1), Health::Down);
    assert!(
        h.transitions()
            .iter()
            .any(|t| matches!(t.reason, Reason::HeartbeatTimeout { silent_ms: 15_000 }))
    );
    h.step(Input::Heartbeat(MemberId(1))).unwrap();
    assert_eq!(h.health(1), Health::Up, "a heartbeat brings it back");
    h.advance(Duration::from_secs(30));
    assert!(h.out.iter().any(|o| matches!(
        o,
        Output::Expired {
            member: MemberId(1),
            ..
        }
    )));
    assert!(h.engine.member_status(MemberId(1), h.now).is_none());
}

#[test]
fn ephemeral_member_without_expiry_stays_down() {
    let mut h = Harness::new(1, check_with(|_| {}));
    let policy = EphemeralPolicy {
        expire: false,
        ..EphemeralPolicy::default()
    };
    h.step(Input::UpsertMember {
        member: &member(1, |m| m.kind = MemberKind::Ephemeral(policy)),
        check: None,
        slow_start: None,
    })
    .unwrap();
    h.advance(Duration::from_secs(300));
    assert_eq!(h.health(1), Health::Down);
}

#[test]
fn heartbeat_for_a_persistent_member_is_refused() {
    let mut h = Harness::new(1, check_with(|_| {}));
    h.add(&member(1, |_| {}));
    assert_eq!(
        h.step(Input::Heartbeat(MemberId(1))),
        Err(EngineError::NotEphemeral(MemberId(1)))
    );
}

#[test]
fn broken_location_is_quarantined_and_does_not_take_members_down() {
    let mut h = Harness::new(5, check_with(|_| {}));
    for id in 1..=6 {
        up_member(&mut h, id);
    }
    // loc0 alone fails everything: a broken vantage point.
    let pattern = [Some(false), Some(true), Some(true), Some(true), Some(true)];
    for _ in 0..2 {
        for id in 1..=6 {
            h.cycle(id, &pattern);
        }
    }
    assert_eq!(
        h.engine.quarantined_locations(),
        vec![LocationId::new("loc0")]
    );
    assert!(h.out.iter().any(|o| matches!(
        o,
        Output::Quarantine {
            quarantined: true,
            ..
        }
    )));
    // Set aside: cycles now count 4/4 and the gate of a new member can open.
    h.add(&member(7, |m| m.warmup_threshold = 2));
    h.cycle(7, &pattern);
    h.cycle(7, &pattern);
    assert_eq!(h.status(7).last_pass_fraction, Some(1.0));
    assert!(!h.status(7).warming, "4/4 counting locations pass");
    assert!(
        h.status(7)
            .locations
            .iter()
            .any(|l| l.location.as_str() == "loc0" && l.quarantined)
    );
    // Three clean rounds release it.
    for _ in 0..6 {
        for id in 1..=6 {
            h.all(id, true);
        }
    }
    assert!(h.engine.quarantined_locations().is_empty());
}

#[test]
fn an_outage_seen_everywhere_quarantines_nobody() {
    let mut h = Harness::new(5, check_with(|_| {}));
    for id in 1..=6 {
        up_member(&mut h, id);
    }
    for _ in 0..3 {
        for id in 1..=6 {
            h.all(id, false);
        }
    }
    assert!(h.engine.quarantined_locations().is_empty());
    assert!((1..=6).all(|id| h.health(id) == Health::Down));
}

#[test]
fn failing_control_check_quarantines_the_location() {
    let mut h = Harness::new(3, check_with(|c| c.control = true));
    up_member(&mut h, 1);
    h.cycle(1, &[Some(true), Some(true), Some(false)]);
    h.advance(Duration::from_secs(10));
    assert_eq!(
        h.engine.quarantined_locations(),
        vec![LocationId::new("loc2")]
    );
}

#[test]
fn flap_damping_holds_a_flapping_member_down_until_the_penalty_decays() {
    let mut h = Harness::new(3, check_with(|c| c.damping = Some(FlapDamping::default())));
    up_member(&mut h, 1); // unknown -> up is not a flap
    h.all(1, false); // 1000
    h.all(1, true); // 2000
    h.all(1, false); // 3000 > suppress
    assert!(h.status(1).suppressed);
    h.all(1, true);
    assert_eq!(h.health(1), Health::Down, "held down while suppressed");
    // 3000 decays below reuse (750) after two half-lives (120 s) and a bit.
    for _ in 0..13 {
        h.all(1, true);
    }
    assert_eq!(h.health(1), Health::Up);
}

#[test]
fn damping_release_on_tick_brings_a_passing_member_up() {
    let mut h = Harness::new(3, check_with(|c| c.damping = Some(FlapDamping::default())));
    up_member(&mut h, 1);
    h.all(1, false);
    h.all(1, true);
    h.all(1, false);
    h.all(1, true); // held
    h.clear();
    h.advance(Duration::from_secs(200));
    assert!(
        h.transitions()
            .iter()
            .any(|t| matches!(t.reason, Reason::DampingReleased { .. }))
    );
    assert_eq!(h.health(1), Health::Up);
}

#[test]
fn invalid_target_results_never_count() {
    let mut h = Harness::new(2, check_with(|_| {}));
    up_member(&mut h, 1);
    let k = h.next_cycle;
    h.now = Timestamp(k * INTERVAL_MS + 1_000);
    for i in 0..h.locations.len() {
        h.report(i, 1, k, Some(FailReason::InvalidTarget));
    }
    h.advance(Duration::from_secs(30));
    assert_eq!(h.health(1), Health::Up);
    assert_eq!(h.engine.counters().invalid_target, 2);
}

#[test]
fn late_future_and_unknown_results_are_counted_and_ignored() {
    let mut h = Harness::new(1, check_with(|_| {}));
    up_member(&mut h, 1);
    let loc = h.locations[0].clone();
    let now_cycle = h.now.cycle(Duration::from_millis(INTERVAL_MS));
    let r = |member, cycle| ProbeResult {
        member: MemberId(member),
        check: CheckId(1),
        cycle,
        failure: Some(FailReason::Refused),
        latency_us: 0,
    };
    let batch = [
        r(1, 1_000),
        r(1, now_cycle + 5),
        r(99, now_cycle),
        ProbeResult {
            check: CheckId(7),
            ..r(1, now_cycle)
        },
    ];
    h.step(Input::Results {
        location: &loc,
        results: &batch,
    })
    .unwrap();
    let c = h.engine.counters();
    assert_eq!(
        (c.late, c.future, c.unknown_member, c.stale_check),
        (1, 1, 1, 1)
    );
    assert_eq!(h.health(1), Health::Up);
}

#[test]
fn results_from_an_unconnected_location_are_refused() {
    let mut h = Harness::new(1, check_with(|_| {}));
    let ghost = LocationId::new("ghost");
    assert_eq!(
        h.step(Input::Results {
            location: &ghost,
            results: &[]
        }),
        Err(EngineError::UnknownLocation(ghost))
    );
}

#[test]
fn startup_gate_holds_state_until_fresh_data_arrives() {
    let check = check_with(|_| {});
    let mut h = Harness::with_config(3, check.clone(), EngineConfig::default(), false);
    h.add(&member(1, |_| {}));
    h.add(&member(2, |m| m.warmup_threshold = 1));
    let restored = [
        RestoredMember {
            member: MemberId(1),
            health: Health::Up,
            gate_open: true,
            manual: None,
            ramp: None,
        },
        RestoredMember {
            member: MemberId(2),
            health: Health::Up,
            gate_open: false,
            manual: None,
            ramp: None,
        },
    ];
    h.step(Input::Restore {
        members: &restored,
        first_start: false,
    })
    .unwrap();
    assert!(!h.engine.decisions_enabled());
    assert_eq!(h.health(1), Health::Up, "restored");
    // Time alone does not open the gate: it needs fresh results.
    h.advance(Duration::from_secs(120));
    assert!(!h.engine.decisions_enabled());
    h.clear();
    // Fresh data says down, but the gate holds for one staleness window.
    h.all(1, false);
    h.all(2, true);
    assert_eq!(h.health(1), Health::Up);
    assert!(h.status(2).warming, "the warm-up latch is held too");
    assert!(h.transitions().is_empty());
    let window = h.engine.startup_window();
    assert_eq!(window, Duration::from_millis(2 * INTERVAL_MS + 5_000 + 500));
    h.all(1, false);
    h.all(1, false);
    h.advance(window);
    assert!(h.engine.decisions_enabled());
    assert!(
        h.out
            .iter()
            .any(|o| matches!(o, Output::StartupGateOpened { .. }))
    );
    assert_eq!(h.health(1), Health::Down, "decided once the gate opened");
    assert!(!h.status(2).warming);
}

/// Issue 43 item 6: after a restart each check's members wait for that
/// check's own staleness window. An unused check with a one-minute
/// interval (a 130.5 s window) no longer holds every decision, and a used
/// slow check holds only its own members.
#[test]
fn one_slow_check_never_holds_the_decisions_of_another() {
    let fast = check_with(|_| {});
    let mut h = Harness::with_config(3, fast.clone(), EngineConfig::default(), false);
    let slow = |id| {
        check_with(|c| {
            c.id = CheckId(id);
            c.interval = Duration::from_secs(60);
            c.timeout = Duration::from_secs(10);
        })
    };
    h.step(Input::UpsertCheck(&slow(2))).unwrap();
    h.add(&member(1, |_| {}));
    let up = |id| RestoredMember {
        member: MemberId(id),
        health: Health::Up,
        gate_open: true,
        manual: None,
        ramp: None,
    };
    h.step(Input::Restore {
        members: &[up(1)],
        first_start: false,
    })
    .unwrap();
    assert_eq!(
        h.engine.startup_window(),
        Duration::from_millis(130_500),
        "the slowest check's window"
    );
    h.clear();
    h.all(1, false);
    assert_eq!(h.health(1), Health::Up, "held for its check's window");
    h.all(1, false);
    h.all(1, false);
    let fast_window = Duration::from_millis(2 * INTERVAL_MS + 5_000 + 500);
    h.advance(fast_window);
    assert_eq!(
        h.health(1),
        Health::Down,
        "decided after its own check's window"
    );
    assert!(
        h.engine.decisions_enabled(),
        "an unused check waits on nothing"
    );

    // A used slow check holds its own member only.
    let mut h = Harness::with_config(3, fast, EngineConfig::default(), false);
    h.step(Input::UpsertCheck(&slow(2))).unwrap();
    h.add(&member(1, |_| {}));
    h.step(Input::UpsertMember {
        member: &member(2, |_| {}),
        check: Some(CheckId(2)),
        slow_start: None,
    })
    .unwrap();
    h.step(Input::Restore {
        members: &[up(1), up(2)],
        first_start: false,
    })
    .unwrap();
    h.clear();
    for _ in 0..3 {
        h.all(1, false);
    }
    h.advance(fast_window);
    assert_eq!(h.health(1), Health::Down, "its check's gate opened");
    assert_eq!(
        h.health(2),
        Health::Up,
        "still held by the slow check's gate"
    );
    assert!(
        !h.engine.decisions_enabled(),
        "the slow check's gate is closed"
    );
    assert!(
        !h.out
            .iter()
            .any(|o| matches!(o, Output::StartupGateOpened { .. }))
    );
}

#[test]
fn configured_but_unloaded_check_is_never_read_as_no_check() {
    let mut h = Harness::new(1, check_with(|_| {}));
    // The pool names check 5, which has not been loaded yet.
    h.step(Input::UpsertMember {
        member: &member(1, |m| m.warmup_threshold = 2),
        check: Some(CheckId(5)),
        slow_start: None,
    })
    .unwrap();
    let s = h.status(1);
    assert_eq!(
        (s.health, s.warming),
        (Health::Unknown, true),
        "not up as a check-none member would be"
    );
    assert!(
        h.step(Input::ManualHealth {
            member: MemberId(1),
            health: Some(Health::Up)
        })
        .is_err()
    );
}

#[test]
fn removing_the_pools_check_hands_health_to_manual_with_a_logged_reason() {
    let mut h = Harness::new(1, check_with(|_| {}));
    up_member(&mut h, 1);
    h.all(1, false);
    h.clear();
    h.step(Input::UpsertMember {
        member: &member(1, |_| {}),
        check: None,
        slow_start: None,
    })
    .unwrap();
    assert_eq!(h.health(1), Health::Up);
    assert!(
        h.transitions()
            .iter()
            .any(|t| t.reason == Reason::Config && t.to == Health::Up)
    );
}

#[test]
fn location_disconnect_stops_waiting_for_it() {
    let mut h = Harness::new(3, check_with(|_| {}));
    h.add(&member(1, |_| {}));
    let gone = h.locations[2].clone();
    h.step(Input::LocationDisconnected(&gone)).unwrap();
    let k = h.next_cycle;
    h.now = Timestamp(k * INTERVAL_MS + 1_000);
    for i in 0..2 {
        h.report(i, 1, k, None);
    }
    assert_eq!(
        h.health(1),
        Health::Up,
        "closed with the two connected locations"
    );
}

#[test]
fn only_the_checks_assigned_locations_are_waited_for_and_counted() {
    let check =
        check_with(|c| c.locations = vec![LocationId::new("loc0"), LocationId::new("loc1")]);
    let mut h = Harness::new(3, check);
    h.add(&member(1, |_| {}));
    let k = h.next_cycle;
    h.now = Timestamp(k * INTERVAL_MS + 1_000);
    let report = |h: &mut Harness, i: usize, pass: bool| {
        let l = h.locations[i].clone();
        let r = ProbeResult {
            member: MemberId(1),
            check: CheckId(1),
            cycle: k,
            failure: (!pass).then_some(FailReason::Refused),
            latency_us: 5,
        };
        h.step(Input::Results {
            location: &l,
            results: &[r],
        })
        .unwrap();
    };
    report(&mut h, 2, false);
    assert_eq!(h.engine.counters().stale_check, 1, "loc2 is not assigned");
    report(&mut h, 0, true);
    assert_eq!(h.health(1), Health::Unknown, "still waiting for loc1");
    report(&mut h, 1, true);
    assert_eq!(h.health(1), Health::Up);
    assert_eq!(h.status(1).last_pass_fraction, Some(1.0));
}

/// Issue 15 item 3: a status view is taken in O(1) and keeps showing the
/// state it was taken from, whatever ingest and configuration do after
/// (including a removed member's slot reused by a new one).
#[test]
fn a_status_view_keeps_showing_the_state_it_was_taken_from() {
    let mut h = Harness::new(5, check_with(|_| {}));
    for id in 1..=600 {
        up_member(&mut h, id);
    }
    let view = h.engine.status_view();
    h.all(1, false);
    assert_eq!(h.health(1), Health::Down);
    h.step(Input::RemoveMember(MemberId(2))).unwrap();
    h.add(&member(1_000, |_| {}));
    let held = view.member_status(MemberId(1), h.now).unwrap();
    assert_eq!(held.health, Health::Up, "taken before the failures");
    assert_eq!(
        view.member_status(MemberId(2), h.now).unwrap().member,
        MemberId(2)
    );
    assert!(
        view.member_status(MemberId(1_000), h.now).is_none(),
        "added after"
    );
    assert!(
        view.member_status(MemberId(99_999), h.now).is_none(),
        "unknown"
    );
    for id in 3..=600 {
        assert_eq!(
            view.member_status(MemberId(id), h.now),
            h.engine.member_status(MemberId(id), h.now),
            "untouched members read the same"
        );
    }
    let fresh = h.engine.status_view();
    assert_eq!(
        fresh.member_status(MemberId(1), h.now).unwrap().health,
        Health::Down
    );
    assert!(fresh.member_status(MemberId(2), h.now).is_none(), "removed");
    assert_eq!(
        fresh.member_status(MemberId(1_000), h.now),
        h.engine.member_status(MemberId(1_000), h.now)
    );
}

/// Issue 16 item 1: a quarantined location whose results arrive later in
/// the cycle than the others' (150 ms, well inside the grace) is still
/// tallied, and released after the clean rounds. The cycle used to stop
/// waiting for a quarantined location, so its results were always late.
#[test]
fn a_quarantined_location_that_reports_late_in_the_cycle_is_released() {
    let mut h = Harness::new(5, check_with(|_| {}));
    for id in 1..=6 {
        up_member(&mut h, id);
    }
    let broken = [Some(false), Some(true), Some(true), Some(true), Some(true)];
    for _ in 0..2 {
        for id in 1..=6 {
            h.cycle(id, &broken);
        }
    }
    assert_eq!(
        h.engine.quarantined_locations(),
        vec![LocationId::new("loc0")]
    );
    let late_before = h.engine.counters().late;
    // Healed, but loc0's results land 150 ms after the others'.
    for _ in 0..6 {
        let k = h.next_cycle;
        h.next_cycle += 1;
        h.now = h.now.max(Timestamp(k * INTERVAL_MS + 2_000));
        for id in 1..=6 {
            for i in 1..5 {
                h.report(i, id, k, None);
            }
        }
        h.advance(Duration::from_millis(150));
        for id in 1..=6 {
            h.report(0, id, k, None);
        }
        h.now = h.now.max(Timestamp((k + 1) * INTERVAL_MS + 5_000 + 500));
        h.step(Input::Tick).unwrap();
    }
    assert_eq!(h.engine.counters().late, late_before, "nothing was late");
    assert!(
        h.engine.quarantined_locations().is_empty(),
        "three clean rounds release it"
    );
    for id in 1..=6 {
        assert_eq!(h.health(id), Health::Up);
    }
}

fn hold(h: &mut Harness, all: bool, pools: &[u64]) {
    let pools: Vec<PoolId> = pools.iter().map(|p| PoolId(*p)).collect();
    h.step(Input::Hold { all, pools: &pools }).unwrap();
}

#[test]
fn a_global_hold_keeps_health_while_results_move_the_score_and_resume_decides_at_once() {
    let mut h = Harness::new(3, check_with(|_| {}));
    up_member(&mut h, 1);
    hold(&mut h, true, &[]);
    h.clear();
    for _ in 0..5 {
        h.all(1, false);
    }
    let s = h.status(1);
    assert_eq!(s.health, Health::Up, "held as it was");
    assert_eq!(s.score, Some(0.0), "results are still taken in");
    assert!(h.transitions().is_empty());
    hold(&mut h, false, &[]);
    assert_eq!(h.health(1), Health::Down, "decided at the resume");
    let t = h.transitions();
    assert_eq!(t.len(), 1);
    assert!(matches!(t[0].reason, Reason::Quorum { .. }));
}

#[test]
fn a_pool_hold_covers_only_that_pools_members() {
    let mut h = Harness::new(3, check_with(|_| {}));
    up_member(&mut h, 1);
    h.add(&member(2, |m| m.pool = PoolId(2)));
    h.all(2, true);
    hold(&mut h, false, &[1]);
    h.all(1, false);
    h.all(2, false);
    assert_eq!(h.health(1), Health::Up, "pool 1 held");
    assert_eq!(h.health(2), Health::Down, "pool 2 decides");
    // Lifting the global switch leaves a pool's own hold in place.
    hold(&mut h, true, &[1]);
    hold(&mut h, false, &[1]);
    assert_eq!(h.health(1), Health::Up);
    hold(&mut h, false, &[]);
    assert_eq!(h.health(1), Health::Down);
}

#[test]
fn a_held_warm_up_gate_counts_passes_but_opens_only_on_resume() {
    let mut h = Harness::new(3, check_with(|_| {}));
    h.add(&member(1, |m| m.warmup_threshold = 2));
    hold(&mut h, true, &[]);
    for _ in 0..3 {
        h.all(1, true);
    }
    let s = h.status(1);
    assert!(s.warming && s.warmup_passes == 3, "{s:?}");
    assert_eq!(s.health, Health::Unknown);
    hold(&mut h, false, &[]);
    let s = h.status(1);
    assert!(!s.warming, "the gate opens at the resume");
    assert_eq!(s.health, Health::Up);
}

#[test]
fn a_held_ephemeral_member_neither_times_out_nor_expires_nor_revives() {
    let mut h = Harness::new(1, check_with(|_| {}));
    let expiring = member(1, |m| {
        m.kind = MemberKind::Ephemeral(EphemeralPolicy::default())
    });
    let kept = member(2, |m| {
        m.kind = MemberKind::Ephemeral(EphemeralPolicy {
            expire: false,
            ..EphemeralPolicy::default()
        })
    });
    for m in [&expiring, &kept] {
        h.step(Input::UpsertMember {
            member: m,
            check: None,
            slow_start: None,
        })
        .unwrap();
    }
    hold(&mut h, true, &[]);
    h.advance(Duration::from_secs(60));
    assert_eq!(h.health(1), Health::Up, "no timeout, no expiry while held");
    assert_eq!(h.health(2), Health::Up);
    hold(&mut h, false, &[]);
    h.advance(Duration::from_millis(1));
    assert!(
        h.engine.member_status(MemberId(1), h.now).is_none(),
        "the expiry follows the resume"
    );
    assert_eq!(h.health(2), Health::Down, "the timeout follows the resume");
    hold(&mut h, true, &[]);
    h.step(Input::Heartbeat(MemberId(2))).unwrap();
    assert_eq!(
        h.health(2),
        Health::Down,
        "a heartbeat is recorded, not acted on"
    );
    hold(&mut h, false, &[]);
    assert_eq!(
        h.health(2),
        Health::Up,
        "the heartbeat heard while held counts"
    );
}

#[test]
fn a_held_damped_member_stays_suppressed_until_resume() {
    let mut h = Harness::new(3, check_with(|c| c.damping = Some(FlapDamping::default())));
    up_member(&mut h, 1);
    h.all(1, false);
    h.all(1, true);
    h.all(1, false);
    h.all(1, true); // suppressed, held down
    hold(&mut h, true, &[]);
    h.clear();
    h.advance(Duration::from_secs(200));
    assert_eq!(h.health(1), Health::Down);
    assert!(h.transitions().is_empty());
    hold(&mut h, false, &[]);
    h.advance(Duration::from_millis(1));
    assert_eq!(h.health(1), Health::Up, "released after the resume");
}

#[test]
fn manual_health_still_applies_while_held() {
    let mut h = Harness::new(1, check_with(|_| {}));
    let none = Check::new(CheckId(2), "none", Probe::None);
    h.step(Input::UpsertCheck(&none)).unwrap();
    h.step(Input::UpsertMember {
        member: &member(1, |_| {}),
        check: Some(CheckId(2)),
        slow_start: None,
    })
    .unwrap();
    hold(&mut h, true, &[]);
    h.step(Input::ManualHealth {
        member: MemberId(1),
        health: Some(Health::Down),
    })
    .unwrap();
    assert_eq!(h.health(1), Health::Down, "an operator's own override");
}
