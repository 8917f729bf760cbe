//! The responder against a compiled snapshot, one test per DNS behaviour
//! of DESIGN.md. Queries are encoded and responses decoded with
//! hickory-proto, independently of the `domain` code under test.
#![allow(missing_docs, clippy::unwrap_used)]

use std::net::IpAddr;
use std::str::FromStr;

mod common;

use common::*;
use gslb_edge::answer::Transport;
use gslb_edge::table::Table;
use gslb_shared::*;
use hickory_proto::op::{Edns, Message, OpCode, Query, ResponseCode};
use hickory_proto::rr::rdata::opt::{ClientSubnet, EdnsCode, EdnsOption};
use hickory_proto::rr::{DNSClass, Name, RecordType as Rt};

const VERSION: u64 = 77;

/// example.test with static, CNAME, wildcard and pool-backed names.
fn snapshot() -> Snapshot {
    let mut s = Snapshot {
        version: VERSION,
        ..Snapshot::default()
    };
    let zone = Zone {
        id: ZoneId(1),
        apex: name("example.test"),
        soa: Soa {
            mname: name("ns1.example.test"),
            rname: name("hostmaster.example.test"),
            refresh: 3600,
            retry: 600,
            expire: 604_800,
            negative_ttl: 60,
        },
        ns: vec![name("ns1.example.test"), name("ns2.example.test")],
        default_ttl: 300,
        ns_ttl: None,
        transfer: Default::default(),
        dnssec: None,
    };
    s.catalog.zones.insert(zone.id, zone);
    let dynamic = |pools: Vec<u64>, geo: Vec<GeoBranch>, first_n| {
        RecordData::Dynamic(DynamicRecord {
            steering: Steering::RoundRobin,
            pools: pools.into_iter().map(PoolId).collect(),
            geo,
            first_n,
            flatten: false,
            region_locations: Default::default(),
        })
    };
    let big_txt: Vec<Rdata> = (0..20)
        .map(|i| Rdata::Txt(vec![format!("{i:02}{}", "x".repeat(100))]))
        .collect();
    let records = [
        record(
            1,
            "ns1.example.test",
            RecordType::A,
            300,
            stat(vec![a("192.0.2.53")]),
        ),
        record(
            2,
            "mail.example.test",
            RecordType::A,
            300,
            stat(vec![a("192.0.2.25")]),
        ),
        record(
            3,
            "example.test",
            RecordType::Mx,
            300,
            stat(vec![Rdata::Mx {
                preference: 10,
                exchange: name("mail.example.test"),
            }]),
        ),
        record(
            4,
            "alias.example.test",
            RecordType::Cname,
            120,
            stat(vec![Rdata::Cname(name("www.example.test"))]),
        ),
        record(
            5,
            "alias2.example.test",
            RecordType::Cname,
            120,
            stat(vec![Rdata::Cname(name("alias.example.test"))]),
        ),
        record(
            6,
            "dangling.example.test",
            RecordType::Cname,
            120,
            stat(vec![Rdata::Cname(name("gone.example.test"))]),
        ),
        record(
            7,
            "out.example.test",
            RecordType::Cname,
            120,
            stat(vec![Rdata::Cname(name("cdn.elsewhere.test"))]),
        ),
        record(
            8,
            "*.wild.example.test",
            RecordType::A,
            300,
            stat(vec![a("192.0.2.99")]),
        ),
        record(
            9,
            "deep.a.b.example.test",
            RecordType::A,
            300,
            stat(vec![a("192.0.2.9")]),
        ),
        record(
            10,
            "www.example.test",
            RecordType::A,
            30,
            dynamic(vec![1, 2], vec![], 0),
        ),
        record(
            11,
            "geo.example.test",
            RecordType::A,
            30,
            dynamic(
                vec![2],
                vec![GeoBranch::for_regions(
                    vec![Region::new("eu")],
                    vec![PoolId(1)],
                )],
                1,
            ),
        ),
        record(12, "big.example.test", RecordType::Txt, 300, stat(big_txt)),
        record(
            13,
            "loop1.example.test",
            RecordType::Cname,
            60,
            stat(vec![Rdata::Cname(name("loop2.example.test"))]),
        ),
        record(
            14,
            "loop2.example.test",
            RecordType::Cname,
            60,
            stat(vec![Rdata::Cname(name("loop1.example.test"))]),
        ),
        record(
            15,
            "closed.example.test",
            RecordType::A,
            30,
            dynamic(vec![3], vec![], 0),
        ),
    ];
    for r in records {
        s.catalog.records.insert(r.id, r);
    }
    let mut closed = Pool::new(PoolId(3), "closed");
    closed.fail_mode = FailMode::Closed;
    for pool in [
        Pool::new(PoolId(1), "eu"),
        Pool::new(PoolId(2), "us"),
        closed,
    ] {
        s.catalog.pools.insert(pool.id, pool);
    }
    let members = [
        (1, 1, "10.0.1.1", Health::Up),
        (2, 1, "10.0.1.2", Health::Up),
        (3, 1, "10.0.1.3", Health::Down),
        (4, 2, "10.0.2.1", Health::Up),
        (5, 3, "10.0.3.1", Health::Down),
    ];
    for (id, pool, addr, health) in members {
        let m = Member::new(
            MemberId(id),
            PoolId(pool),
            format!("m{id}"),
            addr.parse().unwrap(),
            80,
        );
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

impl Fixture {
    fn new() -> Self {
        Self::of(&snapshot())
    }
}

#[test]
fn a_static_answer_is_authoritative_without_recursion() {
    let mut f = Fixture::new();
    let m = f.ask("mail.example.test.", Rt::A);
    assert_eq!(m.metadata.id, 4242);
    assert!(m.metadata.authoritative);
    assert!(!m.metadata.recursion_available);
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert_eq!(answers(&m), ["mail.example.test. 300 IN A 192.0.2.25"]);
    assert!(m.authorities.is_empty(), "minimal responses");
}

#[test]
fn a_missing_name_is_nxdomain_and_a_missing_type_is_nodata_with_the_soa() {
    let mut f = Fixture::new();
    let soa = format!(
        "example.test. 60 IN SOA ns1.example.test. hostmaster.example.test. {VERSION} 3600 600 604800 60"
    );
    let nx = f.ask("nope.example.test.", Rt::A);
    assert_eq!(nx.metadata.response_code, ResponseCode::NXDomain);
    assert!(nx.metadata.authoritative);
    assert_eq!(authority(&nx), std::slice::from_ref(&soa));
    let nodata = f.ask("mail.example.test.", Rt::AAAA);
    assert_eq!(nodata.metadata.response_code, ResponseCode::NoError);
    assert!(nodata.answers.is_empty());
    assert_eq!(authority(&nodata), std::slice::from_ref(&soa));
    // Names between an owner and the apex exist (empty non-terminals).
    let ent = f.ask("a.b.example.test.", Rt::A);
    assert_eq!(ent.metadata.response_code, ResponseCode::NoError);
    assert_eq!(authority(&ent), [soa]);
    // An unknown type at an existing name is NODATA too.
    let other = f.ask("mail.example.test.", Rt::HINFO);
    assert_eq!(other.metadata.response_code, ResponseCode::NoError);
    assert_eq!(other.authorities.len(), 1);
}

#[test]
fn the_apex_answers_soa_with_the_snapshot_version_and_ns() {
    let mut f = Fixture::new();
    let soa = f.ask("example.test.", Rt::SOA);
    assert_eq!(
        answers(&soa),
        [format!(
            "example.test. 300 IN SOA ns1.example.test. hostmaster.example.test. {VERSION} 3600 600 604800 60"
        )]
    );
    let ns = f.ask("example.test.", Rt::NS);
    assert_eq!(
        answers(&ns),
        [
            "example.test. 300 IN NS ns1.example.test.",
            "example.test. 300 IN NS ns2.example.test."
        ]
    );
}

#[test]
fn cname_chains_are_followed_inside_the_zone() {
    let mut f = Fixture::new();
    let m = f.ask("alias2.example.test.", Rt::A);
    let got = answers(&m);
    assert_eq!(
        got[0],
        "alias2.example.test. 120 IN CNAME alias.example.test."
    );
    assert_eq!(got[1], "alias.example.test. 120 IN CNAME www.example.test.");
    assert!(
        got[2..]
            .iter()
            .all(|r| r.starts_with("www.example.test. 30 IN A 10.0."))
    );
    assert_eq!(got.len(), 2 + 2, "two healthy members of pool eu");
    // Asking for the CNAME itself stops at the first name.
    let c = f.ask("alias2.example.test.", Rt::CNAME);
    assert_eq!(
        answers(&c),
        ["alias2.example.test. 120 IN CNAME alias.example.test."]
    );
    // A chain to a missing name ends NXDOMAIN (RFC 6604) with the CNAME.
    let d = f.ask("dangling.example.test.", Rt::A);
    assert_eq!(d.metadata.response_code, ResponseCode::NXDomain);
    assert_eq!(d.answers.len(), 1);
    assert_eq!(d.authorities.len(), 1);
    // A chain out of our zones is answered as far as we know it.
    let o = f.ask("out.example.test.", Rt::A);
    assert_eq!(o.metadata.response_code, ResponseCode::NoError);
    assert_eq!(
        answers(&o),
        ["out.example.test. 120 IN CNAME cdn.elsewhere.test."]
    );
    // A loop terminates, each of its records given once (as Knot does).
    let l = f.ask("loop1.example.test.", Rt::A);
    assert_eq!(l.metadata.response_code, ResponseCode::NoError);
    assert_eq!(
        answers(&l),
        [
            "loop1.example.test. 60 IN CNAME loop2.example.test.",
            "loop2.example.test. 60 IN CNAME loop1.example.test.",
        ]
    );
}

#[test]
fn wildcards_synthesise_the_query_name() {
    let mut f = Fixture::new();
    let m = f.ask("anything.wild.example.test.", Rt::A);
    assert_eq!(
        answers(&m),
        ["anything.wild.example.test. 300 IN A 192.0.2.99"]
    );
    assert!(m.metadata.authoritative);
    // Not below an existing name other than the wildcard's parent.
    let no = f.ask("x.y.mail.example.test.", Rt::A);
    assert_eq!(no.metadata.response_code, ResponseCode::NXDomain);
}

/// A query for `qname` (bytes as given, case included) of type A.
fn raw_query(qname: &str) -> Vec<u8> {
    let mut q = vec![0x12, 0x34, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0];
    for label in qname.trim_end_matches('.').split('.') {
        q.push(label.len() as u8);
        q.extend_from_slice(label.as_bytes());
    }
    q.extend_from_slice(&[0, 0, 1, 0, 1]);
    q
}

#[test]
fn case_is_preserved_in_the_question_and_the_answer() {
    let mut f = Fixture::new();
    let reply = f
        .raw(&raw_query("MaIl.ExAmPle.TEST"), Transport::Udp)
        .unwrap();
    // The question is echoed byte for byte and the answer's owner points at it.
    let wire = b"\x04MaIl\x07ExAmPle\x04TEST\x00";
    assert_eq!(&reply[12..12 + wire.len()], wire);
    let m = Message::from_vec(&reply).unwrap();
    assert_eq!(answers(&m), ["MaIl.ExAmPle.TEST. 300 IN A 192.0.2.25"]);
    let wild = f
        .raw(&raw_query("Anything.Wild.example.test"), Transport::Udp)
        .unwrap();
    assert!(wild.windows(8).any(|w| w == b"Anything"));
}

#[test]
fn names_outside_our_zones_are_refused() {
    let mut f = Fixture::new();
    let m = f.ask("www.example.org.", Rt::A);
    assert_eq!(m.metadata.response_code, ResponseCode::Refused);
    assert!(!m.metadata.authoritative);
    let parent = f.ask("test.", Rt::SOA);
    assert_eq!(parent.metadata.response_code, ResponseCode::Refused);
    let chaos = f.ask_with("mail.example.test.", Rt::A, |q| {
        q.queries[0].set_query_class(DNSClass::CH);
    });
    assert_eq!(chaos.metadata.response_code, ResponseCode::Refused);
}

#[test]
fn zone_transfers_are_refused() {
    let mut f = Fixture::new();
    for t in [Rt::AXFR, Rt::IXFR] {
        let m = f.ask("example.test.", t);
        assert_eq!(m.metadata.response_code, ResponseCode::Refused, "{t}");
        assert!(m.answers.is_empty());
    }
}

#[test]
fn any_is_answered_minimally() {
    let mut f = Fixture::new();
    let m = f.ask("example.test.", Rt::ANY);
    assert_eq!(m.answers.len(), 1, "RFC 8482: one record set");
    let mail = f.ask("mail.example.test.", Rt::ANY);
    assert_eq!(answers(&mail), ["mail.example.test. 300 IN A 192.0.2.25"]);
    // ANY at a CNAME owner matches the CNAME: the chain is not followed,
    // not even when it dangles (the name exists) or reaches a wildcard.
    for (owner, target) in [
        ("alias.example.test.", "www.example.test."),
        ("dangling.example.test.", "gone.example.test."),
        ("alias2.example.test.", "alias.example.test."),
    ] {
        let m = f.ask(owner, Rt::ANY);
        assert_eq!(m.metadata.response_code, ResponseCode::NoError, "{owner}");
        assert_eq!(answers(&m).len(), 1, "{owner}: {:?}", answers(&m));
        assert!(
            answers(&m)[0].ends_with(&format!("CNAME {target}")),
            "{owner}"
        );
    }
}

#[test]
fn edns_is_echoed_and_other_versions_get_badvers() {
    let mut f = Fixture::new();
    let m = f.ask_with("mail.example.test.", Rt::A, edns);
    let e = m.edns.as_ref().expect("OPT in the reply");
    assert_eq!(e.max_payload(), 1232);
    assert_eq!(e.version(), 0);
    let plain = f.ask("mail.example.test.", Rt::A);
    assert!(plain.edns.is_none(), "no OPT without one in the query");
    let v1 = f.ask_with("mail.example.test.", Rt::A, |q| {
        let mut e = Edns::new();
        e.set_version(1);
        q.set_edns(e);
    });
    // 16 is BADVERS in an OPT (hickory names the code after TSIG's BADSIG).
    assert_eq!(u16::from(v1.metadata.response_code), 16);
    assert!(v1.answers.is_empty());
}

/// Issue 43 item 11: NSID (RFC 5001) answered when configured, only to a
/// query that asks; a kept reply never carries it to one that did not.
#[test]
fn nsid_is_answered_when_configured_and_asked() {
    use hickory_proto::rr::rdata::opt::NSIDPayload;
    let ask_nsid = |q: &mut Message| {
        let mut e = Edns::new();
        e.options_mut()
            .insert(EdnsOption::NSID(NSIDPayload::new(Vec::new()).unwrap()));
        q.set_edns(e);
    };
    let nsid_of = |m: &Message| {
        m.edns
            .as_ref()
            .and_then(|e| match e.options().get(EdnsCode::NSID) {
                Some(EdnsOption::NSID(p)) => Some(p.as_ref().to_vec()),
                _ => None,
            })
    };
    let mut f = Fixture::new();
    let off = f.ask_with("mail.example.test.", Rt::A, ask_nsid);
    assert_eq!(nsid_of(&off), None, "off by default");
    f.responder.set_nsid(Some(b"edge-fra-1".to_vec().into()));
    // Twice each way, so the second of each comes from the kept replies.
    for _ in 0..2 {
        let asked = f.ask_with("mail.example.test.", Rt::A, ask_nsid);
        assert_eq!(nsid_of(&asked).as_deref(), Some(&b"edge-fra-1"[..]));
        assert_eq!(asked.answers.len(), 1);
        let plain = f.ask_with("mail.example.test.", Rt::A, edns);
        assert_eq!(nsid_of(&plain), None, "not asked, not sent");
        let bare = f.ask("mail.example.test.", Rt::A);
        assert!(bare.edns.is_none());
    }
    // NXDOMAIN and REFUSED carry it too (it names the server, not data).
    let nx = f.ask_with("nope.example.test.", Rt::A, ask_nsid);
    assert_eq!(nsid_of(&nx).as_deref(), Some(&b"edge-fra-1"[..]));
}

fn with_subnet(addr: &str, source: u8) -> impl FnOnce(&mut Message) {
    let addr: IpAddr = addr.parse().unwrap();
    move |q: &mut Message| {
        let mut e = Edns::new();
        e.options_mut()
            .insert(EdnsOption::Subnet(ClientSubnet::new(addr, source, 0)));
        q.set_edns(e);
    }
}

fn scope(m: &Message) -> Option<(IpAddr, u8, u8)> {
    match m.edns.as_ref()?.option(EdnsCode::Subnet)? {
        EdnsOption::Subnet(s) => Some((s.addr(), s.source_prefix(), s.scope_prefix())),
        _ => None,
    }
}

#[test]
fn ecs_picks_the_region_and_is_echoed_with_its_scope() {
    let mut f = Fixture::new();
    // 10.1.2.0/24 is in eu (10.1.0.0/16): the eu branch, scope /16.
    let eu = f.ask_with("geo.example.test.", Rt::A, with_subnet("10.1.2.0", 24));
    assert_eq!(answers(&eu).len(), 1, "firstN 1");
    assert!(answers(&eu)[0].contains("10.0.1."), "{:?}", answers(&eu));
    assert_eq!(scope(&eu), Some(("10.1.2.0".parse().unwrap(), 24, 16)));
    // Elsewhere: the default branch (pool us); scope is the source prefix.
    let us = f.ask_with("geo.example.test.", Rt::A, with_subnet("198.51.100.0", 24));
    assert_eq!(answers(&us), ["geo.example.test. 30 IN A 10.0.2.1"]);
    assert_eq!(scope(&us).map(|s| s.2), Some(24));
    // An answer that does not depend on location has scope /0.
    let stat = f.ask_with("mail.example.test.", Rt::A, with_subnet("10.1.2.0", 24));
    assert_eq!(scope(&stat), Some(("10.1.2.0".parse().unwrap(), 24, 0)));
    // A /0 source asks for no tailoring: the resolver's address decides.
    let zero = f.ask_with("geo.example.test.", Rt::A, with_subnet("0.0.0.0", 0));
    assert_eq!(scope(&zero).map(|s| s.2), Some(0));
}

#[test]
fn a_geo_answer_is_kept_per_branch_and_each_client_gets_its_own() {
    let mut f = Fixture::new();
    let query = mixed_query("geo.example.test", 1, 1, 9, true, 0);
    let mut ask = |client: &str| {
        let mut out = Vec::new();
        let client: IpAddr = client.parse().unwrap();
        let s = (f.responder)
            .respond(&f.table, &f.geo, &query, client, Transport::Udp, &mut out)
            .unwrap();
        let m = Message::from_vec(&out).unwrap();
        (s.prebuilt, answers(&m))
    };
    // Each branch is encoded once, then copied; neither answers the other's
    // clients, whichever came first.
    let (kept, eu) = ask("10.1.2.3");
    assert!(!kept);
    assert!(eu.iter().all(|r| r.contains("10.0.1.")), "{eu:?}");
    let (kept, us) = ask("192.0.2.200");
    assert!(!kept, "the other branch is not the eu template");
    assert_eq!(us, ["geo.example.test. 30 IN A 10.0.2.1"]);
    for _ in 0..3 {
        let (kept, again) = ask("10.1.200.1");
        assert!(kept);
        assert!(again.iter().all(|r| r.contains("10.0.1.")), "{again:?}");
        let (kept, again) = ask("198.51.100.7");
        assert!(kept);
        assert_eq!(again, us);
    }
    assert_eq!(f.responder.last_branch(), Some(0), "the default branch");
}

#[test]
fn selection_answers_only_healthy_members_and_fail_closed_is_nodata() {
    let mut f = Fixture::new();
    for _ in 0..20 {
        let m = f.ask("www.example.test.", Rt::A);
        let got = answers(&m);
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(
            got.iter().all(|r| !r.ends_with("10.0.1.3")),
            "down member answered"
        );
    }
    let closed = f.ask("closed.example.test.", Rt::A);
    assert_eq!(closed.metadata.response_code, ResponseCode::NoError);
    assert!(closed.answers.is_empty());
    assert_eq!(closed.authorities.len(), 1, "NODATA carries the SOA");
    // A dynamic A set has no AAAA.
    let v6 = f.ask("www.example.test.", Rt::AAAA);
    assert!(v6.answers.is_empty());
}

#[test]
fn round_robin_rotates_the_answer() {
    let mut f = Fixture::new();
    let firsts: std::collections::HashSet<String> = (0..6)
        .map(|_| answers(&f.ask("www.example.test.", Rt::A))[0].clone())
        .collect();
    assert_eq!(firsts.len(), 2, "each healthy member leads in turn");
}

#[test]
fn an_answer_too_big_for_udp_is_truncated_and_whole_over_tcp() {
    let mut f = Fixture::new();
    let small = f.ask("big.example.test.", Rt::TXT);
    assert!(small.metadata.truncation, "20 x 103-byte TXT > 512");
    assert!(small.answers.is_empty());
    assert_eq!(small.queries.len(), 1);
    let big = f.ask_with("big.example.test.", Rt::TXT, |q| {
        let mut e = Edns::new();
        e.set_max_payload(4096);
        q.set_edns(e);
    });
    assert!(big.metadata.truncation, "more than our 1232-byte limit");
    let mut q = Message::query();
    q.add_query(Query::query(
        Name::from_str("big.example.test.").unwrap(),
        Rt::TXT,
    ));
    let tcp = f.raw(&q.to_vec().unwrap(), Transport::Tcp).unwrap();
    let tcp = Message::from_vec(&tcp).unwrap();
    assert!(!tcp.metadata.truncation);
    assert_eq!(tcp.answers.len(), 20);
}

#[test]
fn malformed_and_unsupported_messages() {
    let mut f = Fixture::new();
    let mut q = Message::query();
    q.metadata.id = 7;
    q.add_query(Query::query(
        Name::from_str("mail.example.test.").unwrap(),
        Rt::A,
    ));
    let good = q.to_vec().unwrap();
    // Shorter than a header: nothing.
    assert!(f.raw(&good[..11], Transport::Udp).is_none());
    // A response (QR set): nothing, so we never answer an answer.
    let mut response = good.clone();
    response[2] |= 0x80;
    assert!(f.raw(&response, Transport::Udp).is_none());
    // Unknown opcode: NOTIMP.
    let mut notify = q.clone();
    notify.metadata.op_code = OpCode::Notify;
    let m = Message::from_vec(&f.raw(&notify.to_vec().unwrap(), Transport::Udp).unwrap()).unwrap();
    assert_eq!(m.metadata.response_code, ResponseCode::NotImp);
    // Two questions: FORMERR.
    let mut two = q.clone();
    two.add_query(Query::query(
        Name::from_str("ns1.example.test.").unwrap(),
        Rt::A,
    ));
    let m = Message::from_vec(&f.raw(&two.to_vec().unwrap(), Transport::Udp).unwrap()).unwrap();
    assert_eq!(m.metadata.response_code, ResponseCode::FormErr);
    // A truncated question: FORMERR, and no longer than the query.
    let cut = &good[..good.len() - 3];
    let reply = f.raw(cut, Transport::Udp).unwrap();
    assert!(reply.len() <= cut.len());
    assert_eq!(
        Message::from_vec(&reply).unwrap().metadata.response_code,
        ResponseCode::FormErr
    );
    // A compression pointer loop in the question name: FORMERR.
    let mut looped = good[..12].to_vec();
    looped.extend_from_slice(&[0xC0, 12, 0, 1, 0, 1]);
    let reply = f.raw(&looped, Transport::Udp).unwrap();
    assert_eq!(
        Message::from_vec(&reply).unwrap().metadata.response_code,
        ResponseCode::FormErr
    );
    // A question name that points into the header: FORMERR, and the
    // expanded name is not echoed (that would amplify).
    let mut into_header = good[..12].to_vec();
    into_header.extend_from_slice(&[1, b'x', 0xC0, 0, 0, 1, 0, 1]);
    let reply = f.raw(&into_header, Transport::Udp).unwrap();
    assert!(reply.len() <= into_header.len());
    assert_eq!(
        Message::from_vec(&reply).unwrap().metadata.response_code,
        ResponseCode::FormErr
    );
    // Two OPT records: FORMERR.
    let mut opt2 = good.clone();
    opt2[11] = 2;
    for _ in 0..2 {
        opt2.extend_from_slice(&[0, 0, 41, 4, 0xD0, 0, 0, 0, 0, 0, 0]);
    }
    let reply = f.raw(&opt2, Transport::Udp).unwrap();
    assert_eq!(
        Message::from_vec(&reply).unwrap().metadata.response_code,
        ResponseCode::FormErr
    );
    // DNS cookies (RFC 7873 5.2.2): a client cookie of 8 bytes, or one
    // with a server cookie of 8 to 32, is answered; any other length is
    // FORMERR.
    let mut with_cookie = |len: u8| {
        let mut m = good.clone();
        m[11] = 1;
        m.extend_from_slice(&[0, 0, 41, 4, 0xD0, 0, 0, 0, 0, 0, 4 + len, 0, 10, 0, len]);
        m.extend(std::iter::repeat_n(0xAB, usize::from(len)));
        Message::from_vec(&f.raw(&m, Transport::Udp).unwrap())
            .unwrap()
            .metadata
            .response_code
    };
    for len in [8, 16, 40] {
        assert_eq!(with_cookie(len), ResponseCode::NoError, "cookie of {len}");
    }
    for len in [0, 7, 9, 15, 41] {
        assert_eq!(with_cookie(len), ResponseCode::FormErr, "cookie of {len}");
    }
}

#[test]
fn the_serial_follows_the_snapshot_version() {
    let mut s = snapshot();
    s.version = (1 << 32) + 5;
    let mut f = Fixture::new();
    f.table = Table::compile(&s).unwrap();
    let m = f.ask("example.test.", Rt::SOA);
    assert!(
        answers(&m)[0].contains(" 5 3600 "),
        "serial wraps at 2^32: {:?}",
        answers(&m)
    );
}

/// A set-valued view of a reply: everything but the order of records.
type View = (u16, String, Vec<String>, Vec<String>, Option<bool>);

fn sorted_view(bytes: &[u8]) -> View {
    let m = Message::from_vec(bytes).unwrap();
    let mut a = answers(&m);
    a.sort();
    (
        m.metadata.id,
        format!(
            "{:?}/{}/{}",
            m.metadata.response_code, m.metadata.authoritative, m.metadata.truncation
        ),
        a,
        authority(&m),
        m.edns.as_ref().map(|e| e.flags().dnssec_ok),
    )
}

/// A query of `NAMES[n]` with the given type, class, id, RD, and EDNS
/// (none, plain, with DO, with a client subnet).
fn mixed_query(qname: &str, qtype: u16, qclass: u16, id: u16, rd: bool, edns: u8) -> Vec<u8> {
    let mut bytes = raw_query(qname);
    bytes[0..2].copy_from_slice(&id.to_be_bytes());
    bytes[2] = u8::from(rd);
    let l = bytes.len();
    bytes[l - 4..l - 2].copy_from_slice(&qtype.to_be_bytes());
    bytes[l - 2..].copy_from_slice(&qclass.to_be_bytes());
    if edns > 0 {
        bytes[11] = 1;
        let dnssec_ok = if edns == 2 { 0x80 } else { 0 };
        let ecs: &[u8] = if edns == 3 {
            &[0, 8, 0, 7, 0, 1, 24, 0, 10, 1, 2]
        } else {
            &[]
        };
        bytes.extend_from_slice(&[0, 0, 41, 0x04, 0xd0, 0, 0, dnssec_ok, 0]);
        bytes.extend_from_slice(&(ecs.len() as u16).to_be_bytes());
        bytes.extend_from_slice(ecs);
    }
    bytes
}

#[test]
fn a_record_set_that_cannot_be_sent_is_skipped_and_the_rest_is_served() {
    // 280 strings of 255 bytes: more rdata than a record can hold. Older
    // aggregators accepted it, and every edge then refused the snapshot.
    let mut s = snapshot();
    let huge = record(
        99,
        "huge.example.test",
        RecordType::Txt,
        300,
        stat(vec![Rdata::Txt(vec!["x".repeat(255); 280])]),
    );
    s.catalog.records.insert(huge.id, huge);
    let table = Table::compile(&s).unwrap();
    assert_eq!(table.skipped.len(), 1, "{:?}", table.skipped);
    let reason = table.skipped[0].to_string();
    assert!(
        reason.contains("record set 99 (huge.example.test TXT)") && reason.contains("does not fit"),
        "{reason}"
    );
    let mut f = Fixture::new();
    f.table = table;
    assert_eq!(
        answers(&f.ask("mail.example.test.", Rt::A)),
        ["mail.example.test. 300 IN A 192.0.2.25"]
    );
    // The name exists (NODATA), its set is not served.
    let m = f.ask_with("huge.example.test.", Rt::TXT, |q| {
        q.metadata.recursion_desired = false;
    });
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert!(m.answers.is_empty());
}

#[test]
fn a_query_of_another_class_never_answers_an_in_query() {
    // One CH query used to fill the prebuilt store under the IN key: every
    // later IN query of the name got the CH question and REFUSED back.
    let mut f = Fixture::new();
    for class in [3u16, 255, 254, 4] {
        let other = mixed_query("www.example.test", 1, class, 1, false, 0);
        let reply = f.raw(&other, Transport::Udp).unwrap();
        assert_eq!(
            &reply[12..other.len()],
            &other[12..],
            "class {class} echoed"
        );
        assert_eq!(reply[3] & 0x0f, 5, "class {class} is refused");
        for _ in 0..3 {
            let q = mixed_query("www.example.test", 1, 1, 2, false, 0);
            let reply = f.raw(&q, Transport::Udp).unwrap();
            assert_eq!(
                &reply[12..q.len()],
                &q[12..],
                "IN question after class {class}"
            );
            assert_eq!(reply[3] & 0x0f, 0, "IN answered after class {class}");
        }
    }
    // And the reverse: an IN answer never answers another class.
    let reply = f
        .raw(
            &mixed_query("mail.example.test", 1, 3, 3, false, 0),
            Transport::Udp,
        )
        .unwrap();
    assert_eq!(reply[3] & 0x0f, 5);
    assert_eq!(
        u16::from_be_bytes([reply[6], reply[7]]),
        0,
        "no answer records"
    );
}

#[test]
fn the_do_bit_is_echoed_and_keys_the_prebuilt_reply() {
    let mut f = Fixture::new();
    for edns in [2u8, 1, 2, 1] {
        let q = mixed_query("mail.example.test", 1, 1, 9, false, edns);
        let reply = Message::from_vec(&f.raw(&q, Transport::Udp).unwrap()).unwrap();
        assert_eq!(reply.edns.unwrap().flags().dnssec_ok, edns == 2);
    }
}

proptest::proptest! {
    /// Whatever the sequence of queries (names in any case, types, classes,
    /// EDNS with and without DO and ECS, UDP and TCP), every reply carries
    /// its own query's question byte for byte (name, type, class), and
    /// replies built from prebuilt templates (a long-lived responder) equal
    /// freshly encoded ones (a new responder per query), up to the order of
    /// steered records.
    #[test]
    fn prebuilt_replies_equal_fresh_encodings(
        queries in proptest::collection::vec(
            (0usize..13, 0usize..6, 0usize..5, 0u8..4, proptest::bool::ANY, proptest::bool::ANY, 0u16..u16::MAX, 0usize..3),
            1..80,
        )
    ) {
        // In eu (10.1/16), in no region, and IPv6: geo answers are kept per branch.
        const CLIENTS: [&str; 3] = ["10.1.2.3", "192.0.2.200", "2001:db8::1"];
        const NAMES: [&str; 13] = [
            "www.example.test", "WWW.Example.Test", "alias2.example.test", "mail.example.test",
            "nope.example.test", "x.wild.example.test", "example.test", "closed.example.test",
            "big.example.test", "out.example.test", "a.b.example.test", "www.example.org",
            "Geo.example.test",
        ];
        const TYPES: [u16; 6] = [1, 28, 16, 6, 15, 255];
        // IN, CH, HS, NONE, ANY.
        const CLASSES: [u16; 5] = [1, 3, 4, 254, 255];
        let mut long_lived = Fixture::new();
        for (n, t, c, edns, rd, tcp, id, from) in queries {
            let bytes = mixed_query(NAMES[n], TYPES[t], CLASSES[c], id, rd, edns);
            let transport = if tcp { Transport::Tcp } else { Transport::Udp };
            let client: IpAddr = CLIENTS[from].parse().unwrap();
            let reused = long_lived.raw_from(&bytes, transport, client).unwrap();
            let fresh = Fixture::new().raw_from(&bytes, transport, client).unwrap();
            let question = 12..12 + NAMES[n].len() + 2 + 4;
            proptest::prop_assert_eq!(&reused[question.clone()], &bytes[question], "question echoed as sent");
            proptest::prop_assert_eq!(reused[2] & 1, u8::from(rd), "RD copied");
            proptest::prop_assert_eq!(branch_view(&reused), branch_view(&fresh));
        }
    }
}

/// [`sorted_view`] with the geo record's addresses cut to their pool's
/// prefix: its branch answers one member in turn (firstN 1), and a fresh
/// responder always starts the turn at the first.
fn branch_view(bytes: &[u8]) -> View {
    let mut view = sorted_view(bytes);
    for a in view.2.iter_mut() {
        if a.to_ascii_lowercase().starts_with("geo.example.test.")
            && let Some(cut) = a.rfind('.')
        {
            a.truncate(cut);
        }
    }
    view
}

fn facts_delta(s: &Snapshot, flips: &[(u64, bool)]) -> Delta {
    let health = |up| if up { Health::Up } else { Health::Down };
    Delta {
        base_version: s.version,
        version: s.version + 1,
        facts: (flips.iter())
            .map(|&(id, up)| {
                let facts = MemberFacts {
                    health: health(up),
                    warming: false,
                    ramp: None,
                };
                (MemberId(id), facts)
            })
            .collect(),
        ..Delta::default()
    }
}

#[test]
fn a_refresh_decides_only_the_sets_naming_the_touched_pools() {
    let mut s = snapshot();
    let compiled = Table::compile(&s).unwrap();
    assert_eq!(
        compiled.decided_here(),
        3,
        "a full compile decides every set"
    );
    // Member 5 is in pool 3, which only closed.example.test names.
    let delta = facts_delta(&s, &[(5, true)]);
    let touched = delta.health_only().unwrap();
    s.apply(&delta).unwrap();
    let refreshed = compiled.refresh(&s, &touched, 1).unwrap().unwrap();
    assert_eq!(refreshed.decided_here(), 1);
    assert_eq!(refreshed.lineage, compiled.lineage);
    assert!(std::sync::Arc::ptr_eq(
        &refreshed.entries,
        &compiled.entries
    ));
    // Pool 1 is named by www (default branch) and geo (its eu branch).
    let delta = facts_delta(&s, &[(1, false)]);
    let touched = delta.health_only().unwrap();
    s.apply(&delta).unwrap();
    let again = refreshed.refresh(&s, &touched, 1).unwrap().unwrap();
    assert_eq!(again.decided_here(), 2);
    // A catalog change is not health-only.
    let mut member = Delta {
        base_version: s.version,
        version: s.version + 1,
        ..Delta::default()
    };
    member.removed_members.push(MemberId(2));
    assert_eq!(member.health_only(), None);
}

proptest::proptest! {
    /// A chain of health-only refreshes answers as full compiles do: a
    /// long-lived responder over refreshed tables (keeping its prebuilt
    /// replies across them) replies as a new responder over a full compile
    /// of the same snapshot, SOA serial included, up to the order of
    /// steered records.
    #[test]
    fn refreshed_tables_answer_as_full_compiles(
        steps in proptest::collection::vec(
            (
                proptest::collection::vec((1u64..6, proptest::bool::ANY), 1..4),
                proptest::collection::vec((0usize..8, 0usize..4, 0u8..3), 1..24),
            ),
            1..10,
        )
    ) {
        const NAMES: [&str; 8] = [
            "www.example.test", "geo.example.test", "closed.example.test", "mail.example.test",
            "nope.example.test", "example.test", "a.b.example.test", "WWW.example.TEST",
        ];
        const TYPES: [u16; 4] = [1, 28, 6, 255];
        let mut s = snapshot();
        let mut long_lived = Fixture::of(&s);
        for (flips, queries) in steps {
            let delta = facts_delta(&s, &flips);
            let touched = delta.health_only().unwrap();
            s.apply(&delta).unwrap();
            let refreshed = long_lived.table.refresh(&s, &touched, 1).unwrap().unwrap();
            long_lived.table = refreshed;
            let mut fresh = Fixture::of(&s);
            for (n, t, edns) in queries {
                let bytes = mixed_query(NAMES[n], TYPES[t], 1, 7, false, edns);
                let reused = long_lived.raw(&bytes, Transport::Udp).unwrap();
                let made = fresh.raw(&bytes, Transport::Udp).unwrap();
                proptest::prop_assert_eq!(sorted_view(&reused), sorted_view(&made), "{} {}", NAMES[n], TYPES[t]);
            }
        }
    }
}
