//! Signed zones at the responder: RRSIGs only for DO queries, the key
//! sets at the apex, compact denial, referral proofs, KSK/ZSK roles, the
//! signature cache shared by the orders of one pool-backed set, and
//! signatures carried from table to table while fresh. That resolvers
//! accept them is shown end to end (unbound and delv, tests/e2e/dnssec.rs);
//! here the replies are decoded with `domain`.
#![allow(missing_docs, clippy::unwrap_used)]

mod common;

use common::*;
use domain::base::iana::{Rcode, Rtype};
use domain::base::{Message, ParsedName, Record};
use domain::rdata::AllRecordData;
use gslb_edge::answer::{Responder, Transport};
use gslb_edge::geo::GeoTable;
use gslb_edge::table::Table;
use gslb_shared::dnssec::ZoneKey;
use gslb_shared::*;

const NOW: u64 = 1_800_000_000;

type Parsed<'a> = Record<ParsedName<&'a [u8]>, AllRecordData<&'a [u8], ParsedName<&'a [u8]>>>;

fn key(algorithm: SigningAlgorithm, role: KeyRole) -> SigningKey {
    let k = ZoneKey::generate(algorithm, role.flags()).unwrap();
    SigningKey::new(role, Secret(k.dnskey.public_key().clone()), k.secret, NOW)
}

fn signing(algorithm: SigningAlgorithm, scheme: KeyScheme) -> ZoneSigning {
    let mut s = ZoneSigning {
        algorithm,
        scheme,
        ..ZoneSigning::default()
    };
    s.keys = s.roles().iter().map(|&r| key(algorithm, r)).collect();
    s
}

fn pool_backed() -> RecordData {
    RecordData::Dynamic(DynamicRecord {
        steering: Steering::RoundRobin,
        pools: vec![PoolId(1)],
        geo: vec![],
        first_n: 0,
        flatten: false,
        region_locations: Default::default(),
    })
}

/// `www` (two A), `*.wild`, `sub` delegated insecurely, `safe` delegated
/// with a DS, `app` backed by pool 1 (three members up).
fn snapshot(dnssec: Option<ZoneSigning>) -> Snapshot {
    let mut s = Snapshot {
        version: 7,
        ..Snapshot::default()
    };
    let mut z = zone(1, "example.test");
    z.dnssec = dnssec;
    s.catalog.zones.insert(z.id, z);
    let ns = |n: &str| stat(vec![Rdata::Ns(name(n))]);
    let records = [
        record(
            1,
            "www.example.test",
            RecordType::A,
            300,
            stat(vec![a("192.0.2.1"), a("192.0.2.2")]),
        ),
        record(
            2,
            "*.wild.example.test",
            RecordType::A,
            300,
            stat(vec![a("192.0.2.3")]),
        ),
        record(
            3,
            "sub.example.test",
            RecordType::Ns,
            300,
            ns("ns.elsewhere.test"),
        ),
        record(
            4,
            "safe.example.test",
            RecordType::Ns,
            300,
            ns("ns.elsewhere.test"),
        ),
        record(
            5,
            "safe.example.test",
            RecordType::Ds,
            300,
            stat(vec![Rdata::Ds {
                key_tag: 12345,
                algorithm: 13,
                digest_type: 2,
                digest: "ab".repeat(32),
            }]),
        ),
        record(6, "app.example.test", RecordType::A, 60, pool_backed()),
        record(
            7,
            "big.example.test",
            RecordType::Txt,
            300,
            stat(vec![Rdata::Txt(vec!["x".repeat(200), "y".repeat(200)])]),
        ),
    ];
    for r in records {
        s.catalog.records.insert(r.id, r);
    }
    s.catalog
        .pools
        .insert(PoolId(1), Pool::new(PoolId(1), "web"));
    for (id, addr) in [(1, "10.0.0.1"), (2, "10.0.0.2"), (3, "10.0.0.3")] {
        let m = Member::new(
            MemberId(id),
            PoolId(1),
            format!("m{id}"),
            addr.parse().unwrap(),
            80,
        );
        s.catalog.members.insert(m.id, m);
        s.facts.insert(
            MemberId(id),
            MemberFacts {
                health: Health::Up,
                warming: false,
                ramp: None,
            },
        );
    }
    s
}

