//! The DNS listeners: UDP sockets (one per worker thread, `SO_REUSEPORT`,
//! so the kernel spreads queries and no lock is shared) and one TCP
//! listener on the same port. Bound only once a snapshot is applied. And
//! the TLS warm-up listener peers take the snapshot from (seed 001).

pub mod handler;
pub mod tcp;
pub mod udp;
pub mod warmup;
pub mod xdp;

use std::io;
use std::net::{SocketAddr, TcpListener, UdpSocket};

use socket2::{Domain, Protocol, Socket, Type};

/// Sockets bound for DNS.
#[derive(Debug)]
pub struct Bound {
    /// The address both transports listen on.
    pub addr: SocketAddr,
    /// One UDP socket per worker.
    pub udp: Vec<UdpSocket>,
    /// The TCP listener.
    pub tcp: TcpListener,
}

/// Receive buffer of each UDP socket: room for bursts at line rate.
const UDP_RCVBUF: usize = 4 << 20;

fn udp_socket(addr: SocketAddr) -> io::Result<UdpSocket> {
    let s = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    s.set_reuse_port(true)?;
    if addr.is_ipv6() {
        s.set_only_v6(true)?;
    }
    // Best effort: the kernel caps it at net.core.rmem_max.
    let _ = s.set_recv_buffer_size(UDP_RCVBUF);
    s.bind(&addr.into())?;
    Ok(s.into())
}

fn tcp_listener(addr: SocketAddr) -> io::Result<TcpListener> {
    let s = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    s.set_reuse_address(true)?;
    if addr.is_ipv6() {
        s.set_only_v6(true)?;
    }
    s.bind(&addr.into())?;
    s.listen(1024)?;
    s.set_nonblocking(true)?;
    Ok(s.into())
}

/// Bind `workers` UDP sockets and a TCP listener on `addr`. Port 0 picks
/// a port free for both transports.
pub fn bind(addr: SocketAddr, workers: usize) -> io::Result<Bound> {
    let mut last = None;
    // With port 0 the UDP port may be taken for TCP: try a few.
    for _ in 0..if addr.port() == 0 { 20 } else { 1 } {
        let first = udp_socket(addr)?;
        let actual = first.local_addr()?;
        match tcp_listener(actual) {
            Ok(tcp) => {
                let mut udp = vec![first];
                for _ in 1..workers.max(1) {
                    udp.push(udp_socket(actual)?);
                }
                return Ok(Bound {
                    addr: actual,
                    udp,
                    tcp,
                });
            }
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or_else(|| io::Error::other("no port free for both UDP and TCP")))
}
