//! Property tests for selection.
#![allow(clippy::unwrap_used)]

mod support;

use std::collections::HashMap;

use gslb_shared::selection::{Family, Outcome, Query, Selector};
use gslb_shared::*;
use proptest::prelude::*;
use rand::SeedableRng;
use rand::rngs::StdRng;
use support::*;

#[derive(Debug, Clone)]
struct MemberSpec {
    enabled: bool,
    weight: u32,
    backup: bool,
    warming: bool,
    health: Health,
    priority: u32,
}

fn member_spec() -> impl Strategy<Value = MemberSpec> {
    (
        prop::bool::weighted(0.85),
        prop_oneof![Just(0u32), 1u32..500],
        prop::bool::weighted(0.2),
        prop::bool::weighted(0.2),
        prop_oneof![Just(Health::Up), Just(Health::Down), Just(Health::Unknown)],
        0u32..3,
    )
        .prop_map(
            |(enabled, weight, backup, warming, health, priority)| MemberSpec {
                enabled,
                weight,
                backup,
                warming,
                health,
                priority,
            },
        )
}

#[derive(Debug, Clone)]
struct PoolSpec {
    members: Vec<MemberSpec>,
    min_healthy: u32,
    protect: f64,
    fail_mode: FailMode,
}

fn pool_spec() -> impl Strategy<Value = PoolSpec> {
    (
        prop::collection::vec(member_spec(), 0..12),
        1u32..4,
        prop_oneof![Just(0.0), 0.1f64..0.9],
        prop_oneof![
            Just(FailMode::Open),
            Just(FailMode::Closed),
            Just(FailMode::Static)
        ],
    )
        .prop_map(|(members, min_healthy, protect, fail_mode)| PoolSpec {
            members,
            min_healthy,
            protect,
            fail_mode,
        })
}

fn build(pools: &[PoolSpec]) -> (World, Vec<PoolId>) {
    let mut w = World::new();
    let mut ids = Vec::new();
    for (pi, spec) in pools.iter().enumerate() {
        let p = w.pool(|p| {
            p.min_healthy = spec.min_healthy;
            p.protect_threshold = spec.protect;
            p.fail_mode = spec.fail_mode;
            if spec.fail_mode == FailMode::Static {
                p.fallback = vec!["198.51.100.7".parse().unwrap()];
            }
        });
        for (mi, m) in spec.members.iter().enumerate() {
            let id = w.member(p, &format!("10.{pi}.{mi}.1"), |member| {
                member.enabled = m.enabled;
                member.weight = m.weight;
                member.backup = m.backup;
                member.priority = m.priority;
            });
            w.set(id, m.health, m.warming);
        }
        ids.push(p);
    }
    (w, ids)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn never_answers_disabled_warming_or_zero_weight_and_unhealthy_only_when_flagged(
        pools in prop::collection::vec(pool_spec(), 1..4),
        first_n in 0u32..5,
        weighted in any::<bool>(),
        rotation in any::<u64>(),
        seed in any::<u64>(),
    ) {
        let (w, pool_ids) = build(&pools);
        let mut r = record(&pool_ids);
        r.first_n = first_n;
        r.steering = if weighted { Steering::Weighted } else { Steering::RoundRobin };
        let index = w.index();
        let mut rng = StdRng::seed_from_u64(seed);
        let mut selector = Selector::new();
        let (outcome, answers) =
            selector.select(&index, &r, Query { family: Family::V4, region: None, place: Place::UNKNOWN, rotation, affinity: None }, &mut rng, None);
        if first_n > 0 {
            prop_assert!(answers.len() <= first_n as usize);
        }
        let relaxed = matches!(outcome, Outcome::FailOpen { .. } | Outcome::Pool { protected: true, .. });
        let mut seen = std::collections::HashSet::new();
        for a in answers {
            prop_assert!(seen.insert(a.address), "duplicate address {:?}", a.address);
            let Some(id) = a.member else {
                prop_assert!(matches!(outcome, Outcome::FailStatic { .. }), "fallback outside static mode");
                continue;
            };
            let m = &w.catalog.members[&id];
            let f = w.facts[&id];
            prop_assert!(m.enabled && m.weight > 0 && !f.warming, "{m:?} {f:?}");
            prop_assert!(f.health == Health::Up || relaxed, "unhealthy {id} answered in {outcome:?}");
        }
        if let Outcome::Pool { pool, protected: false } = outcome {
            let spec = &pools[pool_ids.iter().position(|p| *p == pool).unwrap()];
            let usable = answers.len();
            let want = if first_n == 0 { usable } else { usable.min(first_n as usize) };
            prop_assert!(usable == want);
            prop_assert!(spec.min_healthy as usize <= chosen_size(&w, pool));
        }
    }

    #[test]
    fn same_inputs_give_the_same_answer(
        pools in prop::collection::vec(pool_spec(), 1..3),
        seed in any::<u64>(),
        rotation in any::<u64>(),
    ) {
        let (w, pool_ids) = build(&pools);
        let mut r = record(&pool_ids);
        r.steering = Steering::Weighted;
        r.first_n = 2;
        let index = w.index();
        let q = Query { family: Family::V4, region: None, place: Place::UNKNOWN, rotation, affinity: None };
        let a = Selector::new().select(&index, &r, q, &mut StdRng::seed_from_u64(seed), None).1.to_vec();
        let b = Selector::new().select(&index, &r, q, &mut StdRng::seed_from_u64(seed), None).1.to_vec();
        prop_assert_eq!(a, b);
    }
}

