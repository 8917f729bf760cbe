//! Ephemeral members (seed 004): registered and kept by heartbeats, out of
//! DNS after `heartbeatTimeout` without one, deleted after `deleteTimeout`.

use std::time::{Duration, Instant};

use gslb_e2e::catalog::{a_record, member, pool};
use gslb_e2e::{LocalMesh, ZONE, wait_until};

fn config() -> String {
    let fixed = member("static-1", "127.0.3.1:80".parse().unwrap(), "");
    format!(
        "{ZONE}{}{}",
        pool("workers", None, "", &[fixed]),
        a_record("jobs.example.test", &["workers"])
    )
}

#[test]
fn heartbeats_keep_an_ephemeral_member_then_it_times_out_and_is_deleted() {
    let mesh = LocalMesh::start("ephemeral", &config(), &[]);
    let pool = mesh.agg.pool_id("workers").to_string();
    let file = mesh.dir.join("worker.json");
    std::fs::write(
        &file,
        r#"{"name": "worker-1", "address": "127.0.3.2", "port": 80,
            "kind": {"ephemeral": {"heartbeatTimeout": "2s", "deleteTimeout": "4s", "expire": true}}}"#,
    )
    .unwrap();
    let file = file.to_str().unwrap();
    let created = mesh
        .agg
        .ctl_json(&["ephemeral", "register", "--pool", &pool, "-f", file]);
    let id = created[0]["id"].as_u64().expect("member id").to_string();
    let both = ["127.0.3.1", "127.0.3.2"];
    wait_until(10, "the registered member answered", || {
        mesh.answers("jobs.example.test") == both
    });

    // Heartbeats every 250 ms for longer than the timeout keep it
    // answered. They run on their own thread, so a slow DNS check under
    // load never stretches the gap between two of them.
    let last = std::thread::scope(|scope| {
        let beats = scope.spawn(|| {
            let start = Instant::now();
            let mut last = Instant::now();
            while start.elapsed() < Duration::from_secs(3) {
                // Taken before the call: the aggregator receives it later,
                // so the lower bounds below hold without any tolerance.
                last = Instant::now();
                mesh.agg.ctl(&["ephemeral", "heartbeat", &id]);
                std::thread::sleep(Duration::from_millis(250));
            }
            last
        });
        while !beats.is_finished() {
            assert_eq!(mesh.answers("jobs.example.test"), both);
            std::thread::sleep(Duration::from_millis(200));
        }
        beats.join().expect("the heartbeat thread")
    });

    // Silence: out of DNS once the timeout passes, not before.
    wait_until(10, "the silent member out of DNS", || {
        mesh.answers("jobs.example.test") == ["127.0.3.1"]
    });
    let out_after = last.elapsed();
    assert!(
        out_after >= Duration::from_secs(2),
        "out after {out_after:?}"
    );
    assert_eq!(mesh.agg.health("workers", "worker-1"), "down");

    // Deleted after the delete timeout.
    wait_until(10, "the silent member deleted", || {
        let members = mesh.agg.ctl_json(&["members", "list", "--pool", &pool]);
        !members.to_string().contains("worker-1")
    });
    let deleted_after = last.elapsed();
    assert!(
        deleted_after >= Duration::from_secs(4),
        "deleted after {deleted_after:?}"
    );
    let (ok, _, err) = mesh.agg.try_ctl(&["ephemeral", "heartbeat", &id]);
    assert!(!ok, "a heartbeat for a deleted member must be refused");
    assert!(!err.is_empty());
}
