//! Agent load benchmark (run by `scripts/bench-agent.sh`).
//!
//! Starts TCP, HTTP, DNS and gRPC health backends and a fake aggregator on
//! loopback, runs the real `gslb-agent` (pinned by the script to its own
//! core) with 10,000 assigned targets of each protocol in turn, and
//! measures probes per second, agent CPU per 1,000 probes and peak RSS.
//! Then drives Prometheus blackbox_exporter (pinned to the same core,
//! GOMAXPROCS=1) with the same probes through its /probe endpoint and
//! measures its CPU per 1,000 probes.
#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)]

#[path = "../tests/support/fake_aggregator.rs"]
mod fake_aggregator;

use std::convert::Infallible;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use fake_aggregator::{Behaviour, start_aggregator};
use gslb_proto::pb;
use gslb_shared::{Check, CheckId, DnsProbe, GrpcProbe, HttpProbe, Probe, StreamProbe};
use http_body_util::BodyExt;
use hyper_util::rt::TokioIo;

const BACKEND_PORTS: usize = 16;

fn env_or(name: &str, default: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| default.to_owned())
}

/// utime + stime of a process, in seconds.
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

/// Peak resident set size in MiB.
fn peak_rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

async fn tcp_backends() -> Vec<u16> {
    let mut ports = Vec::new();
    for _ in 0..BACKEND_PORTS {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        ports.push(listener.local_addr().unwrap().port());
        tokio::spawn(async move {
            loop {
                if let Ok((stream, _)) = listener.accept().await {
                    drop(stream);
                }
            }
        });
    }
    ports
}

