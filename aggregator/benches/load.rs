//! Aggregator load benchmark (run by `scripts/bench-aggregator.sh`).
//!
//! 1. Snapshot size and encode time for 100,000 members (in process).
//! 2. The real `gslb-aggregator` (pinned by the script to CPU 1) with one
//!    pool of 100,000 members; 20 simulated agents (20 locations) each send
//!    100,000 results per 1 s cycle as one batch and wait for its ack.
//!    Measured: results acknowledged per second and the aggregator's CPU
//!    seconds per million results.
//! 3. Transition latency: with the load stopped, 200 times flip one member
//!    down by having all 20 locations fail it, and time from the last
//!    location's batch to a subscribed edge receiving the delta.
#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use gslb_proto::pb;
use gslb_proto::pb::agent_service_client::AgentServiceClient;
use gslb_proto::pb::edge_feed_client::EdgeFeedClient;
use gslb_shared::*;
use prost::Message;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

const BIG: usize = 512 * 1024 * 1024;

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_owned())
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

fn cpu_seconds(pid: u32) -> f64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<f64>().ok())
            .unwrap_or(0.0)
    };
    (ticks(11) + ticks(12)) / 100.0
}

fn peak_rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

fn members(n: u64, pool: PoolId) -> Vec<Member> {
    (1..=n)
        .map(|i| {
            Member::new(
                MemberId(i),
                pool,
                format!("m{i}"),
                std::net::Ipv4Addr::from(0x0a00_0000 + i as u32).into(),
                80,
            )
        })
        .collect()
}

