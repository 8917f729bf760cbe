//! Any bytes through the edge's request handler (parse -> answer ->
//! encode, over UDP and TCP): never a panic; every reply decodes with an
//! independent decoder (hickory-proto), echoes the query id, sets QR,
//! carries at most one question, and a reply to a query we could not
//! answer from the zone is never longer than the query plus an OPT record
//! (no amplification from garbage). Round trip on the decoder: a reply that
//! `domain` parses has the same section counts in hickory. The zone is
//! signed, so queries with DO reach online signing and compact denial.
//! The AF_XDP path too: the bytes as a whole Ethernet frame (its header
//! checks, and a reply's headers written in place that parse back with the
//! addresses swapped), and as the DNS payload of a well-formed frame,
//! answered byte for byte as the kernel path answers the bare datagram.
#![no_main]

use std::net::IpAddr;
use std::sync::OnceLock;

use gslb_edge::answer::{Responder, Transport};
use gslb_edge::geo::GeoTable;
use gslb_edge::table::Table;
use gslb_edge::xfr::Transfers;
use gslb_edge::xfr::serve::{Reply, Verdict, respond, respond_udp, transfer_type};
use gslb_shared::*;
use gslb_xdp::frame;
use libfuzzer_sys::fuzz_target;

fn name(s: &str) -> DnsName {
    DnsName::parse(s).unwrap()
}

/// One ECDSA P-256 CSK.
fn signing() -> ZoneSigning {
    let key = gslb_shared::dnssec::ZoneKey::generate(SigningAlgorithm::EcdsaP256Sha256, 257).unwrap();
    ZoneSigning {
        keys: vec![SigningKey::new(KeyRole::Csk, Secret(key.dnskey.public_key().clone()), key.secret, 0)],
        ..ZoneSigning::default()
    }
}

