//! DNS over TCP (RFC 7766): pipelined queries, the idle timeout, the
//! per-client connection cap.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::support::*;

fn framed(id: u16, name: &str) -> Vec<u8> {
    let mut q = id.to_be_bytes().to_vec();
    q.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
    for label in name.split('.') {
        q.push(label.len() as u8);
        q.extend_from_slice(label.as_bytes());
    }
    q.extend_from_slice(&[0, 0, 1, 0, 1]);
    let mut out = (q.len() as u16).to_be_bytes().to_vec();
    out.extend(q);
    out
}

fn read_reply(s: &mut TcpStream) -> Option<Vec<u8>> {
    let mut len = [0u8; 2];
    s.read_exact(&mut len).ok()?;
    let mut body = vec![0; usize::from(u16::from_be_bytes(len))];
    s.read_exact(&mut body).ok()?;
    Some(body)
}

/// True when the server closes `s` within `secs`.
fn closed_within(s: &mut TcpStream, secs: u64) -> bool {
    s.set_read_timeout(Some(Duration::from_secs(secs))).unwrap();
    let mut b = [0u8; 1];
    matches!(s.read(&mut b), Ok(0))
}

#[test]
fn pipelined_queries_are_answered_in_order_and_idle_connections_close() {
    let (_dir, _agg, edge, _) = mesh(
        "tcp",
        &["--tcp-idle-timeout", "500ms", "--tcp-max-per-client", "2"],
    );
    let dns = edge.dns();
    let mut s = TcpStream::connect(dns).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut burst = Vec::new();
    for (id, name) in [
        (1, "www.example.test"),
        (2, "nope.example.test"),
        (3, "ns1.example.test"),
    ] {
        burst.extend(framed(id, name));
    }
    s.write_all(&burst).unwrap();
    let ids: Vec<u16> = (0..3)
        .map(|_| {
            let r = read_reply(&mut s).unwrap();
            u16::from_be_bytes([r[0], r[1]])
        })
        .collect();
    assert_eq!(ids, [1, 2, 3]);

    // The cap: a third connection from this address is closed at once,
    // while the first two still work.
    let mut second = TcpStream::connect(dns).unwrap();
    let mut third = TcpStream::connect(dns).unwrap();
    assert!(
        closed_within(&mut third, 2),
        "third connection over the per-client cap"
    );
    second.write_all(&framed(9, "www.example.test")).unwrap();
    assert!(read_reply(&mut second).is_some());

    // Idle: closed after the timeout.
    let start = Instant::now();
    assert!(closed_within(&mut s, 5));
    assert!(start.elapsed() >= Duration::from_millis(300));
}

/// `name` TXT, framed for TCP.
fn framed_txt(id: u16, name: &str) -> Vec<u8> {
    let mut q = framed(id, name);
    let l = q.len();
    q[l - 4..l - 2].copy_from_slice(&16u16.to_be_bytes());
    q
}

/// The open DNS TCP connections per the edge's metrics.
fn open_connections(edge: &Edge) -> Option<u64> {
    let (_, metrics) = edge.get("/metrics");
    metrics
        .lines()
        .find(|l| l.starts_with("gslb_edge_tcp_connections "))
        .and_then(|l| l.rsplit(' ').next()?.parse().ok())
}

/// Fill the edge's send path: thousands of pipelined queries for a large
/// answer, and never read a byte.
fn never_read(dns: std::net::SocketAddr) -> TcpStream {
    let mut s = TcpStream::connect(dns).unwrap();
    s.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
    let burst: Vec<u8> = framed_txt(7, "big.example.test").repeat(4_000);
    // Until the edge stops taking queries (it is blocked writing answers
    // we do not read, and its receive buffer is full); bounded.
    for _ in 0..2_000 {
        if s.write_all(&burst).is_err() {
            return s;
        }
    }
    panic!("the edge kept reading 1.2 GB of queries whose answers were never read");
}

#[test]
fn a_client_that_never_reads_is_closed_after_the_write_timeout() {
    let (_dir, _agg, edge, _) = mesh("tcp-never-reads", &["--tcp-write-timeout", "300ms"]);
    let _s = never_read(edge.dns());
    wait_until(20, "the never-reading connection to be closed", || {
        open_connections(&edge) == Some(0)
    });
    let (_, metrics) = edge.get("/metrics");
    assert!(
        metrics.contains("gslb_edge_tcp_write_timeouts_total 1"),
        "closed by the write timeout: {metrics}"
    );
}

#[test]
fn the_drain_does_not_wait_forever_for_a_client_that_never_reads() {
    let (_dir, _agg, mut edge, _) = mesh(
        "tcp-drain-bound",
        &[
            "--tcp-write-timeout",
            "60s",
            "--tcp-drain-timeout",
            "1s",
            "--min-drain-secs",
            "0",
        ],
    );
    let _s = never_read(edge.dns());
    wait_until(20, "the never-reading connection to be open", || {
        open_connections(&edge) == Some(1)
    });
    let asked = Instant::now();
    edge.proc.terminate();
    wait_until(20, "the edge to exit", || edge.proc.exited());
    assert!(
        asked.elapsed() < Duration::from_secs(10),
        "{:?}",
        asked.elapsed()
    );
    assert!(
        edge.proc
            .stderr
            .contains("closing the DNS TCP connections still open after tcp-drain-timeout"),
        "{}",
        edge.proc.stderr.all().join("\n")
    );
}
