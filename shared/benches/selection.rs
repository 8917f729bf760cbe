//! Selection throughput: one answer for a 16-member pool with geo branches,
//! weighted steering and firstN = 2.
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
                },
            );
        }
    }
    let record = DynamicRecord {
        steering: Steering::Weighted,
        pools: vec![PoolId(2), PoolId(1)],
        geo: regions
            .iter()
            .enumerate()
            .map(|(p, r)| GeoBranch {
                regions: vec![Region::new(*r)],
                pools: vec![PoolId(p as u64 + 1), PoolId(2)],
            })
            .collect(),
        first_n: 2,
        flatten: false,
    };
    (CatalogIndex::new(&catalog, &facts), record)
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
                rotation,
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
                rotation,
            };
            let (_, answers) = selector.select(&index, &rr, q, &mut rng, None);
            black_box(answers.len())
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
