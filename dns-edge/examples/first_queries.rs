//! Ask a DNS server the first N queries of a query file (`NAME TYPE`
//! lines, as dnsperf reads), one at a time, and print the latency
//! percentiles: how a freshly started edge answers its first queries.
//! `cargo run --release -p gslb-edge --example first_queries -- ADDR FILE N`.
//! With `SOURCES=127.0.1.1,127.0.2.1` (loopback addresses), query i is sent
//! from source i mod the count (geo workloads).
//! Loopback only: the address must be in 127.0.0.0/8 or ::1.
#![allow(clippy::unwrap_used, clippy::print_stdout)]

use std::net::{SocketAddr, UdpSocket};
use std::str::FromStr;
use std::time::{Duration, Instant};

use domain::base::iana::{Class, Rtype};
use domain::base::{MessageBuilder, Name};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, addr, file, n] = args.as_slice() else {
        panic!("usage: first_queries ADDR FILE N");
    };
    let addr: SocketAddr = addr.parse().unwrap();
    assert!(addr.ip().is_loopback(), "loopback only");
    let n: usize = n.parse().unwrap();
    let text = std::fs::read_to_string(file).unwrap();
    let questions: Vec<(Name<Vec<u8>>, Rtype)> = text
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(name, t)| (Name::from_str(name).unwrap(), Rtype::from_str(t).unwrap()))
        .collect();
    assert!(!questions.is_empty(), "no queries in {file}");
    let sources = std::env::var("SOURCES").unwrap_or_else(|_| "127.0.0.1".into());
    let sockets: Vec<UdpSocket> = (sources.split(','))
        .map(|from| {
            let from: std::net::IpAddr = from.trim().parse().unwrap();
            assert!(from.is_loopback(), "loopback sources only");
            let socket = UdpSocket::bind((from, 0)).unwrap();
            socket.connect(addr).unwrap();
            socket
                .set_read_timeout(Some(Duration::from_secs(1)))
                .unwrap();
            socket
        })
        .collect();
    let mut latencies = Vec::with_capacity(n);
    let mut lost = 0;
    let mut buf = [0u8; 4096];
    for i in 0..n {
        let (name, rtype) = &questions[i % questions.len()];
        let mut msg = MessageBuilder::new_vec();
        msg.header_mut().set_id(i as u16);
        let mut q = msg.question();
        q.push((name, *rtype, Class::IN)).unwrap();
        let bytes = q.finish();
        let socket = &sockets[i % sockets.len()];
        let started = Instant::now();
        socket.send(&bytes).unwrap();
        loop {
            match socket.recv(&mut buf) {
                Ok(len) if len >= 2 && buf[..2] == (i as u16).to_be_bytes() => {
                    latencies.push(started.elapsed());
                    break;
                }
                Ok(_) => continue,
                Err(_) => {
                    lost += 1;
                    break;
                }
            }
        }
    }
    latencies.sort();
    let at = |p: f64| {
        let i = ((latencies.len() as f64 * p).ceil() as usize).clamp(1, latencies.len().max(1)) - 1;
        latencies.get(i).map_or(0, |d| d.as_micros())
    };
    println!(
        "queries={n} lost={lost} p50_us={} p99_us={} max_us={}",
        at(0.50),
        at(0.99),
        latencies.last().map_or(0, |d| d.as_micros())
    );
}
