//! The real `gslb-aggregator` binary on loopback: admin CRUD over gRPC with
//! validation, a scripted agent streaming results, member status and the
//! health log following them, an edge subscriber receiving the full
//! snapshot and then deltas, and a restart that keeps everything.
#![allow(clippy::unwrap_used)]

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use gslb_proto::pb;
use gslb_proto::pb::edge_feed_client::EdgeFeedClient;
use gslb_shared::*;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::Code;

const INTERVAL_MS: u64 = 1_000;

mod support;
use support::http::{http_get, http_get_as};

use gslb_proto::link::{TokenAdminClient, admin_client};
use support::process::{Aggregator, start};

type Admin = TokenAdminClient;

async fn admin(a: &Aggregator) -> Admin {
    admin_client(&a.grpc, &a.token).await.unwrap()
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

async fn eventually<F, Fut>(within: Duration, mut f: F) -> bool
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    let deadline = tokio::time::Instant::now() + within;
    while tokio::time::Instant::now() < deadline {
        if f().await {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    false
}

/// Zone 1, check 2 (tcp, 1 s), pool 3, members 4 (plain) and 5 (warm-up 2), record 6.
async fn configure(c: &mut Admin) {
    let zone = Zone {
        id: ZoneId(0),
        apex: DnsName::parse("example.test").unwrap(),
        soa: Soa {
            mname: DnsName::parse("ns1.example.test").unwrap(),
            rname: DnsName::parse("hostmaster.example.test").unwrap(),
            refresh: 3600,
            retry: 600,
            expire: 604_800,
            negative_ttl: 60,
        },
        ns: vec![DnsName::parse("ns1.example.test").unwrap()],
        default_ttl: 300,
        ns_ttl: None,
        transfer: Default::default(),
        dnssec: None,
    };
    c.create_zone(pb::Zone::from(&zone)).await.unwrap();
    let mut check = Check::new(CheckId(0), "tcp", Probe::Tcp(StreamProbe::default()));
    check.interval = Duration::from_millis(INTERVAL_MS);
    check.timeout = Duration::from_millis(500);
    c.create_check(pb::Check::from(&check)).await.unwrap();
    let mut pool = Pool::new(PoolId(0), "web");
    pool.check = Some(CheckId(2));
    c.create_pool(pb::Pool::from(&pool)).await.unwrap();
    c.create_member(pb::Member::from(&Member::new(
        MemberId(0),
        PoolId(3),
        "web-1",
        "127.0.0.11".parse().unwrap(),
        80,
    )))
    .await
    .unwrap();
    let mut warm = Member::new(
        MemberId(0),
        PoolId(3),
        "web-2",
        "127.0.0.12".parse().unwrap(),
        80,
    );
    warm.warmup_threshold = 2;
    c.create_member(pb::Member::from(&warm)).await.unwrap();
    let record = RecordSet {
        id: RecordSetId(0),
        zone: ZoneId(1),
        name: DnsName::parse("www.example.test").unwrap(),
        rtype: RecordType::A,
        ttl: 30,
        data: RecordData::Dynamic(DynamicRecord {
            steering: Steering::RoundRobin,
            pools: vec![PoolId(3)],
            geo: vec![],
            first_n: 0,
            flatten: false,
            region_locations: Default::default(),
        }),
    };
    c.create_record_set(pb::RecordSet::from(&record))
        .await
        .unwrap();
}

/// An edge's feed subscription, holding version `held`.
async fn subscribe(
    a: &Aggregator,
    edge_id: &str,
    held: u64,
) -> tonic::Streaming<pb::SnapshotUpdate> {
    EdgeFeedClient::connect(a.grpc.clone())
        .await
        .unwrap()
        .subscribe(pb::SubscribeRequest {
            edge_id: edge_id.into(),
            held_version: held,
            edge_version: "test".into(),
        })
        .await
        .unwrap()
        .into_inner()
}

/// A scripted agent: registers, returns its first assignment set, and a
/// sender for results.
async fn agent(
    a: &Aggregator,
    location: &str,
) -> (
    pb::AssignmentSet,
    mpsc::Sender<pb::AgentMessage>,
    tonic::Streaming<pb::AggregatorMessage>,
) {
    let (first, tx, inbound) =
        support::agent::register(&a.grpc, location, &format!("{location}-test")).await;
    let Some(pb::aggregator_message::Msg::Full(set)) = first.msg else {
        panic!("expected the assignment set, got {first:?}")
    };
    (set, tx, inbound)
}

async fn report(tx: &mpsc::Sender<pb::AgentMessage>, seq: u64, pass: bool) {
    report_each(tx, seq, &[(4, pass), (5, pass)]).await;
}

async fn report_each(tx: &mpsc::Sender<pb::AgentMessage>, seq: u64, outcomes: &[(u64, bool)]) {
    let cycle = now_ms() / INTERVAL_MS;
    let results = outcomes
        .iter()
        .map(|(m, pass)| pb::ProbeResult {
            member_id: *m,
            check_id: 2,
            cycle,
            failure: if *pass {
                0
            } else {
                pb::FailReason::Refused as i32
            },
            latency_us: 250,
            detail: String::new(),
        })
        .collect();
    tx.send(pb::AgentMessage {
        msg: Some(pb::agent_message::Msg::Results(pb::ResultBatch {
            seq,
            results,
            dropped: 0,
        })),
    })
    .await
    .unwrap();
}

async fn status(c: &mut Admin, member: u64) -> pb::MemberStatus {
    c.get_member_status(pb::IdRequest {
        id: member,
        ..Default::default()
    })
    .await
    .unwrap()
    .into_inner()
}

#[tokio::test]
async fn admin_agent_status_log_edge_and_restart() {
    let dir = std::env::temp_dir().join(format!("gslb-agg-service-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let version_before_restart;
    {
        let a = start(&dir);
        let mut c = admin(&a).await;
        configure(&mut c).await;

        // Bad input names the field and stores nothing.
        let mut bad = pb::Member::from(&Member::new(
            MemberId(0),
            PoolId(3),
            "bad",
            "127.0.0.13".parse().unwrap(),
            80,
        ));
        bad.address = "127.0.0.13:80".into();
        let err = c.create_member(bad).await.unwrap_err();
        assert_eq!(err.code(), Code::InvalidArgument);
        assert_eq!(
            err.message(),
            "address: must be an IP address or a hostname without a port"
        );
        let err = c
            .delete_pool(pb::IdRequest {
                id: 3,
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::FailedPrecondition, "{}", err.message());
        assert_eq!(
            c.get_member(pb::IdRequest {
                id: 999,
                ..Default::default()
            })
            .await
            .unwrap_err()
            .code(),
            Code::NotFound
        );
        assert_eq!(
            c.list_members(pb::ListRequest {
                pool_id: 3,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner()
            .members
            .len(),
            2
        );
        let err = c
            .set_manual_health(pb::ManualHealthRequest {
                member_id: 4,
                health: pb::Health::Down as i32,
            })
            .await
            .unwrap_err();
        assert_eq!(err.code(), Code::FailedPrecondition);
        assert!(
            err.message().contains("active health check"),
            "{}",
            err.message()
        );

        // An edge subscribes from nothing and gets the full snapshot.
        let mut edge = EdgeFeedClient::connect(a.grpc.clone()).await.unwrap();
        let mut feed = edge
            .subscribe(pb::SubscribeRequest {
                edge_id: "edge-1".into(),
                held_version: 0,
                edge_version: "test".into(),
            })
            .await
            .unwrap()
            .into_inner();
        let first = feed.message().await.unwrap().unwrap();
        let Some(pb::snapshot_update::Update::Full(full)) = first.update else {
            panic!("expected a full snapshot")
        };
        assert_eq!((full.members.len(), full.records.len()), (2, 1));
        let mut held = full.version;

        // An agent gets both members assigned and reports passing cycles.
        let (set, tx, mut inbound) = agent(&a, "fra1").await;
        assert_eq!(set.assignments.len(), 2);
        assert!(
            set.assignments.iter().all(|a| a.check.is_some()) && set.checks.is_empty(),
            "an agent that does not ask for checks by id gets each inline"
        );
        report(&tx, 1, true).await;
        let ack = inbound.message().await.unwrap().unwrap();
        assert!(
            matches!(
                ack.msg,
                Some(pb::aggregator_message::Msg::Ack(pb::BatchAck {
                    seq: 1,
                    accepted: 2,
                    rejected: 0
                }))
            ),
            "{ack:?}"
        );
        let s = status(&mut c, 5).await;
        assert!(
            s.healthy && s.warming && s.warmup_passes == 1 && s.warmup_threshold == 2,
            "warming 1/2: {s:?}"
        );
        tokio::time::sleep(Duration::from_millis(INTERVAL_MS)).await;
        report(&tx, 2, true).await;
        let _ = inbound.message().await.unwrap();
        let s = status(&mut c, 5).await;
        assert!(s.healthy && !s.warming && s.warmup_passes == 2, "{s:?}");
        assert_eq!(s.locations.len(), 1);

        // The edge receives the decisions as deltas chained on its version.
        let mut up = false;
        while !up {
            let update = tokio::time::timeout(Duration::from_secs(5), feed.message())
                .await
                .unwrap()
                .unwrap()
                .unwrap();
            let Some(pb::snapshot_update::Update::Delta(d)) = update.update else {
                panic!("expected a delta")
            };
            assert_eq!(d.base_version, held);
            held = d.version;
            up = d
                .facts
                .iter()
                .any(|f| f.member_id == 5 && f.health == pb::Health::Up as i32 && !f.warming);
        }
        edge.report_applied(pb::AppliedReport {
            edge_id: "edge-1".into(),
            version: held,
            applied_at_ms: now_ms(),
            skipped: Vec::new(),
        })
        .await
        .unwrap();
        let nameless = edge
            .report_applied(pb::AppliedReport {
                edge_id: String::new(),
                version: held,
                applied_at_ms: now_ms(),
                skipped: Vec::new(),
            })
            .await
            .unwrap_err();
        assert_eq!(nameless.code(), tonic::Code::InvalidArgument);
        let edges = c
            .list_edges(pb::ListRequest::default())
            .await
            .unwrap()
            .into_inner()
            .edges;
        assert_eq!(
            (
                edges[0].edge_id.as_str(),
                edges[0].applied_version,
                edges[0].connected
            ),
            ("edge-1", held, true)
        );

        // A failing cycle takes member 4 down; the log says why, with evidence.
        tokio::time::sleep(Duration::from_millis(INTERVAL_MS)).await;
        report_each(&tx, 3, &[(4, false), (5, true)]).await;
        let _ = inbound.message().await.unwrap();
        assert!(!status(&mut c, 4).await.healthy);
        let log = c
            .get_health_log(pb::HealthLogRequest {
                member_id: 4,
                limit: 10,
            })
            .await
            .unwrap()
            .into_inner()
            .entries;
        let down = log
            .iter()
            .find(|e| e.to == pb::Health::Down as i32)
            .expect("a down transition");
        assert!(down.reason.starts_with("quorum"), "{}", down.reason);
        assert_eq!(down.evidence[0].location, "fra1");
        assert_eq!(
            (down.evidence[0].outcome.as_str(), down.evidence[0].failure),
            ("fail", pb::FailReason::Refused as i32)
        );

        // Explain walks the selection for the record.
        let explain = c
            .explain(pb::ExplainRequest {
                name: "www.example.test".into(),
                r#type: pb::RecordType::A as i32,
                client: String::new(),
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(explain.answers, vec!["127.0.0.12"]);
        assert!(explain.steps.iter().any(|s| s.step == "healthy"));
        let agents = c
            .list_agents(pb::ListRequest::default())
            .await
            .unwrap()
            .into_inner()
            .agents;
        assert_eq!(
            (
                agents[0].location.as_str(),
                agents[0].connected,
                agents[0].assignments
            ),
            ("fra1", true, 2)
        );
        // Drain the feed: the edge now holds the latest version.
        while let Ok(Some(Ok(update))) =
            tokio::time::timeout(Duration::from_millis(300), feed.message())
                .await
                .map(Result::transpose)
        {
            if let Some(pb::snapshot_update::Update::Delta(d)) = update.update {
                assert_eq!(d.base_version, held);
                held = d.version;
            }
        }
        version_before_restart = held;
        // Stopped cleanly: a crash is the next test.
        a.stop();
    }

    // Restart: everything is still there, and the startup gate holds health.
    let a = start(&dir);
    let mut c = admin(&a).await;
    assert_eq!(
        c.list_members(pb::ListRequest::default())
            .await
            .unwrap()
            .into_inner()
            .members
            .len(),
        2
    );
    let s4 = status(&mut c, 4).await;
    let s5 = status(&mut c, 5).await;
    assert!(
        !s4.healthy && s5.healthy && !s5.warming,
        "latched state restored: {s4:?} {s5:?}"
    );
    let mut feed = subscribe(&a, "edge-1", version_before_restart).await;
    // Nothing changed since: the edge is up to date, so no message comes at once.
    assert!(
        tokio::time::timeout(Duration::from_millis(300), feed.message())
            .await
            .is_err(),
        "versions survive a restart"
    );
    let (_, tx, mut inbound) = agent(&a, "fra1").await;
    report(&tx, 1, true).await;
    let _ = inbound.message().await.unwrap();
    assert!(
        !status(&mut c, 4).await.healthy,
        "no flip inside the startup gate"
    );
    let mut seq = 2;
    let recovered = eventually(Duration::from_secs(10), || {
        let tx = tx.clone();
        let mut c = c.clone();
        seq += 1;
        let s = seq;
        async move {
            report(&tx, s, true).await;
            tokio::time::sleep(Duration::from_millis(INTERVAL_MS)).await;
            status(&mut c, 4).await.healthy
        }
    })
    .await;
    assert!(recovered, "decisions resume once the gate opens");
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn malformed_results_are_counted_and_an_edge_ahead_resyncs() {
    let dir = std::env::temp_dir().join(format!("gslb-agg-malformed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let a = start(&dir);
    let mut c = admin(&a).await;
    configure(&mut c).await;
    let (_, tx, mut inbound) = agent(&a, "fra1").await;
    let cycle = now_ms() / INTERVAL_MS;
    let results = vec![
        pb::ProbeResult {
            member_id: 4,
            check_id: 2,
            cycle,
            failure: 99,
            latency_us: 1,
            detail: String::new(),
        },
        pb::ProbeResult {
            member_id: 5,
            check_id: 2,
            cycle,
            failure: 0,
            latency_us: 1,
            detail: String::new(),
        },
    ];
    tx.send(pb::AgentMessage {
        msg: Some(pb::agent_message::Msg::Results(pb::ResultBatch {
            seq: 7,
            results,
            dropped: 0,
        })),
    })
    .await
    .unwrap();
    let ack = inbound.message().await.unwrap().unwrap();
    assert!(
        matches!(
            ack.msg,
            Some(pb::aggregator_message::Msg::Ack(pb::BatchAck {
                seq: 7,
                accepted: 1,
                rejected: 1
            }))
        ),
        "the bad result is counted, the good one ingested: {ack:?}"
    );
    // The stream goes on.
    report(&tx, 8, true).await;
    assert!(inbound.message().await.unwrap().is_some());

    // A catalog change reaches the agent as an assignment delta.
    let added = Member::new(
        MemberId(0),
        PoolId(3),
        "web-3",
        "127.0.0.14".parse().unwrap(),
        80,
    );
    let created = c
        .create_member(pb::Member::from(&added))
        .await
        .unwrap()
        .into_inner();
    let update = tokio::time::timeout(std::time::Duration::from_secs(5), inbound.message())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let Some(pb::aggregator_message::Msg::Delta(delta)) = update.msg else {
        panic!("expected a delta: {update:?}")
    };
    assert_eq!(
        delta
            .upserts
            .iter()
            .map(|a| a.member_id)
            .collect::<Vec<_>>(),
        vec![created.id]
    );
    assert!(delta.removals.is_empty());
    c.delete_member(pb::IdRequest {
        id: created.id,
        ..Default::default()
    })
    .await
    .unwrap();
    let update = tokio::time::timeout(std::time::Duration::from_secs(5), inbound.message())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let Some(pb::aggregator_message::Msg::Delta(delta)) = update.msg else {
        panic!("expected a delta: {update:?}")
    };
    assert_eq!(
        delta
            .removals
            .iter()
            .map(|k| k.member_id)
            .collect::<Vec<_>>(),
        vec![created.id]
    );

    // An edge holding a version this aggregator never had gets a full snapshot.
    let mut feed = subscribe(&a, "edge-ahead", 1_000_000).await;
    let first = feed.message().await.unwrap().unwrap();
    assert!(
        matches!(first.update, Some(pb::snapshot_update::Update::Full(ref s)) if s.version < 1_000_000),
        "{first:?}"
    );
    drop(a);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn reflection_lists_the_services_and_http_serves_probes_and_metrics() {
    use tonic_reflection::pb::v1::server_reflection_client::ServerReflectionClient;
    use tonic_reflection::pb::v1::server_reflection_request::MessageRequest;
    use tonic_reflection::pb::v1::server_reflection_response::MessageResponse;
    let dir = std::env::temp_dir().join(format!("gslb-agg-reflection-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let a = start(&dir);
    let channel = tonic::transport::Endpoint::from_shared(a.grpc.clone())
        .unwrap()
        .connect()
        .await
        .unwrap();
    let mut reflection = ServerReflectionClient::new(channel);
    let request = tonic_reflection::pb::v1::ServerReflectionRequest {
        host: String::new(),
        message_request: Some(MessageRequest::ListServices(String::new())),
    };
    let mut responses = reflection
        .server_reflection_info(tokio_stream::iter(vec![request]))
        .await
        .unwrap()
        .into_inner();
    let response = responses.message().await.unwrap().unwrap();
    let Some(MessageResponse::ListServicesResponse(list)) = response.message_response else {
        panic!("{response:?}")
    };
    let names: Vec<_> = list.service.iter().map(|s| s.name.as_str()).collect();
    for service in [
        "gslb.v1.AdminService",
        "gslb.v1.AgentService",
        "gslb.v1.EdgeFeed",
    ] {
        assert!(names.contains(&service), "{service} in {names:?}");
    }
    assert_eq!(http_get(&a.http, "/livez").await, (200, "ok".into()));
    assert_eq!(http_get(&a.http, "/readyz").await.0, 200);
    let mut c = admin(&a).await;
    configure(&mut c).await;
    let (status, metrics) = http_get(&a.http, "/metrics").await;
    assert_eq!(status, 200);
    assert!(metrics.contains("gslb_aggregator_members 2"), "{metrics}");
    assert!(
        metrics.contains("# TYPE gslb_aggregator_results_accepted counter"),
        "{metrics}"
    );
    // The REST API needs the token; the operational endpoints above do not.
    let (status, body) = http_get(&a.http, "/api/v1/members/4").await;
    assert_eq!(status, 401, "{body}");
    let (status, body) = http_get_as(&a.http, "/api/v1/members/4", Some(&a.token)).await;
    assert_eq!(status, 200);
    assert!(body.contains("\"warmupThreshold\":0"), "{body}");
    drop(a);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 16 item 13 and issue 43 item 5: a connection-kept ephemeral
/// member lives while its registration stream does (the server heartbeats
/// it at its interval, client messages are beats answered with its
/// state); when the stream closes it is deleted at once (seed 004's
/// release event), long before its timeouts.
#[tokio::test]
async fn a_connection_kept_ephemeral_member_lives_while_its_stream_does() {
    let dir = std::env::temp_dir().join(format!("gslb-agg-keep-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let a = start(&dir);
    let mut c = admin(&a).await;
    configure(&mut c).await;
    let mut member = Member::new(
        MemberId(0),
        PoolId(3),
        "kept",
        "127.0.0.99".parse().unwrap(),
        80,
    );
    // Timeouts far longer than the test: only the release deletes it.
    member.kind = MemberKind::Ephemeral(EphemeralPolicy {
        heartbeat_interval: Duration::from_millis(200),
        heartbeat_timeout: Duration::from_secs(600),
        delete_timeout: Duration::from_secs(1200),
        expire: true,
    });
    let keepalive = |msg| pb::EphemeralKeepalive { msg: Some(msg) };
    let open = |c: &mut Admin| {
        let mut c = c.clone();
        let member = pb::Member::from(&member);
        async move {
            let (tx, rx) = mpsc::channel(4);
            tx.send(keepalive(pb::ephemeral_keepalive::Msg::Register(member)))
                .await
                .unwrap();
            let states = c
                .register_ephemeral_stream(ReceiverStream::new(rx))
                .await
                .unwrap()
                .into_inner();
            (tx, states)
        }
    };
    let (tx, mut states) = open(&mut c).await;
    let first = states.message().await.unwrap().unwrap();
    assert_eq!(first.health, pb::Health::Up as i32);
    let id = first.member_id;
    tx.send(keepalive(pb::ephemeral_keepalive::Msg::Heartbeat(true)))
        .await
        .unwrap();
    let beat = states.message().await.unwrap().unwrap();
    assert_eq!((beat.member_id, beat.health), (id, pb::Health::Up as i32));
    let gone = |c: &Admin| {
        let mut c = c.clone();
        async move {
            c.get_member(pb::IdRequest {
                id,
                ..Default::default()
            })
            .await
            .is_err_and(|e| e.code() == Code::NotFound)
        }
    };
    // The client goes away: released, deleted within seconds.
    drop(tx);
    drop(states);
    assert!(
        eventually(Duration::from_secs(5), || gone(&c)).await,
        "deleted with its stream, not after its timeouts"
    );
    drop(a);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A single node publishes a decision before its fsync, so a crash may lose
/// the last version an edge already holds: the restarted node continues
/// above every version it may have published, so the edge takes its
/// snapshot instead of refusing it as a regression.
#[tokio::test(flavor = "multi_thread")]
async fn after_a_crash_versions_continue_above_what_edges_may_hold() {
    let dir = std::env::temp_dir().join(format!("gslb-agg-crash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let held;
    {
        let a = start(&dir);
        let mut c = admin(&a).await;
        configure(&mut c).await;
        let mut feed = subscribe(&a, "edge-1", 0).await;
        let Some(pb::snapshot_update::Update::Full(full)) =
            feed.message().await.unwrap().unwrap().update
        else {
            panic!("expected a full snapshot")
        };
        let mut version = full.version;
        let (_, tx, mut inbound) = agent(&a, "fra1").await;
        // Passing cycles until the edge has seen decisions for both members.
        let mut seq = 0;
        let mut decided = std::collections::BTreeSet::new();
        while decided.len() < 2 {
            seq += 1;
            assert!(seq < 40, "no decisions reached the edge");
            report(&tx, seq, true).await;
            let _ = inbound.message().await.unwrap();
            while let Ok(Some(Ok(update))) =
                tokio::time::timeout(Duration::from_millis(INTERVAL_MS), feed.message())
                    .await
                    .map(Result::transpose)
            {
                if let Some(pb::snapshot_update::Update::Delta(d)) = update.update {
                    version = d.version;
                    decided.extend(d.facts.iter().map(|f| f.member_id));
                }
            }
        }
        held = version;
        // kill -9 (the drop).
    }
    let a = start(&dir);
    let mut feed = subscribe(&a, "edge-1", held).await;
    let update = tokio::time::timeout(Duration::from_secs(5), feed.message())
        .await
        .expect("the edge is sent the restarted node's state")
        .unwrap()
        .unwrap();
    let Some(pb::snapshot_update::Update::Full(full)) = update.update else {
        panic!("expected a full snapshot, got {update:?}")
    };
    assert!(
        full.version > held,
        "the restarted node ({}) continues above the version the edge holds ({held})",
        full.version
    );
    assert_eq!(full.members.len(), 2, "the catalog survived the crash");
    drop(a);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 43 items 13 and 14: edge identities cannot grow state without
/// bound. An edge id is a plain name; the registry keeps 1,000 rows (the
/// disconnected edge seen longest ago makes room) and REST pages it. (The
/// per-certificate stream caps are in the e2e security tests.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edge_identities_cannot_grow_the_registry_or_the_feeds_without_bound() {
    let dir = std::env::temp_dir().join(format!("gslb-agg-edges-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let a = start(&dir);
    let mut feed = EdgeFeedClient::connect(a.grpc.clone()).await.unwrap();
    for bad in ["edge\u{202e}1", "edge 1", "", &"e".repeat(129)] {
        let refused = feed
            .report_applied(pb::AppliedReport {
                edge_id: bad.into(),
                version: 1,
                applied_at_ms: 0,
                skipped: vec![],
            })
            .await
            .unwrap_err();
        assert_eq!(refused.code(), Code::InvalidArgument, "{bad:?}");
        assert!(refused.message().contains("edgeId"), "{refused:?}");
    }
    // 1,001 identities, each with a large skipped list: 1,000 rows stay.
    let reason = "x".repeat(4_000);
    for i in 0..1_001 {
        feed.report_applied(pb::AppliedReport {
            edge_id: format!("edge-{i:04}"),
            version: 1,
            applied_at_ms: 0,
            skipped: vec![reason.clone(); 64],
        })
        .await
        .unwrap();
    }
    let page = |after: &str| {
        let path = format!("/api/v1/edges?limit=1000&after={after}");
        let (http, token) = (a.http.clone(), a.token.clone());
        async move {
            let (status, body) = http_get_as(&http, &path, Some(&token)).await;
            assert_eq!(status, 200, "{body}");
            serde_json::from_str::<serde_json::Value>(&body).unwrap()
        }
    };
    let rows = page("").await;
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 1_000, "bounded");
    assert_eq!(rows[0]["edgeId"], "edge-0001", "the oldest row made room");
    let skipped = rows[0]["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 16);
    assert!(skipped[0].as_str().unwrap().len() <= 256);
    let next = page("edge-0999").await;
    assert_eq!(next.as_array().unwrap().len(), 1, "{next}");
    let (status, body) = http_get_as(&a.http, "/api/v1/edges?limit=0", Some(&a.token)).await;
    assert_eq!(status, 400, "{body}");
    drop(a);
    let _ = std::fs::remove_dir_all(&dir);
}
