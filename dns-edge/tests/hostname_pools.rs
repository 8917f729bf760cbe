//! Hostname members. CNAME pools: a CNAME record backed by a pool of hostname members
//! answers one CNAME per query, to the member selection and steering pick
//! (failover by priority, weighted), whatever type is asked; a static
//! CNAME chain into it is followed; the target itself is left to the
//! resolver. Flattened records: an A/AAAA record answers the addresses its
//! hostname members resolved to, each once, up to firstN, with a TTL no
//! longer than theirs. Decoded with hickory-proto, independently of `domain`.
#![allow(missing_docs, clippy::unwrap_used)]

mod common;

use common::*;
use gslb_shared::*;
use hickory_proto::op::ResponseCode;
use hickory_proto::rr::RecordType as Rt;

fn pool_backed(pools: &[u64], steering: Steering) -> RecordData {
    RecordData::Dynamic(DynamicRecord {
        steering,
        pools: pools.iter().copied().map(PoolId).collect(),
        geo: vec![],
        first_n: 0,
        flatten: false,
        region_locations: Default::default(),
    })
}

/// `app` fails over from eu-lb to us-lb (priority); `w` weighs a and b
/// 1:3; `via` is a static CNAME to `app`. `health[i]` is member i+1's.
fn snapshot(health: [Health; 4]) -> Snapshot {
    let mut s = Snapshot {
        version: 5,
        ..Snapshot::default()
    };
    let z = zone(1, "example.test");
    s.catalog.zones.insert(z.id, z);
    let records = [
        record(
            1,
            "app.example.test",
            RecordType::Cname,
            60,
            pool_backed(&[1], Steering::RoundRobin),
        ),
        record(
            2,
            "w.example.test",
            RecordType::Cname,
            60,
            pool_backed(&[2], Steering::Weighted),
        ),
        record(
            3,
            "via.example.test",
            RecordType::Cname,
            300,
            stat(vec![Rdata::Cname(name("app.example.test"))]),
        ),
    ];
    for r in records {
        s.catalog.records.insert(r.id, r);
    }
    for p in [Pool::new(PoolId(1), "lbs"), Pool::new(PoolId(2), "cdn")] {
        s.catalog.pools.insert(p.id, p);
    }
    let members = [
        (1, 1, "eu-lb.cdn.example.net", 0, 100),
        (2, 1, "us-lb.cdn.example.net", 1, 100),
        (3, 2, "a.cdn.example.net", 0, 100),
        (4, 2, "b.cdn.example.net", 0, 300),
    ];
    for ((id, pool, host, priority, weight), health) in members.into_iter().zip(health) {
        let mut m = Member::new(
            MemberId(id),
            PoolId(pool),
            format!("m{id}"),
            host.parse().unwrap(),
            443,
        );
        m.priority = priority;
        m.weight = weight;
        s.catalog.members.insert(m.id, m);
        s.facts.insert(
            MemberId(id),
            MemberFacts {
                health,
                warming: false,
                ramp: None,
            },
        );
    }
    s
}

const UP: Health = Health::Up;
const DOWN: Health = Health::Down;

#[test]
fn a_cname_pool_answers_its_first_healthy_member_for_every_type() {
    let mut f = Fixture::of(&snapshot([UP, UP, UP, UP]));
    for qtype in [Rt::A, Rt::AAAA, Rt::CNAME, Rt::ANY, Rt::TXT] {
        let m = f.ask("app.example.test.", qtype);
        assert_eq!(m.metadata.response_code, ResponseCode::NoError);
        assert!(m.metadata.authoritative);
        assert_eq!(
            answers(&m),
            ["app.example.test. 60 IN CNAME eu-lb.cdn.example.net."],
            "{qtype}"
        );
        assert!(m.authorities.is_empty(), "{qtype}");
    }
    // A static CNAME into the pool: both links.
    assert_eq!(
        answers(&f.ask("via.example.test.", Rt::A)),
        [
            "via.example.test. 300 IN CNAME app.example.test.",
            "app.example.test. 60 IN CNAME eu-lb.cdn.example.net.",
        ]
    );
}

#[test]
fn failover_moves_the_cname_to_the_next_tier_and_all_down_is_nodata() {
    let mut f = Fixture::of(&snapshot([DOWN, UP, UP, UP]));
    assert_eq!(
        answers(&f.ask("app.example.test.", Rt::A)),
        ["app.example.test. 60 IN CNAME us-lb.cdn.example.net."]
    );
    // Nothing healthy: fail open (the default) answers the first
    // candidate; fail closed is NODATA with the SOA.
    let mut all_down = snapshot([DOWN, DOWN, UP, UP]);
    let mut f = Fixture::of(&all_down);
    assert_eq!(
        answers(&f.ask("app.example.test.", Rt::A)),
        ["app.example.test. 60 IN CNAME eu-lb.cdn.example.net."]
    );
    let lbs = all_down.catalog.pools.get_mut(&PoolId(1)).unwrap();
    lbs.fail_mode = FailMode::Closed;
    let mut f = Fixture::of(&all_down);
    let m = f.ask("app.example.test.", Rt::A);
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert!(m.answers.is_empty());
    assert_eq!(m.authorities.len(), 1);
}

