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
