//! Warm-up (seed 000): a new member with `warmupThreshold = 3` takes traffic
//! only after three passing cycles; disable + enable restarts the gate, a
//! weight change does not.

use gslb_e2e::{Backend, LocalMesh, ZONE, wait_until};

fn config(one: &Backend, two: Option<(&Backend, &str)>) -> String {
    let mut c = format!(
        r#"{ZONE}
[[check]]
name = "http"
probe = {{ type = "http", method = "GET", path = "/health" }}
interval = "1s"
timeout = "500ms"

[[pool]]
name = "web"
check = "http"
[[pool.member]]
name = "web-1"
address = "{}"
port = {}
"#,
        one.addr.ip(),
        one.addr.port()
    );
    if let Some((two, extra)) = two {
        c += &format!(
            "[[pool.member]]\nname = \"web-2\"\naddress = \"{}\"\nport = {}\nwarmupThreshold = 3\n{extra}\n",
            two.addr.ip(),
            two.addr.port()
        );
    }
    c += r#"
[[record]]
zone = "example.test"
name = "www.example.test"
type = "A"
dynamic = { steering = "roundrobin", pools = ["web"] }
"#;
    c
}

/// Watch `web-2` through its warm-up: the STATUS column must step through
/// `warming 1/3` and `warming 2/3` while DNS leaves it out, then DNS must
/// answer it once the gate opens.
fn watch_gate(mesh: &LocalMesh, two: &str) {
    let mut seen = Vec::new();
    wait_until(30, "web-2 to finish warming up", || {
        let status = mesh.agg.status_column("web", "web-2");
        let answered = mesh.answers("www.example.test").contains(&two.to_owned());
        if status.starts_with("warming") {
            assert!(!answered, "web-2 answered while {status}");
            if seen.last() != Some(&status) {
                seen.push(status);
            }
            false
        } else {
            assert_eq!(status, "healthy");
            true
        }
    });
    assert!(
        seen.iter().any(|s| s == "warming 1/3") && seen.iter().any(|s| s == "warming 2/3"),
        "warm-up steps seen: {seen:?}"
    );
    wait_until(10, "web-2 in the answer after warm-up", || {
        mesh.answers("www.example.test").contains(&two.to_owned())
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
}