struct Signed {
    table: Table,
    geo: GeoTable,
    responder: Responder,
}

fn now() -> u64 {
    NOW
}

impl Signed {
    fn of(snapshot: &Snapshot) -> Self {
        let mut responder = Responder::new(1);
        responder.set_clock(now);
        Self {
            table: Table::compile_after(snapshot, None, NOW).unwrap(),
            geo: GeoTable::new(),
            responder,
        }
    }

    /// The reply to `qname qtype`, with DO when `dnssec`, over UDP with
    /// EDNS size `size`.
    fn ask(&mut self, qname: &str, qtype: Rtype, dnssec: bool, size: u16) -> Vec<u8> {
        let mut b = domain::base::MessageBuilder::new_vec();
        b.header_mut().set_id(77);
        let mut q = b.question();
        q.push((
            domain::base::Name::<Vec<u8>>::vec_from_str(qname).unwrap(),
            qtype,
        ))
        .unwrap();
        let mut add = q.additional();
        add.opt(|o| {
            o.set_udp_payload_size(size);
            o.set_dnssec_ok(dnssec);
            Ok(())
        })
        .unwrap();
        let query = add.finish();
        let mut out = Vec::new();
        let client = "192.0.2.200".parse().unwrap();
        self.responder
            .respond(
                &self.table,
                &self.geo,
                &query,
                client,
                Transport::Udp,
                &mut out,
            )
            .unwrap();
        out
    }
}

/// Each record of a section as `owner TYPE data`.
fn section<'a>(records: impl Iterator<Item = Parsed<'a>>) -> Vec<String> {
    records
        .map(|r| format!("{} {} {}", r.owner(), r.rtype(), r.data()))
        .collect()
}

fn answer(bytes: &[u8]) -> Vec<String> {
    let m = Message::from_octets(bytes).unwrap();
    section(
        m.answer()
            .unwrap()
            .limit_to::<AllRecordData<_, _>>()
            .map(Result::unwrap),
    )
}

fn authority(bytes: &[u8]) -> Vec<String> {
    let m = Message::from_octets(bytes).unwrap();
    section(
        m.authority()
            .unwrap()
            .limit_to::<AllRecordData<_, _>>()
            .map(Result::unwrap),
    )
}

fn rcode(bytes: &[u8]) -> Rcode {
    Message::from_octets(bytes).unwrap().header().rcode()
}

fn csk() -> ZoneSigning {
    signing(SigningAlgorithm::EcdsaP256Sha256, KeyScheme::Csk)
}

#[test]
fn only_a_do_query_gets_signatures_and_without_do_nothing_changes() {
    let mut unsigned = Signed::of(&snapshot(None));
    let mut signed = Signed::of(&snapshot(Some(csk())));
    for (name, t) in [
        ("www.example.test", Rtype::A),
        ("nope.example.test", Rtype::A),
        ("www.example.test", Rtype::MX),
        ("x.wild.example.test", Rtype::A),
        ("a.sub.example.test", Rtype::A),
    ] {
        assert_eq!(
            signed.ask(name, t, false, 1232),
            unsigned.ask(name, t, false, 1232),
            "{name}"
        );
    }
    let www = answer(&signed.ask("www.example.test", Rtype::A, true, 1232));
    assert_eq!(www.len(), 3, "{www:?}");
    assert!(
        www[2].starts_with("www.example.test RRSIG A 13 3 300 "),
        "{www:?}"
    );
}

