//! Zone cuts: referrals (AA clear, the NS set in authority, glue in
//! additional), DS answered by the parent at the cut, occluded data, CNAME
//! chains that lead below a cut, a child zone served here, and the
//! additional addresses of NS, MX and SRV answers. The expected replies
//! are what Knot sends for the same zone (see the differential test).
#![allow(missing_docs, clippy::unwrap_used)]

mod common;

use common::*;
use gslb_shared::validate;
use gslb_shared::*;
use hickory_proto::op::ResponseCode;
use hickory_proto::rr::RecordType as Rt;

fn aaaa(s: &str) -> Rdata {
    Rdata::Aaaa(s.parse().unwrap())
}

fn ns(s: &str) -> Rdata {
    Rdata::Ns(name(s))
}

/// d.test delegates `sub` (glue below the cut, a sibling name server in
/// the zone, one elsewhere, and the cut's own name) and serves the child
/// zone `kid.d.test` itself, whose DS it holds.
fn snapshot() -> Snapshot {
    let mut s = Snapshot {
        version: 9,
        ..Snapshot::default()
    };
    for z in [zone(1, "d.test"), zone(2, "kid.d.test")] {
        s.catalog.zones.insert(z.id, z);
    }
    let ds = Rdata::Ds {
        key_tag: 12345,
        algorithm: 13,
        digest_type: 2,
        digest: "ab".repeat(32),
    };
    let records = [
        record_in(
            1,
            1,
            "ns1.d.test",
            RecordType::A,
            300,
            stat(vec![a("192.0.2.53")]),
        ),
        record_in(
            1,
            2,
            "ns1.d.test",
            RecordType::Aaaa,
            300,
            stat(vec![aaaa("2001:db8::53")]),
        ),
        record_in(
            1,
            3,
            "sub.d.test",
            RecordType::Ns,
            600,
            stat(vec![
                ns("ns1.sub.d.test"),
                ns("ns1.d.test"),
                ns("ns.elsewhere.test"),
                ns("sub.d.test"),
            ]),
        ),
        record_in(
            1,
            4,
            "sub.d.test",
            RecordType::A,
            300,
            stat(vec![a("192.0.2.7")]),
        ),
        record_in(
            1,
            5,
            "sub.d.test",
            RecordType::Ds,
            300,
            stat(vec![ds.clone()]),
        ),
        record_in(
            1,
            6,
            "ns1.sub.d.test",
            RecordType::A,
            300,
            stat(vec![a("192.0.2.70")]),
        ),
        record_in(
            1,
            7,
            "into.d.test",
            RecordType::Cname,
            300,
            stat(vec![Rdata::Cname(name("www.sub.d.test"))]),
        ),
        record_in(
            1,
            8,
            "atcut.d.test",
            RecordType::Cname,
            300,
            stat(vec![Rdata::Cname(name("sub.d.test"))]),
        ),
        record_in(
            1,
            9,
            "d.test",
            RecordType::Mx,
            300,
            stat(vec![
                Rdata::Mx {
                    preference: 10,
                    exchange: name("mail.d.test"),
                },
                Rdata::Mx {
                    preference: 20,
                    exchange: name("x.wild.d.test"),
                },
                Rdata::Mx {
                    preference: 30,
                    exchange: name("mx.elsewhere.test"),
                },
            ]),
        ),
        record_in(
            1,
            10,
            "mail.d.test",
            RecordType::A,
            300,
            stat(vec![a("192.0.2.25")]),
        ),
        record_in(
            1,
            11,
            "*.wild.d.test",
            RecordType::A,
            300,
            stat(vec![a("192.0.2.99")]),
        ),
        record_in(
            1,
            12,
            "_sip._tcp.d.test",
            RecordType::Srv,
            300,
            stat(vec![Rdata::Srv {
                priority: 1,
                weight: 1,
                port: 5060,
                target: name("ns1.sub.d.test"),
            }]),
        ),
        record_in(1, 13, "kid.d.test", RecordType::Ds, 300, stat(vec![ds])),
        record_in(
            2,
            14,
            "www.kid.d.test",
            RecordType::A,
            300,
            stat(vec![a("192.0.2.80")]),
        ),
        record_in(
            2,
            15,
            "ns1.kid.d.test",
            RecordType::A,
            300,
            stat(vec![a("192.0.2.81")]),
        ),
    ];
    for r in records {
        s.catalog.records.insert(r.id, r);
    }
    s
}

const REFERRAL: [&str; 4] = [
    "sub.d.test. 600 IN NS ns1.sub.d.test.",
    "sub.d.test. 600 IN NS ns1.d.test.",
    "sub.d.test. 600 IN NS ns.elsewhere.test.",
    "sub.d.test. 600 IN NS sub.d.test.",
];
const GLUE: [&str; 4] = [
    "ns1.d.test. 300 IN A 192.0.2.53",
    "ns1.d.test. 300 IN AAAA 2001:db8::53",
    "ns1.sub.d.test. 300 IN A 192.0.2.70",
    "sub.d.test. 300 IN A 192.0.2.7",
];

