//! Parse + answer + encode per query, for the benchmark zone's query kinds:
//! a static A set of four, a pool-backed A set of four (selection per
//! query), a CNAME to it, NXDOMAIN, a query with ECS, and hostname members:
//! a weighted CNAME pool of four and a record flattened over them (two
//! addresses each). Then the same zone signed (one ECDSA P-256 CSK) and
//! asked with DO: a static set, a pool-backed set (its signature from the
//! cache), a denial whose signature is cached, and a denial of a new name
//! each time (the signature cache miss: one NSEC signed inline); and
//! compiling the signed zone cold and after a table whose signatures it
//! takes. Last, placing a client: the CIDR table against MaxMind files
//! (written with MaxMind's Perl writer, Debian libmaxmind-db-writer-perl),
//! 65,536 networks each: the tree walk alone, one client (decoded once,
//! then cached), and 65,536 clients in turn (decoded every time).
#![allow(missing_docs, clippy::unwrap_used)]

use std::hint::black_box;
use std::net::IpAddr;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use gslb_edge::answer::{Responder, Transport};
use gslb_edge::geo::GeoTable;
use gslb_edge::table::Table;
use gslb_shared::*;

fn name(s: &str) -> DnsName {
    DnsName::parse(s).unwrap()
}

fn snapshot(hosts: u64) -> Snapshot {
    let mut s = Snapshot {
        version: 9,
        ..Snapshot::default()
    };
    let zone = Zone {
        id: ZoneId(1),
        apex: name("example.test"),
        soa: Soa {
            mname: name("ns1.example.test"),
            rname: name("hostmaster.example.test"),
            refresh: 7200,
            retry: 3600,
            expire: 1_209_600,
            negative_ttl: 300,
        },
        ns: vec![name("ns1.example.test")],
        default_ttl: 300,
        ns_ttl: None,
        transfer: Default::default(),
        dnssec: None,
    };
    s.catalog.zones.insert(zone.id, zone);
    let mut add = |id: u64, owner: &str, rtype, data| {
        s.catalog.records.insert(
            RecordSetId(id),
            RecordSet {
                id: RecordSetId(id),
                zone: ZoneId(1),
                name: name(owner),
                rtype,
                ttl: 300,
                data,
            },
        );
    };
    let four: Vec<Rdata> = (1..=4)
        .map(|i| Rdata::A(format!("192.0.2.{i}").parse().unwrap()))
        .collect();
    add(
        1,
        "www.example.test",
        RecordType::A,
        RecordData::Static(four),
    );
    add(
        2,
        "dyn.example.test",
        RecordType::A,
        RecordData::Dynamic(DynamicRecord {
            steering: Steering::Weighted,
            pools: vec![PoolId(1)],
            geo: vec![],
            first_n: 0,
            flatten: false,
            region_locations: Default::default(),
        }),
    );
    add(
        3,
        "alias.example.test",
        RecordType::Cname,
        RecordData::Static(vec![Rdata::Cname(name("dyn.example.test"))]),
    );
    for (id, owner, rtype, flatten) in [
        (4, "lb.example.test", RecordType::Cname, false),
        (5, "flat.example.test", RecordType::A, true),
    ] {
        add(
            id,
            owner,
            rtype,
            RecordData::Dynamic(DynamicRecord {
                steering: Steering::Weighted,
                pools: vec![PoolId(2)],
                geo: vec![],
                first_n: 0,
                flatten,
                region_locations: Default::default(),
            }),
        );
    }
    // Latency steering: clients in eu (10.1/16) are answered by the
    // members fastest from fra and ams.
    let mut region_locations = std::collections::BTreeMap::new();
    region_locations.insert(
        Region::new("eu"),
        vec![LocationId::new("ams"), LocationId::new("fra")],
    );
    add(
        6,
        "fast.example.test",
        RecordType::A,
        RecordData::Dynamic(DynamicRecord {
            steering: Steering::Latency,
            pools: vec![PoolId(1)],
            geo: vec![],
            first_n: 0,
            flatten: false,
            region_locations,
        }),
    );
    for h in 0..hosts {
        add(
            10 + h,
            &format!("host{h}.example.test"),
            RecordType::A,
            RecordData::Static(vec![Rdata::A(
                format!("10.0.{}.{}", h / 250, h % 250).parse().unwrap(),
            )]),
        );
    }
    s.catalog.pools.insert(PoolId(1), Pool::new(PoolId(1), "p"));
    for i in 1..=4u64 {
        let m = Member::new(
            MemberId(i),
            PoolId(1),
            format!("m{i}"),
            format!("198.51.100.{i}").parse().unwrap(),
            80,
        );
        s.catalog.members.insert(m.id, m);
        s.facts.insert(MemberId(i), MemberFacts::UP);
        let near = |l: &str, micros: u32| LocationRtt {
            location: LocationId::new(l),
            micros,
        };
        let k = i as u32;
        s.rtt.insert(
            MemberId(i),
            Rtts::new(vec![
                near("ams", 4_000 * k),
                near("fra", 3_000 * k),
                near("nyc", 90_000 / k),
            ]),
        );
    }
    s.catalog
        .pools
        .insert(PoolId(2), Pool::new(PoolId(2), "lbs"));
    for i in 5..=8u64 {
        let host = format!("lb{i}.cdn.example.net");
        let m = Member::new(
            MemberId(i),
            PoolId(2),
            format!("m{i}"),
            host.parse().unwrap(),
            443,
        );
        s.catalog.members.insert(m.id, m);
        s.facts.insert(MemberId(i), MemberFacts::UP);
        let addresses = (1..=2)
            .map(|k| format!("203.0.113.{}", i * 10 + k).parse().unwrap())
            .collect();
        s.resolved
            .insert(MemberId(i), Resolved { addresses, ttl: 60 });
    }
    s
}