fn table() -> &'static (Table, GeoTable, Transfers) {
    static T: OnceLock<(Table, GeoTable, Transfers)> = OnceLock::new();
    T.get_or_init(|| {
        let mut s = Snapshot {
            version: 3,
            ..Snapshot::default()
        };
        let zone = Zone {
            id: ZoneId(1),
            apex: name("a.test"),
            soa: Soa {
                mname: name("ns.a.test"),
                rname: name("h.a.test"),
                refresh: 1,
                retry: 1,
                expire: 1,
                negative_ttl: 1,
            },
            ns: vec![name("ns.a.test")],
            default_ttl: 60,
            ns_ttl: None,
            // The fuzzed client may transfer the zone with key k.a.test.
            transfer: Transfer {
                allow: vec![TransferPeer {
                    address: "10.1.2.3".parse().unwrap(),
                    key: name("k.a.test"),
                }],
                notify: vec![],
            },
            dnssec: Some(signing()),
        };
        s.catalog.tsig_keys.insert(
            TsigKeyId(1),
            TsigKey {
                id: TsigKeyId(1),
                name: name("k.a.test"),
                algorithm: TsigAlgorithm::HmacSha256,
                secret: Secret(vec![7; 32]),
            },
        );
        s.catalog.zones.insert(zone.id, zone);
        let sets = [
            (
                1,
                "a.test",
                RecordType::Txt,
                RecordData::Static(vec![Rdata::Txt(vec!["x".repeat(200)]); 4]),
            ),
            (
                2,
                "w.a.test",
                RecordType::A,
                RecordData::Dynamic(DynamicRecord {
                    steering: Steering::Weighted,
                    pools: vec![PoolId(1)],
                    geo: vec![GeoBranch::for_regions(vec![Region::new("eu")], vec![PoolId(1)])],
                    first_n: 2,
                    flatten: false,
                    region_locations: Default::default(),
                }),
            ),
            (
                3,
                "c.a.test",
                RecordType::Cname,
                RecordData::Static(vec![Rdata::Cname(name("w.a.test"))]),
            ),
            (
                4,
                "*.a.test",
                RecordType::A,
                RecordData::Static(vec![Rdata::A("192.0.2.1".parse().unwrap())]),
            ),
            // The newer types, so queries for them reach their encoders.
            (
                5,
                "t.a.test",
                RecordType::Tlsa,
                RecordData::Static(vec![Rdata::Tlsa {
                    usage: 3,
                    selector: 1,
                    matching_type: 1,
                    data: "ab".repeat(32),
                }]),
            ),
            (
                6,
                "n.a.test",
                RecordType::Naptr,
                RecordData::Static(vec![Rdata::Naptr {
                    order: 1,
                    preference: 1,
                    flags: "U".into(),
                    services: "E2U+sip".into(),
                    regexp: "!^.*$!sip:x@a.test!".into(),
                    replacement: None,
                }]),
            ),
            (
                7,
                "p.a.test",
                RecordType::Ptr,
                RecordData::Static(vec![Rdata::Ptr(name("w.a.test"))]),
            ),
            (
                8,
                "g.a.test",
                RecordType::Generic(65534),
                RecordData::Static(vec![Rdata::Generic {
                    rtype: 65534,
                    data: "0a000001".into(),
                }]),
            ),
            (
                12,
                "h.a.test",
                RecordType::Https,
                RecordData::Static(vec![Rdata::Https(ServiceBinding {
                    priority: 1,
                    target: Some(name("w.a.test")),
                    params: "alpn=h2,h3 port=8443".into(),
                })]),
            ),
            // A delegation: referrals with glue, and DS at the cut.
            (
                9,
                "d.a.test",
                RecordType::Ns,
                RecordData::Static(vec![Rdata::Ns(name("ns.d.a.test")), Rdata::Ns(name("w.a.test"))]),
            ),
            (
                10,
                "ns.d.a.test",
                RecordType::A,
                RecordData::Static(vec![Rdata::A("192.0.2.53".parse().unwrap())]),
            ),
            (
                11,
                "d.a.test",
                RecordType::Ds,
                RecordData::Static(vec![Rdata::Ds {
                    key_tag: 1,
                    algorithm: 13,
                    digest_type: 2,
                    digest: "ab".repeat(32),
                }]),
            ),
            // Hostname members: a CNAME pool, and the apex flattened.
            (
                13,
                "lb.a.test",
                RecordType::Cname,
                RecordData::Dynamic(DynamicRecord {
                    steering: Steering::Weighted,
                    pools: vec![PoolId(2)],
                    geo: vec![],
                    first_n: 0,
                    flatten: false,
                    region_locations: Default::default(),
                }),
            ),
            (
                14,
                "a.test",
                RecordType::A,
                RecordData::Dynamic(DynamicRecord {
                    steering: Steering::RoundRobin,
                    pools: vec![PoolId(2), PoolId(1)],
                    geo: vec![],
                    first_n: 3,
                    flatten: true,
                    region_locations: Default::default(),
                }),
            ),
            // Latency steering: eu clients by fra's times, others by all.
            (
                15,
                "l.a.test",
                RecordType::A,
                RecordData::Dynamic(DynamicRecord {
                    steering: Steering::Latency,
                    pools: vec![PoolId(1)],
                    geo: vec![],
                    first_n: 2,
                    flatten: false,
                    region_locations: [(Region::new("eu"), vec![LocationId::new("fra")])]
                        .into_iter()
                        .collect(),
                }),
            ),
        ];
        for (id, owner, rtype, data) in sets {
            s.catalog.records.insert(
                RecordSetId(id),
                RecordSet {
                    id: RecordSetId(id),
                    zone: ZoneId(1),
                    name: name(owner),
                    rtype,
                    ttl: 30,
                    data,
                },
            );
        }
        s.catalog.pools.insert(PoolId(1), Pool::new(PoolId(1), "p"));
        for i in 1..=3u64 {
            let m = Member::new(
                MemberId(i),
                PoolId(1),
                format!("m{i}"),
                format!("10.0.0.{i}").parse().unwrap(),
                80,
            );
            s.catalog.members.insert(m.id, m);
            s.facts.insert(MemberId(i), MemberFacts::UP);
            let at = |location: &str, micros: u32| LocationRtt {
                location: LocationId::new(location),
                micros,
            };
            let k = i as u32;
            s.rtt.insert(MemberId(i), Rtts::new(vec![at("fra", 4_000 * k), at("nyc", 30_000 / k)]));
        }
        s.catalog.pools.insert(PoolId(2), Pool::new(PoolId(2), "hosts"));
        for (i, host) in [(4u64, "x.example.net"), (5, "y.example.net")] {
            let m = Member::new(MemberId(i), PoolId(2), format!("m{i}"), host.parse().unwrap(), 443);
            s.catalog.members.insert(m.id, m);
            s.facts.insert(MemberId(i), MemberFacts::UP);
        }
        s.resolved.insert(
            MemberId(4),
            Resolved {
                addresses: vec!["192.0.2.7".parse().unwrap(), "2001:db8::7".parse().unwrap()],
                ttl: 5,
            },
        );
        let transfers = Transfers::new(4);
        assert!(transfers.update(&s).errors.is_empty());
        (
            Table::compile(&s).unwrap(),
            GeoTable::parse("10.0.0.0/8 eu\n").unwrap(),
            transfers,
        )
    })
}

