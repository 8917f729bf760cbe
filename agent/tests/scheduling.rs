//! Scheduling in paused time: phase spread, no drift, timeouts on the whole
//! probe, the concurrency limit, and assignment changes taking effect at once.
#![allow(clippy::unwrap_used)]

mod support;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gslb_agent::buffer::ResultBuffer;
use gslb_agent::checker::{Checker, ProbeFuture, Registry};
use gslb_agent::clock::Clock;
use gslb_agent::metrics::Metrics;
use gslb_agent::scheduler::{ProbeContext, Scheduler};
use gslb_agent::target::Target;
use gslb_proto::pb;
use gslb_shared::assignment::TargetKey;
use gslb_shared::cycle::phase_offset;
use gslb_shared::*;
use support::*;

const T0: u64 = 1_700_000_000_000;

/// Records when each probe starts; takes `work` to finish.
struct Recorder {
    clock: Clock,
    work: Duration,
    starts: Mutex<BTreeMap<u64, Vec<u64>>>,
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
}

impl Checker for Recorder {
    fn probe<'a>(&'a self, target: &'a Target) -> ProbeFuture<'a> {
        Box::pin(async move {
            self.starts
                .lock()
                .unwrap()
                .entry(target.key.member.0)
                .or_default()
                .push(self.clock.now_ms());
            let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            self.max_in_flight.fetch_max(now, Ordering::SeqCst);
            tokio::time::sleep(self.work).await;
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            Ok(())
        })
    }
}

fn setup(work: Duration, limit: usize) -> (Arc<Recorder>, Arc<ProbeContext>) {
    let clock = Clock::at(T0);
    let recorder = Arc::new(Recorder {
        clock,
        work,
        starts: Mutex::new(BTreeMap::new()),
        in_flight: AtomicUsize::new(0),
        max_in_flight: AtomicUsize::new(0),
    });
    let mut registry = Registry::new();
    registry.register("tcp", recorder.clone());
    let ctx = Arc::new(ProbeContext {
        registry,
        limit: tokio::sync::Semaphore::new(limit),
        buffer: Arc::new(ResultBuffer::new(100_000, 1_000)),
        clock,
        metrics: Metrics::new(),
        resolver: no_resolver(),
    });
    (recorder, ctx)
}

fn assignments(n: u64, interval_s: u64, timeout_ms: u64) -> Vec<pb::Assignment> {
    let mut c = check(Probe::Tcp(StreamProbe::default()), timeout_ms);
    c.interval = Duration::from_secs(interval_s);
    (1..=n).map(|m| assignment(m, LOCAL, 9, &c)).collect()
}

fn key(m: u64) -> TargetKey {
    TargetKey {
        member: MemberId(m),
        check: CheckId(1),
    }
}

#[tokio::test(start_paused = true)]
async fn probes_run_at_their_phase_every_interval_without_drift() {
    let (rec, ctx) = setup(Duration::from_millis(3), 1024);
    let mut s = Scheduler::new(ctx.clone());
    assert!(
        s.apply_full(&offer(&assignments(200, 10, 1_000)))
            .is_empty()
    );
    tokio::time::sleep(Duration::from_secs(100)).await;
    let starts = rec.starts.lock().unwrap().clone();
    assert_eq!(starts.len(), 200);
    for (m, times) in &starts {
        let offset = phase_offset(key(*m), Duration::from_secs(10));
        assert!(times.len() >= 9, "member {m}: {} probes", times.len());
        for t in times {
            assert_eq!(t % 10_000, offset, "member {m} ran off its phase at {t}");
        }
        for pair in times.windows(2) {
            assert_eq!(pair[1] - pair[0], 10_000, "member {m} drifted");
        }
    }
    // Probes spread over the interval: no second of it holds more than 3x its share.
    let mut per_second = [0u32; 10];
    for m in starts.keys() {
        per_second[(phase_offset(key(*m), Duration::from_secs(10)) / 1_000) as usize] += 1;
    }
    assert!(
        per_second.iter().all(|n| (5..=60).contains(n)),
        "{per_second:?}"
    );
    // Results carry the cycle of the scheduled start.
    let (results, _) = ctx.buffer.take(usize::MAX);
    for r in &results {
        let offset = phase_offset(key(r.member.0), Duration::from_secs(10));
        assert!(starts[&r.member.0].contains(&(r.cycle * 10_000 + offset)));
    }
}

#[tokio::test(start_paused = true)]
async fn the_timeout_bounds_the_whole_probe() {
    let (_rec, ctx) = setup(Duration::from_secs(60), 1024);
    let mut s = Scheduler::new(ctx.clone());
    s.apply_full(&offer(&assignments(1, 10, 3_000)));
    tokio::time::sleep(Duration::from_secs(25)).await;
    let (results, _) = ctx.buffer.take(usize::MAX);
    assert!(results.len() >= 2);
    for r in results {
        assert_eq!(r.failure, Some(FailReason::Timeout));
        assert_eq!(r.latency_us, 3_000_000, "paused time: exactly the timeout");
    }
}

#[tokio::test(start_paused = true)]
async fn concurrency_limit_bounds_probes_in_flight() {
    let (rec, ctx) = setup(Duration::from_secs(5), 3);
    let mut s = Scheduler::new(ctx);
    s.apply_full(&offer(&assignments(50, 10, 8_000)));
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(rec.max_in_flight.load(Ordering::SeqCst), 3);
}

