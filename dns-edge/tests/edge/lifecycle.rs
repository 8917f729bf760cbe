//! Seed 003's lifecycle: binding only after a snapshot, from the cache when
//! the aggregator is down, readiness through an aggregator restart, and the
//! drain.

use std::time::{Duration, Instant};

use crate::support::*;

fn config(edge: &Edge) -> serde_json::Value {
    serde_json::from_str(&edge.get("/status/config").1).unwrap()
}

#[test]
fn with_no_cache_and_no_aggregator_dns_is_never_bound() {
    let dir = temp_dir("never");
    let cache = dir.join("cache");
    // Port 9 on loopback: nothing listens, connections are refused.
    let edge = Edge::start(&[
        "--aggregator",
        "http://127.0.0.1:9",
        "--cache-dir",
        cache.to_str().unwrap(),
    ]);
    wait_until(10, "a failed feed attempt", || {
        config(&edge)["lastFailure"].is_object()
    });
    assert_eq!(edge.get("/livez").0, 200);
    assert_eq!(edge.get("/readyz").0, 503);
    assert_eq!(edge.get("/status/ready").0, 503);
    let c = config(&edge);
    assert_eq!(c["state"], "never_loaded", "{c}");
    assert_eq!(c["version"], 0);
    assert!(!edge.proc.stdout.contains("dns listening"));
    assert_eq!(
        edge.proc
            .stderr
            .count("waiting for the first snapshot before binding the DNS listeners"),
        1
    );
}

#[test]
fn a_corrupt_cache_is_ignored_with_a_warning() {
    let dir = temp_dir("corrupt");
    let cache = dir.join("cache");
    std::fs::create_dir_all(&cache).unwrap();
    std::fs::write(
        cache.join("snapshot.bin"),
        b"GSLBSNP1 this is not a snapshot",
    )
    .unwrap();
    let edge = Edge::start(&[
        "--aggregator",
        "http://127.0.0.1:9",
        "--cache-dir",
        cache.to_str().unwrap(),
    ]);
    wait_until(10, "the cache warning", || {
        edge.proc.stderr.contains("snapshot cache ignored")
    });
    assert_eq!(config(&edge)["state"], "never_loaded");
    assert_eq!(edge.get("/status/ready").0, 503);
}

#[test]
fn an_edge_restarted_with_the_aggregator_down_binds_from_its_cache() {
    let (dir, agg, edge, version) = mesh("cache", &[]);
    // The cache is written (and synced) just after the snapshot is applied:
    // under load that can lag the version /status/config reports, and a
    // kill in between leaves no cache to restart from.
    let cached = || {
        gslb_edge::cache::load(&dir.join("cache"))
            .ok()
            .flatten()
            .is_some_and(|s| s.version == version)
    };
    wait_until(30, "the snapshot cache to be written", cached);
    drop(edge);
    let grpc = agg.url();
    drop(agg);
    let cache = dir.join("cache");
    let edge = Edge::start(&[
        "--aggregator",
        &grpc,
        "--cache-dir",
        cache.to_str().unwrap(),
    ]);
    let dns = edge.dns();
    assert_eq!(
        short(dns, &["www.example.test"]),
        ["192.0.2.1", "192.0.2.2"]
    );
    let c = config(&edge);
    assert_eq!(c["version"], version);
    assert_eq!(c["state"], "stale", "{c}");
    assert!(c["source"].as_str().unwrap().starts_with("cache:"), "{c}");
    assert_eq!(edge.get("/readyz").0, 200);
    assert_eq!(edge.get("/status/ready").0, 200);
}

#[test]
fn an_aggregator_restart_does_not_make_the_edge_unready() {
    let (dir, agg, edge, version) = mesh("restart", &[]);
    let dns = edge.dns();
    let grpc = agg.url();
    let listen = grpc.trim_start_matches("http://").to_owned();
    drop(agg);
    wait_until(30, "state stale", || config(&edge)["state"] == "stale");
    assert_eq!(
        edge.get("/readyz").0,
        200,
        "an aggregator outage never makes the edge unready"
    );
    assert_eq!(
        short(dns, &["www.example.test"]),
        ["192.0.2.1", "192.0.2.2"]
    );
    let agg = Aggregator::start_with(None, &dir.join("agg"), &listen, &["--startup-window", "1s"]);
    wait_until(90, "synced again", || config(&edge)["state"] == "synced");
    assert!(edge.version() >= version, "versions only increase");
    let next = agg.apply(&CONFIG.replace("192.0.2.53", "192.0.2.54"), &dir);
    edge.wait_version(next);
    assert_eq!(short(dns, &["ns1.example.test"]), ["192.0.2.54"]);
}

