//! Table tests for DESIGN.md "Selection", one per rule.
#![allow(clippy::unwrap_used)]

mod support;

use gslb_shared::selection::{Exclusion, Outcome, Step};
use gslb_shared::*;
use support::*;

#[test]
fn healthy_enabled_members_are_answered() {
    let mut w = World::new();
    let p = w.pool(|_| {});
    let a = w.member(p, "192.0.2.1", |_| {});
    let b = w.member(p, "192.0.2.2", |_| {});
    let (outcome, answers, _) = run(&w, &record(&[p]), None);
    assert_eq!(
        outcome,
        Outcome::Pool {
            pool: p,
            protected: false
        }
    );
    assert_eq!(ids(&answers), vec![a, b]);
}

#[test]
fn unhealthy_members_are_not_answered() {
    let mut w = World::new();
    let p = w.pool(|_| {});
    let a = w.member(p, "192.0.2.1", |_| {});
    let b = w.member(p, "192.0.2.2", |_| {});
    let c = w.member(p, "192.0.2.3", |_| {});
    w.set(b, Health::Down, false);
    w.set(c, Health::Unknown, false);
    let (_, answers, _) = run(&w, &record(&[p]), None);
    assert_eq!(ids(&answers), vec![a]);
}

#[test]
fn disabled_members_are_never_answered() {
    let mut w = World::new();
    let p = w.pool(|_| {});
    let a = w.member(p, "192.0.2.1", |_| {});
    let d = w.member(p, "192.0.2.2", |m| m.enabled = false);
    let (_, answers, trace) = run(&w, &record(&[p]), None);
    assert_eq!(ids(&answers), vec![a]);
    assert!(trace.iter().any(|s| matches!(s, Step::Candidates { excluded, .. } if excluded == &vec![(d, Exclusion::Disabled)])));
}

#[test]
fn weight_zero_is_never_answered_even_by_fail_open() {
    let mut w = World::new();
    let p = w.pool(|_| {});
    let zero = w.member(p, "192.0.2.1", |m| m.weight = 0);
    let down = w.member(p, "192.0.2.2", |_| {});
    w.set(down, Health::Down, false);
    let (outcome, answers, _) = run(&w, &record(&[p]), None);
    assert_eq!(outcome, Outcome::FailOpen { pool: p });
    assert_eq!(ids(&answers), vec![down]);
    assert!(!ids(&answers).contains(&zero));
}

#[test]
fn warming_member_is_excluded_even_when_healthy() {
    let mut w = World::new();
    let p = w.pool(|_| {});
    let a = w.member(p, "192.0.2.1", |_| {});
    let warm = w.member(p, "192.0.2.2", |m| m.warmup_threshold = 3);
    w.set(warm, Health::Up, true);
    let (_, answers, trace) = run(&w, &record(&[p]), None);
    assert_eq!(ids(&answers), vec![a]);
    assert!(trace.iter().any(|s| matches!(s, Step::Candidates { excluded, .. } if excluded == &vec![(warm, Exclusion::Warming)])));
}

#[test]
fn warming_member_is_excluded_from_fail_open_too() {
    let mut w = World::new();
    let p = w.pool(|_| {});
    let down = w.member(p, "192.0.2.1", |_| {});
    let warm = w.member(p, "192.0.2.2", |_| {});
    w.set(down, Health::Down, false);
    w.set(warm, Health::Up, true);
    let (outcome, answers, _) = run(&w, &record(&[p]), None);
    assert_eq!(outcome, Outcome::FailOpen { pool: p });
    assert_eq!(ids(&answers), vec![down]);
}