fn assert_referral(m: &hickory_proto::op::Message, answer: &[&str]) {
    assert_eq!(m.metadata.response_code, ResponseCode::NoError);
    assert_eq!(answers(m), answer);
    assert_eq!(
        m.metadata.authoritative,
        !answer.is_empty(),
        "AA only when the answer holds our own data"
    );
    assert_eq!(authority(m), REFERRAL);
    assert_eq!(additional(m), GLUE);
}

#[test]
fn queries_at_and_below_a_cut_get_a_referral_with_glue() {
    let mut f = Fixture::of(&snapshot());
    for (qname, qtype) in [
        ("sub.d.test.", Rt::A),
        ("sub.d.test.", Rt::NS),
        ("sub.d.test.", Rt::TXT),
        ("www.sub.d.test.", Rt::A),
        ("deep.www.sub.d.test.", Rt::AAAA),
        ("ns1.sub.d.test.", Rt::A),
        ("x.sub.d.test.", Rt::DS),
        ("SUB.D.test.", Rt::A),
    ] {
        let m = f.ask(qname, qtype);
        assert_referral(&m, &[]);
    }
}

#[test]
fn the_parent_answers_ds_at_the_cut() {
    let mut f = Fixture::of(&snapshot());
    let m = f.ask("sub.d.test.", Rt::DS);
    assert!(m.metadata.authoritative);
    assert_eq!(m.answers.len(), 1);
    assert_eq!(m.answers[0].record_type(), Rt::DS);
    assert_eq!(m.answers[0].name.to_string(), "sub.d.test.");
    assert!(m.authorities.is_empty());
    // And for a child zone served here, the DS is still the parent's.
    let m = f.ask("kid.d.test.", Rt::DS);
    assert_eq!(answers(&m).len(), 1);
    assert!(m.metadata.authoritative);
}

#[test]
fn a_cname_chain_into_a_delegation_ends_in_a_referral() {
    let mut f = Fixture::of(&snapshot());
    let m = f.ask("into.d.test.", Rt::A);
    assert_referral(&m, &["into.d.test. 300 IN CNAME www.sub.d.test."]);
    // A chain to the cut itself: DS is answered, anything else referred.
    let m = f.ask("atcut.d.test.", Rt::DS);
    assert_eq!(answers(&m).len(), 2);
    assert!(m.authorities.is_empty());
    let m = f.ask("atcut.d.test.", Rt::A);
    assert_referral(&m, &["atcut.d.test. 300 IN CNAME sub.d.test."]);
}

#[test]
fn a_child_zone_served_here_answers_for_itself() {
    let mut f = Fixture::of(&snapshot());
    let m = f.ask("www.kid.d.test.", Rt::A);
    assert!(m.metadata.authoritative);
    assert_eq!(answers(&m), ["www.kid.d.test. 300 IN A 192.0.2.80"]);
    let m = f.ask("kid.d.test.", Rt::NS);
    assert!(m.metadata.authoritative);
    assert_eq!(
        answers(&m),
        [
            "kid.d.test. 300 IN NS ns1.kid.d.test.",
            "kid.d.test. 300 IN NS ns.elsewhere.test."
        ]
    );
    assert_eq!(additional(&m), ["ns1.kid.d.test. 300 IN A 192.0.2.81"]);
}

#[test]
fn ns_mx_and_srv_answers_carry_in_zone_addresses() {
    let mut f = Fixture::of(&snapshot());
    let m = f.ask("d.test.", Rt::NS);
    assert_eq!(
        additional(&m),
        [
            "ns1.d.test. 300 IN A 192.0.2.53",
            "ns1.d.test. 300 IN AAAA 2001:db8::53"
        ]
    );
    let m = f.ask("d.test.", Rt::MX);
    assert_eq!(
        additional(&m),
        [
            "mail.d.test. 300 IN A 192.0.2.25",
            "x.wild.d.test. 300 IN A 192.0.2.99"
        ],
        "a wildcard synthesises an address; names elsewhere add nothing"
    );
    let m = f.ask("_sip._tcp.d.test.", Rt::SRV);
    assert_eq!(
        additional(&m),
        ["ns1.sub.d.test. 300 IN A 192.0.2.70"],
        "glue too"
    );
    let m = f.ask("mail.d.test.", Rt::A);
    assert!(m.additionals.is_empty());
}

#[test]
fn the_additional_section_respects_edns_and_the_answer_stays_whole() {
    let mut f = Fixture::of(&snapshot());
    let m = f.ask_with("d.test.", Rt::MX, edns);
    assert_eq!(m.answers.len(), 3);
    assert_eq!(m.additionals.len(), 2);
    assert!(m.edns.is_some(), "the OPT record is still there");
}