#[test]
fn a_drain_keeps_answering_for_the_window_then_exits() {
    let (_dir, _agg, mut edge, _) = mesh("drain", &["--min-drain-secs", "2"]);
    let dns = edge.dns();
    let start = Instant::now();
    edge.proc.terminate();
    wait_until(5, "readyz 503", || edge.get("/readyz").0 == 503);
    assert!(start.elapsed() < Duration::from_secs(2), "unready at once");
    assert_eq!(edge.get("/livez").0, 200, "alive while draining");
    assert_eq!(
        short(dns, &["www.example.test"]),
        ["192.0.2.1", "192.0.2.2"],
        "still answering"
    );
    wait_until(15, "exit", || edge.proc.exited());
    assert!(
        start.elapsed() >= Duration::from_secs(2),
        "answered for the whole window"
    );
    let log = edge.proc.stderr.all().join("\n");
    assert!(log.contains("draining: /readyz now reports 503"), "{log}");
    assert!(log.contains("drained; exiting"), "{log}");
}

#[test]
fn a_record_set_the_edge_cannot_send_is_skipped_and_reported() {
    // A snapshot holding a TXT set too big for any DNS message (accepted
    // by older aggregators): the edge used to refuse the whole snapshot.
    // Now it serves everything else and says which set it left out.
    let (dir, agg, edge, version) = mesh("skipped", &[]);
    let cache = dir.join("cache");
    // The cache is written just after the snapshot is applied: wait for it
    // before the edge is killed (under load a kill in between left none).
    let cached = || {
        gslb_edge::cache::load(&cache)
            .ok()
            .flatten()
            .filter(|s| s.version == version)
    };
    wait_until(30, "the cache file", || cached().is_some());
    drop(edge);
    let grpc = agg.url();
    drop(agg);
    let mut snapshot = cached().unwrap();
    let zone = *snapshot.catalog.zones.keys().next().unwrap();
    let huge = gslb_shared::RecordSet {
        id: gslb_shared::RecordSetId(9_999),
        zone,
        name: gslb_shared::DnsName::parse("huge.example.test").unwrap(),
        rtype: gslb_shared::RecordType::Txt,
        ttl: 60,
        data: gslb_shared::RecordData::Static(vec![gslb_shared::Rdata::Txt(vec![
            "x".repeat(255);
            280
        ])]),
    };
    snapshot.catalog.records.insert(huge.id, huge);
    gslb_edge::cache::store(&cache, &gslb_edge::cache::encode(&snapshot)).unwrap();
    let edge = Edge::start(&[
        "--aggregator",
        &grpc,
        "--cache-dir",
        cache.to_str().unwrap(),
    ]);
    let dns = edge.dns();
    assert_eq!(
        short(dns, &["www.example.test"]),
        ["192.0.2.1", "192.0.2.2"]
    );
    let txt = dig(dns, &["huge.example.test", "TXT"]);
    assert_eq!(rcode(&txt), "NOERROR", "the name exists: {txt}");
    assert!(txt.contains("ANSWER: 0,"), "{txt}");
    let c = config(&edge);
    assert_eq!(c["version"], version);
    let skipped = c["skipped"].to_string();
    assert!(
        skipped.contains("record set 9999 (huge.example.test TXT) skipped"),
        "{c}"
    );
    assert!(edge.proc.stderr.contains("record set skipped"));
}