#[test]
fn warming_members_do_not_count_toward_min_healthy() {
    let mut w = World::new();
    let primary = w.pool(|p| p.min_healthy = 2);
    let second = w.pool(|_| {});
    w.member(primary, "192.0.2.1", |_| {});
    let warm = w.member(primary, "192.0.2.2", |_| {});
    w.set(warm, Health::Up, true);
    let s = w.member(second, "192.0.2.9", |_| {});
    let (outcome, answers, _) = run(&w, &record(&[primary, second]), None);
    assert_eq!(
        outcome,
        Outcome::Pool {
            pool: second,
            protected: false
        }
    );
    assert_eq!(ids(&answers), vec![s]);
}

#[test]
fn backups_only_when_no_primary_is_healthy() {
    let mut w = World::new();
    let p = w.pool(|_| {});
    let primary = w.member(p, "192.0.2.1", |_| {});
    let backup = w.member(p, "192.0.2.2", |m| m.backup = true);
    let (_, answers, _) = run(&w, &record(&[p]), None);
    assert_eq!(
        ids(&answers),
        vec![primary],
        "a healthy primary keeps backups out"
    );
    w.set(primary, Health::Down, false);
    let (outcome, answers, trace) = run(&w, &record(&[p]), None);
    assert_eq!(
        outcome,
        Outcome::Pool {
            pool: p,
            protected: false
        }
    );
    assert_eq!(ids(&answers), vec![backup], "backups take over");
    assert!(trace.iter().any(|s| matches!(
        s,
        Step::Backup {
            using_backups: true,
            ..
        }
    )));
}

#[test]
fn min_healthy_moves_to_the_next_pool_in_priority_order() {
    let mut w = World::new();
    let first = w.pool(|p| p.min_healthy = 2);
    let second = w.pool(|_| {});
    w.member(first, "192.0.2.1", |_| {});
    let down = w.member(first, "192.0.2.2", |_| {});
    w.set(down, Health::Down, false);
    let s = w.member(second, "192.0.2.9", |_| {});
    let (outcome, answers, _) = run(&w, &record(&[first, second]), None);
    assert_eq!(
        outcome,
        Outcome::Pool {
            pool: second,
            protected: false
        }
    );
    assert_eq!(ids(&answers), vec![s]);
}

#[test]
fn first_eligible_pool_answers() {
    let mut w = World::new();
    let first = w.pool(|_| {});
    let second = w.pool(|_| {});
    let f = w.member(first, "192.0.2.1", |_| {});
    w.member(second, "192.0.2.9", |_| {});
    let (outcome, answers, _) = run(&w, &record(&[first, second]), None);
    assert_eq!(
        outcome,
        Outcome::Pool {
            pool: first,
            protected: false
        }
    );
    assert_eq!(ids(&answers), vec![f]);
}

#[test]
fn protect_threshold_presents_all_candidates() {
    let mut w = World::new();
    let p = w.pool(|p| p.protect_threshold = 0.5);
    let a = w.member(p, "192.0.2.1", |_| {});
    let b = w.member(p, "192.0.2.2", |_| {});
    let c = w.member(p, "192.0.2.3", |_| {});
    let off = w.member(p, "192.0.2.4", |m| m.enabled = false);
    w.set(b, Health::Down, false);
    w.set(c, Health::Down, false);
    // 1 healthy of 3 candidates = 0.33 <= 0.5
    let (outcome, answers, _) = run(&w, &record(&[p]), None);
    assert_eq!(
        outcome,
        Outcome::Pool {
            pool: p,
            protected: true
        }
    );
    assert_eq!(ids(&answers), vec![a, b, c]);
    assert!(!ids(&answers).contains(&off));
}

#[test]
fn protect_threshold_applies_at_equality_and_not_above() {
    let mut w = World::new();
    let p = w.pool(|p| p.protect_threshold = 0.5);
    let a = w.member(p, "192.0.2.1", |_| {});
    let b = w.member(p, "192.0.2.2", |_| {});
    w.set(b, Health::Down, false);
    let (outcome, _, _) = run(&w, &record(&[p]), None);
    assert_eq!(
        outcome,
        Outcome::Pool {
            pool: p,
            protected: true
        },
        "1/2 <= 0.5"
    );
    w.set(b, Health::Up, false);
    let c = w.member(p, "192.0.2.3", |_| {});
    w.set(c, Health::Down, false);
    let (outcome, answers, _) = run(&w, &record(&[p]), None);
    assert_eq!(
        outcome,
        Outcome::Pool {
            pool: p,
            protected: false
        },
        "2/3 > 0.5"
    );
    assert_eq!(ids(&answers), vec![a, b]);
}

