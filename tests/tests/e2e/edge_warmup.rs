//! Seed 001 at the edge: a serving edge keeps its hot query keys; a new
//! edge started with `--warmup-from` fetches them, answers them before it
//! binds DNS, and answers its first queries from prebuilt replies. A peer
//! that is down, answers nothing or refuses the token means a cold start
//! within the timeout, never no start.

use std::net::{SocketAddr, UdpSocket};
use std::str::FromStr;
use std::time::Duration;

use gslb_e2e::catalog::{a_record, member, pool};
use gslb_e2e::dns::{http_get, http_request};
use gslb_e2e::{Aggregator, Edge, ZONE, temp_dir, wait_until};
use hickory_proto::op::{Message, Query};
use hickory_proto::rr::{Name, RecordType};

const TOKEN: &str = "warm-up-token-0123456789abcdef";
const NAMES: usize = 30;

/// One UDP query of `name`/`rtype` from source address `from`; true when
/// an answer with records came back.
fn ask(from: &str, server: SocketAddr, name: &str, rtype: RecordType) -> bool {
    let socket = UdpSocket::bind(format!("{from}:0")).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let mut q = Message::query();
    q.metadata.id = 7;
    q.add_query(Query::query(Name::from_str(name).unwrap(), rtype));
    socket.send_to(&q.to_vec().unwrap(), server).unwrap();
    let mut buf = [0u8; 1500];
    let Ok((n, _)) = socket.recv_from(&mut buf) else {
        return false;
    };
    Message::from_vec(&buf[..n]).is_ok_and(|m| !m.answers.is_empty())
}

/// `/internal/warmup` with `authorization` (none when empty): status, body.
fn warmup(edge: &Edge, authorization: &str) -> (u16, String) {
    let headers: Vec<(&str, &str)> = if authorization.is_empty() {
        vec![]
    } else {
        vec![("Authorization", authorization)]
    };
    let (code, _, body) = http_request(edge.status, "GET", "/internal/warmup", &headers, "");
    (code, body)
}

