//! Selection throughput: one answer for a 16-member pool with geo branches,
//! weighted, round-robin, sticky and latency steering.
#![allow(clippy::unwrap_used, missing_docs)]

use std::collections::HashMap;
use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use gslb_shared::selection::{CatalogIndex, Family, Query, Selector};
use gslb_shared::*;
use rand::SeedableRng;
use rand::rngs::SmallRng;

fn world() -> (CatalogIndex, DynamicRecord) {
    let mut catalog = Catalog::default();
    let mut facts = HashMap::new();
    let mut rtt = Map::new();
    let regions = ["eu", "us", "ap"];
    for (p, region) in regions.iter().enumerate() {
        let pool_id = PoolId(p as u64 + 1);
        catalog
            .pools
            .insert(pool_id, Pool::new(pool_id, format!("{region}-pool")));
        for i in 0..16u64 {
            let id = MemberId(p as u64 * 100 + i);
            let addr = std::net::Ipv4Addr::new(10, p as u8, 0, i as u8 + 1).into();
            let mut m = Member::new(id, pool_id, format!("m{i}"), addr, 80);
            m.weight = 50 + 10 * i as u32;
            m.backup = i == 15;
            catalog.members.insert(id, m);
            let health = if i % 5 == 4 { Health::Down } else { Health::Up };
            facts.insert(
                id,
                MemberFacts {
                    health,
                    warming: i == 3,
                    ramp: None,
                },
            );
            // Six locations measure every member, each a little differently.
            let table = ["ams", "fra", "nyc", "sfo", "sin", "syd"]
                .iter()
                .enumerate()
                .map(|(l, location)| LocationRtt {
                    location: LocationId::new(*location),
                    micros: 5_000 + 1_000 * ((i as u32 * 7 + l as u32 * 13) % 40),
                })
                .collect();
            rtt.insert(id, Rtts::new(table));
        }
    }
    let record = DynamicRecord {
        steering: Steering::Weighted,
        pools: vec![PoolId(2), PoolId(1)],
        geo: regions
            .iter()
            .enumerate()
            .map(|(p, r)| {
                GeoBranch::for_regions(vec![Region::new(*r)], vec![PoolId(p as u64 + 1), PoolId(2)])
            })
            .collect(),
        first_n: 2,
        flatten: false,
        region_locations: [
            ("eu", vec!["ams", "fra"]),
            ("us", vec!["nyc", "sfo"]),
            ("ap", vec!["sin", "syd"]),
        ]
        .into_iter()
        .map(|(r, l)| (Region::new(r), l.into_iter().map(LocationId::new).collect()))
        .collect(),
    };
    (CatalogIndex::new(&catalog, &facts).with_rtt(rtt), record)
}

fn bench(c: &mut Criterion) {
    let (index, record) = world();
    let region = Region::new("ap");
    let mut selector = Selector::new();
    let mut rng = SmallRng::seed_from_u64(1);
    let mut group = c.benchmark_group("selection");
    group.throughput(Throughput::Elements(1));
    group.bench_function("geo_weighted_first2_pool16", |b| {
        let mut rotation = 0u64;
        b.iter(|| {
            rotation += 1;
            let q = Query {
                family: Family::V4,
                region: Some(&region),
                place: Place::UNKNOWN,
                rotation,
                affinity: None,
            };
            let (_, answers) = selector.select(&index, &record, q, &mut rng, None);
            black_box(answers.len())
        });
    });
    group.bench_function("geo_roundrobin_all_pool16", |b| {
        let mut rr = record.clone();
        rr.steering = Steering::RoundRobin;
        rr.first_n = 0;
        let mut rotation = 0u64;
        b.iter(|| {
            rotation += 1;
            let q = Query {
                family: Family::V4,
                region: Some(&region),
                place: Place::UNKNOWN,
                rotation,
                affinity: None,
            };
            let (_, answers) = selector.select(&index, &rr, q, &mut rng, None);
            black_box(answers.len())
        });
    });
    // Sticky: a different client subnet every query (the key hashed from
    // its address, as the edge does).
    group.bench_function("geo_sticky_first2_pool16", |b| {
        let mut sticky = record.clone();
        sticky.steering = Steering::Sticky;
        let mut client = 0u32;
        b.iter(|| {
            client = client.wrapping_add(256);
            let ip = std::net::IpAddr::V4(std::net::Ipv4Addr::from(client));
            let q = Query {
                family: Family::V4,
                region: Some(&region),
                place: Place::UNKNOWN,
                rotation: 0,
                affinity: Some(gslb_shared::selection::affinity(ip, None).0),
            };
            let (_, answers) = selector.select(&index, &sticky, q, &mut rng, None);
            black_box(answers.len())
        });
    });
    // Latency: the whole selection, the band over the region's two
    // locations included (an edge decides the band once per snapshot).
    group.bench_function("geo_latency_first2_pool16", |b| {
        let mut latency = record.clone();
        latency.steering = Steering::Latency;
        let mut rotation = 0u64;
        b.iter(|| {
            rotation += 1;
            let q = Query {
                family: Family::V4,
                region: Some(&region),
                place: Place::UNKNOWN,
                rotation,
                affinity: None,
            };
            let (_, answers) = selector.select(&index, &latency, q, &mut rng, None);
            black_box(answers.len())
        });
    });
    group.finish();
}