#[test]
fn all_failed_fail_open_answers_candidates_of_first_pool_with_any() {
    let mut w = World::new();
    let empty = w.pool(|_| {});
    let p = w.pool(|_| {});
    w.member(empty, "192.0.2.100", |m| m.enabled = false);
    let a = w.member(p, "192.0.2.1", |_| {});
    let b = w.member(p, "192.0.2.2", |_| {});
    w.set(a, Health::Down, false);
    w.set(b, Health::Down, false);
    let (outcome, answers, trace) = run(&w, &record(&[empty, p]), None);
    assert_eq!(outcome, Outcome::FailOpen { pool: p });
    assert!(outcome.failed());
    assert_eq!(ids(&answers), vec![a, b]);
    assert!(trace.iter().any(|s| matches!(
        s,
        Step::AllFailed {
            mode: FailMode::Open,
            ..
        }
    )));
}

#[test]
fn all_failed_fail_open_still_applies_first_n() {
    let mut w = World::new();
    let p = w.pool(|_| {});
    for i in 1..=4 {
        let m = w.member(p, &format!("192.0.2.{i}"), |_| {});
        w.set(m, Health::Down, false);
    }
    let mut r = record(&[p]);
    r.first_n = 2;
    let (outcome, answers, _) = run(&w, &r, None);
    assert_eq!(outcome, Outcome::FailOpen { pool: p });
    assert_eq!(answers.len(), 2);
}

#[test]
fn all_failed_fail_closed_answers_nodata() {
    let mut w = World::new();
    let p = w.pool(|p| p.fail_mode = FailMode::Closed);
    let a = w.member(p, "192.0.2.1", |_| {});
    w.set(a, Health::Down, false);
    let (outcome, answers, _) = run(&w, &record(&[p]), None);
    assert_eq!(outcome, Outcome::NoData);
    assert!(answers.is_empty());
}

#[test]
fn all_failed_fail_static_answers_fallback_addresses() {
    let mut w = World::new();
    let p = w.pool(|p| {
        p.fail_mode = FailMode::Static;
        p.fallback = vec![
            "198.51.100.1".parse().unwrap(),
            "2001:db8::1".parse().unwrap(),
        ];
    });
    let a = w.member(p, "192.0.2.1", |_| {});
    w.set(a, Health::Down, false);
    let (outcome, answers, _) = run(&w, &record(&[p]), None);
    assert_eq!(outcome, Outcome::FailStatic { pool: p });
    assert_eq!(answers.len(), 1, "only the queried family");
    assert_eq!(answers[0].member, None);
    assert_eq!(answers[0].address.unwrap().to_string(), "198.51.100.1");
}

#[test]
fn fail_open_with_no_candidates_anywhere_is_nodata() {
    let mut w = World::new();
    let p = w.pool(|_| {});
    w.member(p, "192.0.2.1", |m| m.enabled = false);
    let (outcome, answers, _) = run(&w, &record(&[p]), None);
    assert_eq!(outcome, Outcome::NoData);
    assert!(answers.is_empty());
}