fn keys(edge: &Edge) -> Vec<String> {
    let (code, body) = warmup(edge, &format!("Bearer {TOKEN}"));
    assert_eq!(code, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    let keys = v["keys"].as_array().cloned().unwrap_or_default();
    keys.iter()
        .map(|k| {
            format!(
                "{} {}",
                k["name"].as_str().unwrap(),
                k["type"].as_str().unwrap()
            )
        })
        .collect()
}

fn warmed_edge(agg: &Aggregator, dir: &std::path::Path, name: &str, extra: &[&str]) -> Edge {
    let token = dir.join("token");
    let mut flags = vec!["--warmup-token-file", token.to_str().unwrap()];
    flags.extend_from_slice(extra);
    Edge::start(
        None,
        Some(&agg.url()),
        &dir.join(format!("cache-{name}")),
        "127.0.0.1:0",
        &flags,
    )
}

/// An aggregator serving `NAMES` pool-backed names, the token file in
/// `dir`, and the version applied.
fn serving(dir: &std::path::Path) -> (Aggregator, u64) {
    std::fs::write(dir.join("token"), format!("{TOKEN}\n")).unwrap();
    let agg = Aggregator::start(dir);
    let members = [
        member("m1", "127.0.5.1:80".parse().unwrap(), ""),
        member("m2", "127.0.5.2:80".parse().unwrap(), ""),
    ];
    let mut catalog = format!("{ZONE}{}", pool("p", None, "", &members));
    for i in 0..NAMES {
        catalog += &a_record(&format!("h{i}.example.test"), &["p"]);
    }
    let version = agg.apply(&catalog, dir);
    (agg, version)
}

/// Ask every name once from loopback; all answered.
fn ask_all(edge: &Edge) {
    let dns = edge.dns();
    for i in 0..NAMES {
        let name = format!("h{i}.example.test");
        assert!(ask("127.0.0.1", dns, &name, RecordType::A), "{name}");
    }
}

#[test]
fn a_new_edge_warms_from_a_serving_peer_and_starts_cold_when_it_cannot() {
    let dir = temp_dir("edge-warmup");
    std::fs::write(dir.join("wrong"), "some-other-token-0123456789\n").unwrap();
    let (agg, version) = serving(&dir);

    // A samples every query (so the test needs few) from many clients.
    let a = warmed_edge(&agg, &dir, "a", &["--hot-key-sample", "1"]);
    a.wait_version(version);
    let a_dns = a.dns();
    for i in 0..NAMES {
        let from = format!("127.0.0.{}", 10 + i);
        assert!(ask(
            &from,
            a_dns,
            &format!("h{i}.example.test"),
            RecordType::A
        ));
    }
    // NXDOMAIN is answered but never kept: random names cannot flood the keys.
    assert!(!ask("127.0.0.9", a_dns, "nope.example.test", RecordType::A));
    wait_until(10, "A to hold every name's key", || keys(&a).len() == NAMES);
    let (code, body) = warmup(&a, &format!("Bearer {TOKEN}"));
    assert_eq!(code, 200);
    assert!(!body.contains("127.0.0."), "a client address in {body}");
    assert!(!body.contains("nope"), "{body}");
    // Without the token, or with another: 401 and nothing else.
    for auth in ["", "Bearer some-other-token-0123456789", TOKEN] {
        let (code, body) = warmup(&a, auth);
        assert_eq!((code, body.as_str()), (401, ""), "{auth:?}");
    }

    // B warms from A before it binds.
    let peer = format!("http://{}", a.status);
    let b = warmed_edge(&agg, &dir, "b", &["--warmup-from", &peer]);
    let b_dns = b.dns();
    let report = b.status_config()["warmup"].clone();
    assert_eq!(report["cold"], false, "{report}");
    assert_eq!(report["source"], peer.as_str(), "{report}");
    assert_eq!(report["keysReplayed"], NAMES, "{report}");
    assert_eq!(http_get(b.status, "/readyz").0, 200);
    // Its first 1,000 queries are copies of prebuilt replies.
    for n in 0..1_000 {
        let name = format!("h{}.example.test", n % NAMES);
        assert!(ask("127.0.0.1", b_dns, &name, RecordType::A), "{name}");
    }
    let first = |how| b.metric_with("gslb_edge_first_minute_answers_total", how);
    assert_eq!(first("\"prebuilt\""), 1_000);
    assert_eq!(first("\"encoded\""), 0);
    // Seed 001's log line, beside ours.
    assert!(
        b.proc
            .stderr
            .contains(&format!("Warmup complete: {NAMES} payloads executed")),
        "the seed's line"
    );
    // Seed 001's path and names: `payloads` and `capturedAt`.
    let (code, _, seed) = http_request(
        a.status,
        "GET",
        "/internal/warmup/payloads",
        &[("Authorization", &format!("Bearer {TOKEN}"))],
        "",
    );
    assert_eq!(code, 200, "{seed}");
    let seed: serde_json::Value = serde_json::from_str(&seed).unwrap();
    assert_eq!(
        seed["payloads"].as_array().map(Vec::len),
        Some(NAMES),
        "{seed}"
    );
    assert!(seed["capturedAt"].as_u64().is_some(), "{seed}");
    // Issue 43 item 2: a peer that is down and one that never answers are
    // passed over within their shares of the timeout; the peer with keys
    // is taken.
    let silent_first = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let peers = format!(
        "http://{},http://127.0.0.1:1,{peer}",
        silent_first.local_addr().unwrap()
    );
    let c = warmed_edge(
        &agg,
        &dir,
        "c",
        &["--warmup-from", &peers, "--warmup-timeout", "3s"],
    );
    c.dns();
    let report = c.status_config()["warmup"].clone();
    assert_eq!(report["cold"], false, "{report}");
    assert_eq!(report["source"], peer.as_str(), "{report}");
    assert_eq!(report["keysReplayed"], NAMES, "{report}");
    drop(c);
    drop(silent_first);
    // Item 17: an edge keeping 5 keys takes 5 from a peer offering 30
    // (and reads at most 5 keys' worth of bytes).
    let d = warmed_edge(
        &agg,
        &dir,
        "d",
        &["--hot-keys", "5", "--warmup-from", &peer],
    );
    d.dns();
    let report = d.status_config()["warmup"].clone();
    assert_eq!(report["keysFetched"], 5, "{report}");
    assert_eq!(report["keysReplayed"], 5, "{report}");
    drop(d);
    // The replayed keys are B's own now: it can warm the next edge.
    let mut held = keys(&b);
    let mut want = keys(&a);
    held.sort();
    want.sort();
    assert_eq!(held, want);

    // A peer that is down, one that never answers, and a wrong token:
    // each a cold start with the reason, within the timeout.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let silent_url = format!("http://{}", silent.local_addr().unwrap());
    let wrong = dir.join("wrong");
    let cases: [(&str, Vec<&str>, &str); 3] = [
        (
            "down",
            vec!["--warmup-from", "http://127.0.0.1:1"],
            "connect",
        ),
        (
            "silent",
            vec!["--warmup-from", &silent_url, "--warmup-timeout", "1s"],
            "timeout",
        ),
        (
            "token",
            vec![
                "--warmup-from",
                &peer,
                "--warmup-token-file",
                wrong.to_str().unwrap(),
            ],
            "401",
        ),
    ];
    for (name, flags, why) in cases {
        let (flags, token) = if name == "token" {
            (flags, None)
        } else {
            (flags, Some(dir.join("token")))
        };
        let mut all: Vec<&str> = Vec::new();
        let token_text = token.as_ref().map(|t| t.to_str().unwrap().to_owned());
        if let Some(t) = &token_text {
            all.extend(["--warmup-token-file", t.as_str()]);
        }
        all.extend(flags);
        let edge = Edge::start(
            None,
            Some(&agg.url()),
            &dir.join(format!("cache-{name}")),
            "127.0.0.1:0",
            &all,
        );
        edge.dns();
        let report = edge.status_config()["warmup"].clone();
        assert_eq!(report["cold"], true, "{name}: {report}");
        let reason = report["reason"].as_str().unwrap_or("");
        assert!(reason.contains(why), "{name}: {report}");
        assert!(
            report["durationMs"].as_u64().unwrap() < 2_500,
            "{name}: {report}"
        );
        assert!(
            edge.proc.stderr.contains("warm-up: starting cold"),
            "{name}: no log line"
        );
        let seed_line = edge
            .proc
            .stderr
            .all()
            .into_iter()
            .find(|l| l.contains("Warmup failed - proceeding with cold start"))
            .unwrap_or_default();
        assert!(
            seed_line.contains("ERROR"),
            "{name}: the seed's line at ERROR: {seed_line:?}"
        );
        assert!(ask(
            "127.0.0.1",
            edge.dns(),
            "h1.example.test",
            RecordType::A
        ));
    }
    drop(silent);
}

#[test]
fn a_fleet_restarted_at_once_starts_cold_then_warms_and_one_restarted_at_a_time_stays_warm() {
    let dir = temp_dir("edge-fleet");
    let (agg, version) = serving(&dir);
    let status: Vec<String> = (0..3)
        .map(|_| format!("127.0.0.1:{}", gslb_e2e::secondary::free_port()))
        .collect();
    let token = dir.join("token");
    let start = |i: usize| {
        let peers: Vec<String> = (0..3)
            .filter(|&j| j != i)
            .map(|j| format!("http://{}", status[j]))
            .collect();
        let peers = peers.join(",");
        let flags = [
            "--listen-status",
            &status[i],
            "--warmup-token-file",
            token.to_str().unwrap(),
            "--hot-key-sample",
            "1",
            "--warmup-from",
            &peers,
        ];
        let cache = dir.join(format!("cache-{i}"));
        Edge::start(None, Some(&agg.url()), &cache, "127.0.0.1:0", &flags)
    };
    let report = |e: &Edge| e.status_config()["warmup"].clone();

    // All at once: no peer has keys to give, so every edge starts cold,
    // and serves.
    let mut fleet: Vec<Edge> = (0..3).map(start).collect();
    for e in &fleet {
        e.dns();
        e.wait_version(version);
        assert_eq!(report(e)["cold"], true, "{}", report(e));
    }
    // Traffic warms them.
    for e in &fleet {
        ask_all(e);
        wait_until(10, "the edge to hold every name's key", || {
            keys(e).len() == NAMES
        });
    }

    // One at a time: each restarted edge warms from the others and answers
    // its first queries from prebuilt replies.
    for (i, slot) in fleet.iter_mut().enumerate() {
        slot.stop();
        *slot = start(i);
        let e = &*slot;
        e.dns();
        let r = report(e);
        assert_eq!(
            (r["cold"].clone(), r["keysReplayed"].clone()),
            (false.into(), NAMES.into()),
            "{r}"
        );
        ask_all(e);
        assert_eq!(
            e.metric_with("gslb_edge_first_minute_answers_total", "\"encoded\""),
            0
        );
        assert_eq!(keys(e).len(), NAMES);
    }
}

/// `curl` of the TLS warm-up listener with `cert` (role:name), the token
/// and `?snapshot=1`; (exit success, HTTP code).
fn curl_snapshot(addr: SocketAddr, cert: &gslb_e2e::pki::CertFiles) -> (bool, String) {
    let out = std::process::Command::new("curl")
        .args([
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "--max-time",
            "10",
        ])
        .arg("--cacert")
        .arg(&cert.ca)
        .arg("--cert")
        .arg(&cert.cert)
        .arg("--key")
        .arg(&cert.key)
        .args(["-H", &format!("Authorization: Bearer {TOKEN}")])
        .arg(format!("https://{addr}/internal/warmup?snapshot=1"))
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn with_no_aggregator_and_no_cache_an_edge_seeds_its_snapshot_from_a_peer_over_mutual_tls() {
    let dir = temp_dir("edge-seed");
    let (mut agg, version) = serving(&dir);
    let grpc = agg.grpc.to_string();
    let token = dir.join("token");
    let token = token.to_str().unwrap();
    let cert_a = gslb_e2e::pki::cert("edge", "warm-seed-a", &["127.0.0.1"]);
    let cert_b = gslb_e2e::pki::cert("edge", "warm-seed-b", &["127.0.0.1"]);
    let agent = gslb_e2e::pki::cert("agent", "warm-seed-agent", &["127.0.0.1"]);
    let tls_a = cert_a.tls_flags();
    let mut flags_a: Vec<&str> = tls_a.iter().map(String::as_str).collect();
    flags_a.extend([
        "--warmup-token-file",
        token,
        "--listen-warmup",
        "127.0.0.1:0",
        "--hot-key-sample",
        "1",
    ]);
    let a = Edge::start(
        None,
        Some(&agg.url()),
        &dir.join("cache-a"),
        "127.0.0.1:0",
        &flags_a,
    );
    a.wait_version(version);
    ask_all(&a);
    wait_until(10, "A to hold every name's key", || keys(&a).len() == NAMES);
    let warm = a.proc.stdout.listening("warmup", 30);

    // The snapshot is the whole catalog: never on the plain listener, and
    // on the TLS one only to an edge certificate.
    let plain = http_request(
        a.status,
        "GET",
        "/internal/warmup?snapshot=1",
        &[("Authorization", &format!("Bearer {TOKEN}"))],
        "",
    );
    assert_eq!(plain.0, 403, "{}", plain.2);
    assert_eq!(curl_snapshot(warm, &cert_b), (true, "200".into()));
    let (ok, code) = curl_snapshot(warm, &agent);
    assert!(!ok && code != "200", "an agent certificate got {code}");

    // The aggregator goes away; B has no cache: it seeds from A.
    agg.stop();
    let peer = format!("https://{warm}");
    let tls_b = cert_b.tls_flags();
    let mut flags_b: Vec<&str> = tls_b.iter().map(String::as_str).collect();
    flags_b.extend([
        "--warmup-token-file",
        token,
        "--warmup-from",
        &peer,
        "--warmup-timeout",
        "2s",
    ]);
    let url = format!("http://{grpc}");
    let b = Edge::start(
        None,
        Some(&url),
        &dir.join("cache-b"),
        "127.0.0.1:0",
        &flags_b,
    );
    let b_dns = b.dns();
    let config = b.status_config();
    assert_eq!(config["version"], version, "{config}");
    assert_eq!(config["source"], format!("peer:{peer}"), "{config}");
    assert_eq!(config["warmup"]["keysReplayed"], NAMES, "{config}");
    for i in 0..NAMES {
        let name = format!("h{i}.example.test");
        let mut from_a = gslb_e2e::dns::short(None, a.dns(), &[&name, "A"]);
        let mut from_b = gslb_e2e::dns::short(None, b_dns, &[&name, "A"]);
        from_a.sort();
        from_b.sort();
        assert_eq!(from_a, from_b, "{name}");
    }

    // A stops here, holding this version in its cache.
    let mut a = a;
    a.stop();

    // The aggregator returns: B follows it, and caches what it applies.
    let mut agg = Aggregator::start_with(None, &dir, &grpc, &["--startup-window", "1s"]);
    wait_until(30, "B to follow the aggregator", || {
        let c = b.status_config();
        c["state"] == "synced" && c["source"] == url.as_str()
    });
    let (_, zones) = agg.rest("GET", "/api/v1/zones", "");
    let record = serde_json::json!({
        "zone": zones[0]["id"], "name": "extra.example.test", "type": "A", "ttl": 60,
        "data": { "static": [{ "a": "192.0.2.80" }] },
    });
    let (code, body) = agg.rest("POST", "/api/v1/records", &record.to_string());
    assert_eq!(code, 201, "{body}");
    wait_until(30, "B to apply the new record", || b.version() > version);
    let newer = b.version();
    wait_until(10, "B's cache to be written", || {
        dir.join("cache-b/snapshot.bin").exists()
    });

    // A peer whose snapshot is older than a cache is never taken: B,
    // restarted with the aggregator down, serves its own cache.
    let mut b = b;
    b.stop();
    agg.stop();
    let a = Edge::start(None, None, &dir.join("cache-a"), "127.0.0.1:0", &flags_a);
    assert!(a.version() < newer);
    let warm = a.proc.stdout.listening("warmup", 30);
    let peer = format!("https://{warm}");
    let mut flags_b: Vec<&str> = tls_b.iter().map(String::as_str).collect();
    flags_b.extend(["--warmup-token-file", token, "--warmup-from", &peer]);
    let b = Edge::start(
        None,
        Some(&url),
        &dir.join("cache-b"),
        "127.0.0.1:0",
        &flags_b,
    );
    b.dns();
    let config = b.status_config();
    assert_eq!(config["version"], newer, "{config}");
    assert!(
        config["source"].as_str().unwrap_or("").starts_with("cache"),
        "{config}"
    );
}
