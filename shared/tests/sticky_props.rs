//! Sticky steering: weighted rendezvous hashing of the client subnet.
#![allow(clippy::unwrap_used)]

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use gslb_shared::selection::{Candidate, affinity, steer};
use gslb_shared::*;
use proptest::prelude::*;
use rand::SeedableRng;
use rand::rngs::StdRng;

fn candidates() -> impl Strategy<Value = Vec<Candidate>> {
    prop::collection::vec((1u32..1000, 0u32..2), 1..12).prop_map(|specs| {
        specs
            .into_iter()
            .enumerate()
            .map(|(i, (weight, priority))| Candidate {
                id: MemberId(i as u64 + 1),
                address: Some(IpAddr::V4(Ipv4Addr::new(192, 0, 2, i as u8 + 1))),
                weight,
                priority,
                backup: false,
                health: Health::Up,
            })
            .collect()
    })
}

fn sticky(set: &[Candidate], key: u64, first_n: u32, rotation: u64, seed: u64) -> Vec<MemberId> {
    let mut v = set.to_vec();
    let mut rng = StdRng::seed_from_u64(seed);
    steer(
        &mut v,
        Steering::Sticky,
        first_n,
        rotation,
        Some(key),
        &mut rng,
    );
    v.iter().map(|c| c.id).collect()
}

proptest! {
    #[test]
    fn a_subnet_gets_the_same_members_whatever_the_rotation_and_draw(
        set in candidates(),
        key in any::<u64>(),
        first_n in 0u32..4,
        (r1, r2, s1, s2) in (any::<u64>(), any::<u64>(), any::<u64>(), any::<u64>()),
    ) {
        prop_assert_eq!(sticky(&set, key, first_n, r1, s1), sticky(&set, key, first_n, r2, s2));
    }

    #[test]
    fn the_answer_is_a_priority_ordered_selection_of_the_set(
        set in candidates(),
        key in any::<u64>(),
        first_n in 0u32..4,
    ) {
        let got = sticky(&set, key, first_n, 0, 0);
        let want = if first_n == 0 { set.len() } else { set.len().min(first_n as usize) };
        prop_assert_eq!(got.len(), want);
        let priority = |id: MemberId| set.iter().find(|c| c.id == id).unwrap().priority;
        prop_assert!(got.windows(2).all(|w| priority(w[0]) <= priority(w[1])));
        let mut unique = got.clone();
        unique.sort();
        unique.dedup();
        prop_assert_eq!(unique.len(), got.len());
    }

    /// Rendezvous hashing: when a member leaves, a subnet that was not
    /// answered with it keeps its answer, and one that was keeps the rest.
    #[test]
    fn a_member_leaving_moves_only_its_own_clients(
        set in candidates(),
        leaving in any::<prop::sample::Index>(),
        keys in prop::collection::vec(any::<u64>(), 1..50),
        first_n in 1u32..4,
    ) {
        prop_assume!(set.len() > 1);
        let gone = set[leaving.index(set.len())].id;
        let rest: Vec<_> = set.iter().filter(|c| c.id != gone).cloned().collect();
        for key in keys {
            let before = sticky(&set, key, first_n, 0, 0);
            let after = sticky(&rest, key, first_n, 0, 0);
            if !before.contains(&gone) {
                prop_assert_eq!(&before, &after);
            } else {
                let kept: Vec<_> = before.iter().copied().filter(|id| *id != gone).collect();
                prop_assert!(kept.iter().all(|id| after.contains(id)), "{before:?} → {after:?}");
            }
        }
    }

    #[test]
    fn addresses_of_one_subnet_share_a_key_and_others_do_not(
        a in any::<u32>(), host in any::<u8>(), other in 1u32..(1 << 24),
        v6 in any::<u128>(), low in any::<u8>(),
    ) {
        let v4 = |x: u32| IpAddr::V4(Ipv4Addr::from(x));
        let same = (a & !0xff) | u32::from(host);
        prop_assert_eq!(affinity(v4(a), None), affinity(v4(same), None));
        let elsewhere = a ^ (other << 8);
        prop_assert_ne!(affinity(v4(a), None).0, affinity(v4(elsewhere), None).0);
        let v6a = IpAddr::V6(Ipv6Addr::from(v6));
        let v6b = IpAddr::V6(Ipv6Addr::from(v6 ^ u128::from(low)));
        prop_assert_eq!(affinity(v6a, None), affinity(v6b, None));
        // An ECS source shorter than /24 widens the subnet to it.
        prop_assert_eq!(affinity(v4(a), Some(16)).1, 16);
        prop_assert_eq!(affinity(v4(a), Some(32)).1, 24);
    }
}

/// Over many subnets, a member is answered first in proportion to its weight.
#[test]
fn first_choices_follow_the_weights() {
    let set: Vec<Candidate> = [(1, 1), (2, 2), (3, 7)]
        .into_iter()
        .map(|(id, weight)| Candidate {
            id: MemberId(id),
            address: None,
            weight,
            priority: 0,
            backup: false,
            health: Health::Up,
        })
        .collect();
    let mut firsts = [0usize; 3];
    let n = 30_000u32;
    for i in 0..n {
        let client = IpAddr::V4(Ipv4Addr::from((10 << 24) | (i << 8)));
        let key = affinity(client, None).0;
        let first = sticky(&set, key, 1, 0, 0)[0];
        firsts[first.0 as usize - 1] += 1;
    }
    for (i, want) in [0.1, 0.2, 0.7].into_iter().enumerate() {
        let share = firsts[i] as f64 / f64::from(n);
        assert!((share - want).abs() < 0.015, "{firsts:?}");
    }
}

/// Without a client address, sticky orders as weighted: the draw decides.
#[test]
fn sticky_without_a_client_draws_like_weighted() {
    let set: Vec<Candidate> = (1..=8)
        .map(|id| Candidate {
            id: MemberId(id),
            address: None,
            weight: 10,
            priority: 0,
            backup: false,
            health: Health::Up,
        })
        .collect();
    let orders: std::collections::HashSet<Vec<MemberId>> = (0..20)
        .map(|seed| {
            let mut v = set.clone();
            steer(
                &mut v,
                Steering::Sticky,
                1,
                0,
                None,
                &mut StdRng::seed_from_u64(seed),
            );
            v.iter().map(|c| c.id).collect()
        })
        .collect();
    assert!(orders.len() > 1);
}
