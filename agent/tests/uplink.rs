//! The real `gslb-agent` binary against an in-process aggregator on loopback:
//! registration, assignments, batched results, acks, stream drops, address
//! rotation, leader hints, rejected assignments, metrics and readiness.
#![allow(clippy::unwrap_used)]

mod support;

use support::fake_aggregator::{Behaviour, Seen, start_aggregator};

use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::time::Duration;

use gslb_proto::pb;
use gslb_shared::{Probe, StreamProbe};
use support::*;

/// The agent process; killed when dropped.
struct AgentProcess(Child);

impl Drop for AgentProcess {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_agent(aggregators: &str, extra: &[&str]) -> AgentProcess {
    let child = Command::new(env!("CARGO_BIN_EXE_gslb-agent"))
        .args([
            "--location",
            "fra1",
            "--region",
            "eu",
            "--aggregator",
            aggregators,
            "--batch-interval",
            "50ms",
        ])
        .args(extra)
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    AgentProcess(child)
}

fn tcp_assignment(member: u64, port: u16) -> pb::Assignment {
    let mut c = check(Probe::Tcp(StreamProbe::default()), 400);
    c.interval = Duration::from_millis(500);
    assignment(member, LOCAL, port, &c)
}

fn results_of(seen: &Mutex<Seen>, member: u64) -> Vec<(usize, pb::ProbeResult)> {
    let seen = seen.lock().unwrap();
    seen.batches
        .iter()
        .flat_map(|(s, b)| {
            b.results
                .iter()
                .filter(|r| r.member_id == member)
                .map(move |r| (*s, r.clone()))
        })
        .collect()
}

const WAIT: Duration = Duration::from_secs(15);

#[tokio::test]
async fn agent_registers_probes_and_streams_results() {
    let (backend, accepted) = tcp_server(None).await;
    // Three targets: the fake sends the set in three parts.
    let set = vec![
        tcp_assignment(7, backend),
        tcp_assignment(8, backend),
        tcp_assignment(9, backend),
    ];
    let (port, seen) = start_aggregator(set, Behaviour::Normal, true).await;
    let _agent = start_agent(&format!("http://127.0.0.1:{port}"), &[]);
    assert!(
        eventually(WAIT, || [7, 8, 9]
            .iter()
            .all(|m| results_of(&seen, *m).len() >= 3))
        .await,
        "results arrive for every target of the set"
    );
    let register = seen.lock().unwrap().registers[0].clone();
    assert_eq!(
        (register.location.as_str(), register.region.as_str()),
        ("fra1", "eu")
    );
    assert!(register.agent_id.starts_with("fra1-"));
    assert!(
        register.checks_by_id && register.sets_in_parts,
        "the agent takes each check once and sets in parts (the fake sends that form, and results came)"
    );
    let results = results_of(&seen, 7);
    assert!(
        results
            .iter()
            .all(|(_, r)| r.failure == pb::FailReason::Unspecified as i32 && r.check_id == 1)
    );
    let cycles: Vec<_> = results.iter().map(|(_, r)| r.cycle).collect();
    assert!(
        cycles.windows(2).all(|w| w[1] == w[0] + 1),
        "one result per cycle, in order: {cycles:?}"
    );
    assert!(accepted.load(Ordering::SeqCst) >= 9);
}

#[tokio::test]
async fn a_dropped_stream_reconnects_and_resends_what_was_not_acknowledged() {
    let (backend, _) = tcp_server(None).await;
    let (port, seen) = start_aggregator(
        vec![tcp_assignment(7, backend)],
        Behaviour::DropFirstSessionAfterOneBatch,
        true,
    )
    .await;
    let _agent = start_agent(&format!("http://127.0.0.1:{port}"), &[]);
    assert!(
        eventually(WAIT, || seen.lock().unwrap().sessions >= 2
            && results_of(&seen, 7).iter().any(|(s, _)| *s == 2))
        .await
    );
    let results = results_of(&seen, 7);
    let first: Vec<_> = results
        .iter()
        .filter(|(s, _)| *s == 1)
        .map(|(_, r)| r.cycle)
        .collect();
    let second: Vec<_> = results
        .iter()
        .filter(|(s, _)| *s == 2)
        .map(|(_, r)| r.cycle)
        .collect();
    assert!(!first.is_empty());
    for cycle in &first {
        assert!(
            second.contains(cycle),
            "unacknowledged cycle {cycle} was resent: {second:?}"
        );
    }
}

#[tokio::test]
async fn first_address_down_rotates_to_the_second() {
    let (backend, _) = tcp_server(None).await;
    let (port, seen) =
        start_aggregator(vec![tcp_assignment(7, backend)], Behaviour::Normal, true).await;
    let down = closed_tcp_port().await;
    let _agent = start_agent(
        &format!("http://127.0.0.1:{down},http://127.0.0.1:{port}"),
        &[],
    );
    assert!(eventually(WAIT, || !results_of(&seen, 7).is_empty()).await);
}

#[tokio::test]
async fn a_leader_hint_is_followed() {
    let (backend, _) = tcp_server(None).await;
    let (leader, leader_seen) =
        start_aggregator(vec![tcp_assignment(7, backend)], Behaviour::Normal, true).await;
    let (follower, follower_seen) =
        start_aggregator(vec![], Behaviour::Redirect(leader), true).await;
    let _agent = start_agent(&format!("http://127.0.0.1:{follower}"), &[]);
    assert!(eventually(WAIT, || !results_of(&leader_seen, 7).is_empty()).await);
    assert_eq!(follower_seen.lock().unwrap().batches.len(), 0);
}

#[tokio::test]
async fn an_invalid_assignment_is_rejected_reported_and_never_probed() {
    let (backend, accepted) = tcp_server(None).await;
    let mut bad = tcp_assignment(8, backend);
    bad.address = format!("127.0.0.1:{backend}");
    let (port, seen) = start_aggregator(vec![bad], Behaviour::Normal, true).await;
    let _agent = start_agent(&format!("http://127.0.0.1:{port}"), &[]);
    assert!(
        eventually(WAIT, || !seen.lock().unwrap().rejected.is_empty()
            && results_of(&seen, 8).len() >= 2)
        .await
    );
    let rejected = seen.lock().unwrap().rejected[0].clone();
    assert_eq!(rejected.field, "address");
    assert!(
        rejected.reason.contains("without a port"),
        "{}",
        rejected.reason
    );
    assert!(
        results_of(&seen, 8)
            .iter()
            .all(|(_, r)| r.failure == pb::FailReason::InvalidTarget as i32)
    );
    assert_eq!(
        accepted.load(Ordering::SeqCst),
        0,
        "no traffic to an invalid target"
    );
}

#[tokio::test]
async fn metrics_and_readiness_follow_the_assignment_set() {
    let (backend, _) = tcp_server(None).await;
    let metrics_port = closed_tcp_port().await;
    let down = closed_tcp_port().await;
    let metrics = format!("127.0.0.1:{metrics_port}");
    let get = |path: &'static str| {
        let metrics = metrics.clone();
        async move { http_get(&metrics, path).await }
    };
    // No aggregator reachable yet: live, not ready.
    let agent = start_agent(
        &format!("http://127.0.0.1:{down}"),
        &["--listen-metrics", &format!("127.0.0.1:{metrics_port}")],
    );
    let mut ready = None;
    for _ in 0..500 {
        if let Some((code, _)) = get("/readyz").await {
            ready = Some(code);
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(ready, Some(503));
    assert_eq!(get("/livez").await.map(|(c, _)| c), Some(200));
    drop(agent);
    let (port, seen) =
        start_aggregator(vec![tcp_assignment(7, backend)], Behaviour::Normal, true).await;
    let _agent = start_agent(
        &format!("http://127.0.0.1:{port}"),
        &["--listen-metrics", &format!("127.0.0.1:{metrics_port}")],
    );
    assert!(eventually(WAIT, || results_of(&seen, 7).len() >= 2).await);
    let (code, _) = get("/readyz").await.unwrap();
    assert_eq!(code, 200);
    let (_, body) = get("/metrics").await.unwrap();
    for needle in [
        "gslb_agent_probes_total{protocol=\"tcp\",outcome=\"pass\"}",
        "gslb_agent_probe_duration_seconds_bucket",
        "gslb_agent_connected 1",
        "gslb_agent_assignments 1",
        "gslb_agent_results_dropped_total 0",
    ] {
        assert!(body.contains(needle), "{needle} missing from:\n{body}");
    }
}