#[test]
fn the_apex_holds_the_key_sets_signed_by_the_key_signing_key() {
    let settings = signing(SigningAlgorithm::EcdsaP256Sha256, KeyScheme::KskZsk);
    let tag = |role: KeyRole| {
        let k = settings.keys.iter().find(|k| k.role == role).unwrap();
        ZoneKey::from_parts(
            settings.algorithm,
            role.flags(),
            &k.public_key,
            &Secret::default(),
        )
        .unwrap()
        .key_tag()
    };
    let (ksk, zsk) = (tag(KeyRole::Ksk), tag(KeyRole::Zsk));
    let mut f = Signed::of(&snapshot(Some(settings.clone())));
    // Without DO too: resolvers fetch DNSKEY to validate.
    let plain = answer(&f.ask("example.test", Rtype::DNSKEY, false, 1232));
    assert_eq!(plain.len(), 2, "{plain:?}");
    let keys = answer(&f.ask("example.test", Rtype::DNSKEY, true, 1232));
    let sigs: Vec<&String> = keys.iter().filter(|r| r.contains(" RRSIG ")).collect();
    assert_eq!(sigs.len(), 1, "the KSK alone signs DNSKEY: {keys:?}");
    assert!(
        sigs[0].contains(&format!(" {ksk} example.test. ")),
        "{keys:?}"
    );
    let cds = answer(&f.ask("example.test", Rtype::CDS, true, 1232));
    assert!(
        cds[0].starts_with(&format!("example.test CDS {ksk} 13 2 ")),
        "{cds:?}"
    );
    assert!(
        cds[1].contains(&format!(" {ksk} example.test. ")),
        "{cds:?}"
    );
    let cdnskey = answer(&f.ask("example.test", Rtype::CDNSKEY, true, 1232));
    assert!(
        cdnskey[0].starts_with("example.test CDNSKEY 257 3 13 "),
        "{cdnskey:?}"
    );
    let www = answer(&f.ask("www.example.test", Rtype::A, true, 1232));
    assert!(
        www[2].contains(&format!(" {zsk} example.test. ")),
        "the ZSK signs data: {www:?}"
    );
    // Unsigning publishes the delete form (RFC 8078 4).
    let mut unsigning = settings;
    unsigning.unsign = true;
    let mut f = Signed::of(&snapshot(Some(unsigning)));
    let cds = answer(&f.ask("example.test", Rtype::CDS, true, 1232));
    assert_eq!(cds[0], "example.test CDS 0 0 0 00", "{cds:?}");
}

#[test]
fn a_missing_name_is_a_compact_denial_with_do_and_nxdomain_without() {
    let mut f = Signed::of(&snapshot(Some(csk())));
    let plain = f.ask("nope.example.test", Rtype::A, false, 1232);
    assert_eq!(rcode(&plain), Rcode::NXDOMAIN);
    let signed = f.ask("nope.example.test", Rtype::A, true, 1232);
    assert_eq!(rcode(&signed), Rcode::NOERROR, "RFC 9824 3.2");
    let auth = authority(&signed);
    assert_eq!(auth.len(), 4, "{auth:?}");
    assert!(auth[0].starts_with("example.test SOA "), "{auth:?}");
    assert!(
        auth[1].starts_with("example.test RRSIG SOA 13 2 "),
        "{auth:?}"
    );
    assert_eq!(
        auth[2],
        "nope.example.test NSEC \\000.nope.example.test. RRSIG NSEC NXNAME"
    );
    assert!(
        auth[3].starts_with("nope.example.test RRSIG NSEC 13 3 "),
        "{auth:?}"
    );
    // NODATA: the types the name has, less the one asked.
    let auth = authority(&f.ask("www.example.test", Rtype::MX, true, 1232));
    assert_eq!(
        auth[2],
        "www.example.test NSEC \\000.www.example.test. A RRSIG NSEC"
    );
    // A synthesised name has the wildcard's types.
    let auth = authority(&f.ask("x.wild.example.test", Rtype::TXT, true, 1232));
    assert_eq!(
        auth[2],
        "x.wild.example.test NSEC \\000.x.wild.example.test. A RRSIG NSEC"
    );
    // And its data is signed as the name asked (labels 4, not 3).
    let wild = answer(&f.ask("x.wild.example.test", Rtype::A, true, 1232));
    assert!(
        wild[1].starts_with("x.wild.example.test RRSIG A 13 4 "),
        "{wild:?}"
    );
}

