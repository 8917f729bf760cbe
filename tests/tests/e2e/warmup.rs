//! Warm-up (seed 000): a new member with `warmupThreshold = 3` takes traffic
//! only after three passing cycles; disable + enable restarts the gate, a
//! weight change does not.

use gslb_e2e::catalog::{a_record, http_check, member, pool};
use std::time::Duration;

use gslb_e2e::dns::query_a;
use gslb_e2e::{Backend, LocalMesh, ZONE, wait_until};

fn config(one: &Backend, two: Option<(&Backend, &str)>) -> String {
    let mut members = vec![member("web-1", one.addr, "")];
    if let Some((two, extra)) = two {
        members.push(member(
            "web-2",
            two.addr,
            &format!("warmupThreshold = 3\n{extra}"),
        ));
    }
    format!(
        "{ZONE}{}{}{}",
        // Cycles of 3 s: each warm-up step lasts long enough to be seen by
        // a status poll on a loaded machine (with 1 s cycles a CI run once
        // polled past all three steps).
        http_check("http", "3s", "1s"),
        pool("web", Some("http"), "", &members),
        a_record("www.example.test", &["web"])
    )
}

/// Watch `web-2` through its warm-up: its status must step through
/// `warming 1/3` and `warming 2/3` while DNS leaves it out, then DNS must
/// answer it once the gate opens. Each poll is one in-process DNS query and
/// one REST read (no process started), so a step of a 3 s cycle is seen
/// even on a loaded machine.
fn watch_gate(mesh: &LocalMesh, two: &str) {
    let id = mesh.agg.member("web", "web-2")["id"].as_u64().unwrap();
    let path = format!("/api/v1/members/{id}/status");
    let two: std::net::Ipv4Addr = two.parse().unwrap();
    let mut seen = Vec::new();
    wait_until(30, "web-2 to finish warming up", || {
        // DNS first: the gate is a latch, so an answer seen before a
        // status that still says warming is a real violation, not a race.
        let answered = query_a(mesh.dns, "www.example.test", Duration::from_secs(2))
            .is_ok_and(|a| a.contains(&two));
        let (code, status) = mesh.agg.rest("GET", &path, "");
        assert_eq!(code, 200, "{status}");
        if status["warming"] == true {
            let step = format!(
                "warming {}/{}",
                status["warmupPasses"], status["warmupThreshold"]
            );
            assert!(!answered, "web-2 answered while {step}");
            if seen.last() != Some(&step) {
                seen.push(step);
            }
            false
        } else {
            assert_eq!(status["health"], "up", "{status}");
            true
        }
    });
    assert!(
        seen.iter().any(|s| s == "warming 1/3") && seen.iter().any(|s| s == "warming 2/3"),
        "warm-up steps seen: {seen:?}"
    );
    wait_until(10, "web-2 in the answer after warm-up", || {
        query_a(mesh.dns, "www.example.test", Duration::from_secs(2))
            .is_ok_and(|a| a.contains(&two))
    });
}

#[test]
fn a_warming_member_is_answered_only_after_three_passing_cycles() {
    let one = Backend::start(None, "127.0.1.1:0");
    let two = Backend::start(None, "127.0.1.2:0");
    let first = two.addr.ip().to_string();
    let mesh = LocalMesh::start("warmup", &config(&one, None), &[("fra1", "eu")]);
    wait_until(20, "web-1 answered", || {
        mesh.answers("www.example.test") == ["127.0.1.1"]
    });

    // Added with a threshold: warming from creation.
    mesh.apply(&config(&one, Some((&two, ""))));
    watch_gate(&mesh, &first);

    // A weight change keeps the latch: still answered, not warming.
    mesh.apply(&config(&one, Some((&two, "weight = 50"))));
    let m = mesh.agg.member("web", "web-2");
    assert_eq!(m["weight"], 50);
    assert_eq!(m["status"]["warming"], false, "{m}");
    assert!(mesh.answers("www.example.test").contains(&first));

    // Disabled: out of DNS. Enabled again: the gate restarts from 0.
    mesh.apply(&config(&one, Some((&two, "weight = 50\nenabled = false"))));
    assert_eq!(mesh.answers("www.example.test"), ["127.0.1.1"]);
    mesh.apply(&config(&one, Some((&two, "weight = 50"))));
    let m = mesh.agg.member("web", "web-2");
    assert_eq!(m["status"]["warming"], true, "{m}");
    watch_gate(&mesh, &first);
    // The gate's openings changed facts only: the edge refreshed its
    // table (re-deciding www alone) rather than compiling it anew.
    let refreshes = mesh
        .edge
        .metric_with("gslb_edge_snapshot_applies_total", "how=\"refresh\"");
    assert!(refreshes > 0, "no health-only refresh at the edge");
}
