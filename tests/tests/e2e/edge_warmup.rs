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
    let version = agg.apply(&names(), dir);
    (agg, version)
}

/// The zone and `NAMES` pool-backed names `h0`, `h1`, ...
fn names() -> String {
    let members = [
        member("m1", "127.0.5.1:80".parse().unwrap(), ""),
        member("m2", "127.0.5.2:80".parse().unwrap(), ""),
    ];
    let mut catalog = format!("{ZONE}{}", pool("p", None, "", &members));
    for i in 0..NAMES {
        catalog += &a_record(&format!("h{i}.example.test"), &["p"]);
    }
    catalog
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
    // The clients' /24, never an address.
    for i in 0..NAMES {
        let client = format!("127.0.0.{}", 10 + i);
        assert!(!body.contains(&client), "{client} in {body}");
    }
    assert!(body.contains("\"subnet\":\"127.0.0.0/24\""), "{body}");
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
/// An edge's TLS flags, its warm-up token file, then `extra`.
fn peer_flags<'a>(tls: &'a [String], token: &'a str, extra: &[&'a str]) -> Vec<&'a str> {
    let mut flags: Vec<&str> = tls.iter().map(String::as_str).collect();
    flags.extend(["--warmup-token-file", token]);
    flags.extend_from_slice(extra);
    flags
}

/// Edge B with `cert`, following the aggregator at `grpc` (down for now,
/// so it seeds within 2 s from the TLS warm-up listener `warm`), with its
/// cache in `dir`, plus `extra`: B, the peer's URL and the aggregator's.
fn seeded_from_peer(
    dir: &std::path::Path,
    grpc: &str,
    warm: SocketAddr,
    cert: &gslb_e2e::pki::CertFiles,
    token: &str,
    extra: &[&str],
) -> (Edge, String, String) {
    let peer = format!("https://{warm}");
    let tls = cert.tls_flags();
    let mut flags = peer_flags(
        &tls,
        token,
        &["--warmup-from", &peer, "--warmup-timeout", "2s"],
    );
    flags.extend_from_slice(extra);
    let url = format!("http://{grpc}");
    let b = Edge::start(
        None,
        Some(&url),
        &dir.join("cache-b"),
        "127.0.0.1:0",
        &flags,
    );
    (b, peer, url)
}

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
    let flags_a = peer_flags(
        &tls_a,
        token,
        &["--listen-warmup", "127.0.0.1:0", "--hot-key-sample", "1"],
    );
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
    let (b, peer, url) = seeded_from_peer(&dir, &grpc, warm, &cert_b, token, &[]);
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
    wait_until(30, "A to load its cache", || a.version() != 0);
    assert!(a.version() < newer);
    let warm = a.proc.stdout.listening("warmup", 30);
    let peer = format!("https://{warm}");
    let tls_b = cert_b.tls_flags();
    let flags_b = peer_flags(&tls_b, token, &["--warmup-from", &peer]);
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

/// A static A record `s.example.test` at `ip` on top of the served names.
fn with_static(ip: &str) -> String {
    names()
        + &format!(
            "\n[[record]]\nzone = \"example.test\"\nname = \"s.example.test\"\ntype = \"A\"\nstatic = [{{ a = \"{ip}\" }}]\n"
        )
}

