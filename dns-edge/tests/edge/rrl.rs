//! Response rate limiting: beyond the rate a client subnet gets some
//! answers truncated (slip) and the rest dropped.

use std::net::{SocketAddr, UdpSocket};
use std::time::Duration;

use crate::support::*;

#[test]
fn responses_beyond_the_rate_are_slipped_or_dropped() {
    let (_dir, _agg, edge, _) = mesh(
        "rrl",
        &["--rrl-rate", "5", "--rrl-burst", "5", "--rrl-slip", "2"],
    );
    let (full, truncated) = flood(edge.dns(), "127.0.0.1:0");
    assert_limited(full, truncated);
    let (_, metrics) = edge.get("/metrics");
    assert!(metrics.contains("gslb_edge_rrl_dropped_total"), "{metrics}");
}

/// 40 queries at once to `dns` from a socket bound to `from`: the replies
/// in full and truncated.
pub fn flood(dns: SocketAddr, from: &str) -> (usize, usize) {
    let s = UdpSocket::bind(from).unwrap();
    s.set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let q = b"\x00\x07\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x03www\x07example\x04test\x00\x00\x01\x00\x01";
    for _ in 0..40 {
        s.send_to(q, dns).unwrap();
    }
    let (mut full, mut truncated) = (0, 0);
    let mut buf = [0u8; 512];
    while let Ok(n) = s.recv(&mut buf) {
        if buf[2] & 0x02 != 0 {
            truncated += 1;
        } else {
            full += 1;
        }
        assert!(n >= 12);
    }
    (full, truncated)
}

/// What `--rrl-rate 5 --rrl-burst 5 --rrl-slip 2` lets through of [`flood`].
pub fn assert_limited(full: usize, truncated: usize) {
    assert!(
        (5..=7).contains(&full),
        "about the burst answered in full: {full}"
    );
    assert!(
        (14..=20).contains(&truncated),
        "every second limited reply slips: {truncated}"
    );
}