#[test]
fn geo_branch_follows_client_region_with_default_fallback() {
    let mut w = World::new();
    let eu = w.pool(|_| {});
    let us = w.pool(|_| {});
    let e = w.member(eu, "192.0.2.1", |_| {});
    let u = w.member(us, "192.0.2.2", |_| {});
    let mut r = record(&[us]);
    r.geo = vec![GeoBranch::for_regions(
        vec![Region::new("eu")],
        vec![eu, us],
    )];
    assert_eq!(ids(&run(&w, &r, Some("eu")).1), vec![e]);
    assert_eq!(ids(&run(&w, &r, Some("ap")).1), vec![u]);
    assert_eq!(ids(&run(&w, &r, None).1), vec![u]);
    // The eu branch fails over to its second pool.
    w.set(e, Health::Down, false);
    assert_eq!(ids(&run(&w, &r, Some("eu")).1), vec![u]);
}

#[test]
fn geo_branches_on_maxmind_data_take_the_first_that_matches() {
    let mut w = World::new();
    let pools: Vec<PoolId> = (0..5).map(|_| w.pool(|_| {})).collect();
    let ms: Vec<MemberId> = (pools.iter().enumerate())
        .map(|(i, p)| w.member(*p, &format!("192.0.2.{}", i + 1), |_| {}))
        .collect();
    let mut r = record(&[pools[4]]);
    let branch = |configure: &dyn Fn(&mut GeoBranch), pool: PoolId| {
        let mut b = GeoBranch::for_regions(vec![], vec![pool]);
        configure(&mut b);
        b
    };
    r.geo = vec![
        branch(&|b| b.regions = vec![Region::new("eu")], pools[0]),
        branch(&|b| b.subdivisions = vec!["DE-BE".into()], pools[1]),
        branch(&|b| b.countries = vec!["DE".into()], pools[2]),
        branch(&|b| b.asns = vec![64500], pools[3]),
    ];
    let place = |country: Option<&str>, sub: Option<&str>, asn: Option<u32>| Place {
        country: country.and_then(GeoCode::new),
        continent: None,
        subdivision: sub.and_then(GeoCode::new),
        asn,
    };
    let at = |region, p| ids(&run_at(&w, &r, region, p).1);
    // A region of the table comes first when its branch does.
    assert_eq!(at(Some("eu"), place(Some("DE"), None, None)), vec![ms[0]]);
    assert_eq!(at(None, place(Some("DE"), Some("BE"), None)), vec![ms[1]]);
    assert_eq!(at(None, place(Some("DE"), Some("BY"), None)), vec![ms[2]]);
    // A subdivision code belongs to its country: BE of AT is not DE-BE.
    assert_eq!(
        at(None, place(Some("AT"), Some("BE"), Some(64500))),
        vec![ms[3]]
    );
    assert_eq!(at(None, place(Some("FR"), None, Some(1))), vec![ms[4]]);
    assert_eq!(at(None, Place::UNKNOWN), vec![ms[4]]);
    // Explain shows what the database said.
    let trace = run_at(&w, &r, None, place(Some("DE"), None, None)).2;
    let json = serde_json::to_value(&trace[0]).unwrap();
    assert_eq!(json["place"]["country"], "DE", "{json}");
    assert_eq!(json["geoBranch"], 2, "{json}");
}

#[test]
fn first_n_trims_the_answer() {
    let mut w = World::new();
    let p = w.pool(|_| {});
    for i in 1..=5 {
        w.member(p, &format!("192.0.2.{i}"), |_| {});
    }
    let mut r = record(&[p]);
    r.first_n = 2;
    assert_eq!(run(&w, &r, None).1.len(), 2);
    r.steering = Steering::Weighted;
    assert_eq!(run(&w, &r, None).1.len(), 2);
    r.first_n = 0;
    assert_eq!(run(&w, &r, None).1.len(), 5);
}

#[test]
fn other_family_members_are_not_candidates() {
    let mut w = World::new();
    let p = w.pool(|_| {});
    let v4 = w.member(p, "192.0.2.1", |_| {});
    w.member(p, "2001:db8::1", |_| {});
    assert_eq!(ids(&run(&w, &record(&[p]), None).1), vec![v4]);
}