/// Size of the set step 3 chooses for a pool (healthy primaries, else healthy backups).
fn chosen_size(w: &World, pool: PoolId) -> usize {
    let cands: Vec<_> = w
        .catalog
        .pool_members(pool)
        .filter(|m| m.enabled && m.weight > 0 && !w.facts[&m.id].warming)
        .collect();
    let healthy = |m: &&&Member| w.facts[&m.id].health == Health::Up;
    let primaries = cands.iter().filter(healthy).filter(|m| !m.backup).count();
    if primaries > 0 {
        primaries
    } else {
        cands.iter().filter(healthy).count()
    }
}

#[test]
fn weighted_first_position_frequencies_match_weights() {
    let mut w = World::new();
    let p = w.pool(|_| {});
    let weights = [100u32, 300, 600];
    let ids: Vec<_> = weights
        .iter()
        .enumerate()
        .map(|(i, &wt)| w.member(p, &format!("192.0.2.{}", i + 1), |m| m.weight = wt))
        .collect();
    let mut r = record(&[p]);
    r.steering = Steering::Weighted;
    r.first_n = 1;
    let index = w.index();
    let mut rng = StdRng::seed_from_u64(42);
    let mut selector = Selector::new();
    let mut counts: HashMap<MemberId, u32> = HashMap::new();
    let n = 100_000;
    for _ in 0..n {
        let q = Query {
            family: Family::V4,
            region: None,
            place: Place::UNKNOWN,
            rotation: 0,
            affinity: None,
        };
        let id = selector.select(&index, &r, q, &mut rng, None).1[0]
            .member
            .unwrap();
        *counts.entry(id).or_default() += 1;
    }
    for (id, wt) in ids.iter().zip(weights) {
        let observed = f64::from(counts[id]) / f64::from(n);
        let expected = f64::from(wt) / 1000.0;
        assert!(
            (observed - expected).abs() < 0.01,
            "{id}: {observed} vs {expected}"
        );
    }
}