async fn http_backends() -> Vec<u16> {
    let mut ports = Vec::new();
    for _ in 0..BACKEND_PORTS {
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        ports.push(listener.local_addr().unwrap().port());
        tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                tokio::spawn(async move {
                    let service = hyper::service::service_fn(|_req| async {
                        Ok::<_, Infallible>(hyper::Response::new(http_body_util::Full::new(
                            bytes::Bytes::from_static(b"ok"),
                        )))
                    });
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
    }
    ports
}

/// UDP DNS servers answering every query NOERROR with no records (the
/// query with QR set): what the agent does per probe is the same.
async fn dns_backends() -> Vec<u16> {
    let mut ports = Vec::new();
    for _ in 0..BACKEND_PORTS {
        let socket = tokio::net::UdpSocket::bind(("127.0.0.1", 0)).await.unwrap();
        ports.push(socket.local_addr().unwrap().port());
        tokio::spawn(async move {
            let mut buf = [0u8; 1500];
            loop {
                let Ok((n, from)) = socket.recv_from(&mut buf).await else {
                    continue;
                };
                if n >= 12 {
                    buf[2] |= 0x80; // QR
                    let _ = socket.send_to(&buf[..n], from).await;
                }
            }
        });
    }
    ports
}

/// tonic servers with the standard health service (serving).
async fn grpc_backends() -> Vec<u16> {
    let mut ports = Vec::new();
    for _ in 0..BACKEND_PORTS {
        let (_reporter, service) = tonic_health::server::health_reporter();
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .unwrap();
        ports.push(listener.local_addr().unwrap().port());
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(service)
                .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
        );
    }
    ports
}

fn assignments(n: u64, probe: Probe, interval: Duration, ports: &[u16]) -> Vec<pb::Assignment> {
    let mut check = Check::new(CheckId(1), "bench", probe);
    check.interval = interval;
    check.timeout = (interval / 2).min(Duration::from_secs(1));
    let pb_check = pb::Check::from(&check);
    (1..=n)
        .map(|m| pb::Assignment {
            member_id: m,
            check_id: 1,
            address: "127.0.0.1".into(),
            port: u32::from(ports[m as usize % ports.len()]),
            check: Some(pb_check.clone()),
        })
        .collect()
}

struct Figures {
    name: String,
    probes_per_s: f64,
    cpu_per_1000: f64,
    cpu_share: f64,
    pass_ratio: f64,
    peak_rss_mib: f64,
}

impl Figures {
    fn print(&self) {
        println!(
            "{} probes_per_s={:.0} cpu_s_per_1000_probes={:.4} cpu_pct={:.1} pass_ratio={:.4} peak_rss_mib={:.1}",
            self.name,
            self.probes_per_s,
            self.cpu_per_1000,
            self.cpu_share * 100.0,
            self.pass_ratio,
            self.peak_rss_mib
        );
    }
}

async fn run_agent(
    name: &str,
    targets: Vec<pb::Assignment>,
    warmup: Duration,
    window: Duration,
) -> Figures {
    let (port, seen) = start_aggregator(targets, Behaviour::Normal, false).await;
    let agent_bin = env_or("GSLB_AGENT_BIN", "target/release/gslb-agent");
    let agent_cpu = env_or("AGENT_CPU", "1");
    let child = Command::new("taskset")
        .args([
            "-c",
            &agent_cpu,
            &agent_bin,
            "--location",
            "bench1",
            "--region",
            "eu",
        ])
        .args([
            "--aggregator",
            &format!("http://127.0.0.1:{port}"),
            "--concurrency",
            "4096",
            "--batch-size",
            "2000",
        ])
        .env("RUST_LOG", "warn")
        .env("TOKIO_WORKER_THREADS", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let agent = Killed(child);
    let pid = agent.0.id();
    tokio::time::sleep(warmup).await;
    let (r0, p0) = {
        let s = seen.lock().unwrap();
        (s.results, s.passed)
    };
    let c0 = cpu_seconds(pid);
    let t0 = Instant::now();
    tokio::time::sleep(window).await;
    let elapsed = t0.elapsed().as_secs_f64();
    let c1 = cpu_seconds(pid);
    let (r1, p1) = {
        let s = seen.lock().unwrap();
        (s.results, s.passed)
    };
    let probes = (r1 - r0) as f64;
    Figures {
        name: name.into(),
        probes_per_s: probes / elapsed,
        cpu_per_1000: (c1 - c0) / probes.max(1.0) * 1000.0,
        cpu_share: (c1 - c0) / elapsed,
        pass_ratio: (p1 - p0) as f64 / probes.max(1.0),
        peak_rss_mib: peak_rss_mib(pid),
    }
}

async fn run_blackbox(
    name: &str,
    module: &str,
    targets: Vec<String>,
    window: Duration,
) -> Option<Figures> {
    let bin = env_or("BLACKBOX_BIN", "/usr/bin/prometheus-blackbox-exporter");
    if !std::path::Path::new(&bin).exists() {
        println!("{name} not measured: {bin} not found");
        return None;
    }
    let dir = std::env::temp_dir().join(format!("gslb-bench-blackbox-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("blackbox.yml");
    std::fs::write(
        &config,
        "modules:\n  tcp_connect:\n    prober: tcp\n    timeout: 1s\n  http_2xx:\n    prober: http\n    timeout: 1s\n    http:\n      preferred_ip_protocol: ip4\n      no_follow_redirects: true\n  dns_udp:\n    prober: dns\n    timeout: 1s\n    dns:\n      query_name: www.example.test\n      query_type: A\n      transport_protocol: udp\n      preferred_ip_protocol: ip4\n  grpc_health:\n    prober: grpc\n    timeout: 1s\n    grpc:\n      tls: false\n      preferred_ip_protocol: ip4\n",
    )
    .unwrap();
    let listen = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap()
        .local_addr()
        .unwrap();
    let cpu = env_or("AGENT_CPU", "1");
    let child = Command::new("taskset")
        .args([
            "-c",
            &cpu,
            &bin,
            &format!("--config.file={}", config.display()),
            &format!("--web.listen-address={listen}"),
        ])
        .env("GOMAXPROCS", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let blackbox = Killed(child);
    let pid = blackbox.0.id();
    let deadline = Instant::now() + Duration::from_secs(10);
    while tokio::net::TcpStream::connect(listen).await.is_err() {
        assert!(Instant::now() < deadline, "blackbox_exporter did not start");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let done = Arc::new(AtomicU64::new(0));
    let passed = Arc::new(AtomicU64::new(0));
    let stop = Instant::now() + window + Duration::from_secs(2);
    let targets = Arc::new(targets);
    let mut workers = Vec::new();
    for w in 0..64usize {
        let (done, passed, targets, module) = (
            done.clone(),
            passed.clone(),
            targets.clone(),
            module.to_owned(),
        );
        workers.push(tokio::spawn(async move {
            let Ok(stream) = tokio::net::TcpStream::connect(listen).await else {
                return;
            };
            let Ok((mut sender, conn)) =
                hyper::client::conn::http1::handshake(TokioIo::new(stream)).await
            else {
                return;
            };
            tokio::spawn(conn);
            let mut i = w;
            while Instant::now() < stop {
                let target = &targets[i % targets.len()];
                i += 64;
                let uri = format!("/probe?module={module}&target={target}");
                let req = hyper::Request::get(uri)
                    .header("host", "blackbox")
                    .body(http_body_util::Empty::<bytes::Bytes>::new())
                    .unwrap();
                let Ok(resp) = sender.send_request(req).await else {
                    return;
                };
                let Ok(body) = resp.into_body().collect().await else {
                    return;
                };
                done.fetch_add(1, Ordering::Relaxed);
                if body.to_bytes().windows(15).any(|w| w == b"probe_success 1") {
                    passed.fetch_add(1, Ordering::Relaxed);
                }
            }
        }));
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (d0, p0, c0, t0) = (
        done.load(Ordering::Relaxed),
        passed.load(Ordering::Relaxed),
        cpu_seconds(pid),
        Instant::now(),
    );
    tokio::time::sleep(window).await;
    let elapsed = t0.elapsed().as_secs_f64();
    let (d1, p1, c1) = (
        done.load(Ordering::Relaxed),
        passed.load(Ordering::Relaxed),
        cpu_seconds(pid),
    );
    let rss = peak_rss_mib(pid);
    for w in workers {
        w.abort();
    }
    let probes = (d1 - d0) as f64;
    Some(Figures {
        name: name.into(),
        probes_per_s: probes / elapsed,
        cpu_per_1000: (c1 - c0) / probes.max(1.0) * 1000.0,
        cpu_share: (c1 - c0) / elapsed,
        pass_ratio: (p1 - p0) as f64 / probes.max(1.0),
        peak_rss_mib: rss,
    })
}

fn main() {
    // `cargo test --benches` runs bench targets with --bench absent; only measure when asked.
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    let targets: u64 = env_or("TARGETS", "10000").parse().unwrap();
    let window = Duration::from_secs(env_or("WINDOW_SECS", "20").parse().unwrap());
    let warmup = Duration::from_secs(env_or("WARMUP_SECS", "6").parse().unwrap());
    let tcp_interval = Duration::from_millis(env_or("TCP_INTERVAL_MS", "1000").parse().unwrap());
    let http_interval = Duration::from_millis(env_or("HTTP_INTERVAL_MS", "2500").parse().unwrap());
    let dns_interval = Duration::from_millis(env_or("DNS_INTERVAL_MS", "1000").parse().unwrap());
    let grpc_interval = Duration::from_millis(env_or("GRPC_INTERVAL_MS", "2500").parse().unwrap());
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async move {
        let tcp_ports = tcp_backends().await;
        let http_ports = http_backends().await;
        let dns_ports = dns_backends().await;
        let grpc_ports = grpc_backends().await;
        println!(
            "# {targets} targets; TCP every {tcp_interval:?} (offered {:.0}/s), HTTP every {http_interval:?} (offered {:.0}/s); window {window:?}",
            targets as f64 / tcp_interval.as_secs_f64(),
            targets as f64 / http_interval.as_secs_f64()
        );
        let mut all = Vec::new();
        let tcp = assignments(targets, Probe::Tcp(StreamProbe::default()), tcp_interval, &tcp_ports);
        all.push(run_agent("gslb-agent tcp", tcp, warmup, window).await);
        let http = HttpProbe { path: "/health".into(), ..HttpProbe::default() };
        all.push(run_agent("gslb-agent http", assignments(targets, Probe::Http(http), http_interval, &http_ports), warmup, window).await);
        let dns = Probe::Dns(DnsProbe::new("www.example.test"));
        all.push(run_agent("gslb-agent dns", assignments(targets, dns, dns_interval, &dns_ports), warmup, window).await);
        let grpc = Probe::Grpc(GrpcProbe::default());
        all.push(run_agent("gslb-agent grpc", assignments(targets, grpc, grpc_interval, &grpc_ports), warmup, window).await);
        let tcp_targets = tcp_ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
        let http_targets = http_ports.iter().map(|p| format!("http://127.0.0.1:{p}/health")).collect();
        all.extend(run_blackbox("blackbox tcp", "tcp_connect", tcp_targets, window).await);
        all.extend(run_blackbox("blackbox http", "http_2xx", http_targets, window).await);
        let dns_targets = dns_ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
        all.extend(run_blackbox("blackbox dns", "dns_udp", dns_targets, window).await);
        let grpc_targets = grpc_ports.iter().map(|p| format!("127.0.0.1:{p}")).collect();
        all.extend(run_blackbox("blackbox grpc", "grpc_health", grpc_targets, window).await);
        for f in &all {
            f.print();
        }
        let per = |name: &str| all.iter().find(|f| f.name == name).map(|f| f.cpu_per_1000);
        for proto in ["tcp", "http", "dns", "grpc"] {
            if let (Some(ours), Some(theirs)) = (per(&format!("gslb-agent {proto}")), per(&format!("blackbox {proto}"))) {
                println!("ratio {proto} cpu_per_1000 ours/theirs={:.3}", ours / theirs);
            }
        }
    });
}
