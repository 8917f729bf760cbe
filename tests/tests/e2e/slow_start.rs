//! Slow start through the mesh: a member that comes back up ramps its
//! share of weighted answers from 10% of its weight to all of it over the
//! pool's `slowStart`, seen as answer frequencies at the edge over time,
//! with the step shown by `gslbctl members list` and `explain`.

use std::time::{Duration, Instant};

use gslb_e2e::catalog::{http_check, member, pool};
use gslb_e2e::dns::query_a;
use gslb_e2e::{Backend, LocalMesh, ZONE, wait_until};

/// Nine steps of 1.5 s.
const RAMP_SECS: f64 = 13.5;

fn config(one: &Backend, two: &Backend) -> String {
    let members = [
        member("web-1", one.addr, "weight = 100"),
        member("web-2", two.addr, "weight = 100"),
    ];
    format!(
        "{ZONE}{}{}\n[[record]]\nzone = \"example.test\"\nname = \"www.example.test\"\ntype = \"A\"\ndynamic = {{ steering = \"weighted\", pools = [\"web\"], firstN = 1 }}\n",
        http_check("http", "500ms", "300ms"),
        pool("web", Some("http"), "slowStart = \"13500ms\"", &members),
    )
}

/// Share of `n` answers that name `addr` first.
fn share(mesh: &LocalMesh, addr: &str, n: u32) -> f64 {
    let mut hits = 0;
    for _ in 0..n {
        let got = query_a(mesh.dns, "www.example.test", Duration::from_secs(2)).unwrap();
        if got.first().map(ToString::to_string).as_deref() == Some(addr) {
            hits += 1;
        }
    }
    f64::from(hits) / f64::from(n)
}

/// The notes column of `members list` for `name`.
fn notes(mesh: &LocalMesh, name: &str) -> String {
    let id = mesh.agg.pool_id("web").to_string();
    let table = mesh.agg.ctl(&["members", "list", "--pool", &id]);
    table
        .lines()
        .find(|l| l.split_whitespace().nth(1) == Some(name))
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn a_member_back_up_ramps_its_share_of_answers_over_slow_start() {
    let one = Backend::start(None, "127.0.1.31:0");
    let mut two = Backend::start(None, "127.0.1.32:0");
    let mesh = LocalMesh::start("e2e-slow-start", &config(&one, &two), &[("fra1", "eu")]);
    let two_ip = two.addr.ip().to_string();
    // Both enter rotation at the start; wait until both have their full weight.
    wait_until(40, "both members up at full weight", || {
        mesh.agg.health("web", "web-2") == "up"
            && !notes(&mesh, "web-1").contains("slow start")
            && !notes(&mesh, "web-2").contains("slow start")
    });
    two.kill();
    wait_until(20, "web-2 down", || {
        mesh.agg.health("web", "web-2") == "down"
    });
    // The edge applies the decision a moment after the aggregator shows it.
    wait_until(10, "the edge to stop answering web-2", || {
        share(&mesh, &two_ip, 50) == 0.0
    });

    two.restart();
    let mut line = String::new();
    wait_until(20, "web-2 back up and ramping", || {
        line = notes(&mesh, "web-2");
        line.contains("slow start")
    });
    let back = Instant::now();
    assert!(line.contains("slow start 10% (weight 10)"), "{line}");
    let explain = mesh.agg.ctl(&["explain", "www.example.test"]);
    assert!(
        explain.contains("slow start web-") && explain.contains("at 10% (weight 10 of 100)"),
        "{explain}"
    );

    // Sample the share in windows until the ramp is over, and a while after.
    let mut samples: Vec<(f64, f64)> = Vec::new();
    while back.elapsed().as_secs_f64() < RAMP_SECS + 4.0 {
        let s = share(&mesh, &two_ip, 150);
        samples.push((back.elapsed().as_secs_f64(), s));
    }
    let early: Vec<f64> = samples
        .iter()
        .filter(|(t, _)| *t < 2.0)
        .map(|x| x.1)
        .collect();
    let late: Vec<f64> = samples
        .iter()
        .filter(|(t, _)| *t > RAMP_SECS + 1.5)
        .map(|x| x.1)
        .collect();
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
    let steps: Vec<String> = (0..12)
        .map(|k| {
            let v: Vec<f64> = (samples.iter())
                .filter(|(t, _)| (*t / 1.5) as usize == k)
                .map(|x| x.1)
                .collect();
            format!("{:.2}", mean(&v))
        })
        .collect();
    eprintln!(
        "web-2's share per 1.5 s after it came back: {}",
        steps.join(" ")
    );
    // First steps: 10–20% of an equal weight is 9–17% of the answers; at
    // full weight it is 50%.
    assert!(!early.is_empty() && !late.is_empty(), "{samples:?}");
    assert!(mean(&early) < 0.25, "early share {samples:?}");
    assert!((mean(&late) - 0.5).abs() < 0.1, "late share {samples:?}");
    // In between, the share rises: each third of the ramp above the last.
    let third = |k: f64| {
        let v: Vec<f64> = samples
            .iter()
            .filter(|(t, _)| *t >= k * RAMP_SECS / 3.0 && *t < (k + 1.0) * RAMP_SECS / 3.0)
            .map(|x| x.1)
            .collect();
        mean(&v)
    };
    let (a, b, c) = (third(0.0), third(1.0), third(2.0));
    assert!(a < b && b < c, "thirds {a:.2} {b:.2} {c:.2}: {samples:?}");
    assert!(!notes(&mesh, "web-2").contains("slow start"));

    // Out-of-range durations are refused at the API, naming the field.
    let web = mesh.agg.pool_id("web");
    let (_, before) = mesh.agg.rest("GET", &format!("/api/v1/pools/{web}"), "");
    for bad in ["1ms", "2h"] {
        let mut body = before.clone();
        body["slowStart"] = bad.into();
        let body = body.to_string();
        let (status, reply) = mesh.agg.rest("PUT", &format!("/api/v1/pools/{web}"), &body);
        assert_eq!(status, 400, "{body}: {reply}");
        assert!(reply.to_string().contains("slowStart"), "{reply}");
    }
    let (_, after) = mesh.agg.rest("GET", &format!("/api/v1/pools/{web}"), "");
    assert_eq!(before, after, "nothing stored");
    assert_eq!(after["slowStart"], "13s 500ms", "{after}");
}