#[test]
fn a_referral_whose_glue_does_not_fit_is_truncated() {
    let mut s = snapshot();
    let servers: Vec<String> = (0..8).map(|i| format!("ns{i}.big.d.test")).collect();
    let mut id = 100;
    let mut add = |s: &mut Snapshot, owner: &str, rtype, data| {
        id += 1;
        let r = record_in(1, id, owner, rtype, 300, stat(data));
        s.catalog.records.insert(r.id, r);
    };
    add(
        &mut s,
        "big.d.test",
        RecordType::Ns,
        servers.iter().map(|n| ns(n)).collect(),
    );
    for (i, n) in servers.iter().enumerate() {
        add(&mut s, n, RecordType::A, vec![a(&format!("192.0.2.{i}"))]);
        add(
            &mut s,
            n,
            RecordType::Aaaa,
            vec![aaaa(&format!("2001:db8::{i}"))],
        );
    }
    let mut f = Fixture::of(&s);
    // Without EDNS (512 bytes): the NS set and the glue that fits, TC
    // because in-domain glue is missing (RFC 9471), never AA (a referral).
    let small = f.ask("www.big.d.test.", Rt::A);
    assert!(
        small.metadata.truncation,
        "glue is required: TC, not a referral without it"
    );
    assert!(!small.metadata.authoritative, "a referral is never AA");
    assert_eq!(small.authorities.len(), 8, "the NS set fits");
    assert!(
        (1..16).contains(&small.additionals.len()),
        "{} glue records",
        small.additionals.len()
    );
    let large = f.ask_with("www.big.d.test.", Rt::A, edns);
    assert!(!large.metadata.truncation);
    assert_eq!((large.authorities.len(), large.additionals.len()), (8, 16));
}

/// The names a generated zone may own, under `p.test`, parents first.
const UNIVERSE: [&str; 14] = [
    "a", "b", "a.a", "a.b", "b.a", "b.b", "a.a.a", "a.a.b", "a.b.a", "a.b.b", "b.a.a", "b.a.b",
    "b.b.a", "b.b.b",
];

/// What a generated name holds.
#[derive(Debug, Clone, Copy)]
enum Kind {
    Nothing,
    Address,
    Text,
    /// A cut: NS to an in-zone name below it, with glue.
    Cut,
    /// A cut with a DS set.
    CutWithDs,
    /// A CNAME to an earlier name of the universe (so chains never loop).
    Alias(usize),
    /// A wildcard below it.
    Wild,
}

fn kind() -> impl proptest::strategy::Strategy<Value = Kind> {
    use proptest::prelude::*;
    prop_oneof![
        Just(Kind::Nothing),
        Just(Kind::Address),
        Just(Kind::Text),
        Just(Kind::Cut),
        Just(Kind::CutWithDs),
        (0usize..14).prop_map(Kind::Alias),
        Just(Kind::Wild),
    ]
}

/// A zone from generated kinds, with what the delegation rules refuse
/// left out (as the aggregator would refuse it).
fn generated(kinds: &[Kind]) -> Snapshot {
    let mut s = Snapshot {
        version: 5,
        ..Snapshot::default()
    };
    let z = zone(1, "p.test");
    s.catalog.zones.insert(z.id, z.clone());
    let mut sets = Vec::new();
    let fq = |n: &str| format!("{n}.p.test");
    for (i, (n, k)) in UNIVERSE.iter().zip(kinds).enumerate() {
        let name = fq(n);
        let mut add =
            |owner: String, rtype, data| sets.push(record_in(1, 0, &owner, rtype, 300, stat(data)));
        match *k {
            Kind::Nothing => {}
            Kind::Address => add(name, RecordType::A, vec![a("192.0.2.1")]),
            Kind::Text => add(name, RecordType::Txt, vec![Rdata::Txt(vec![n.to_string()])]),
            Kind::Cut | Kind::CutWithDs => {
                add(
                    name.clone(),
                    RecordType::Ns,
                    vec![ns(&format!("ns.{name}"))],
                );
                add(format!("ns.{name}"), RecordType::A, vec![a("192.0.2.53")]);
                if matches!(k, Kind::CutWithDs) {
                    add(
                        name,
                        RecordType::Ds,
                        vec![Rdata::Ds {
                            key_tag: 1,
                            algorithm: 13,
                            digest_type: 2,
                            digest: "ab".repeat(32),
                        }],
                    );
                }
            }
            Kind::Alias(t) if t < i => add(
                name,
                RecordType::Cname,
                vec![Rdata::Cname(self::name(&fq(UNIVERSE[t])))],
            ),
            Kind::Alias(_) => {}
            Kind::Wild => add(format!("*.{name}"), RecordType::A, vec![a("192.0.2.99")]),
        }
    }
    // One set per name and type, no CNAME beside other data, and what a
    // cut allows: the aggregator's rules, applied by dropping.
    let cuts: Vec<DnsName> = sets
        .iter()
        .filter(|r| r.rtype == RecordType::Ns)
        .map(|r| r.name.clone())
        .collect();
    let mut kept: Vec<RecordSet> = Vec::new();
    for r in sets {
        let cut = validate::highest_cut(&r.name, &z.apex, |n| cuts.contains(n));
        let clash = kept.iter().any(|k| {
            k.name == r.name
                && (k.rtype == r.rtype
                    || k.rtype == RecordType::Cname
                    || r.rtype == RecordType::Cname)
        });
        if validate::placement(&r, &z, cut.as_ref()).is_ok() && !clash {
            kept.push(r);
        }
    }
    // A cut's NS set dropped for a clash takes its DS with it.
    let cuts: Vec<DnsName> = kept
        .iter()
        .filter(|r| r.rtype == RecordType::Ns)
        .map(|r| r.name.clone())
        .collect();
    kept.retain(|r| r.rtype != RecordType::Ds || cuts.contains(&r.name));
    for (i, mut r) in kept.into_iter().enumerate() {
        r.id = RecordSetId(i as u64 + 1);
        s.catalog.records.insert(r.id, r);
    }
    s
}

