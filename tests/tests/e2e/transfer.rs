//! Outbound zone transfers (issue 19): Knot and NSD run as secondaries of
//! the edge on loopback. They take the zone by AXFR once its transfer
//! settings name them, then, after a health flip, by IXFR within 1 s of
//! the edge's NOTIFY; after each transfer they answer as the edge does. A
//! request with a wrong key, without a key, with a key the zone does not
//! allow, or from an address not on the list is refused.

use std::net::SocketAddr;
use std::process::Command;
use std::time::{Duration, Instant};

use gslb_e2e::catalog::{a_record, member, pool, tcp_check};
use gslb_e2e::dns::short;
use gslb_e2e::secondary::{Kind, Primary, Secondary};
use gslb_e2e::{Backend, LocalMesh, ZONE, wait_until};

const KEY: &str = "xfr.example.test";

const STATIC: &str = r#"
[[record]]
zone = "example.test"
name = "ns1.example.test"
type = "A"
static = [{ a = "192.0.2.53" }]

[[record]]
zone = "example.test"
name = "txt.example.test"
type = "TXT"
static = [{ txt = ["v=spf1 -all"] }]

[[record]]
zone = "example.test"
name = "alias.example.test"
type = "CNAME"
static = [{ cname = "www.example.test" }]
"#;

/// The questions compared between the edge and a secondary.
const QUESTIONS: [(&str, &str); 6] = [
    ("example.test", "SOA"),
    ("example.test", "NS"),
    ("www.example.test", "A"),
    ("ns1.example.test", "A"),
    ("txt.example.test", "TXT"),
    ("alias.example.test", "CNAME"),
];

fn transfer_settings(notify: &[SocketAddr]) -> String {
    let targets: Vec<String> = notify
        .iter()
        .map(|a| format!("{{ address = \"{a}\", key = \"{KEY}\" }}"))
        .collect();
    format!(
        "[zone.transfer]\nallow = [{{ address = \"127.0.0.1\", key = \"{KEY}\" }}]\nnotify = [{}]\n",
        targets.join(", ")
    )
}

fn answers(server: SocketAddr) -> Vec<Vec<String>> {
    QUESTIONS
        .iter()
        .map(|(name, rtype)| short(None, server, &[name, rtype]))
        .collect()
}

