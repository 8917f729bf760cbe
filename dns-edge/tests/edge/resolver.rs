//! A real resolver in front of the edge: unbound
//! ([`gslb_e2e::unbound`]), with the test zone as a stub zone pointing at
//! the edge. Answers,
//! NXDOMAIN, a CNAME chain, and a UDP answer too big for unbound's 512-byte
//! buffer, which it must fetch again over TCP. Floods of other classes
//! (CH, NONE, ANY) never change what an IN query is answered.

use std::net::SocketAddr;

use gslb_e2e::unbound::{Unbound, UnboundConf};

use crate::support::*;

#[test]
fn unbound_resolves_through_the_edge_and_retries_truncated_answers_over_tcp() {
    let (dir, _agg, edge, _) = mesh("unbound", &[]);
    let (_unbound, resolver) = start_unbound(&dir, edge.dns());

    let www = dig(resolver, &["www.example.test", "A"]);
    assert!(flags(&www).contains(&"ra"), "a resolver's answer: {www}");
    assert_eq!(
        short(resolver, &["www.example.test"]),
        ["192.0.2.1", "192.0.2.2"]
    );
    assert_eq!(rcode(&dig(resolver, &["nope.example.test"])), "NXDOMAIN");
    assert_eq!(
        short(resolver, &["alias.example.test"]),
        ["192.0.2.1", "192.0.2.2", "www.example.test."]
    );
    // Six 100-byte TXT strings do not fit unbound's 512-byte buffer: the
    // edge sets TC, unbound asks again over TCP and gets all six.
    let txt = dig(resolver, &["big.example.test", "TXT", "+tcp"]);
    assert!(txt.contains("ANSWER: 6,"), "{txt}");
    let (_, metrics) = edge.get("/metrics");
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("gslb_edge_truncated_total ") && !l.ends_with(" 0")),
        "the edge truncated over UDP: {metrics}"
    );
}

/// A query for `name` A in `class`, with `id`.
fn class_query(name: &str, class: u16, id: u16) -> Vec<u8> {
    let mut q = id.to_be_bytes().to_vec();
    q.extend_from_slice(&[0, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
    for label in name.split('.') {
        q.push(label.len() as u8);
        q.extend_from_slice(label.as_bytes());
    }
    q.push(0);
    q.extend_from_slice(&[0, 1]);
    q.extend_from_slice(&class.to_be_bytes());
    q
}

#[test]
fn floods_of_other_classes_do_not_change_in_answers_through_unbound() {
    // One CH query used to be kept under the IN query's key: every later
    // IN query of the name on that worker got the CH question back, and
    // unbound answered SERVFAIL. Flood CH, NONE and ANY from many source
    // ports (so every UDP worker sees them), then resolve through unbound.
    let (dir, _agg, edge, _) = mesh("class-flood", &[]);
    let dns = edge.dns();
    let names = [
        "www.example.test",
        "alias.example.test",
        "nope.example.test",
    ];
    let mut id = 0u16;
    for _ in 0..40 {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        socket
            .set_read_timeout(Some(std::time::Duration::from_secs(2)))
            .unwrap();
        for name in names {
            for class in [3u16, 254, 255] {
                id = id.wrapping_add(1);
                let q = class_query(name, class, id);
                socket.send_to(&q, dns).unwrap();
                let mut buf = [0u8; 1500];
                let (n, _) = socket.recv_from(&mut buf).unwrap();
                assert!(n >= q.len());
                assert_eq!(&buf[12..q.len()], &q[12..], "class {class} echoed");
                assert_eq!(buf[3] & 0x0f, 5, "class {class} of {name} refused");
            }
            // An IN query from the same socket right after: its own
            // question, answered.
            id = id.wrapping_add(1);
            let q = class_query(name, 1, id);
            socket.send_to(&q, dns).unwrap();
            let mut buf = [0u8; 1500];
            let (n, _) = socket.recv_from(&mut buf).unwrap();
            assert!(n >= q.len());
            assert_eq!(&buf[12..q.len()], &q[12..], "IN question of {name}");
            assert_ne!(buf[3] & 0x0f, 5, "IN query of {name} not refused");
        }
    }
    let (_unbound, resolver) = start_unbound(&dir, dns);
    assert_eq!(
        short(resolver, &["www.example.test"]),
        ["192.0.2.1", "192.0.2.2"]
    );
    assert_eq!(
        short(resolver, &["alias.example.test"]),
        ["192.0.2.1", "192.0.2.2", "www.example.test."]
    );
    assert_eq!(rcode(&dig(resolver, &["nope.example.test"])), "NXDOMAIN");
    for _ in 0..20 {
        let direct = dig(dns, &["www.example.test", "A", "+norecurse"]);
        assert_eq!(rcode(&direct), "NOERROR", "{direct}");
        assert!(!direct.contains("mismatch"), "{direct}");
    }
}

/// unbound on a free loopback port, with the test zone stubbed to `dns`.
fn start_unbound(dir: &std::path::Path, dns: SocketAddr) -> (Unbound, SocketAddr) {
    let unbound = Unbound::start(
        dir,
        &UnboundConf {
            stubs: vec![("example.test".into(), dns)],
            ready: "www.example.test".into(),
            trust_anchors: Vec::new(),
            ..UnboundConf::default()
        },
    );
    let addr = unbound.addr;
    (unbound, addr)
}