/// Issue 43 item 16: an edge seeded from a lagging peer, whose workers were
/// warmed with that peer's replies, answers the aggregator's newer record
/// over UDP (with and without EDNS, in every worker) as soon as it reports
/// the newer version: a prebuilt reply never outlives its snapshot.
#[test]
fn after_a_lagging_peer_seeds_an_edge_no_udp_answer_outlives_the_peers_snapshot() {
    let dir = temp_dir("edge-lagging-peer");
    std::fs::write(dir.join("token"), format!("{TOKEN}\n")).unwrap();
    let mut agg = Aggregator::start(&dir);
    let old = agg.apply(&with_static("192.0.2.1"), &dir);
    let grpc = agg.grpc.to_string();
    let token = dir.join("token");
    let token = token.to_str().unwrap();
    let cert_a = gslb_e2e::pki::cert("edge", "lag-a", &["127.0.0.1"]);
    let cert_b = gslb_e2e::pki::cert("edge", "lag-b", &["127.0.0.1"]);
    let tls_a = cert_a.tls_flags();
    let flags_a = peer_flags(
        &tls_a,
        token,
        &["--listen-warmup", "127.0.0.1:0", "--hot-key-sample", "1"],
    );
    let mut a = Edge::start(
        None,
        Some(&agg.url()),
        &dir.join("cache-a"),
        "127.0.0.1:0",
        &flags_a,
    );
    a.wait_version(old);
    a.stop();

    // The record changes while A is away; A comes back without an
    // aggregator: it lags, serving the old record from its cache.
    let newer = agg.apply(&with_static("192.0.2.2"), &dir);
    assert!(newer > old);
    let a = Edge::start(None, None, &dir.join("cache-a"), "127.0.0.1:0", &flags_a);
    // The status listener comes up before the cache is read: wait for it.
    wait_until(30, "A to load its cache", || a.version() != 0);
    assert_eq!(a.version(), old);
    let old_ip: std::net::Ipv4Addr = "192.0.2.1".parse().unwrap();
    let new_ip: std::net::Ipv4Addr = "192.0.2.2".parse().unwrap();
    let timeout = Duration::from_secs(2);
    for _ in 0..4 {
        let got = gslb_e2e::dns::query_a(a.dns(), "s.example.test", timeout).unwrap();
        assert_eq!(got, [old_ip]);
        gslb_e2e::dns::short(None, a.dns(), &["s.example.test", "A"]);
    }
    ask_all(&a);
    wait_until(10, "A to hold the static name's keys", || {
        keys(&a)
            .iter()
            .filter(|k| k.as_str() == "s.example.test. A")
            .count()
            >= 1
    });
    let warm = a.proc.stdout.listening("warmup", 30);

    // B starts while the aggregator is away: it seeds from A and warms
    // every worker with A's replies.
    agg.stop();
    let (b, peer, _) = seeded_from_peer(&dir, &grpc, warm, &cert_b, token, &["--udp-workers", "2"]);
    let b_dns = b.dns();
    let config = b.status_config();
    assert_eq!(config["version"], old, "{config}");
    assert_eq!(config["source"], format!("peer:{peer}"), "{config}");
    assert!(
        config["warmup"]["keysReplayed"].as_u64() > Some(NAMES as u64),
        "{config}"
    );
    assert_eq!(
        gslb_e2e::dns::query_a(b_dns, "s.example.test", timeout).unwrap(),
        [old_ip]
    );

    // The aggregator returns with the newer record. From the moment B
    // reports it, every answer is the newer one: UDP without EDNS (the
    // peer's warmed replies), UDP with EDNS, and TCP.
    let _agg = Aggregator::start_with(None, &dir, &grpc, &["--startup-window", "1s"]);
    wait_until(30, "B to follow the aggregator", || {
        let c = b.status_config();
        c["state"] == "synced" && c["version"] == newer
    });
    for round in 0..40 {
        let udp = gslb_e2e::dns::query_a(b_dns, "s.example.test", timeout).unwrap();
        assert_eq!(udp, [new_ip], "UDP without EDNS, round {round}");
        let edns = gslb_e2e::dns::short(None, b_dns, &["s.example.test", "A"]);
        assert_eq!(edns, ["192.0.2.2"], "UDP with EDNS, round {round}");
    }
    let tcp = gslb_e2e::dns::short(None, b_dns, &["+tcp", "s.example.test", "A"]);
    assert_eq!(tcp, ["192.0.2.2"]);
}

/// The A addresses of one UDP query of `name` from source address `from`.
fn addresses_from(from: &str, server: SocketAddr, name: &str) -> Vec<String> {
    let socket = UdpSocket::bind(format!("{from}:0")).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let mut q = Message::query();
    q.metadata.id = 11;
    q.add_query(Query::query(Name::from_str(name).unwrap(), RecordType::A));
    socket.send_to(&q.to_vec().unwrap(), server).unwrap();
    let mut buf = [0u8; 1500];
    let (n, _) = socket.recv_from(&mut buf).unwrap();
    let reply = Message::from_vec(&buf[..n]).unwrap();
    let mut got: Vec<String> = (reply.answers.iter()).map(|r| r.data.to_string()).collect();
    got.sort();
    got
}