/// `payload` inside an Ethernet/IPv4/UDP frame from 10.1.2.3:4000 to
/// 10.0.0.53:53, as a client's kernel would send it.
fn framed(payload: &[u8]) -> Vec<u8> {
    let udp_len = (8 + payload.len()) as u16;
    let mut f = vec![2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00];
    f.extend_from_slice(&[0x45, 0]);
    f.extend_from_slice(&(20 + udp_len).to_be_bytes());
    f.extend_from_slice(&[0, 0, 0x40, 0, 64, 17, 0, 0, 10, 1, 2, 3, 10, 0, 0, 53]);
    f.extend_from_slice(&4000u16.to_be_bytes());
    f.extend_from_slice(&53u16.to_be_bytes());
    f.extend_from_slice(&udp_len.to_be_bytes());
    f.extend_from_slice(&[0, 0]);
    f.extend_from_slice(payload);
    f
}

/// The XDP path's frame handling around the same responder.
fn xdp_path(data: &[u8], table: &Table, geo: &GeoTable) {
    // The bytes as a frame: checked, and if taken, answered in place.
    if let Ok(q) = frame::parse(data) {
        assert!(q.header_len + q.payload_len <= data.len());
        let mut out = Vec::new();
        let mut buf = data.to_vec();
        buf.resize(4096, 0);
        if Responder::new(7)
            .respond(table, geo, q.payload(data), q.peer.ip(), Transport::Udp, &mut out)
            .is_some()
        {
            buf[q.header_len..q.header_len + out.len()].copy_from_slice(&out);
            let n = q.write_reply(&mut buf, out.len()).expect("a UDP reply fits a frame");
            let r = frame::parse(&buf[..n]).expect("our reply frame parses");
            assert_eq!((r.peer, r.local), (q.local, q.peer), "addresses swapped");
            assert_eq!(r.payload(&buf), &out[..]);
        }
    }
    // The bytes as a DNS payload: the same answer as the bare datagram.
    if data.len() <= 1400 {
        let f = framed(data);
        let q = frame::parse(&f).expect("a well-formed frame parses");
        assert_eq!(q.payload(&f), data);
        let client: IpAddr = "10.1.2.3".parse().unwrap();
        assert_eq!(q.peer.ip(), client);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        let ra = Responder::new(7).respond(table, geo, q.payload(&f), q.peer.ip(), Transport::Udp, &mut a);
        let rb = Responder::new(7).respond(table, geo, data, client, Transport::Udp, &mut b);
        assert_eq!(ra.is_some(), rb.is_some());
        assert_eq!(a, b, "both paths answer alike");
    }
}

fuzz_target!(|data: &[u8]| {
    let (table, geo, transfers) = table();
    xdp_path(data, table, geo);
    let client: IpAddr = "10.1.2.3".parse().unwrap();
    // A transfer request goes where TCP sends it: every reply decodes and
    // echoes the id; nothing but a verified request gets zone data.
    if let Some((reply, _)) = respond_udp(transfers, data, client) {
        hickory_proto::op::Message::from_vec(&reply).expect("our UDP transfer reply decodes");
        assert_eq!(&reply[..2], &data[..2], "id echoed");
    }
    if transfer_type(data).is_some() {
        let (reply, verdict) = respond(transfers, data.to_vec(), client);
        let messages = match reply {
            Reply::Single(m) => vec![m],
            Reply::Stream(mut s) => {
                assert!(matches!(verdict, Verdict::Transfer(_)));
                let mut v = Vec::new();
                while let Some(m) = s.next_message() {
                    v.push(m.expect("a transfer message encodes"));
                }
                v
            }
        };
        for m in messages.iter().filter(|m| !m.is_empty()) {
            let reply = hickory_proto::op::Message::from_vec(m).expect("our reply decodes");
            assert_eq!(&m[..2], &data[..2], "id echoed");
            if !matches!(verdict, Verdict::Transfer(_)) {
                assert!(reply.answers.is_empty(), "no data without a verified request");
            }
        }
    }
    let mut responder = Responder::new(7);
    for transport in [Transport::Udp, Transport::Tcp] {
        let mut out = Vec::new();
        let Some(_) = responder.respond(table, geo, data, client, transport, &mut out) else {
            continue;
        };
        let reply = hickory_proto::op::Message::from_vec(&out).expect("our reply decodes");
        assert_eq!(&out[..2], &data[..2], "id echoed");
        assert!(out[2] & 0x80 != 0, "QR set");
        assert!(reply.queries.len() <= 1);
        if transport == Transport::Udp {
            assert!(
                out.len() <= 1232.max(512),
                "UDP reply within the payload limit"
            );
        }
        if reply.answers.is_empty() && reply.authorities.is_empty() {
            assert!(
                out.len() <= data.len() + 11 + 12,
                "no amplification: {} -> {}",
                data.len(),
                out.len()
            );
        }
        if let Ok(m) = domain::base::Message::from_slice(&out) {
            let c = m.header_counts();
            assert_eq!(usize::from(c.ancount()), reply.answers.len());
            assert_eq!(usize::from(c.nscount()), reply.authorities.len());
        }
    }
});
