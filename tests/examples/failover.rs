//! Failover timing of the whole mesh (scripts/bench-failover.sh): one
//! aggregator, three agents, one edge and two demo backends on loopback,
//! an HTTP check every INTERVAL_MS (default 200) with TIMEOUT_MS (default
//! 100): the 100 ms floor's settings. The backend is
//! killed KILLS times (default 50) at a random point of the check cycle;
//! each time we measure, by querying the edge every 2 ms, the time from the
//! kill until the edge stops answering it, and from its restart (listening
//! again) until the edge answers it again. Prints p50/p99/max beside the
//! theoretical bound and Route 53's and Cloudflare's fastest settings.
//! MODE=hang freezes the backend (SIGSTOP/SIGCONT) instead, so checks fail
//! by timing out rather than by a refused connection. MEMBERS=N adds N
//! members to the catalog in a pool of their own, never probed.
#![allow(clippy::print_stdout, clippy::unwrap_used)]

use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use gslb_e2e::bench::percentile;
use gslb_e2e::catalog::{a_record, http_check, member, pool};
use gslb_e2e::dns::query_a;
use gslb_e2e::{Backend, LocalMesh, ZONE, wait_until};

/// A timing from the environment, or its default.
fn env_ms(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn config(
    target: &Backend,
    kept: &Backend,
    interval_ms: u64,
    timeout_ms: u64,
    extra: u32,
) -> String {
    let members = [
        member("target", target.addr, ""),
        member("kept", kept.addr, ""),
    ];
    // A catalog of `extra` more members, in a pool of their own that is
    // never probed: what a decision costs at that catalog size.
    let bulk: Vec<String> = (0..extra)
        .map(|i| {
            let [_, a, b, c] = i.to_be_bytes();
            let addr = SocketAddr::from(([127, 10 + a, b, c], 80));
            member(&format!("bulk-{i}"), addr, "")
        })
        .collect();
    let bulk = if bulk.is_empty() {
        String::new()
    } else {
        // Check `none`: up by fiat, never probed.
        let none = "\n[[check]]\nname = \"static\"\nprobe = { type = \"none\" }\ninterval = \"1s\"\ntimeout = \"500ms\"\n";
        none.to_owned()
            + &pool("bulk", Some("static"), "", &bulk)
            + "\n[[record]]\nzone = \"example.test\"\nname = \"bulk.example.test\"\ntype = \"A\"\ndynamic = { steering = \"roundrobin\", pools = [\"bulk\"], firstN = 4 }\n"
    };
    format!(
        "{ZONE}{}{}{}{bulk}",
        http_check(
            "http",
            &format!("{interval_ms}ms"),
            &format!("{timeout_ms}ms")
        ),
        pool("web", Some("http"), "", &members),
        a_record("www.example.test", &["web"])
    )
}

/// Poll the edge every 2 ms until `target` is (or is no longer) answered;
/// returns the time that took.
fn until_answered(dns: SocketAddr, target: Ipv4Addr, answered: bool) -> Duration {
    let start = Instant::now();
    loop {
        if let Ok(got) = query_a(dns, "www.example.test", Duration::from_millis(200))
            && got.contains(&target) == answered
        {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "edge did not change within 30 s"
        );
        std::thread::sleep(Duration::from_millis(2));
    }
}

/// A random pause within one check interval, so kills and restores land
/// at every phase of the probe cycle.
fn random_phase(interval_ms: u64) {
    std::thread::sleep(Duration::from_millis(rand::random_range(0..interval_ms)));
}

fn summary(name: &str, mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let p99 = percentile(&samples, 99.0);
    println!(
        "{name:<8} n={} p50={:.0} ms p99={:.0} ms max={:.0} ms min={:.0} ms",
        samples.len(),
        ms(percentile(&samples, 50.0)),
        ms(p99),
        ms(*samples.last().unwrap()),
        ms(samples[0]),
    );
    p99
}

fn main() {
    let kills: usize = std::env::var("KILLS")
        .ok()
        .and_then(|k| k.parse().ok())
        .unwrap_or(50);
    let (interval_ms, timeout_ms) = (env_ms("INTERVAL_MS", 200), env_ms("TIMEOUT_MS", 100));
    let extra = u32::try_from(env_ms("MEMBERS", 0).min(1_000_000)).unwrap_or(0);
    let mut target = Backend::start(None, "127.0.9.1:0");
    let kept = Backend::start(None, "127.0.9.2:0");
    let mesh = LocalMesh::start(
        "failover-bench",
        &config(&target, &kept, interval_ms, timeout_ms, extra),
        &[("fra1", "eu"), ("iad1", "us"), ("sin1", "ap")],
    );
    let ip: Ipv4Addr = "127.0.9.1".parse().unwrap();
    wait_until(30, "target up", || mesh.agg.health("web", "target") == "up");
    if extra > 0 {
        // The bulk pool is in the catalog the edge serves.
        let bulk = query_a(mesh.dns, "bulk.example.test", Duration::from_secs(2)).unwrap();
        assert!(!bulk.is_empty(), "bulk.example.test answers");
        println!("catalog  {} members ({extra} in pool bulk)", extra + 2);
    }
    until_answered(mesh.dns, ip, true);

    let hang = std::env::var("MODE").is_ok_and(|m| m == "hang");
    let (mut down, mut up) = (Vec::new(), Vec::new());
    for i in 0..kills {
        random_phase(interval_ms);
        if hang {
            target.pause();
        } else {
            target.kill();
        }
        down.push(until_answered(mesh.dns, ip, false));
        random_phase(interval_ms);
        if hang {
            target.resume();
        } else {
            target.restart();
        }
        up.push(until_answered(mesh.dns, ip, true));
        if (i + 1) % 10 == 0 {
            eprintln!("{} of {kills} kills", i + 1);
        }
    }

    println!(
        "failover ({}): {kills} kills, HTTP check interval {interval_ms} ms, timeout {timeout_ms} ms, 3 locations, edge polled every 2 ms",
        if hang {
            "backend frozen, checks time out"
        } else {
            "backend killed, connections refused"
        }
    );
    let p99_down = summary("kill", down);
    let p99_up = summary("restore", up);
    // Issue 22's targets at 200/100 ms: 400 ms refused, 500 ms frozen (a
    // frozen backend's probe takes the whole timeout).
    let target_ms = 2 * interval_ms + if hang { timeout_ms } else { 0 };
    println!(
        "bound    interval + timeout + cycle close + push = {interval_ms} + {timeout_ms} + close + push ms; target p99 <= {target_ms} ms: kill {} restore {}",
        verdict(p99_down, target_ms),
        verdict(p99_up, target_ms)
    );
    println!(
        "peers    Route 53 fastest: 10 s interval x 3 failures = 30,000 ms; Cloudflare LB default: 60 s interval = 60,000 ms (+ its retries)"
    );
}

fn verdict(p99: Duration, target_ms: u64) -> &'static str {
    if p99 <= Duration::from_millis(target_ms) {
        "met"
    } else {
        "NOT met"
    }
}
