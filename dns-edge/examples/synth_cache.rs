//! Write a snapshot cache holding one zone with N pool-backed names (each a
//! pool of two healthy members, weighted steering), for the memory and
//! load benchmarks: `cargo run --release -p gslb-edge --example synth_cache
//! -- DIR N QUERIES [signed]` also writes a dnsperf query file for those
//! names; `signed` signs the zone (one ECDSA P-256 CSK).
#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::io::Write;

use gslb_shared::*;

fn name(s: &str) -> DnsName {
    DnsName::parse(s).unwrap()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (dir, n, queries, signed) = match args.as_slice() {
        [_, dir, n, q] => (dir.clone(), n.parse::<u64>().unwrap(), q.clone(), false),
        [_, dir, n, q, s] if s == "signed" => {
            (dir.clone(), n.parse::<u64>().unwrap(), q.clone(), true)
        }
        _ => panic!("usage: synth_cache DIR N QUERIES_FILE [signed]"),
    };
    let mut s = Snapshot {
        version: 1,
        published_at_ms: 1,
        ..Snapshot::default()
    };
    let zone = Zone {
        id: ZoneId(1),
        apex: name("dyn.test"),
        soa: Soa {
            mname: name("ns1.dyn.test"),
            rname: name("hostmaster.dyn.test"),
            refresh: 3600,
            retry: 600,
            expire: 604_800,
            negative_ttl: 60,
        },
        ns: vec![name("ns1.dyn.test")],
        default_ttl: 300,
        ns_ttl: None,
        transfer: Default::default(),
        dnssec: signed.then(|| {
            let key =
                gslb_shared::dnssec::ZoneKey::generate(SigningAlgorithm::EcdsaP256Sha256, 257)
                    .unwrap();
            ZoneSigning {
                keys: vec![SigningKey::new(
                    KeyRole::Csk,
                    Secret(key.dnskey.public_key().clone()),
                    key.secret,
                    0,
                )],
                ..ZoneSigning::default()
            }
        }),
    };
    s.catalog.zones.insert(zone.id, zone);
    let mut q = std::io::BufWriter::new(std::fs::File::create(&queries).unwrap());
    for i in 0..n {
        let owner = format!("h{i}.dyn.test");
        s.catalog.records.insert(
            RecordSetId(i + 1),
            RecordSet {
                id: RecordSetId(i + 1),
                zone: ZoneId(1),
                name: name(&owner),
                rtype: RecordType::A,
                ttl: 30,
                data: RecordData::Dynamic(DynamicRecord {
                    steering: Steering::Weighted,
                    pools: vec![PoolId(i + 1)],
                    geo: vec![],
                    first_n: 0,
                    flatten: false,
                    region_locations: Default::default(),
                }),
            },
        );
        s.catalog
            .pools
            .insert(PoolId(i + 1), Pool::new(PoolId(i + 1), format!("p{i}")));
        for k in 0..2u64 {
            let id = MemberId(2 * i + k + 1);
            let addr = std::net::Ipv4Addr::from(0x0a00_0000 + (2 * i + k) as u32);
            let m = Member::new(id, PoolId(i + 1), format!("m{k}"), addr.into(), 80);
            s.catalog.members.insert(id, m);
            s.facts.insert(id, MemberFacts::UP);
        }
        writeln!(q, "{owner} A").unwrap();
    }
    gslb_edge::cache::store(std::path::Path::new(&dir), &gslb_edge::cache::encode(&s)).unwrap();
    println!("wrote {n} dynamic names to {dir}");
}