#[test]
fn lower_priority_value_is_ordered_first() {
    let mut w = World::new();
    let p = w.pool(|_| {});
    let late = w.member(p, "192.0.2.1", |m| m.priority = 10);
    let early = w.member(p, "192.0.2.2", |m| m.priority = 1);
    let mut r = record(&[p]);
    r.first_n = 1;
    for steering in [Steering::RoundRobin, Steering::Weighted] {
        r.steering = steering;
        assert_eq!(run(&w, &r, None).1[0].member, Some(early));
    }
    r.first_n = 0;
    let answers = run(&w, &r, None).1;
    assert_eq!(
        answers
            .iter()
            .map(|a| a.member.unwrap())
            .collect::<Vec<_>>(),
        vec![early, late]
    );
}

#[test]
fn round_robin_rotates_by_the_query_counter() {
    use gslb_shared::selection::{Family, Query, Selector};
    use rand::SeedableRng;
    let mut w = World::new();
    let p = w.pool(|_| {});
    let a = w.member(p, "192.0.2.1", |_| {});
    let b = w.member(p, "192.0.2.2", |_| {});
    let c = w.member(p, "192.0.2.3", |_| {});
    let index = w.index();
    let r = record(&[p]);
    let mut selector = Selector::new();
    let mut rng = rand::rngs::StdRng::seed_from_u64(1);
    let firsts: Vec<_> = (0..4)
        .map(|rotation| {
            let q = Query {
                family: Family::V4,
                region: None,
                place: Place::UNKNOWN,
                rotation,
                affinity: None,
            };
            selector.select(&index, &r, q, &mut rng, None).1[0]
                .member
                .unwrap()
        })
        .collect();
    assert_eq!(firsts, vec![a, b, c, a]);
}

#[test]
fn missing_pool_is_skipped_and_traced() {
    let mut w = World::new();
    let p = w.pool(|_| {});
    let a = w.member(p, "192.0.2.1", |_| {});
    let (outcome, answers, trace) = run(&w, &record(&[PoolId(999), p]), None);
    assert_eq!(
        outcome,
        Outcome::Pool {
            pool: p,
            protected: false
        }
    );
    assert_eq!(ids(&answers), vec![a]);
    assert!(trace.contains(&Step::MissingPool { pool: PoolId(999) }));
}

#[test]
fn trace_lists_every_step_in_order() {
    let mut w = World::new();
    let p = w.pool(|_| {});
    w.member(p, "192.0.2.1", |_| {});
    let (_, _, trace) = run(&w, &record(&[p]), None);
    let names: Vec<_> = trace
        .iter()
        .map(|s| {
            serde_json::to_value(s).unwrap()["step"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(
        names,
        [
            "branch",
            "candidates",
            "healthy",
            "backup",
            "minHealthy",
            "protection",
            "poolVerdict",
            "answer"
        ]
    );
}

#[test]
fn one_address_is_answered_once_even_when_members_share_it() {
    let mut w = World::new();
    let p = w.pool(|_| {});
    let a = w.member(p, "192.0.2.1", |m| m.port = 80);
    let _same_ip = w.member(p, "192.0.2.1", |m| m.port = 8080);
    let b = w.member(p, "192.0.2.2", |_| {});
    let (_, answers, _) = run(&w, &record(&[p]), None);
    assert_eq!(
        ids(&answers),
        vec![a, b],
        "the first member of an address is kept"
    );
    // Fail-open answers every candidate: still each address once.
    for id in [a, b] {
        w.set(id, Health::Down, false);
    }
    w.set(_same_ip, Health::Down, false);
    let (outcome, answers, _) = run(&w, &record(&[p]), None);
    assert_eq!(outcome, Outcome::FailOpen { pool: p });
    let mut addresses: Vec<_> = answers.iter().map(|x| x.address).collect();
    addresses.sort();
    addresses.dedup();
    assert_eq!(addresses.len(), answers.len(), "{answers:?}");
}