/// What an edge does per query: steps 1–7 are decided once per snapshot,
/// so only the ordering of the decided set runs per answer.
fn bench_steer(c: &mut Criterion) {
    use gslb_shared::selection::{Candidate, affinity, steer};
    let set: Vec<Candidate> = (0..16u64)
        .map(|i| Candidate {
            id: MemberId(i + 1),
            address: Some(std::net::Ipv4Addr::new(10, 0, 0, i as u8 + 1).into()),
            weight: 50 + 10 * i as u32,
            priority: 0,
            backup: false,
            health: Health::Up,
        })
        .collect();
    let mut rng = SmallRng::seed_from_u64(1);
    let mut chosen = Vec::with_capacity(16);
    let mut group = c.benchmark_group("steer");
    group.throughput(Throughput::Elements(1));
    for (name, steering, first_n) in [
        ("roundrobin_all_of16", Steering::RoundRobin, 0),
        ("weighted_first2_of16", Steering::Weighted, 2),
        ("sticky_first2_of16", Steering::Sticky, 2),
        ("sticky_first1_of16", Steering::Sticky, 1),
        // The edge decides the band per region once per snapshot: per
        // query, latency steering rotates the kept set.
        ("latency_all_of16", Steering::Latency, 0),
    ] {
        group.bench_function(name, |b| {
            let mut n = 0u32;
            b.iter(|| {
                n = n.wrapping_add(256);
                let key = (steering == Steering::Sticky)
                    .then(|| affinity(std::net::Ipv4Addr::from(n).into(), None).0);
                chosen.clear();
                chosen.extend_from_slice(&set);
                steer(&mut chosen, steering, first_n, u64::from(n), key, &mut rng);
                black_box(chosen.len())
            });
        });
    }
    // What the edge runs once per snapshot, region and branch (and explain
    // per query): the band over two locations' times of 16 members.
    let rtt: Map<MemberId, Rtts> = set
        .iter()
        .map(|c| {
            let t = |l: &str, micros: u32| LocationRtt {
                location: LocationId::new(l),
                micros,
            };
            let k = c.id.0 as u32;
            let table = vec![t("ams", 3_000 * k), t("fra", 40_000 / k), t("nyc", 9_000)];
            (c.id, Rtts::new(table))
        })
        .collect();
    let eu = [LocationId::new("ams"), LocationId::new("fra")];
    group.bench_function("latency_band_of16", |b| {
        b.iter(|| {
            chosen.clear();
            chosen.extend_from_slice(&set);
            let fastest =
                gslb_shared::selection::latency::keep_fastest(&mut chosen, Some(&eu), &rtt, None);
            black_box((fastest, chosen.len()))
        });
    });
    group.finish();
}

criterion_group!(benches, bench, bench_steer);
criterion_main!(benches);