/// kdig AXFR of example.test at `edge` from `source`, signed with `key`
/// (`name:secret`) when given; its output.
fn kdig_axfr(edge: SocketAddr, source: &str, key: Option<&str>) -> String {
    let mut cmd = Command::new("kdig");
    cmd.arg(format!("@{}", edge.ip())).args([
        "-p",
        &edge.port().to_string(),
        "-b",
        source,
        "+tcp",
        "+time=3",
        "+retry=0",
    ]);
    if let Some(key) = key {
        cmd.args(["-y", &format!("hmac-sha256:{key}")]);
    }
    let out = cmd
        .args(["AXFR", "example.test."])
        .output()
        .unwrap_or_else(|e| panic!("kdig not runnable ({e}): see scripts/packages.sh"));
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// The zone as a sorted list of records from an AXFR of `server` (the
/// closing SOA and the TSIG record left out).
fn zone_of(server: SocketAddr, key: Option<&str>) -> Vec<String> {
    let out = kdig_axfr(server, "127.0.0.1", key);
    let mut records: Vec<String> = out
        .lines()
        .filter(|l| !l.starts_with(';') && !l.trim().is_empty() && !l.contains("\tTSIG\t"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect();
    records.sort();
    records.dedup();
    records
}

#[test]
fn knot_and_nsd_follow_the_edge_by_axfr_then_ixfr_and_strangers_are_refused() {
    let w1 = Backend::start(None, "127.0.2.61:0");
    let mut w2 = Backend::start(None, "127.0.2.62:0");
    let catalog = format!(
        "{ZONE}{}{}{}{STATIC}",
        tcp_check("tcp", "500ms", "300ms"),
        pool(
            "web",
            Some("tcp"),
            "",
            &[member("w1", w1.addr, ""), member("w2", w2.addr, "")]
        ),
        a_record("www.example.test", &["web"]),
    );
    let mesh = LocalMesh::start("transfer", &catalog, &[("fra1", "eu")]);
    wait_until(30, "both members healthy", || {
        mesh.agg.health("web", "w1") == "up" && mesh.agg.health("web", "w2") == "up"
    });

    // The key: its secret shown by create, and by nothing after.
    let created = mesh.agg.ctl_json(&["tsig", "create", KEY]);
    let secret = created["secret"].as_str().unwrap().to_owned();
    assert_eq!(secret.len(), 44, "32 bytes in base64: {created}");
    let listed = mesh.agg.ctl(&["-o", "json", "tsig", "list"]);
    assert!(
        listed.contains(KEY) && !listed.contains(&secret),
        "{listed}"
    );
    let (_, rest) = mesh.agg.rest("GET", "/api/v1/tsig-keys", "");
    assert!(!rest.to_string().contains(&secret), "{rest}");
    let other = mesh.agg.ctl_json(&["tsig", "create", "other.example.test"]);
    let other_secret = other["secret"].as_str().unwrap().to_owned();

    // The secondaries, then the transfer settings that name them: the
    // NOTIFY of that change starts their first transfer.
    let primary = Primary {
        apex: "example.test",
        addr: mesh.dns,
        key: (KEY, &secret),
    };
    let knot = Secondary::start(Kind::Knot, &mesh.dir.join("knot"), &primary);
    let nsd = Secondary::start(Kind::Nsd, &mesh.dir.join("nsd"), &primary);
    let settings = transfer_settings(&[knot.addr, nsd.addr]);
    let with_transfer = catalog.replacen(
        "negativeTtl = 5\n",
        &format!("negativeTtl = 5\n{settings}"),
        1,
    );
    mesh.apply(&with_transfer);
    for s in [&knot, &nsd] {
        wait_until(20, &format!("{:?} to match the edge", s.kind), || {
            answers(s.addr) == answers(mesh.dns)
        });
    }
    let www = short(None, mesh.dns, &["www.example.test", "A"]);
    assert_eq!(www.len(), 2, "both members answered: {www:?}");
    let key = format!("{KEY}:{secret}");
    for s in [&knot, &nsd] {
        // Compared whole: every record, the SOA's serial included.
        wait_until(
            10,
            &format!("{:?} to hold the zone as we send it", s.kind),
            || {
                let ours = zone_of(mesh.dns, Some(&key));
                ours.len() >= 7 && zone_of(s.addr, None) == ours
            },
        );
    }
    assert!(
        mesh.edge.metric("gslb_edge_xfr_axfr_total") >= 2,
        "the first transfers were AXFR"
    );
    let ixfr_before = mesh.edge.metric("gslb_edge_xfr_ixfr_total");

    // A flip: w2 fails; the secondaries follow by IXFR within 1 s of the
    // edge serving it (the edge sends NOTIFY as it applies the snapshot).
    w2.kill();
    let mut flipped = None;
    wait_until(30, "the edge to drop w2", || {
        let now = short(None, mesh.dns, &["www.example.test", "A"]);
        flipped = Some(Instant::now());
        now == [w1.addr.ip().to_string()]
    });
    let flipped = flipped.unwrap();
    // Both polled in one loop: each one's time is its own.
    let secondaries = [&knot, &nsd];
    let mut followed: [Option<Duration>; 2] = [None, None];
    wait_until(10, "both secondaries to follow the flip", || {
        for (s, took) in secondaries.iter().zip(followed.iter_mut()) {
            if took.is_none()
                && short(None, s.addr, &["www.example.test", "A"]) == [w1.addr.ip().to_string()]
            {
                *took = Some(flipped.elapsed());
            }
        }
        followed.iter().all(Option::is_some)
    });
    for (s, took) in secondaries.iter().zip(followed) {
        let took = took.unwrap();
        assert!(
            took < Duration::from_secs(1),
            "{:?} took {took:?} after the NOTIFY",
            s.kind
        );
    }
    for s in [&knot, &nsd] {
        wait_until(
            10,
            &format!("{:?} to match the edge after the flip", s.kind),
            || answers(s.addr) == answers(mesh.dns),
        );
    }
    assert!(
        mesh.edge.metric("gslb_edge_xfr_ixfr_total") >= ixfr_before + 2,
        "the flip went by IXFR"
    );
    for s in [&knot, &nsd] {
        wait_until(
            10,
            &format!("{:?} to hold the zone after the flip", s.kind),
            || zone_of(s.addr, None) == zone_of(mesh.dns, Some(&key)),
        );
    }
    assert!(knot.log_text().contains("IXFR"), "{}", knot.log_text());

    // Strangers: each refused, nothing sent.
    let refused = |out: &str| out.contains("REFUSED") || out.contains("NOTAUTH");
    let ok = kdig_axfr(mesh.dns, "127.0.0.1", Some(&format!("{KEY}:{secret}")));
    assert!(ok.contains("txt.example.test.") && !refused(&ok), "{ok}");
    let unlisted = kdig_axfr(mesh.dns, "127.0.0.9", Some(&format!("{KEY}:{secret}")));
    assert!(
        unlisted.contains("REFUSED"),
        "address not on the list: {unlisted}"
    );
    let unsigned = kdig_axfr(mesh.dns, "127.0.0.1", None);
    assert!(unsigned.contains("REFUSED"), "unsigned: {unsigned}");
    let wrong = kdig_axfr(
        mesh.dns,
        "127.0.0.1",
        Some(&format!("{KEY}:{}", other_secret)),
    );
    assert!(
        wrong.contains("NOTAUTH") || wrong.contains("BADSIG"),
        "wrong secret: {wrong}"
    );
    let not_allowed = kdig_axfr(
        mesh.dns,
        "127.0.0.1",
        Some(&format!("other.example.test:{other_secret}")),
    );
    assert!(
        not_allowed.contains("NOTAUTH") || not_allowed.contains("BADKEY"),
        "a key the zone does not allow: {not_allowed}"
    );
    for leaked in [&unlisted, &unsigned, &wrong, &not_allowed] {
        assert!(!leaked.contains("txt.example.test.\t"), "{leaked}");
    }
    assert!(mesh.edge.metric("gslb_edge_xfr_refused_total") >= 4);

    // IXFR over UDP: the SOA alone (the secondary then asks over TCP).
    let udp = Command::new("kdig")
        .arg(format!("@{}", mesh.dns.ip()))
        .args([
            "-p",
            &mesh.dns.port().to_string(),
            "+notcp",
            "+time=3",
            "+retry=0",
        ])
        .args([
            "-y",
            &format!("hmac-sha256:{KEY}:{secret}"),
            "IXFR=1",
            "example.test.",
        ])
        .output()
        .unwrap();
    let udp = String::from_utf8_lossy(&udp.stdout);
    assert!(
        udp.contains("NOERROR") && udp.matches("\tSOA\t").count() == 1,
        "{udp}"
    );
    assert!(!udp.contains("txt.example.test."), "{udp}");

    // The key cannot go while the zone names it.
    let (ok, _, err) = mesh.agg.try_ctl(&["tsig", "delete", KEY]);
    assert!(!ok && err.contains("transfers with it"), "{err}");
}
