//! Backups and fail modes (seed 002): primaries down -> backups answer;
//! everything down -> fail open answers every candidate, fail closed answers
//! NODATA; recovery hands traffic back to the backup, then to the primaries.

use gslb_e2e::catalog::{a_record, member, pool, tcp_check};
use gslb_e2e::dns::{dig, rcode};
use gslb_e2e::{Backend, LocalMesh, ZONE, wait_until};

fn config(p1: &Backend, p2: &Backend, b: &Backend, strict: &Backend) -> String {
    let web = [
        member("p1", p1.addr, ""),
        member("p2", p2.addr, ""),
        member("b1", b.addr, "backup = true"),
    ];
    format!(
        "{ZONE}{}{}{}{}{}",
        tcp_check("tcp", "1s", "500ms"),
        pool("web", Some("tcp"), "", &web),
        pool(
            "strict",
            Some("tcp"),
            "failMode = \"closed\"",
            &[member("s1", strict.addr, "")]
        ),
        a_record("www.example.test", &["web"]),
        a_record("strict.example.test", &["strict"]),
    )
}

/// Wait until `www` answers exactly `want`.
fn expect(mesh: &LocalMesh, want: &[&str], what: &str) {
    let mut last = Vec::new();
    wait_until(20, what, || {
        last = mesh.answers("www.example.test");
        last == want
    });
}

/// The fail-open flag `gslbctl status` reports for `pool`.
fn fail_open(mesh: &LocalMesh, pool: &str) -> bool {
    let status = mesh.agg.ctl_json(&["status"]);
    status
        .as_array()
        .into_iter()
        .flatten()
        .find(|p| p["pool"] == pool)
        .and_then(|p| p["failOpen"].as_bool())
        .unwrap_or_else(|| panic!("no pool {pool} in {status}"))
}

#[test]
fn backups_take_over_then_fail_modes_then_recovery_in_order() {
    let mut p1 = Backend::start(None, "127.0.2.1:0");
    let mut p2 = Backend::start(None, "127.0.2.2:0");
    let mut b = Backend::start(None, "127.0.2.3:0");
    let mut strict = Backend::start(None, "127.0.2.4:0");
    let mesh = LocalMesh::start(
        "backup",
        &config(&p1, &p2, &b, &strict),
        &[("fra1", "eu"), ("iad1", "us")],
    );
    expect(&mesh, &["127.0.2.1", "127.0.2.2"], "both primaries");
    assert!(!fail_open(&mesh, "web"));

    p1.kill();
    expect(&mesh, &["127.0.2.2"], "p2 alone while p1 is down");
    p2.kill();
    expect(
        &mesh,
        &["127.0.2.3"],
        "the backup once both primaries are down",
    );
    assert!(!fail_open(&mesh, "web"));

    // Everything down: fail open answers every candidate, backup included.
    b.kill();
    expect(
        &mesh,
        &["127.0.2.1", "127.0.2.2", "127.0.2.3"],
        "fail open with every member down",
    );
    assert!(fail_open(&mesh, "web"));
    // Fail closed: NODATA (NOERROR, no answer).
    strict.kill();
    wait_until(20, "strict to answer NODATA", || {
        let reply = dig(None, mesh.dns, &["strict.example.test", "A"]);
        rcode(&reply) == "NOERROR" && reply.contains("ANSWER: 0")
    });

    // Recovery: the backup first (primaries still down), then a primary
    // takes over from it, then both primaries.
    b.restart();
    expect(
        &mesh,
        &["127.0.2.3"],
        "the backup back, primaries still down",
    );
    assert!(!fail_open(&mesh, "web"));
    p1.restart();
    expect(&mesh, &["127.0.2.1"], "p1 taking over from the backup");
    p2.restart();
    expect(&mesh, &["127.0.2.1", "127.0.2.2"], "both primaries again");
    strict.restart();
    wait_until(20, "strict answered again", || {
        mesh.answers("strict.example.test") == ["127.0.2.4"]
    });
}