#[test]
fn a_referral_proves_its_ds_or_that_there_is_none() {
    let mut f = Signed::of(&snapshot(Some(csk())));
    let insecure = authority(&f.ask("a.sub.example.test", Rtype::A, true, 1232));
    assert!(
        insecure
            .contains(&"sub.example.test NSEC \\000.sub.example.test. NS RRSIG NSEC".to_owned()),
        "{insecure:?}"
    );
    assert!(
        insecure
            .iter()
            .any(|r| r.starts_with("sub.example.test RRSIG NSEC ")),
        "{insecure:?}"
    );
    let secure = authority(&f.ask("a.safe.example.test", Rtype::A, true, 1232));
    assert!(
        secure
            .iter()
            .any(|r| r.starts_with("safe.example.test DS 12345 13 2 ")),
        "{secure:?}"
    );
    assert!(
        secure
            .iter()
            .any(|r| r.starts_with("safe.example.test RRSIG DS ")),
        "{secure:?}"
    );
}

#[test]
fn the_orders_of_one_pool_backed_set_share_one_signature() {
    let mut f = Signed::of(&snapshot(Some(csk())));
    let mut seen = std::collections::HashSet::new();
    let mut sigs = std::collections::HashSet::new();
    for _ in 0..6 {
        let a = answer(&f.ask("app.example.test", Rtype::A, true, 1232));
        assert_eq!(a.len(), 4, "{a:?}");
        seen.insert(a[..3].join(","));
        sigs.insert(a[3].clone());
    }
    assert!(seen.len() > 1, "round robin rotates: {seen:?}");
    assert_eq!(sigs.len(), 1, "{sigs:?}");
    assert_eq!(f.table.signatures.cache.len(), 1);
}

#[test]
fn a_signed_answer_too_large_for_udp_is_truncated() {
    let mut f = Signed::of(&snapshot(Some(csk())));
    let plain = f.ask("big.example.test", Rtype::TXT, false, 512);
    assert!(
        !Message::from_octets(plain.as_slice())
            .unwrap()
            .header()
            .tc()
    );
    let signed = f.ask("big.example.test", Rtype::TXT, true, 512);
    let m = Message::from_octets(signed.as_slice()).unwrap();
    assert!(
        m.header().tc(),
        "the TXT fits 512 bytes, its RRSIG does not"
    );
    assert_eq!(m.header_counts().ancount(), 0);
    let full = f.ask("big.example.test", Rtype::TXT, true, 1232);
    assert_eq!(answer(&full).len(), 2);
}

#[test]
fn fresh_signatures_pass_to_the_next_table_and_due_ones_are_made_anew() {
    let s = snapshot(Some(csk()));
    let first = Table::compile_after(&s, None, NOW).unwrap();
    let due = first.signatures.refresh_at.unwrap();
    assert_eq!(due, NOW + u64::from(DEFAULT_SIGNATURE_VALIDITY / 4));
    let later = Table::compile_after(&s, Some(&first), NOW + 60).unwrap();
    let after_due = Table::compile_after(&s, Some(&first), due + 1).unwrap();
    let www = |t: Table| {
        let mut responder = Responder::new(1);
        responder.set_clock(now);
        let mut f = Signed {
            table: t,
            geo: GeoTable::new(),
            responder,
        };
        answer(&f.ask("www.example.test", Rtype::A, true, 1232))[2].clone()
    };
    let (a, b, c) = (www(first), www(later), www(after_due));
    assert_eq!(a, b, "kept while fresh");
    assert_ne!(a, c, "made anew once due");
}
