//! Reads against a large catalog never freeze the aggregator
//! (scripts/bench-reads.sh): the release aggregator on loopback with a pool
//! of BIG members (default 100,000) and one of MID (default 10,000), no
//! agents (the members are catalog data, never probed). While a prober
//! thread asks `/livez` every 5 ms and a writer thread updates the zone every
//! 10 ms (a durable write through the control core), it times: the
//! declarative apply that creates them, `GET /api/v1/pools/{id}/status` of
//! the big pool, `gslbctl status`, `gslbctl members list` of the mid
//! pool, and a `/metrics` scrape (the health gauges of every member); each
//! phase prints its duration and the /livez and write latencies seen
//! meanwhile (p50, p99, max).
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use gslb_e2e::bench::{env, percentile};
use gslb_e2e::{Aggregator, ZONE, temp_dir};

/// One `GET /livez` on a fresh connection: microseconds, or None.
fn livez(addr: std::net::SocketAddr) -> Option<u64> {
    let t = Instant::now();
    let mut s = TcpStream::connect_timeout(&addr, Duration::from_secs(30)).ok()?;
    s.set_read_timeout(Some(Duration::from_secs(60))).ok()?;
    s.write_all(b"GET /livez HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        .ok()?;
    let mut text = String::new();
    s.read_to_string(&mut text).ok()?;
    text.starts_with("HTTP/1.1 200")
        .then(|| t.elapsed().as_micros() as u64)
}

/// Latencies (µs) seen during one phase.
struct Seen {
    livez: Vec<u64>,
    writes: Vec<u64>,
}

/// Probe /livez every 5 ms and write every 10 ms (a `PUT` of zone `zone`,
/// when given) while `phase` runs; (its result, seconds, latencies).
fn during<T>(agg: &Aggregator, zone: Option<u64>, phase: impl FnOnce() -> T) -> (T, f64, Seen) {
    let stop = AtomicBool::new(false);
    let addr = agg.http;
    std::thread::scope(|scope| {
        let prober = scope.spawn(|| {
            let mut lat = Vec::new();
            // Bounded: at most 100,000 probes.
            while !stop.load(Ordering::Relaxed) && lat.len() < 100_000 {
                lat.push(livez(addr).unwrap_or(u64::MAX));
                std::thread::sleep(Duration::from_millis(5));
            }
            lat
        });
        let writer = scope.spawn(|| {
            let mut lat = Vec::new();
            let Some(id) = zone else { return lat };
            let path = format!("/api/v1/zones/{id}");
            // Bounded: at most 50,000 writes.
            while !stop.load(Ordering::Relaxed) && lat.len() < 50_000 {
                let t = Instant::now();
                let (code, _) = agg.rest("PUT", &path, r#"{"defaultTtl": 60}"#);
                lat.push(if code == 200 {
                    t.elapsed().as_micros() as u64
                } else {
                    u64::MAX
                });
                std::thread::sleep(Duration::from_millis(10));
            }
            lat
        });
        let t = Instant::now();
        let out = phase();
        let secs = t.elapsed().as_secs_f64();
        stop.store(true, Ordering::Relaxed);
        let mut livez = prober.join().unwrap();
        let mut writes = writer.join().unwrap();
        livez.sort_unstable();
        writes.sort_unstable();
        (out, secs, Seen { livez, writes })
    })
}

fn summary(lat: &[u64]) -> String {
    let ms = |us: u64| {
        if us == u64::MAX {
            f64::INFINITY
        } else {
            us as f64 / 1000.0
        }
    };
    format!(
        "n={:<5} p50 {:>6.2} p99 {:>6.2} max {:>7.2} ms",
        lat.len(),
        ms(percentile(lat, 50.0)),
        ms(percentile(lat, 99.0)),
        ms(*lat.last().unwrap_or(&0)),
    )
}

fn report(name: &str, secs: f64, seen: &Seen) {
    println!(
        "{name:<40} {:>9.1} ms   /livez: {}   writes: {}",
        secs * 1000.0,
        summary(&seen.livez),
        if seen.writes.is_empty() {
            "-".to_owned()
        } else {
            summary(&seen.writes)
        }
    );
}

fn pool_doc(name: &str, n: usize, octet: usize) -> String {
    let mut s = format!("\n[[pool]]\nname = \"{name}\"\n");
    for i in 0..n {
        let _ = write!(
            s,
            "[[pool.member]]\nname = \"{name}-{i}\"\naddress = \"127.{}.{}.{}\"\nport = 80\n",
            octet + i / 62_500,
            (i / 250) % 250,
            i % 250 + 1
        );
    }
    s
}

fn main() {
    let big = env("BIG", 100_000);
    let mid = env("MID", 10_000);
    let dir = temp_dir("bench-reads");
    let agg = Aggregator::start(&dir.join("data"));
    println!("aggregator reads with {big} + {mid} members (release build, loopback, no agents)");
    let doc = format!(
        "{ZONE}{}{}",
        pool_doc("big", big, 64),
        pool_doc("mid", mid, 70)
    );
    let (_, secs, seen) = during(&agg, None, || agg.apply(&doc, &dir));
    report(&format!("apply {} members", big + mid), secs, &seen);
    let (code, zones) = agg.rest("GET", "/api/v1/zones", "");
    assert_eq!(code, 200, "{zones}");
    let zone = zones[0]["id"].as_u64();
    let big_id = agg.pool_id("big");
    let mid_id = agg.pool_id("mid");
    let path = format!("/api/v1/pools/{big_id}/status");
    let ((code, body), secs, seen) = during(&agg, zone, || agg.rest("GET", &path, ""));
    assert_eq!(code, 200);
    assert_eq!(body["membersById"].as_object().map_or(0, |m| m.len()), big);
    report(&format!("REST pool status, {big} members"), secs, &seen);
    let (out, secs, seen) = during(&agg, zone, || agg.ctl(&["status"]));
    assert!(out.contains("big"));
    report("gslbctl status (every pool)", secs, &seen);
    let mid_arg = mid_id.to_string();
    let (out, secs, seen) = during(&agg, zone, || {
        agg.ctl(&["members", "list", "--pool", &mid_arg])
    });
    assert_eq!(
        out.lines().count(),
        mid + 1,
        "a header and one row per member"
    );
    report(&format!("gslbctl members list, {mid} members"), secs, &seen);
    // The health gauges: every pool evaluated and one member_up series per
    // member, computed at the scrape from the published view.
    let ((code, text), secs, seen) =
        during(&agg, zone, || gslb_e2e::dns::http_get(agg.http, "/metrics"));
    assert_eq!(code, 200);
    let series = text
        .lines()
        .filter(|l| l.starts_with("gslb_aggregator_member_up{"))
        .count();
    report(
        &format!(
            "GET /metrics, {series} member series ({} KiB)",
            text.len() / 1024
        ),
        secs,
        &seen,
    );
    let (_, secs, seen) = during(&agg, zone, || std::thread::sleep(Duration::from_secs(2)));
    report("idle (baseline)", secs, &seen);
    let _ = std::fs::remove_dir_all(&dir);
}