/// `s` with `cuts` delegations (two name servers each, with glue) and an
/// MX set at the apex whose targets are in the zone.
fn with_delegations(mut s: Snapshot, cuts: u64) -> Snapshot {
    let mut add = |owner: String, rtype, data: Vec<Rdata>| {
        let id = RecordSetId(1_000_000 + s.catalog.records.len() as u64);
        s.catalog.records.insert(
            id,
            RecordSet {
                id,
                zone: ZoneId(1),
                name: name(&owner),
                rtype,
                ttl: 300,
                data: RecordData::Static(data),
            },
        );
    };
    for c in 0..cuts {
        let cut = format!("sub{c}.example.test");
        let servers: Vec<String> = (1..=2).map(|i| format!("ns{i}.{cut}")).collect();
        add(
            cut.clone(),
            RecordType::Ns,
            servers.iter().map(|n| Rdata::Ns(name(n))).collect(),
        );
        for (i, n) in servers.iter().enumerate() {
            let addr = format!("192.0.{}.{}", c / 100, (c % 100) * 2 + i as u64);
            add(
                n.clone(),
                RecordType::A,
                vec![Rdata::A(addr.parse().unwrap())],
            );
        }
    }
    add(
        "example.test".into(),
        RecordType::Mx,
        (0..2)
            .map(|i| Rdata::Mx {
                preference: 10 * i,
                exchange: name(&format!("host{i}.example.test")),
            })
            .collect(),
    );
    s
}

fn query(qname: &str, ecs: bool) -> Vec<u8> {
    let mut q = vec![0xab, 0xcd, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1];
    for label in qname.split('.') {
        q.push(label.len() as u8);
        q.extend_from_slice(label.as_bytes());
    }
    q.extend_from_slice(&[0, 0, 1, 0, 1]);
    // OPT: root, type 41, payload 1232, no flags, options.
    q.extend_from_slice(&[0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0]);
    if ecs {
        q.extend_from_slice(&[0, 11, 0, 8, 0, 7, 0, 1, 24, 0, 10, 1, 2]);
    } else {
        q.extend_from_slice(&[0, 0]);
    }
    q
}

/// `query` with the DO bit set.
fn query_do(qname: &str) -> Vec<u8> {
    let mut q = query(qname, false);
    let flags = q.len() - 4;
    q[flags] = 0x80;
    q
}

fn signed(mut s: Snapshot) -> Snapshot {
    let key =
        gslb_shared::dnssec::ZoneKey::generate(SigningAlgorithm::EcdsaP256Sha256, 257).unwrap();
    let zone = s.catalog.zones.get_mut(&ZoneId(1)).unwrap();
    zone.dnssec = Some(ZoneSigning {
        keys: vec![SigningKey::new(
            KeyRole::Csk,
            Secret(key.dnskey.public_key().clone()),
            key.secret,
            0,
        )],
        ..ZoneSigning::default()
    });
    s
}

fn query_type(qname: &str, qtype: u16, ecs: bool) -> Vec<u8> {
    let mut q = query(qname, ecs);
    let at = 12 + qname.len() + 2;
    q[at..at + 2].copy_from_slice(&qtype.to_be_bytes());
    q
}

