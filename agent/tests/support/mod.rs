//! Real servers on loopback for checker and uplink tests.
#![allow(dead_code, missing_docs, clippy::unwrap_used)]

pub mod fake_aggregator;

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use gslb_agent::buffer::ResultBuffer;
use gslb_agent::checker::destination::DenyList;
use gslb_agent::checker::tls::ProbeTls;
use gslb_agent::checker::{Failure, Registry};
use gslb_agent::clock::Clock;
use gslb_agent::metrics::Metrics;
use gslb_agent::scheduler::{ProbeContext, probe_once};
use gslb_agent::target::{InvalidTarget, Target};
use gslb_proto::pb;
use gslb_shared::assignment::Offered;
use gslb_shared::{Check, CheckId, FailReason, HttpProbe, Probe, StreamProbe};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, UdpSocket};

pub const LOCAL: &str = "127.0.0.1";

pub fn assignment(member: u64, address: &str, port: u16, check: &Check) -> pb::Assignment {
    pb::Assignment {
        member_id: member,
        check_id: check.id.0,
        address: address.into(),
        port: u32::from(port),
        check: Some(pb::Check::from(check)),
    }
}

/// What the agent makes of assignments as they arrive on the wire.
pub fn offer(set: &[pb::Assignment]) -> Vec<Offered> {
    set.iter().map(Offered::from).collect()
}

/// The target the agent makes of an assignment from the wire.
pub fn parse(a: &pb::Assignment) -> Result<Target, InvalidTarget> {
    Target::from_offered(&Offered::from(a))
}

/// A TCP/UDP probe sending `send` and expecting `expect`.
pub fn stream(send: &str, expect: Option<&str>) -> StreamProbe {
    StreamProbe {
        send: send.into(),
        expect: expect.map(Into::into),
    }
}

/// An HTTP probe of `path`, adjusted by `configure`.
pub fn http(path: &str, configure: impl FnOnce(&mut HttpProbe)) -> Probe {
    let mut h = HttpProbe {
        path: path.into(),
        ..HttpProbe::default()
    };
    configure(&mut h);
    Probe::Http(h)
}

pub fn check(probe: Probe, timeout_ms: u64) -> Check {
    let mut c = Check::new(CheckId(1), "test", probe);
    c.interval = Duration::from_secs(2);
    c.timeout = Duration::from_millis(timeout_ms);
    c
}

pub fn target(probe: Probe, port: u16) -> Target {
    parse(&assignment(1, LOCAL, port, &check(probe, 1_000))).unwrap()
}

pub fn context(tls: Option<ProbeTls>) -> Arc<ProbeContext> {
    context_with(tls, no_resolver())
}

/// A context whose checkers and hostname targets use `resolver`.
pub fn context_with(
    tls: Option<ProbeTls>,
    resolver: gslb_proto::link::resolve::Resolver,
) -> Arc<ProbeContext> {
    let tls = tls.unwrap_or_else(|| ProbeTls::new(None, true).unwrap());
    let metrics = Metrics::new();
    Arc::new(ProbeContext {
        registry: Registry::builtin(
            tls,
            Arc::new(DenyList::new(
                gslb_agent::checker::destination::default_ranges(),
            )),
            resolver.clone(),
            metrics.cert_expiry.clone(),
        ),
        limit: tokio::sync::Semaphore::new(64),
        buffer: Arc::new(ResultBuffer::new(10_000, 100)),
        clock: Clock::system(),
        metrics,
        resolver,
    })
}

/// A resolver at a closed loopback port: for tests with IP targets only.
pub fn no_resolver() -> gslb_proto::link::resolve::Resolver {
    gslb_proto::link::resolve::Resolver::server(
        SocketAddr::from(([127, 0, 0, 1], 9)),
        Duration::from_millis(200),
    )
}

/// Probe once; the failure reason, or None on pass.
pub async fn probe(ctx: &ProbeContext, target: &Target) -> Result<(), Failure> {
    probe_once(target, ctx).await.0
}

pub fn reason(outcome: Result<(), Failure>) -> Option<FailReason> {
    outcome.err().map(|f| f.reason)
}

/// A TCP server: accepts, optionally replies `reply` after reading, counts connections.
pub async fn tcp_server(reply: Option<&'static [u8]>) -> (u16, Arc<AtomicUsize>) {
    let listener = TcpListener::bind((LOCAL, 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let accepted = Arc::new(AtomicUsize::new(0));
    let count = accepted.clone();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            count.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                if let Some(reply) = reply {
                    let mut buf = [0u8; 1024];
                    let _ = stream.read(&mut buf).await;
                    let _ = stream.write_all(reply).await;
                }
                // Hold the connection open a while (a silent server never writes).
                tokio::time::sleep(Duration::from_secs(5)).await;
            });
        }
    });
    (port, accepted)
}

/// A port with nothing listening (bound, then released).
pub async fn closed_tcp_port() -> u16 {
    let l = TcpListener::bind((LOCAL, 0)).await.unwrap();
    l.local_addr().unwrap().port()
}

pub async fn closed_udp_port() -> u16 {
    let s = UdpSocket::bind((LOCAL, 0)).await.unwrap();
    s.local_addr().unwrap().port()
}

/// UDP server answering `ECHO <payload>`.
pub async fn udp_echo() -> u16 {
    let socket = UdpSocket::bind((LOCAL, 0)).await.unwrap();
    let port = socket.local_addr().unwrap().port();
    tokio::spawn(async move {
        let mut buf = [0u8; 2048];
        loop {
            let Ok((n, from)) = socket.recv_from(&mut buf).await else {
                return;
            };
            let mut reply = b"ECHO ".to_vec();
            reply.extend_from_slice(&buf[..n]);
            let _ = socket.send_to(&reply, from).await;
        }
    });
    port
}

/// A server that writes `greeting` as a MySQL packet (sequence 0) on accept.
pub async fn mysql_server(payload: &'static [u8]) -> u16 {
    let listener = TcpListener::bind((LOCAL, 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move {
        loop {
            let Ok((mut stream, _)) = listener.accept().await else {
                return;
            };
            let len = payload.len() as u32;
            let mut packet = vec![len as u8, (len >> 8) as u8, (len >> 16) as u8, 0];
            packet.extend_from_slice(payload);
            let _ = stream.write_all(&packet).await;
        }
    });
    port
}

pub fn addr(port: u16) -> SocketAddr {
    SocketAddr::new(LOCAL.parse::<IpAddr>().unwrap(), port)
}

/// Poll `cond` every 10 ms until it holds or `within` passes; true if it held.
pub async fn eventually(within: Duration, mut cond: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if cond() {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// GET `http://{addr}{path}` on a fresh connection: status and body, or None
/// if nothing answers.
pub async fn http_get(addr: &str, path: &str) -> Option<(u16, String)> {
    use http_body_util::BodyExt;
    let stream = tokio::net::TcpStream::connect(addr).await.ok()?;
    let (mut sender, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .ok()?;
    let conn = tokio::spawn(conn);
    let request = hyper::Request::get(path)
        .header("host", addr)
        .body(http_body_util::Empty::<bytes::Bytes>::new())
        .ok()?;
    let response = sender.send_request(request).await.ok()?;
    let status = response.status().as_u16();
    let body = response.into_body().collect().await.ok()?.to_bytes();
    conn.abort();
    Some((status, String::from_utf8_lossy(&body).into_owned()))
}
