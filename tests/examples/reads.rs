//! Reads against a large catalog never freeze the aggregator
//! (scripts/bench-reads.sh): the release aggregator on loopback with a pool
//! of BIG members (default 100,000) and one of MID (default 10,000), no
//! agents (the members are catalog data, never probed). While a prober
//! thread asks `/livez` every 5 ms, it times: the declarative apply that
//! creates them, `GET /api/v1/pools/{id}/status` of the big pool, `gslbctl
//! status`, and `gslbctl members list` of the mid pool; each phase prints
//! its duration and the /livez latency seen meanwhile (p50, p99, max).
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
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

/// Probe /livez every 5 ms while `phase` runs; (its seconds, latencies).
fn during<T>(addr: std::net::SocketAddr, phase: impl FnOnce() -> T) -> (T, f64, Vec<u64>) {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let prober = std::thread::spawn(move || {
        let mut lat = Vec::new();
        // Bounded: at most 100,000 probes.
        while !flag.load(Ordering::Relaxed) && lat.len() < 100_000 {
            lat.push(livez(addr).unwrap_or(u64::MAX));
            std::thread::sleep(Duration::from_millis(5));
        }
        lat
    });
    let t = Instant::now();
    let out = phase();
    let secs = t.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let mut lat = prober.join().unwrap();
    lat.sort_unstable();
    (out, secs, lat)
}

fn report(name: &str, secs: f64, lat: &[u64]) {
    let ms = |us: u64| {
        if us == u64::MAX {
            f64::INFINITY
        } else {
            us as f64 / 1000.0
        }
    };
    println!(
        "{name:<44} {:>9.1} ms   /livez during it: n={:<5} p50 {:>6.2} ms  p99 {:>6.2} ms  max {:>7.2} ms",
        secs * 1000.0,
        lat.len(),
        ms(percentile(lat, 50.0)),
        ms(percentile(lat, 99.0)),
        ms(*lat.last().unwrap_or(&0)),
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
    let (_, secs, lat) = during(agg.http, || agg.apply(&doc, &dir));
    report(&format!("apply {} members", big + mid), secs, &lat);
    let big_id = agg.pool_id("big");
    let mid_id = agg.pool_id("mid");
    let path = format!("/api/v1/pools/{big_id}/status");
    let ((code, body), secs, lat) = during(agg.http, || agg.rest("GET", &path, ""));
    assert_eq!(code, 200);
    assert_eq!(body["members"].as_object().map_or(0, |m| m.len()), big);
    report(&format!("REST pool status, {big} members"), secs, &lat);
    let (out, secs, lat) = during(agg.http, || agg.ctl(&["status"]));
    assert!(out.contains("big"));
    report("gslbctl status (every pool)", secs, &lat);
    let mid_arg = mid_id.to_string();
    let (out, secs, lat) = during(agg.http, || {
        agg.ctl(&["members", "list", "--pool", &mid_arg])
    });
    assert_eq!(
        out.lines().count(),
        mid + 1,
        "a header and one row per member"
    );
    report(&format!("gslbctl members list, {mid} members"), secs, &lat);
    let _ = std::fs::remove_dir_all(&dir);
}
