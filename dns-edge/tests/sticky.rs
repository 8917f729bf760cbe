//! Sticky steering at the edge: a client subnet (ECS, else the resolver's
//! address) gets the same member every time, answers are scoped to the
//! subnet, and no reply made for one subnet is replayed to another.
#![allow(missing_docs, clippy::unwrap_used)]

use std::collections::{HashMap, HashSet};
use std::net::IpAddr;
use std::str::FromStr;

mod common;

use common::*;
use gslb_edge::answer::{Responder, Transport};
use gslb_edge::geo::GeoTable;
use gslb_edge::table::Table;
use gslb_shared::*;
use hickory_proto::op::{Edns, Message, Query};
use hickory_proto::rr::rdata::opt::{ClientSubnet, EdnsCode, EdnsOption};
use hickory_proto::rr::{Name, RecordType as Rt};

/// `sticky.example.test`: six members up, one answered per query.
fn snapshot() -> Snapshot {
    let mut s = pool_snapshot(6);
    let rs = record(
        1,
        "sticky.example.test",
        RecordType::A,
        30,
        RecordData::Dynamic(DynamicRecord {
            steering: Steering::Sticky,
            pools: vec![PoolId(1)],
            geo: vec![],
            first_n: 1,
            flatten: false,
            region_locations: Default::default(),
        }),
    );
    s.catalog.records.insert(rs.id, rs);
    s
}

struct Edge {
    table: Table,
    geo: GeoTable,
    responder: Responder,
}

impl Edge {
    fn new() -> Self {
        Self {
            table: Table::compile(&snapshot()).unwrap(),
            geo: GeoTable::parse("").unwrap(),
            responder: Responder::new(7),
        }
    }

    /// The one address answered to `client`, optionally with an ECS
    /// subnet, and the ECS scope echoed.
    fn ask(&mut self, client: &str, ecs: Option<(&str, u8)>) -> (String, Option<u8>) {
        let mut q = Message::query();
        q.metadata.id = 9;
        q.add_query(Query::query(
            Name::from_str("sticky.example.test.").unwrap(),
            Rt::A,
        ));
        if let Some((addr, source)) = ecs {
            let mut e = Edns::new();
            e.options_mut().insert(EdnsOption::Subnet(ClientSubnet::new(
                addr.parse().unwrap(),
                source,
                0,
            )));
            q.set_edns(e);
        }
        let mut out = Vec::new();
        let client: IpAddr = client.parse().unwrap();
        self.responder
            .respond(
                &self.table,
                &self.geo,
                &q.to_vec().unwrap(),
                client,
                Transport::Udp,
                &mut out,
            )
            .unwrap();
        let m = Message::from_vec(&out).unwrap();
        let got = answers(&m);
        assert_eq!(got.len(), 1, "{got:?}");
        let scope = m
            .edns
            .as_ref()
            .and_then(|e| e.option(EdnsCode::Subnet))
            .and_then(|o| match o {
                EdnsOption::Subnet(s) => Some(s.scope_prefix()),
                _ => None,
            });
        (got[0].rsplit(' ').next().unwrap().to_owned(), scope)
    }
}

#[test]
fn a_subnet_always_gets_its_member_and_subnets_spread() {
    let mut edge = Edge::new();
    let mut first: HashMap<u32, String> = HashMap::new();
    for round in 0..5 {
        for subnet in 0..60u32 {
            let ecs = format!("198.{}.{}.0", 51 + subnet / 250, subnet % 250);
            let (got, scope) = edge.ask("192.0.2.1", Some((&ecs, 24)));
            assert_eq!(scope, Some(24), "scoped to the subnet");
            let seen = first.entry(subnet).or_insert_with(|| got.clone());
            assert_eq!(*seen, got, "subnet {ecs} moved in round {round}");
        }
    }
    let spread: HashSet<_> = first.values().collect();
    assert!(spread.len() >= 4, "{spread:?}");
    // Hosts of one /24 share it; a shorter ECS source scopes to itself.
    let (a, _) = edge.ask("192.0.2.1", Some(("198.51.0.7", 32)));
    let (b, _) = edge.ask("192.0.2.1", Some(("198.51.0.200", 32)));
    assert_eq!(a, b);
    assert_eq!(a, first[&0]);
    let (_, scope) = edge.ask("192.0.2.1", Some(("198.51.0.0", 16)));
    assert_eq!(scope, Some(16));
}

#[test]
fn without_ecs_the_resolver_address_decides_and_replies_are_never_shared() {
    let mut edge = Edge::new();
    let resolvers: Vec<String> = (0..40).map(|i| format!("203.0.{i}.9")).collect();
    let own: Vec<String> = resolvers.iter().map(|r| edge.ask(r, None).0).collect();
    // Ask again interleaved: a reply kept for one resolver would answer
    // the next one with the wrong member.
    for _ in 0..3 {
        for (r, want) in resolvers.iter().zip(&own) {
            assert_eq!(&edge.ask(r, None).0, want, "resolver {r}");
        }
    }
    let spread: HashSet<_> = own.iter().collect();
    assert!(spread.len() >= 4, "{spread:?}");
}