/// Issue 43 item 2: hot keys carry the client's subnet and, for an answer
/// kept per geo branch, one key per branch; TCP answers are sampled too;
/// a new edge replays each key from its subnet, so its first geo answers
/// (every branch) are copies of prebuilt replies, each the client's own.
#[test]
fn a_geo_workload_is_answered_from_prebuilt_replies_after_a_peer_warm_up() {
    let dir = temp_dir("edge-geo-warm");
    std::fs::write(dir.join("token"), format!("{TOKEN}\n")).unwrap();
    let geo = dir.join("regions.txt");
    std::fs::write(&geo, "127.0.1.0/24 eu\n127.0.2.0/24 us\n").unwrap();
    let geo = geo.to_str().unwrap();
    let agg = Aggregator::start(&dir);
    let catalog = format!(
        "{ZONE}{}{}{}{}\n[[record]]\nzone = \"example.test\"\nname = \"geo.example.test\"\ntype = \"A\"\n\
         dynamic = {{ pools = [\"rest\"], geo = [{{ regions = [\"eu\"], pools = [\"eu\"] }}, \
         {{ regions = [\"us\"], pools = [\"us\"] }}] }}\n",
        pool(
            "eu",
            None,
            "",
            &[member("eu-1", "127.0.5.1:80".parse().unwrap(), "")]
        ),
        pool(
            "us",
            None,
            "",
            &[member("us-1", "127.0.5.2:80".parse().unwrap(), "")]
        ),
        pool(
            "rest",
            None,
            "",
            &[member("rest-1", "127.0.5.3:80".parse().unwrap(), "")]
        ),
        a_record("tcp.example.test", &["rest"]),
    );
    let version = agg.apply(&catalog, &dir);
    // Sampling every answered query is the default (seed 001).
    let a = warmed_edge(&agg, &dir, "a", &["--geo-file", geo]);
    a.wait_version(version);
    let clients = [
        ("127.0.1.1", "127.0.5.1"),
        ("127.0.2.1", "127.0.5.2"),
        ("127.0.0.1", "127.0.5.3"),
    ];
    for (from, want) in clients {
        assert_eq!(addresses_from(from, a.dns(), "geo.example.test"), [want]);
    }
    let tcp = gslb_e2e::dns::short(None, a.dns(), &["+tcp", "tcp.example.test", "A"]);
    assert_eq!(tcp, ["127.0.5.3"]);
    wait_until(10, "A to hold a key per branch and the TCP one", || {
        let keys = keys(&a);
        let geo = keys
            .iter()
            .filter(|k| k.as_str() == "geo.example.test. A")
            .count();
        geo == 3 && keys.iter().any(|k| k == "tcp.example.test. A")
    });
    let (_, body) = warmup(&a, &format!("Bearer {TOKEN}"));
    for subnet in ["127.0.1.0/24", "127.0.2.0/24", "127.0.0.0/24"] {
        assert!(body.contains(&format!("\"subnet\":\"{subnet}\"")), "{body}");
    }

    let peer = format!("http://{}", a.status);
    let b = warmed_edge(
        &agg,
        &dir,
        "b",
        &["--geo-file", geo, "--warmup-from", &peer],
    );
    b.wait_version(version);
    let b_dns = b.dns();
    assert_eq!(b.status_config()["warmup"]["keysReplayed"], 4);
    // Other clients of each branch than the ones A saw: their answers are
    // their branch's, copied.
    let clients = [
        ("127.0.1.9", "127.0.5.1"),
        ("127.0.2.9", "127.0.5.2"),
        ("127.0.0.9", "127.0.5.3"),
    ];
    for (from, want) in clients {
        assert_eq!(addresses_from(from, b_dns, "geo.example.test"), [want]);
    }
    let first = |how| b.metric_with("gslb_edge_first_minute_answers_total", how);
    assert_eq!(first("\"prebuilt\""), 3);
    assert_eq!(first("\"encoded\""), 0);
}
