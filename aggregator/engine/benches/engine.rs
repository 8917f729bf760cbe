//! Health engine ingest throughput at 100,000 members × 20 locations,
//! resident memory per member-location, what a status read's view costs
//! the core, and what ingest pays while a reader holds one.
#![allow(clippy::print_stdout, clippy::unwrap_used, missing_docs)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use gslb_engine::{Engine, EngineConfig, Input, Output, Timestamp};
use gslb_shared::*;

const MEMBERS: u64 = 100_000;
const LOCATIONS: usize = 20;
const INTERVAL_MS: u64 = 10_000;

fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

struct Setup {
    engine: Engine,
    locations: Vec<LocationId>,
    batches: Vec<Vec<ProbeResult>>,
    cycle: u64,
    out: Vec<Output>,
}

fn setup() -> Setup {
    let mut engine = Engine::new(EngineConfig::default());
    let t0 = Timestamp(1_000 * INTERVAL_MS);
    let mut out = Vec::new();
    let mut check = Check::new(CheckId(1), "tcp", Probe::Tcp(StreamProbe::default()));
    check.interval = Duration::from_millis(INTERVAL_MS);
    engine
        .step(t0, Input::UpsertCheck(&check), &mut out)
        .unwrap();
    let locations: Vec<_> = (0..LOCATIONS)
        .map(|i| LocationId::new(format!("loc{i}")))
        .collect();
    for l in &locations {
        engine
            .step(t0, Input::LocationConnected(l), &mut out)
            .unwrap();
    }
    for id in 1..=MEMBERS {
        let addr = std::net::Ipv4Addr::from(0x0a00_0000 + id as u32).into();
        let m = Member::new(MemberId(id), PoolId(1), format!("m{id}"), addr, 80);
        engine
            .step(
                t0,
                Input::UpsertMember {
                    member: &m,
                    check: Some(CheckId(1)),
                    slow_start: None,
                },
                &mut out,
            )
            .unwrap();
    }
    engine
        .step(
            t0,
            Input::Restore {
                members: &[],
                first_start: true,
            },
            &mut out,
        )
        .unwrap();
    // Location i fails every (i+7)th member, so some cycles are mixed.
    let batches = (0..LOCATIONS)
        .map(|i| {
            (1..=MEMBERS)
                .map(|id| ProbeResult {
                    member: MemberId(id),
                    check: CheckId(1),
                    cycle: 0,
                    failure: (id % (i as u64 + 7) == 0).then_some(FailReason::Timeout),
                    latency_us: 900,
                })
                .collect()
        })
        .collect();
    Setup {
        engine,
        locations,
        batches,
        cycle: 1_000,
        out,
    }
}

impl Setup {
    /// Ingest one whole cycle (every location reports every member); returns
    /// the time spent inside the engine.
    fn run_cycle(&mut self) -> Duration {
        self.cycle += 1;
        for batch in &mut self.batches {
            for r in batch.iter_mut() {
                r.cycle = self.cycle;
            }
        }
        let now = Timestamp(self.cycle * INTERVAL_MS + 3_000);
        self.out.clear();
        let start = Instant::now();
        for (l, batch) in self.locations.iter().zip(&self.batches) {
            self.engine
                .step(
                    now,
                    Input::Results {
                        location: l,
                        results: batch,
                    },
                    &mut self.out,
                )
                .unwrap();
        }
        self.engine.step(now, Input::Tick, &mut self.out).unwrap();
        let spent = start.elapsed();
        black_box(self.out.len());
        spent
    }
}

fn bench(c: &mut Criterion) {
    let rss_before = rss_bytes();
    let mut s = setup();
    s.run_cycle();
    s.run_cycle();
    let rss_after = rss_bytes();
    let per = (rss_after.saturating_sub(rss_before)) as f64 / (MEMBERS as f64 * LOCATIONS as f64);
    println!(
        "engine memory: {:.1} MiB resident for {MEMBERS} members x {LOCATIONS} locations = {per:.0} bytes per member-location",
        (rss_after.saturating_sub(rss_before)) as f64 / (1024.0 * 1024.0)
    );
    assert_eq!(
        s.engine.counters().accepted,
        2 * MEMBERS * LOCATIONS as u64,
        "every result was ingested"
    );

    let mut group = c.benchmark_group("engine");
    group
        .sample_size(10)
        .measurement_time(Duration::from_secs(20));
    group.throughput(Throughput::Elements(MEMBERS * LOCATIONS as u64));
    group.bench_function("ingest_cycle_100k_members_x_20_locations", |b| {
        b.iter_custom(|iters| (0..iters).map(|_| s.run_cycle()).sum());
    });
    // Worst case for copy-on-write: a reader holds a view taken just
    // before each cycle, so every member is copied once per cycle.
    group.bench_function("ingest_cycle_100k_x_20_with_a_view_held", |b| {
        b.iter_custom(|iters| {
            (0..iters)
                .map(|_| {
                    let view = s.engine.status_view();
                    let spent = s.run_cycle();
                    drop(black_box(view));
                    spent
                })
                .sum()
        });
    });
    group.finish();

    let mut group = c.benchmark_group("status_view");
    group.bench_function("take_100k_members", |b| {
        b.iter(|| black_box(s.engine.status_view()));
    });
    let view = s.engine.status_view();
    let now = Timestamp(s.cycle * INTERVAL_MS + 3_000);
    group.throughput(Throughput::Elements(MEMBERS));
    group.bench_function("read_100k_member_statuses", |b| {
        b.iter(|| {
            (1..=MEMBERS)
                .filter_map(|id| view.member_status(MemberId(id), now))
                .count()
        });
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
