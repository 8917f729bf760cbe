//! What the responder tests share: building model objects, and a
//! responder over a compiled snapshot that answers hickory-built queries.
#![allow(dead_code, clippy::unwrap_used)]

use std::net::IpAddr;
use std::str::FromStr;

use gslb_edge::answer::{Responder, Transport};
use gslb_edge::geo::GeoTable;
use gslb_edge::table::Table;
use gslb_shared::*;
use hickory_proto::op::{Edns, Message, Query};
use hickory_proto::rr::{Name, RecordType as Rt};

pub fn name(s: &str) -> DnsName {
    DnsName::parse(s).unwrap()
}

/// Version 1 of zone `example.test` with pool 1 (`web`) of `members` IP
/// members `10.0.0.1`, `10.0.0.2`, ..., all up.
pub fn pool_snapshot(members: u64) -> Snapshot {
    let mut s = Snapshot {
        version: 1,
        ..Snapshot::default()
    };
    s.catalog.zones.insert(ZoneId(1), zone(1, "example.test"));
    s.catalog
        .pools
        .insert(PoolId(1), Pool::new(PoolId(1), "web"));
    for id in 1..=members {
        let m = Member::new(
            MemberId(id),
            PoolId(1),
            format!("m{id}"),
            format!("10.0.0.{id}").parse().unwrap(),
            80,
        );
        s.catalog.members.insert(m.id, m);
        s.facts.insert(MemberId(id), MemberFacts::UP);
    }
    s
}

pub fn record(id: u64, owner: &str, rtype: RecordType, ttl: u32, data: RecordData) -> RecordSet {
    record_in(1, id, owner, rtype, ttl, data)
}

pub fn record_in(
    zone: u64,
    id: u64,
    owner: &str,
    rtype: RecordType,
    ttl: u32,
    data: RecordData,
) -> RecordSet {
    RecordSet {
        id: RecordSetId(id),
        zone: ZoneId(zone),
        name: name(owner),
        rtype,
        ttl,
        data,
    }
}

pub fn stat(rdata: Vec<Rdata>) -> RecordData {
    RecordData::Static(rdata)
}

pub fn a(s: &str) -> Rdata {
    Rdata::A(s.parse().unwrap())
}

/// A zone with a fixed SOA, name servers `ns1` and `ns.elsewhere.test`.
pub fn zone(id: u64, apex: &str) -> Zone {
    Zone {
        id: ZoneId(id),
        apex: name(apex),
        soa: Soa {
            mname: name(&format!("ns1.{apex}")),
            rname: name(&format!("hostmaster.{apex}")),
            refresh: 3600,
            retry: 600,
            expire: 604_800,
            negative_ttl: 60,
        },
        ns: vec![name(&format!("ns1.{apex}")), name("ns.elsewhere.test")],
        default_ttl: 300,
        ns_ttl: None,
        transfer: Default::default(),
        dnssec: None,
    }
}

pub fn additional(m: &Message) -> Vec<String> {
    let mut v: Vec<String> = m.additionals.iter().map(|r| r.to_string()).collect();
    v.sort();
    v
}

/// One responder over one compiled table.
pub struct Fixture {
    pub table: Table,
    pub geo: GeoTable,
    pub responder: Responder,
}

impl Fixture {
    /// A responder over the compiled `snapshot`; clients in 10.1/16 are in
    /// region `eu`.
    pub fn of(snapshot: &Snapshot) -> Self {
        Self {
            table: Table::compile(snapshot).unwrap(),
            geo: GeoTable::parse("10.1.0.0/16 eu\n").unwrap(),
            responder: Responder::new(1),
        }
    }

    pub fn raw(&mut self, query: &[u8], transport: Transport) -> Option<Vec<u8>> {
        self.raw_from(query, transport, "192.0.2.200".parse().unwrap())
    }

    /// The reply to `query` from `client`.
    pub fn raw_from(
        &mut self,
        query: &[u8],
        transport: Transport,
        client: IpAddr,
    ) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        self.responder
            .respond(&self.table, &self.geo, query, client, transport, &mut out)
            .map(|_| out)
    }

    pub fn ask_with(&mut self, qname: &str, qtype: Rt, edit: impl FnOnce(&mut Message)) -> Message {
        let mut q = Message::query();
        q.metadata.id = 4242;
        q.add_query(Query::query(Name::from_str(qname).unwrap(), qtype));
        edit(&mut q);
        let bytes = self
            .raw(&q.to_vec().unwrap(), Transport::Udp)
            .expect("a reply");
        Message::from_vec(&bytes).unwrap()
    }

    pub fn ask(&mut self, qname: &str, qtype: Rt) -> Message {
        self.ask_with(qname, qtype, |_| {})
    }
}

pub fn edns(q: &mut Message) {
    let mut e = Edns::new();
    e.set_max_payload(1232);
    q.set_edns(e);
}

pub fn answers(m: &Message) -> Vec<String> {
    m.answers.iter().map(|r| r.to_string()).collect()
}

pub fn authority(m: &Message) -> Vec<String> {
    m.authorities.iter().map(|r| r.to_string()).collect()
}