#[test]
fn weighted_without_replacement_second_position_matches_conditional_probability() {
    // P(second = B) = P(A first)·wB/(wB+wC) + P(C first)·wB/(wA+wB)
    let mut w = World::new();
    let p = w.pool(|_| {});
    w.member(p, "192.0.2.1", |m| m.weight = 100);
    let b = w.member(p, "192.0.2.2", |m| m.weight = 300);
    let _c = w.member(p, "192.0.2.3", |m| m.weight = 600);
    let mut r = record(&[p]);
    r.steering = Steering::Weighted;
    r.first_n = 2;
    let index = w.index();
    let mut rng = StdRng::seed_from_u64(9);
    let mut selector = Selector::new();
    let n = 100_000;
    let mut second_b = 0;
    for _ in 0..n {
        let q = Query {
            family: Family::V4,
            region: None,
            place: Place::UNKNOWN,
            rotation: 0,
            affinity: None,
        };
        let answers = selector.select(&index, &r, q, &mut rng, None).1;
        assert_ne!(answers[0].address, answers[1].address);
        if answers[1].member == Some(b) {
            second_b += 1;
        }
    }
    let expected = 0.1 * (300.0 / 900.0) + 0.6 * (300.0 / 400.0);
    let observed = f64::from(second_b) / f64::from(n);
    assert!(
        (observed - expected).abs() < 0.01,
        "{observed} vs {expected}"
    );
}

/// A member's address for the hostname property: an IPv4 or IPv6 address,
/// or a hostname that resolved to some of both families, or not at all.
#[derive(Debug, Clone)]
enum Kind {
    V4,
    V6,
    Host { v4: bool, v6: bool, resolved: bool },
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![
        Just(Kind::V4),
        Just(Kind::V6),
        (any::<bool>(), any::<bool>(), prop::bool::weighted(0.8))
            .prop_map(|(v4, v6, resolved)| Kind::Host { v4, v6, resolved }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn hostname_members_answer_only_what_they_can(
        pools in prop::collection::vec(
            (prop::collection::vec((kind(), member_spec()), 0..8), pool_spec()), 1..3),
        family in prop_oneof![Just(Family::V4), Just(Family::V6), Just(Family::Name)],
        rotation in any::<u64>(),
        seed in any::<u64>(),
    ) {
        let mut w = World::new();
        let mut ids = Vec::new();
        for (pi, (members, spec)) in pools.iter().enumerate() {
            let p = w.pool(|p| {
                p.min_healthy = spec.min_healthy;
                p.fail_mode = if spec.fail_mode == FailMode::Static { FailMode::Closed } else { spec.fail_mode };
            });
            for (mi, (kind, m)) in members.iter().enumerate() {
                let address = match kind {
                    Kind::V4 => format!("10.{pi}.{mi}.1"),
                    Kind::V6 => format!("2001:db8:{pi}::{}", mi + 1),
                    Kind::Host { .. } => format!("m{mi}.p{pi}.example.net"),
                };
                let id = w.member(p, &address, |member| {
                    member.enabled = m.enabled;
                    member.weight = m.weight;
                    member.priority = m.priority;
                });
                w.set(id, m.health, m.warming);
                if let Kind::Host { v4, v6, resolved: true } = kind {
                    let mut addresses = Vec::new();
                    if *v4 { addresses.push(format!("192.0.2.{}", mi + 1).parse().unwrap()); }
                    if *v6 { addresses.push(format!("2001:db8:ff::{}", mi + 1).parse().unwrap()); }
                    w.resolved.insert(id, Resolved { addresses, ttl: 30 });
                }
            }
            ids.push(p);
        }
        let r = record(&ids);
        let index = w.index();
        let mut rng = StdRng::seed_from_u64(seed);
        let mut selector = Selector::new();
        let (_, answers) =
            selector.select(&index, &r, Query { family, region: None, place: Place::UNKNOWN, rotation, affinity: None }, &mut rng, None);
        for a in answers {
            let Some(id) = a.member else { continue };
            let m = &w.catalog.members[&id];
            match (&m.address, family) {
                (MemberAddress::Host(_), Family::Name) => prop_assert_eq!(a.address, None),
                (MemberAddress::Ip(ip), Family::V4 | Family::V6) => {
                    prop_assert!(family.matches(ip));
                    prop_assert_eq!(a.address, Some(*ip));
                }
                (MemberAddress::Host(_), Family::V4 | Family::V6) => {
                    let has = w.resolved.get(&id)
                        .is_some_and(|r| r.of_family(family == Family::V6).next().is_some());
                    prop_assert!(has, "member {} answered for {:?} without such an address", id, family);
                }
                (MemberAddress::Ip(_), Family::Name) => prop_assert!(false, "an IP member answered a name"),
            }
        }
    }
}