/// Answer `q` from `table` over and over, as benchmark `label`.
fn replayed(
    g: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    label: &str,
    table: &Table,
    geo: &GeoTable,
    q: &[u8],
) {
    let client: IpAddr = "127.0.0.1".parse().unwrap();
    let mut r = Responder::new(1);
    let mut out = Vec::with_capacity(4096);
    g.bench_function(label, |b| {
        b.iter(|| {
            r.respond(table, geo, black_box(q), client, Transport::Udp, &mut out)
                .unwrap();
            black_box(out.len())
        })
    });
}

fn bench(c: &mut Criterion) {
    let table = Table::compile(&with_delegations(snapshot(500), 100)).unwrap();
    let geo = GeoTable::parse("10.1.0.0/16 eu\n").unwrap();
    let client: IpAddr = "127.0.0.1".parse().unwrap();
    let mut g = c.benchmark_group("respond");
    g.throughput(Throughput::Elements(1));
    for (label, q) in [
        ("static_a4", query("www.example.test", false)),
        ("dynamic_a4_weighted", query("dyn.example.test", false)),
        ("cname_to_dynamic", query("alias.example.test", false)),
        ("cname_pool_weighted", query("lb.example.test", false)),
        ("flattened_a8_weighted", query("flat.example.test", false)),
        ("nxdomain", query("nope.example.test", false)),
        ("static_ecs", query("host7.example.test", true)),
        ("dynamic_latency_ecs", query("fast.example.test", true)),
        // A client subnet keeps these from the prebuilt store: the whole
        // referral (NS in authority, glue) and MX with its additional
        // addresses are encoded per query.
        ("referral_ecs", query("www.sub7.example.test", true)),
        ("mx_additional_ecs", query_type("example.test", 15, true)),
    ] {
        replayed(&mut g, label, &table, &geo, &q);
    }
    g.finish();
    let signed_snapshot = signed(snapshot(500));
    let table = Table::compile(&signed_snapshot).unwrap();
    let mut g = c.benchmark_group("respond_signed_do");
    g.throughput(Throughput::Elements(1));
    for (label, q) in [
        ("static_a4", query_do("www.example.test")),
        ("dynamic_a4_weighted", query_do("dyn.example.test")),
        ("nxdomain_cached", query_do("nope.example.test")),
    ] {
        replayed(&mut g, label, &table, &geo, &q);
    }
    // A name never asked before each time: the NSEC is signed inline.
    let mut r = Responder::new(1);
    let mut out = Vec::with_capacity(4096);
    let mut n = 0u64;
    g.bench_function("nxdomain_signature_miss", |b| {
        b.iter(|| {
            n += 1;
            let q = query_do(&format!("nx{n}.example.test"));
            r.respond(
                &table,
                &geo,
                black_box(&q),
                client,
                Transport::Udp,
                &mut out,
            )
            .unwrap();
            black_box(out.len())
        })
    });
    g.finish();
    c.bench_function("compile_500_names_signed_cold", |b| {
        b.iter(|| Table::compile(black_box(&signed_snapshot)).unwrap())
    });
    c.bench_function("compile_500_names_signed_after_previous", |b| {
        let previous = Table::compile(&signed_snapshot).unwrap();
        let now = gslb_shared::clock::now_secs();
        b.iter(|| Table::compile_after(black_box(&signed_snapshot), Some(&previous), now).unwrap())
    });
    c.bench_function("compile_500_names", |b| {
        let s = snapshot(500);
        b.iter(|| Table::compile(black_box(&s)).unwrap())
    });
    c.bench_function("compile_500_names_100_cuts", |b| {
        let s = with_delegations(snapshot(500), 100);
        b.iter(|| Table::compile(black_box(&s)).unwrap())
    });
}

/// One zone of `n` pool-backed names, each a pool of two healthy members
/// (the shape of `examples/synth_cache.rs`, the edge's load benchmark).
fn pooled(n: u64) -> Snapshot {
    let mut s = snapshot(0);
    for i in 0..n {
        let record = RecordSet {
            id: RecordSetId(1_000_000 + i),
            zone: ZoneId(1),
            name: name(&format!("h{i}.example.test")),
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
        };
        s.catalog.records.insert(record.id, record);
        let pool = Pool::new(PoolId(i + 1), format!("p{i}"));
        s.catalog.pools.insert(pool.id, pool);
        for k in 0..2u64 {
            let id = MemberId(2 * i + k + 1);
            let addr = std::net::Ipv4Addr::from(0x0a00_0000 + (2 * i + k) as u32);
            let m = Member::new(id, PoolId(i + 1), format!("m{k}"), addr.into(), 80);
            s.catalog.members.insert(id, m);
            s.facts.insert(id, MemberFacts::UP);
        }
    }
    s
}