fn snapshot_figures(n: u64) {
    let mut s = Snapshot {
        version: 1,
        ..Snapshot::default()
    };
    s.catalog.pools.insert(PoolId(1), Pool::new(PoolId(1), "p"));
    for m in members(n, PoolId(1)) {
        s.facts.insert(m.id, MemberFacts::UP);
        s.catalog.members.insert(m.id, m);
    }
    let mut times = Vec::new();
    let mut size = 0;
    for _ in 0..5 {
        let t = Instant::now();
        let bytes = pb::Snapshot::from(&s).encode_to_vec();
        times.push(t.elapsed());
        size = bytes.len();
    }
    times.sort();
    println!(
        "snapshot members={n} bytes={size} mib={:.1} encode_ms_median={:.1}",
        size as f64 / 1048576.0,
        times[2].as_secs_f64() * 1e3
    );
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn configure(server: &str, token: &str, n: u64) {
    let mut c = gslb_proto::link::admin_client(server, token)
        .await
        .unwrap()
        .max_encoding_message_size(BIG)
        .max_decoding_message_size(BIG);
    // Ids are the server's: on a fresh store it hands out 1 (the check),
    // 2 (the pool), then 3.. (the members), in the order of the batch;
    // the references below name those ids, and the reply is checked.
    let mut check = Check::new(CheckId(0), "tcp", Probe::Tcp(StreamProbe::default()));
    check.interval = Duration::from_secs(1);
    check.timeout = Duration::from_millis(500);
    let mut pool = Pool::new(PoolId(0), "big");
    pool.check = Some(CheckId(1));
    let mut ops = vec![
        pb::WriteOp {
            op: Some(pb::write_op::Op::Create(pb::Object {
                kind: Some(pb::object::Kind::Check((&check).into())),
            })),
        },
        pb::WriteOp {
            op: Some(pb::write_op::Op::Create(pb::Object {
                kind: Some(pb::object::Kind::Pool((&pool).into())),
            })),
        },
    ];
    for m in members(n, PoolId(2)) {
        let m = Member {
            id: MemberId(0),
            ..m
        };
        ops.push(pb::WriteOp {
            op: Some(pb::write_op::Op::Create(pb::Object {
                kind: Some(pb::object::Kind::Member((&m).into())),
            })),
        });
    }
    let t = Instant::now();
    let applied = c
        .apply(pb::ApplyRequest {
            ops,
            dry_run: false,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .applied;
    let last = applied.last().and_then(|op| match &op.op {
        Some(pb::write_op::Op::Update(pb::Object {
            kind: Some(pb::object::Kind::Member(m)),
        })) => Some(m.id),
        _ => None,
    });
    assert_eq!(last, Some(n + 2), "members got ids 3..=n+2");
    println!(
        "configure members={n} apply_ms={:.0}",
        t.elapsed().as_secs_f64() * 1e3
    );
    // Single durable writes with the catalog at full size.
    let singles: u64 = env_or("SINGLE_WRITES", "200").parse().unwrap();
    let mut latencies = Vec::new();
    for i in 0..singles {
        let mut m = c
            .get_member(pb::IdRequest {
                id: 3 + i,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        m.weight = 50 + (i % 50) as u32;
        let t = Instant::now();
        c.update_member(m).await.unwrap();
        latencies.push(t.elapsed());
    }
    latencies.sort();
    let total: f64 = latencies.iter().map(Duration::as_secs_f64).sum();
    println!(
        "single_writes members={n} writes_per_s={:.0} p50_ms={:.2} p99_ms={:.2}",
        latencies.len() as f64 / total,
        latencies[latencies.len() / 2].as_secs_f64() * 1e3,
        latencies[latencies.len() * 99 / 100].as_secs_f64() * 1e3
    );
    // Concurrent durable writes: 16 writers at once, each on its own
    // members, each write acknowledged only once durable.
    let (writers, each) = (16u64, 50u64);
    let mut sets = Vec::new();
    for w in 0..writers {
        let mut members = Vec::new();
        for i in 0..each {
            let id = 1_003 + w * each + i;
            members.push(
                c.get_member(pb::IdRequest {
                    id,
                    ..Default::default()
                })
                .await
                .unwrap()
                .into_inner(),
            );
        }
        sets.push(members);
    }
    let t = Instant::now();
    let tasks: Vec<_> = sets
        .into_iter()
        .map(|members| {
            let mut c = c.clone();
            tokio::spawn(async move {
                for mut m in members {
                    m.weight = 10 + (m.id % 50) as u32;
                    c.update_member(m).await.unwrap();
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    println!(
        "concurrent_writes members={n} writers={writers} writes_per_s={:.0}",
        (writers * each) as f64 / t.elapsed().as_secs_f64()
    );
}

struct Agent {
    tx: mpsc::Sender<pb::AgentMessage>,
    inbound: tonic::Streaming<pb::AggregatorMessage>,
}

async fn agent(server: &str, i: usize) -> Agent {
    let (tx, rx) = mpsc::channel(4);
    let register = pb::Register {
        location: format!("loc{i}"),
        region: "eu".into(),
        version: "bench".into(),
        agent_id: format!("bench-{i}"),
        // As gslb-agent registers: each check once per message, sets in
        // parts.
        checks_by_id: true,
        sets_in_parts: true,
    };
    tx.send(pb::AgentMessage {
        msg: Some(pb::agent_message::Msg::Register(register)),
    })
    .await
    .unwrap();
    let client = AgentServiceClient::connect(server.to_owned())
        .await
        .unwrap()
        .max_decoding_message_size(BIG)
        .max_encoding_message_size(BIG);
    let mut inbound = client
        .clone()
        .session(ReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    // The set, in parts: read until its last part.
    loop {
        let part = inbound.message().await.unwrap().unwrap();
        let Some(pb::aggregator_message::Msg::Full(set)) = part.msg else {
            panic!("expected the assignment set, got {part:?}");
        };
        if !set.more {
            break;
        }
    }
    Agent { tx, inbound }
}

fn batch(seq: u64, cycle: u64, ids: impl Iterator<Item = u64>, failure: i32) -> pb::AgentMessage {
    let results = ids
        .map(|m| pb::ProbeResult {
            member_id: m,
            check_id: 1,
            cycle,
            failure,
            latency_us: 500,
            detail: String::new(),
        })
        .collect();
    pb::AgentMessage {
        msg: Some(pb::agent_message::Msg::Results(pb::ResultBatch {
            seq,
            results,
            dropped: 0,
        })),
    }
}

/// What the edge saw of the first decisions: the steady state begins once
/// every member came up and deltas are small again.
#[derive(Default)]
struct Settling {
    /// Up facts seen.
    ups: AtomicU64,
    /// When the last large delta arrived (ms since the epoch).
    wave_ms: AtomicU64,
}

impl Settling {
    /// A delta this large (facts and round-trip tables) is part of the
    /// first decisions' wave.
    const WAVE_ROWS: usize = 100;

    /// Until `members` came up and no large delta came for 2 s (at most
    /// 30 s).
    async fn wait(&self, members: u64) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while Instant::now() < deadline {
            let quiet = now_ms().saturating_sub(self.wave_ms.load(Ordering::Relaxed)) >= 2_000;
            if self.ups.load(Ordering::Relaxed) >= members && quiet {
                return;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

/// Every agent sends each cycle's results for all members in batches of
/// AGENT_BATCH (gslb-agent's default, 1,000; 0: one batch per cycle, as
/// this benchmark did up to issue 42) spread over the first 800 ms of the
/// cycle, as a real agent's results arrive while its checks finish, then
/// waits for the acks: WINDOW_SECS measured after 3 s of warm-up; one line
/// of figures.
async fn ingest(
    agents: Vec<Agent>,
    n: u64,
    window: Duration,
    pid: u32,
    ui_streams: usize,
    seen: Option<(&mut mpsc::UnboundedReceiver<(u64, Instant)>, &Settling)>,
) -> Vec<Agent> {
    let agents_n = agents.len();
    let mut agents = agents;
    let acked = Arc::new(AtomicU64::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let mut tasks = Vec::new();
    // Flips under load go on the same streams, behind the batches queued.
    let senders: Vec<_> = agents.iter().map(|a| a.tx.clone()).collect();
    let size: u64 = env_or("AGENT_BATCH", "1000").parse().unwrap();
    let ids = 3..n + 3 - FLIPS;
    let size = if size == 0 { ids.end - ids.start } else { size };
    let chunks: Arc<[std::ops::Range<u64>]> = (ids.clone())
        .step_by(size as usize)
        .map(|start| start..(start + size).min(ids.end))
        .collect();
    for mut a in agents.drain(..) {
        let (acked, stop, chunks) = (acked.clone(), stop.clone(), chunks.clone());
        tasks.push(tokio::spawn(async move {
            let mut seq = 0;
            'cycles: while !stop.load(Ordering::Relaxed) {
                let cycle = now_ms() / 1000;
                for (i, ids) in chunks.iter().enumerate() {
                    let at = cycle * 1000 + 800 * i as u64 / chunks.len() as u64;
                    let wait = at.saturating_sub(now_ms());
                    tokio::time::sleep(Duration::from_millis(wait)).await;
                    seq += 1;
                    if a.tx.send(batch(seq, cycle, ids.clone(), 0)).await.is_err() {
                        break 'cycles;
                    }
                }
                // Up to the last batch's ack (flips sent on the stream are
                // acked too, in order).
                while let Ok(Some(m)) = a.inbound.message().await {
                    if let Some(pb::aggregator_message::Msg::Ack(ack)) = m.msg {
                        acked.fetch_add(u64::from(ack.accepted), Ordering::Relaxed);
                        if ack.seq == seq {
                            break;
                        }
                    }
                }
                let next = (cycle + 1) * 1000;
                let wait = next.saturating_sub(now_ms());
                tokio::time::sleep(Duration::from_millis(wait)).await;
            }
            a
        }));
    }
    tokio::time::sleep(Duration::from_secs(3)).await;
    if let Some((_, settling)) = &seen {
        settling.wait(n - FLIPS).await;
    }
    let (a0, c0, t0) = (
        acked.load(Ordering::Relaxed),
        cpu_seconds(pid),
        Instant::now(),
    );
    let flipped = match seen {
        // Members of the flip set, one at a time, while the load runs.
        Some((seen, _)) => {
            let end = Instant::now() + window;
            let mut latencies = Vec::new();
            let mut member = n + 3 - FLIPS;
            while Instant::now() < end && member < n + 3 {
                if let Some(l) = flip(&senders, seen, member, 2_000_000 + member * 100).await {
                    latencies.push(l);
                }
                member += 1;
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            let rest = end.saturating_duration_since(Instant::now());
            tokio::time::sleep(rest).await;
            Some(latencies)
        }
        None => {
            tokio::time::sleep(window).await;
            None
        }
    };
    let (a1, c1, elapsed) = (
        acked.load(Ordering::Relaxed),
        cpu_seconds(pid),
        t0.elapsed().as_secs_f64(),
    );
    stop.store(true, Ordering::Relaxed);
    let mut agents = Vec::new();
    for t in tasks {
        agents.push(t.await.unwrap());
    }
    let results = (a1 - a0) as f64;
    println!(
        "ingest ui_streams={ui_streams} agents={agents_n} members={n} offered_per_s={} results_per_s={:.0} cpu_s_per_million={:.3} aggregator_cpu_pct={:.1} peak_rss_mib={:.0}",
        agents_n as u64 * (n - FLIPS),
        results / elapsed,
        (c1 - c0) / results.max(1.0) * 1e6,
        (c1 - c0) / elapsed * 100.0,
        peak_rss_mib(pid)
    );
    if let Some(latencies) = flipped {
        print_latencies("transition_to_edge_under_ingest", latencies);
    }
    agents
}

/// Members left out of the ingest batches, flipped down one at a time
/// while the load runs.
const FLIPS: u64 = 200;

/// Every agent reports `member` failing in the current cycle; how long
/// from the last report sent until the subscribed edge saw it down.
async fn flip(
    senders: &[mpsc::Sender<pb::AgentMessage>],
    seen: &mut mpsc::UnboundedReceiver<(u64, Instant)>,
    member: u64,
    seq: u64,
) -> Option<Duration> {
    if now_ms() % 1000 > 850 {
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let cycle = now_ms() / 1000;
    let mut sent_at = Instant::now();
    for (i, tx) in senders.iter().enumerate() {
        let failing = batch(
            seq + i as u64,
            cycle,
            std::iter::once(member),
            pb::FailReason::Refused as i32,
        );
        tx.send(failing).await.ok()?;
        sent_at = Instant::now();
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        match tokio::time::timeout_at(deadline.into(), seen.recv()).await {
            Ok(Some((m, at))) if m == member => return Some(at.duration_since(sent_at)),
            Ok(Some(_)) => {}
            _ => return None,
        }
    }
}

/// One line: how many samples, p50, p99 and max, in ms.
fn print_latencies(name: &str, mut latencies: Vec<Duration>) {
    if std::env::var_os("LATENCIES").is_some() {
        let ms: Vec<_> = (latencies.iter())
            .map(|d| format!("{:.1}", d.as_secs_f64() * 1e3))
            .collect();
        println!("{name} in order (ms): {}", ms.join(" "));
    }
    latencies.sort();
    let pct = |p: f64| {
        latencies
            .get(((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1)))
            .map_or(f64::NAN, |d| d.as_secs_f64() * 1e3)
    };
    println!(
        "{name} samples={} p50_ms={:.2} p99_ms={:.2} max_ms={:.2}",
        latencies.len(),
        pct(0.5),
        pct(0.99),
        latencies.last().map_or(f64::NAN, |d| d.as_secs_f64() * 1e3)
    );
}

/// Open `count` web UI event streams on the aggregator's HTTP listener
/// (plain text: the bench runs it `--insecure`), each signed in like a
/// browser; the tasks reading them and the bytes they received.
async fn ui_streams(
    http: std::net::SocketAddr,
    dir: &std::path::Path,
    count: usize,
) -> (Vec<tokio::task::JoinHandle<()>>, Arc<AtomicU64>) {
    use http_body_util::{BodyExt, Full};
    use hyper_util::rt::TokioIo;
    // A token holds at most 64 sessions: one read token per 50 streams.
    let mut file = gslb_aggregator::api::tokens::TokenFile::load(&dir.join("tokens.json")).unwrap();
    let tokens: Vec<String> = (0..count.div_ceil(50))
        .map(|i| {
            file.create(
                &format!("bench-ui-{i}"),
                gslb_aggregator::api::tokens::TokenRole::Read,
                Default::default(),
                None,
                SystemTime::now(),
            )
            .unwrap()
            .0
        })
        .collect();
    file.save(&dir.join("tokens.json")).unwrap();
    let mut tasks = Vec::new();
    let received = Arc::new(AtomicU64::new(0));
    for i in 0..count {
        let token = tokens[i / 50].clone();
        let connect = || async {
            let io = TokioIo::new(tokio::net::TcpStream::connect(http).await.unwrap());
            let (send, conn) = hyper::client::conn::http1::handshake(io).await.unwrap();
            tokio::spawn(conn);
            send
        };
        let mut send = connect().await;
        let sign_in = hyper::Request::post("/ui/session")
            .header("host", http.to_string())
            .header("x-gslb-ui", "1")
            .header("content-type", "application/json")
            .body(Full::new(bytes::Bytes::from(format!(
                "{{\"token\": \"{token}\"}}"
            ))))
            .unwrap();
        let response = send.send_request(sign_in).await.unwrap();
        assert_eq!(response.status(), 204, "UI sign-in");
        let cookie = response.headers()["set-cookie"]
            .to_str()
            .unwrap()
            .split(';')
            .next()
            .unwrap()
            .to_owned();
        let mut send = connect().await;
        let events = hyper::Request::get("/ui/events")
            .header("host", http.to_string())
            .header("cookie", cookie)
            .body(Full::new(bytes::Bytes::new()))
            .unwrap();
        let response = send.send_request(events).await.unwrap();
        assert_eq!(response.status(), 200, "UI event stream");
        let mut body = response.into_body();
        let received = Arc::clone(&received);
        tasks.push(tokio::spawn(async move {
            while let Some(Ok(frame)) = body.frame().await {
                if let Some(data) = frame.data_ref() {
                    received.fetch_add(data.len() as u64, Ordering::Relaxed);
                }
            }
        }));
    }
    (tasks, received)
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let n: u64 = env_or("MEMBERS", "100000").parse().unwrap();
    let agents_n: usize = env_or("AGENTS", "20").parse().unwrap();
    let window = Duration::from_secs(env_or("WINDOW_SECS", "10").parse().unwrap());
    snapshot_figures(n);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let dir = std::env::temp_dir().join(format!("gslb-bench-agg-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let mut tokens = gslb_aggregator::api::tokens::TokenFile::default();
        let (token, _) = tokens
            .create(
                "bench",
                gslb_aggregator::api::tokens::TokenRole::Admin,
                Default::default(),
                None,
                std::time::SystemTime::now(),
            )
            .unwrap();
        tokens.save(&dir.join("tokens.json")).unwrap();
        let bin = env_or("GSLB_AGGREGATOR_BIN", "target/release/gslb-aggregator");
        let mut child = Command::new("taskset")
            .args([
                "-c",
                &env_or("AGGREGATOR_CPU", "1"),
                &bin,
                "--data-dir",
                dir.to_str().unwrap(),
            ])
            .args([
                "--listen-grpc",
                "127.0.0.1:0",
                "--listen-http",
                "127.0.0.1:0",
                "--insecure",
            ])
            .env("RUST_LOG", "warn")
            .env("TOKIO_WORKER_THREADS", "1")
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let line = lines.next().unwrap().unwrap();
        let server = format!("http://{}", line.trim_start_matches("grpc listening on "));
        let http: std::net::SocketAddr = lines
            .next()
            .unwrap()
            .unwrap()
            .trim_start_matches("http listening on ")
            .parse()
            .unwrap();
        let aggregator = Killed(child);
        let pid = aggregator.0.id();
        configure(&server, &token, n).await;

        // The edge: records when each member's facts arrive.
        let mut edge = EdgeFeedClient::connect(server.clone())
            .await
            .unwrap()
            .max_decoding_message_size(BIG);
        let mut feed = edge
            .subscribe(pb::SubscribeRequest {
                edge_id: "bench-edge".into(),
                held_version: 0,
                edge_version: "bench".into(),
            })
            .await
            .unwrap()
            .into_inner();
        let full = feed.message().await.unwrap().unwrap();
        println!("edge full_snapshot_bytes={}", full.encoded_len());
        let (seen_tx, mut seen_rx) = mpsc::unbounded_channel::<(u64, Instant)>();
        let settling = Arc::new(Settling::default());
        let seen_settling = settling.clone();
        tokio::spawn(async move {
            while let Ok(Some(update)) = feed.message().await {
                let at = Instant::now();
                if let Some(pb::snapshot_update::Update::Delta(d)) = update.update {
                    if d.facts.len() + d.rtt.len() >= Settling::WAVE_ROWS {
                        seen_settling.wave_ms.store(now_ms(), Ordering::Relaxed);
                    }
                    for f in &d.facts {
                        if f.health == pb::Health::Down as i32 {
                            let _ = seen_tx.send((f.member_id, at));
                        } else if f.health == pb::Health::Up as i32 {
                            seen_settling.ups.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            }
        });

        let mut agents = Vec::new();
        for i in 0..agents_n {
            agents.push(agent(&server, i).await);
        }

        // Ingest with no web UI open, then with UI_STREAMS event streams
        // (signed-in pages) open: the UI must not slow the core.
        let agents = ingest(agents, n, window, pid, 0, Some((&mut seen_rx, &settling))).await;
        let ui_n = env_or("UI_STREAMS", "100").parse().unwrap();
        let streams = ui_streams(http, &dir, ui_n).await;
        let agents = ingest(agents, n, window, pid, ui_n, None).await;
        let (streams, received) = streams;
        let open = streams.iter().filter(|s| !s.is_finished()).count();
        for s in streams {
            s.abort();
        }
        println!(
            "ui_streams opened={ui_n} still_open={open} bytes_received={}",
            received.load(Ordering::Relaxed)
        );
        let mut agents = agents;

        // Transition latency: the load is stopped; flip members down one at a time.
        tokio::time::sleep(Duration::from_secs(2)).await;
        while seen_rx.try_recv().is_ok() {}
        let senders: Vec<_> = agents.iter().map(|a| a.tx.clone()).collect();
        let mut latencies = Vec::new();
        for trial in 0..200u64 {
            let member = 3 + trial;
            let seq = 1_000_000 + trial * 100;
            if let Some(l) = flip(&senders, &mut seen_rx, member, seq).await {
                latencies.push(l);
            }
            for a in agents.iter_mut() {
                let _ = a.inbound.message().await;
            }
        }
        print_latencies("transition_to_edge", latencies);
        drop(aggregator);
        let _ = std::fs::remove_dir_all(&dir);
    });
}