/// Issue 16 item 11: a DNS address that cannot be bound fails the boot at
/// once with a clear message, not after the wait for a first snapshot
/// (which, with no aggregator reachable, would never end).
#[test]
fn a_dns_address_that_cannot_be_bound_fails_the_boot_at_once() {
    let dir = temp_dir("bind-fails");
    let taken_udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = taken_udp.local_addr().unwrap();
    let _taken_tcp = std::net::TcpListener::bind(addr);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_gslb-edge"))
        .args(["--listen-dns", &addr.to_string()])
        .args(["--listen-status", "127.0.0.1:0"])
        .args(["--aggregator", "http://127.0.0.1:9"])
        .args(["--cache-dir", dir.join("cache").to_str().unwrap()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut status = None;
    wait_until(20, "the edge to exit", || {
        status = child.try_wait().unwrap();
        status.is_some()
    });
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    assert!(!status.unwrap().success());
    assert!(
        stderr.contains(&format!("listen-dns {addr}: cannot bind")),
        "{stderr}"
    );
    assert!(
        !stderr.contains("waiting for the first snapshot"),
        "{stderr}"
    );
}

/// Issue 16 item 10: while draining, TCP answers carry edns-tcp-keepalive 0
/// (RFC 7828: retire the pooled connection), queries are logged one sample
/// a second (a flood does not fill the log), and every 10 s an INFO line
/// says it is still draining, with the work in flight.
#[test]
fn a_drain_logs_its_state_and_a_sample_of_queries_and_retires_tcp() {
    let (_dir, _agg, mut edge, _) = mesh("drain-log", &["--min-drain-secs", "11"]);
    let dns = edge.dns();
    let before = dig(dns, &["+tcp", "+keepalive", "www.example.test"]);
    assert!(before.contains("status: NOERROR"), "{before}");
    assert!(!before.contains("; TCP KEEPALIVE"), "{before}");
    let start = Instant::now();
    edge.proc.terminate();
    wait_until(5, "readyz 503", || edge.get("/readyz").0 == 503);
    let during = dig(dns, &["+tcp", "+keepalive", "www.example.test"]);
    assert!(
        during.contains("; TCP KEEPALIVE: 0.0 secs"),
        "keepalive 0 while draining: {during}"
    );
    // A burst of 40 UDP queries within about a second.
    for _ in 0..40 {
        dig(dns, &["www.example.test", "+tries=1"]);
    }
    wait_until(30, "exit", || edge.proc.exited());
    let elapsed = start.elapsed().as_secs() + 1;
    let log = edge.proc.stderr.all().join("\n");
    let sampled = log.matches("query while draining").count() as u64;
    assert!(sampled >= 1, "{log}");
    assert!(
        sampled <= elapsed,
        "one a second at most: {sampled} in {elapsed} s"
    );
    assert!(log.contains("qname=www.example.test"), "{log}");
    let still = log
        .lines()
        .find(|l| l.contains("still draining") && l.contains("in_flight"))
        .unwrap_or_else(|| panic!("no still-draining line: {log}"));
    assert!(
        still.contains("INFO") && still.contains("open_connections"),
        "{still}"
    );
}

/// Issue 43 item 4: at DEBUG every query that arrives while draining is
/// logged (seed 003 logs each arrival), beside the INFO sample.
#[test]
fn every_arrival_while_draining_is_logged_at_debug() {
    let dir = temp_dir("drain-debug");
    let agg = Aggregator::start(&dir.join("agg"));
    let version = agg.apply(CONFIG, &dir);
    let url = agg.url();
    let mut edge = Edge::start_logging(
        &[
            "--aggregator",
            &url,
            "--min-drain-secs",
            "3",
            "--tcp-drain-timeout",
            "none",
        ],
        "info,gslb_edge::state=debug",
    );
    edge.wait_version(version);
    let dns = edge.dns();
    edge.proc.terminate();
    wait_until(5, "readyz 503", || edge.get("/readyz").0 == 503);
    let mut answered = 0;
    for _ in 0..20 {
        if dig(dns, &["www.example.test", "+tries=1", "+time=1"]).contains("status: NOERROR") {
            answered += 1;
        }
    }
    wait_until(30, "exit", || edge.proc.exited());
    let debug = edge.proc.stderr.count("query arrived while draining");
    assert!(answered >= 10, "{answered} answered in the window");
    assert_eq!(debug, answered, "one DEBUG line per arrival");
    assert!(
        edge.proc
            .stderr
            .contains("query while draining (one sample a second)")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 16 items 8 and 12: `?verbose=1` lists each check in seed 003's
/// style (the plain bodies and codes are unchanged), and `/status/pools`
/// shows what the served table holds per pool, with its version.
#[test]
fn verbose_health_and_the_pools_the_edge_serves() {
    let dir = temp_dir("verbose-cold");
    let cold = Edge::start(&[
        "--aggregator",
        "http://127.0.0.1:9",
        "--cache-dir",
        dir.join("cache").to_str().unwrap(),
    ]);
    let (code, body) = cold.get("/readyz?verbose=1");
    assert_eq!(code, 503);
    assert!(body.contains("[-]snapshot: none applied yet"), "{body}");
    assert!(body.contains("[-]dns-listeners: not bound"), "{body}");
    assert!(body.contains("[i]feed: never_loaded"), "{body}");
    assert!(body.ends_with("readyz check failed\n"), "{body}");
    assert_eq!(cold.get("/status/pools").0, 503);
    assert_eq!(
        cold.get("/readyz"),
        (503, "no snapshot applied yet\n".into())
    );

    let (_dir, agg, edge, version) = mesh("verbose", &["--min-drain-secs", "5"]);
    let (code, body) = edge.get("/readyz?verbose=1");
    assert_eq!(code, 200, "{body}");
    assert!(
        body.contains(&format!("[+]snapshot ok: version {version} from http://")),
        "{body}"
    );
    assert!(
        body.contains(&format!("[+]dns-listeners ok: {}", edge.dns())),
        "{body}"
    );
    assert!(body.contains("[+]draining: no"), "{body}");
    assert!(body.contains("[i]feed: synced"), "{body}");
    assert!(body.ends_with("readyz check passed\n"), "{body}");
    assert_eq!(edge.get("/livez"), (200, "ok\n".into()));

    let (code, body) = edge.get("/status/pools");
    assert_eq!(code, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["version"], version);
    let web = &v["pools"][0];
    assert_eq!(web["name"], "web", "{v}");
    assert_eq!(
        (web["members"].as_u64(), web["healthy"].as_u64()),
        (Some(2), Some(2)),
        "{v}"
    );
    assert_eq!(
        (web["eligible"].as_bool(), web["failOpen"].as_bool()),
        (Some(true), Some(false))
    );
    // A member disabled at the aggregator shows once the edge applies it.
    let member = agg.member("web", "web-2");
    let id = member["id"].as_u64().unwrap();
    let (code, _) = agg.rest(
        "PUT",
        &format!("/api/v1/members/{id}"),
        r#"{"enabled": false}"#,
    );
    assert_eq!(code, 200);
    wait_until(30, "the edge to show web-2 disabled", || {
        let (_, body) = edge.get("/status/pools");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
        v["pools"][0]["disabled"] == 1 && v["pools"][0]["healthy"] == 1
    });

    edge.proc.terminate();
    wait_until(5, "draining", || edge.get("/readyz").0 == 503);
    let (code, body) = edge.get("/livez?verbose=1");
    assert_eq!(code, 200, "alive while draining: {body}");
    assert!(body.contains("[-]draining: yes (in_flight"), "{body}");
    assert!(body.ends_with("livez check passed\n"), "{body}");
}

/// Issue 43 item 27: guessing the warm-up token is throttled per source:
/// 10 wrong tries in 10 s, then 429 for 60 s (the right token too), and
/// the burst is logged at its start and at the block only.
#[test]
fn warm_up_token_guessing_is_throttled() {
    let dir = temp_dir("warmup-guess");
    let token = dir.join("token");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(&token, "the-right-warmup-token-0123456789\n").unwrap();
    let (_d, _agg, edge, _) = mesh(
        "warmup-guess-mesh",
        &["--warmup-token-file", token.to_str().unwrap()],
    );
    let ask = |bearer: &str| {
        let auth = format!("Bearer {bearer}");
        gslb_e2e::dns::http_request(
            edge.status,
            "GET",
            "/internal/warmup",
            &[("Authorization", &auth)],
            "",
        )
        .0
    };
    assert_eq!(ask("the-right-warmup-token-0123456789"), 200);
    let codes: Vec<u16> = (0..14).map(|i| ask(&format!("guess-{i}"))).collect();
    assert!(codes[..10].iter().all(|c| *c == 401), "{codes:?}");
    assert!(codes[11..].iter().all(|c| *c == 429), "{codes:?}");
    assert_eq!(
        ask("the-right-warmup-token-0123456789"),
        429,
        "blocked for a while"
    );
    wait_until(10, "the block logged", || {
        edge.proc.stderr.contains("refused for 60 s")
    });
    assert_eq!(
        edge.proc.stderr.count("wrong or missing token"),
        1,
        "one line per burst"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
