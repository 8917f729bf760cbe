//! Latency steering at the edge: the client's region (from ECS) picks the
//! locations whose round-trip times decide, the answer is the fastest
//! members, scoped to the region's prefix, and a delta that moves only the
//! times is applied by a refresh that changes the answer.
#![allow(missing_docs, clippy::unwrap_used)]

use std::str::FromStr;

mod common;

use common::*;
use gslb_edge::geo::GeoTable;
use gslb_shared::*;
use hickory_proto::op::{Edns, Message};
use hickory_proto::rr::RecordType as Rt;
use hickory_proto::rr::rdata::opt::{ClientSubnet, EdnsCode, EdnsOption};

fn rtt(times: &[(&str, u32)]) -> Rtts {
    Rtts::new(
        times
            .iter()
            .map(|(l, micros)| LocationRtt {
                location: LocationId::new(*l),
                micros: *micros,
            })
            .collect(),
    )
}

/// `fast.example.test`: member 1 near fra, member 2 near nyc.
fn snapshot() -> Snapshot {
    let mut s = pool_snapshot(2);
    s.rtt
        .insert(MemberId(1), rtt(&[("fra", 4_000), ("nyc", 80_000)]));
    s.rtt
        .insert(MemberId(2), rtt(&[("fra", 90_000), ("nyc", 5_000)]));
    let mut region_locations = std::collections::BTreeMap::new();
    region_locations.insert(Region::new("eu"), vec![LocationId::new("fra")]);
    region_locations.insert(Region::new("us"), vec![LocationId::new("nyc")]);
    let rs = record(
        1,
        "fast.example.test",
        RecordType::A,
        30,
        RecordData::Dynamic(DynamicRecord {
            steering: Steering::Latency,
            pools: vec![PoolId(1)],
            geo: vec![],
            first_n: 0,
            flatten: false,
            region_locations,
        }),
    );
    s.catalog.records.insert(rs.id, rs);
    s
}

fn fixture(s: &Snapshot) -> Fixture {
    let mut f = Fixture::of(s);
    f.geo = GeoTable::parse("192.0.2.0/24 eu\n198.51.100.0/25 us\n").unwrap();
    f
}

/// Addresses answered to a client in `ecs`, and the ECS scope.
fn ask(f: &mut Fixture, ecs: Option<&str>) -> (Vec<String>, Option<u8>) {
    let m: Message = f.ask_with("fast.example.test.", Rt::A, |q| {
        let mut e = Edns::new();
        if let Some(addr) = ecs {
            e.options_mut().insert(EdnsOption::Subnet(ClientSubnet::new(
                std::net::IpAddr::from_str(addr).unwrap(),
                24,
                0,
            )));
        }
        q.set_edns(e);
    });
    let mut got: Vec<String> = answers(&m)
        .iter()
        .map(|a| a.rsplit(' ').next().unwrap().to_owned())
        .collect();
    got.sort();
    let scope = m
        .edns
        .as_ref()
        .and_then(|e| e.option(EdnsCode::Subnet))
        .and_then(|o| match o {
            EdnsOption::Subnet(s) => Some(s.scope_prefix()),
            _ => None,
        });
    (got, scope)
}

#[test]
fn each_region_is_answered_its_fastest_member_scoped_to_its_prefix() {
    let mut f = fixture(&snapshot());
    for _ in 0..3 {
        assert_eq!(
            ask(&mut f, Some("192.0.2.0")),
            (vec!["10.0.0.1".into()], Some(24))
        );
        assert_eq!(
            ask(&mut f, Some("198.51.100.0")),
            (vec!["10.0.0.2".into()], Some(25))
        );
    }
    // Elsewhere: the mean over every location, 42 ms and 47.5 ms, within
    // 20% of each other: both.
    let (other, _) = ask(&mut f, Some("203.0.113.0"));
    assert_eq!(other, vec!["10.0.0.1".to_owned(), "10.0.0.2".to_owned()]);
}

#[test]
fn a_delta_of_times_alone_is_refreshed_and_moves_the_answer() {
    let s = snapshot();
    let mut f = fixture(&s);
    let mut next = s.clone();
    let delta = Delta {
        base_version: 1,
        version: 2,
        rtt: vec![(MemberId(1), rtt(&[("fra", 120_000), ("nyc", 80_000)]))],
        ..Delta::default()
    };
    let touched = delta.health_only().unwrap();
    assert_eq!(touched, vec![MemberId(1)]);
    next.apply(&delta).unwrap();
    f.table = f.table.refresh(&next, &touched, 1).unwrap().unwrap();
    assert_eq!(
        ask(&mut f, Some("192.0.2.0")).0,
        vec!["10.0.0.2".to_owned()]
    );
    // No longer measured at all: every member again, for every client.
    let gone = Delta {
        base_version: 2,
        version: 3,
        unmeasured: vec![MemberId(1), MemberId(2)],
        ..Delta::default()
    };
    let touched = gone.health_only().unwrap();
    next.apply(&gone).unwrap();
    assert!(next.rtt.is_empty());
    f.table = f.table.refresh(&next, &touched, 1).unwrap().unwrap();
    assert_eq!(ask(&mut f, Some("192.0.2.0")).0.len(), 2);
}