/// Applying a delta that flips 10 members of 100,000 pool-backed names:
/// the refresh the edge makes of it, against the full compile it replaced.
fn apply(c: &mut Criterion) {
    let base = pooled(100_000);
    let table = Table::compile(&base).unwrap();
    let delta = Delta {
        base_version: base.version,
        version: base.version + 1,
        facts: (0..10u64)
            .map(|i| (MemberId(i * 9_973 + 1), MemberFacts::DOWN))
            .collect(),
        ..Delta::default()
    };
    let touched = delta.health_only().unwrap();
    let mut next = base.clone();
    next.apply(&delta).unwrap();
    let now = gslb_shared::clock::now_secs();
    let mut g = c.benchmark_group("apply_100k_pooled_names");
    g.sample_size(10);
    g.bench_function("refresh_10_members_flipped", |b| {
        b.iter(|| table.refresh(black_box(&next), &touched, now).unwrap())
    });
    g.bench_function("full_compile", |b| {
        b.iter(|| Table::compile_after(black_box(&next), Some(&table), now).unwrap())
    });
    g.finish();
}

/// One client placed by a CIDR table and by a City file (and a City file
/// plus an ASN file), each of 65,536 /24 networks.
fn geo(c: &mut Criterion) {
    use gslb_e2e::mmdb::{self, Network};
    const NETS: u32 = 65_536;
    let cidr = |i: u32| {
        let v = (11u32 << 24) + i * 256;
        format!("{}.{}.{}.0/24", v >> 24, (v >> 16) & 255, (v >> 8) & 255)
    };
    let mut table = String::new();
    for i in 0..NETS {
        table += &format!("{} r{}\n", cidr(i), i % 200);
    }
    table += "198.51.100.0/24 eu\n";
    let table = GeoTable::parse(&table).unwrap();
    let dir = gslb_e2e::wait::temp_dir("bench-geo");
    let countries = ["US", "FR", "JP", "BR", "IN"];
    // Every network its own record (an AS number each), as cities are.
    let mut city: Vec<Network> = (0..NETS)
        .map(|i| Network {
            asn: Some(100_000 + i),
            ..Network::country(&cidr(i), countries[i as usize % 5], "EU")
        })
        .collect();
    let mut berlin = Network::country("198.51.100.0/24", "DE", "EU");
    berlin.subdivision = Some("BE".into());
    city.push(berlin);
    let asn: Vec<Network> = (0..NETS)
        .map(|i| Network {
            cidr: cidr(i),
            asn: Some(64_512 + i % 1000),
            ..Network::default()
        })
        .chain([Network {
            cidr: "198.51.100.0/24".into(),
            asn: Some(64_500),
            ..Network::default()
        }])
        .collect();
    let (city_file, asn_file) = (dir.join("city.mmdb"), dir.join("asn.mmdb"));
    mmdb::write(&city_file, "GeoLite2-City", &city);
    mmdb::write(&asn_file, "GeoLite2-ASN", &asn);
    let one = gslb_shared::geo_db::GeoDbs::open(std::slice::from_ref(&city_file)).unwrap();
    let two = gslb_shared::geo_db::GeoDbs::open(&[city_file, asn_file]).unwrap();
    let client: IpAddr = "198.51.100.7".parse().unwrap();
    assert!(table.lookup(client).is_some());
    assert_eq!(two.locate(client).place.asn, Some(64_500));
    let mut g = c.benchmark_group("geo");
    g.throughput(Throughput::Elements(1));
    g.bench_function("cidr_table", |b| b.iter(|| table.lookup(black_box(client))));
    let raw = maxminddb::Reader::open_readfile(dir.join("city.mmdb")).unwrap();
    g.bench_function("walk_only", |b| {
        b.iter(|| {
            let r = raw.lookup(black_box(client)).unwrap();
            (r.offset(), r.network().unwrap().prefix())
        })
    });
    // One client again and again: its place comes from the decoded cache.
    g.bench_function("mmdb_city", |b| b.iter(|| one.locate(black_box(client))));
    // 65,536 clients of 65,536 records in turn: more than the cache holds,
    // so every lookup decodes.
    let clients: Vec<IpAddr> = (0..NETS)
        .map(|i| IpAddr::V4(std::net::Ipv4Addr::from((11u32 << 24) + i * 256 + 7)))
        .collect();
    let mut next = 0;
    g.bench_function("mmdb_city_65536_clients", |b| {
        b.iter(|| {
            next = (next + 1) % clients.len();
            one.locate(black_box(clients[next]))
        })
    });
    g.bench_function("mmdb_city_and_asn", |b| {
        b.iter(|| two.locate(black_box(client)))
    });
    g.finish();
}

criterion_group!(benches, bench, apply, geo);
criterion_main!(benches);