#[test]
fn a_weighted_cname_pool_follows_the_weights() {
    let mut f = Fixture::of(&snapshot([UP, UP, UP, UP]));
    let mut b = 0;
    let n = 2_000;
    for _ in 0..n {
        let got = answers(&f.ask("w.example.test.", Rt::A));
        assert_eq!(got.len(), 1, "one CNAME: {got:?}");
        if got[0].ends_with("b.cdn.example.net.") {
            b += 1;
        } else {
            assert!(got[0].ends_with("a.cdn.example.net."), "{got:?}");
        }
    }
    // b weighs 3 of 4: 1,500 expected; five standard deviations is ±97.
    assert!((1_400..=1_600).contains(&b), "b answered {b} of {n}");
}

/// `example.test` (the apex) A/AAAA flattened over pool 3: `cdn` is a
/// hostname resolved to two IPv4 and one IPv6 address (TTL 20), `edge2`
/// resolved to one of the same addresses, `fixed` is 192.0.2.20.
fn flattened(first_n: u32, resolved: bool) -> Snapshot {
    let mut s = snapshot([UP, UP, UP, UP]);
    let data = |_| {
        RecordData::Dynamic(DynamicRecord {
            steering: Steering::RoundRobin,
            pools: vec![PoolId(3)],
            geo: vec![],
            first_n,
            flatten: true,
            region_locations: Default::default(),
        })
    };
    for (id, rtype) in [(10, RecordType::A), (11, RecordType::Aaaa)] {
        let r = record(id, "example.test", rtype, 60, data(()));
        s.catalog.records.insert(r.id, r);
    }
    let p = Pool::new(PoolId(3), "apex");
    s.catalog.pools.insert(p.id, p);
    for (id, address) in [
        (5, "cdn.example.net"),
        (6, "edge2.example.net"),
        (7, "192.0.2.20"),
    ] {
        let m = Member::new(
            MemberId(id),
            PoolId(3),
            format!("m{id}"),
            address.parse().unwrap(),
            443,
        );
        s.catalog.members.insert(m.id, m);
        s.facts.insert(
            MemberId(id),
            MemberFacts {
                health: UP,
                warming: false,
                ramp: None,
            },
        );
    }
    if resolved {
        let ips = |list: &[&str]| list.iter().map(|a| a.parse().unwrap()).collect();
        s.resolved.insert(
            MemberId(5),
            Resolved {
                addresses: ips(&["192.0.2.10", "192.0.2.11", "2001:db8::10"]),
                ttl: 20,
            },
        );
        s.resolved.insert(
            MemberId(6),
            Resolved {
                addresses: ips(&["192.0.2.11"]),
                ttl: 40,
            },
        );
    }
    s
}

fn sorted(mut v: Vec<String>) -> Vec<String> {
    v.sort();
    v
}

#[test]
fn a_flattened_record_answers_the_resolved_addresses_once_each_at_most_their_ttl() {
    let mut f = Fixture::of(&flattened(0, true));
    assert_eq!(
        sorted(answers(&f.ask("example.test.", Rt::A))),
        [
            "example.test. 20 IN A 192.0.2.10",
            "example.test. 20 IN A 192.0.2.11",
            "example.test. 20 IN A 192.0.2.20",
        ]
    );
    assert_eq!(
        answers(&f.ask("example.test.", Rt::AAAA)),
        ["example.test. 20 IN AAAA 2001:db8::10"]
    );
    // The apex keeps its SOA and NS beside it.
    assert_eq!(answers(&f.ask("example.test.", Rt::SOA)).len(), 1);
    // firstN counts addresses.
    let mut f = Fixture::of(&flattened(1, true));
    for _ in 0..6 {
        assert_eq!(answers(&f.ask("example.test.", Rt::A)).len(), 1);
    }
}

#[test]
fn hostnames_not_resolved_are_left_out_like_members_of_another_family() {
    let mut f = Fixture::of(&flattened(0, false));
    assert_eq!(
        answers(&f.ask("example.test.", Rt::A)),
        ["example.test. 60 IN A 192.0.2.20"]
    );
    // No member has an IPv6 address: NODATA (fail open has no candidate).
    let m = f.ask("example.test.", Rt::AAAA);
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert!(m.answers.is_empty());
}