#[tokio::test(start_paused = true)]
async fn a_removed_target_stops_at_once_even_mid_probe() {
    let (rec, ctx) = setup(Duration::from_secs(4), 1024);
    let mut s = Scheduler::new(ctx.clone());
    s.apply_full(&offer(&assignments(2, 10, 8_000)));
    tokio::time::sleep(Duration::from_secs(30)).await;
    // Wait until member 1 is mid-probe, then remove it.
    let offset = phase_offset(key(1), Duration::from_secs(10));
    let now = ctx.clock.now_ms();
    let next_start = (now / 10_000 + 1) * 10_000 + offset;
    tokio::time::sleep(Duration::from_millis(next_start - now + 1_000)).await;
    let started = rec.starts.lock().unwrap()[&1].len();
    let _ = ctx.buffer.take(usize::MAX);
    s.apply_delta(&[], &[key(1)]);
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(
        rec.starts.lock().unwrap()[&1].len(),
        started,
        "no probe after removal"
    );
    let (results, _) = ctx.buffer.take(usize::MAX);
    assert!(
        results.iter().all(|r| r.member.0 != 1),
        "the in-flight probe was abandoned"
    );
    assert!(
        results.iter().any(|r| r.member.0 == 2),
        "other targets go on"
    );
    assert_eq!(s.len(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_changed_assignment_takes_effect_without_restart() {
    let (rec, ctx) = setup(Duration::from_millis(1), 1024);
    let mut s = Scheduler::new(ctx.clone());
    s.apply_full(&offer(&assignments(1, 10, 1_000)));
    tokio::time::sleep(Duration::from_secs(35)).await;
    let before = rec.starts.lock().unwrap()[&1].len();
    s.apply_full(&offer(&assignments(1, 2, 1_000)));
    tokio::time::sleep(Duration::from_secs(20)).await;
    let times = rec.starts.lock().unwrap()[&1].clone();
    let after = &times[before..];
    assert!(
        after.len() >= 9,
        "{} probes at a 2 s interval in 20 s",
        after.len()
    );
    for pair in after.windows(2) {
        assert_eq!(pair[1] - pair[0], 2_000);
    }
}

#[tokio::test(start_paused = true)]
async fn an_invalid_target_is_reported_without_probing_and_others_go_on() {
    let (rec, ctx) = setup(Duration::from_millis(1), 1024);
    let mut s = Scheduler::new(ctx.clone());
    let mut set = assignments(2, 10, 1_000);
    set[0].address = "127.0.0.1:80".into();
    let rejected = s.apply_full(&offer(&set));
    assert_eq!(rejected.len(), 1);
    assert_eq!(
        (rejected[0].key, rejected[0].error.field.as_str()),
        (key(1), "address")
    );
    tokio::time::sleep(Duration::from_secs(30)).await;
    assert!(!rec.starts.lock().unwrap().contains_key(&1), "never probed");
    let (results, _) = ctx.buffer.take(usize::MAX);
    assert!(
        results
            .iter()
            .filter(|r| r.member.0 == 1)
            .all(|r| r.failure == Some(FailReason::InvalidTarget))
    );
    assert!(results.iter().any(|r| r.member.0 == 1));
    assert!(
        results
            .iter()
            .any(|r| r.member.0 == 2 && r.failure.is_none())
    );
}

#[tokio::test(start_paused = true)]
async fn absurd_intervals_from_the_aggregator_are_reported_not_fatal() {
    let (_rec, ctx) = setup(Duration::from_millis(1), 1024);
    let mut s = Scheduler::new(ctx.clone());
    let mut set = assignments(3, 10, 1_000);
    set[0].check.as_mut().unwrap().interval_ms = u64::MAX;
    set[1].check.as_mut().unwrap().interval_ms = 0;
    assert_eq!(s.apply_full(&offer(&set)).len(), 2);
    tokio::time::sleep(Duration::from_secs(7_200)).await;
    let (results, _) = ctx.buffer.take(usize::MAX);
    for m in [1, 2] {
        assert!(
            results
                .iter()
                .any(|r| r.member.0 == m && r.failure == Some(FailReason::InvalidTarget)),
            "member {m}"
        );
    }
    assert!(
        results
            .iter()
            .any(|r| r.member.0 == 3 && r.failure.is_none())
    );
}

/// The interval floor (100 ms) is the agent's too: a 100 ms check runs
/// every 100 ms and reports cycles counted in 100 ms (the scheduler once
/// clamped every interval to 500 ms, so a 200 ms check ran every 500 ms).
#[tokio::test(start_paused = true)]
async fn a_check_at_the_interval_floor_runs_at_it() {
    let (rec, ctx) = setup(Duration::from_millis(1), 64);
    let mut c = check(Probe::Tcp(StreamProbe::default()), 50);
    c.interval = Duration::from_millis(100);
    let mut s = Scheduler::new(ctx.clone());
    assert!(
        s.apply_full(&offer(&[assignment(1, LOCAL, 9, &c)]))
            .is_empty()
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    let times = rec.starts.lock().unwrap()[&1].clone();
    assert!(times.len() >= 19, "{} probes in 2 s", times.len());
    for pair in times.windows(2) {
        assert_eq!(pair[1] - pair[0], 100);
    }
    let (results, _) = ctx.buffer.take(usize::MAX);
    let offset = phase_offset(key(1), c.interval);
    for r in &results {
        assert!(
            times.contains(&(r.cycle * 100 + offset)),
            "cycle {}",
            r.cycle
        );
    }
}

/// Every assigned target keeps one probe future alive for as long as it is
/// assigned, so its size is paid 10,000 times over: the hostname branch
/// (the resolver's futures, several KiB) is boxed, not carried inline.
#[tokio::test]
async fn a_probe_future_stays_small() {
    let (_, ctx) = setup(Duration::ZERO, 1);
    let t = target(Probe::Tcp(StreamProbe::default()), 9);
    let size = std::mem::size_of_val(&gslb_agent::scheduler::probe_once(&t, &ctx));
    assert!(size <= 1024, "a probe future takes {size} bytes");
}