proptest::proptest! {
    /// Whatever the zone (cuts with and without DS, glue, chains into and
    /// across cuts, wildcards, empty non-terminals), the responder agrees
    /// with the model resolution (`table::lookup`) on every name and type:
    /// referral, NXDOMAIN, NODATA or data, with the chain in the answer
    /// and AA set exactly when the answer holds our own data.
    #[test]
    fn replies_follow_the_model_resolution(kinds in proptest::collection::vec(kind(), 14)) {
        use gslb_edge::table::lookup::{Found, Index, QueryType, Resolution};
        let s = generated(&kinds);
        validate::catalog(&s.catalog).map_err(|e| proptest::test_runner::TestCaseError::fail(e.to_string()))?;
        let index = Index::new(&s);
        let mut f = Fixture::of(&s);
        let mut names: Vec<String> = vec!["p.test".into(), "zz.p.test".into()];
        for n in UNIVERSE {
            names.push(format!("{n}.p.test"));
            names.push(format!("x.{n}.p.test"));
            names.push(format!("ns.{n}.p.test"));
        }
        for name in &names {
            for (rt, qt) in [
                (Rt::A, QueryType::Record(RecordType::A)),
                (Rt::TXT, QueryType::Record(RecordType::Txt)),
                (Rt::DS, QueryType::Record(RecordType::Ds)),
                (Rt::NS, QueryType::Record(RecordType::Ns)),
            ] {
                let m = f.ask(&format!("{name}."), rt);
                let Resolution::Answer { cnames, found, .. } = index.resolve(&self::name(name), qt) else {
                    proptest::prop_assert!(false, "{name} is in the zone");
                    unreachable!()
                };
                let chain = cnames.len();
                let what = format!("{name} {rt}: {found:?} {m:?}");
                match found {
                    Found::Referral(cut) => {
                        proptest::prop_assert_eq!(m.metadata.response_code, ResponseCode::NoError, "{}", what);
                        proptest::prop_assert_eq!(m.answers.len(), chain, "{}", what);
                        proptest::prop_assert_eq!(m.metadata.authoritative, chain > 0, "{}", what);
                        let owner = format!("{cut}.");
                        proptest::prop_assert!(
                            !m.authorities.is_empty()
                                && m.authorities.iter().all(|r| r.record_type() == Rt::NS && r.name.to_string() == owner),
                            "{}", what
                        );
                    }
                    Found::NxDomain => {
                        proptest::prop_assert_eq!(m.metadata.response_code, ResponseCode::NXDomain, "{}", what);
                        proptest::prop_assert_eq!(m.answers.len(), chain, "{}", what);
                    }
                    Found::NoData => {
                        proptest::prop_assert_eq!(m.metadata.response_code, ResponseCode::NoError, "{}", what);
                        proptest::prop_assert_eq!(m.answers.len(), chain, "{}", what);
                        proptest::prop_assert!(m.metadata.authoritative, "{}", what);
                    }
                    Found::Records(_) | Found::Soa | Found::Ns => {
                        proptest::prop_assert_eq!(m.metadata.response_code, ResponseCode::NoError, "{}", what);
                        proptest::prop_assert!(m.answers.len() > chain, "{}", what);
                        proptest::prop_assert!(m.metadata.authoritative, "{}", what);
                    }
                    Found::Elsewhere => {
                        proptest::prop_assert_eq!(m.answers.len(), chain, "{}", what);
                    }
                }
            }
        }
    }
}
