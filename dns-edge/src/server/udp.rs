//! UDP workers: one OS thread per socket, each with its own responder,
//! buffers and counters. A query takes no lock: the table is read through a
//! per-thread `arc_swap` cache that only touches shared memory when a new
//! snapshot was installed. Datagrams are received and sent in batches
//! (`recvmmsg`/`sendmmsg`, through nix's safe wrappers): under load one
//! system call moves many queries, which is where an authoritative server
//! spends most of its time.

use std::io::{IoSlice, IoSliceMut};
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use arc_swap::Cache;
use nix::sys::socket::{MsgFlags, MultiHeaders, SockaddrStorage, recvmmsg, sendmmsg};

use super::handler::Handler;
use crate::answer::Responder;
use crate::rrl::Limiter;
use crate::state::Shared;

/// How often an idle worker looks at the stop flag.
const POLL: Duration = Duration::from_millis(100);
/// Largest UDP query read: the largest datagram, so any query a client
/// can send is read whole (a 4 KiB buffer cut longer ones into FORMERR,
/// where Knot answers).
const MAX_QUERY: usize = 65_535;
/// Datagrams moved per system call at most.
const BATCH: usize = 32;

/// The responder of worker `i` (seeded apart, so weighted draws differ).
pub fn responder(i: usize) -> Responder {
    Responder::new(i as u64 ^ 0x9e37_79b9_7f4a_7c15)
}

/// Start one worker per socket, each with its responder (warmed up or
/// new); they stop when `stop` is set.
pub fn spawn(
    sockets: Vec<UdpSocket>,
    responders: Vec<Responder>,
    shared: &Arc<Shared>,
    rrl: Option<Arc<Limiter>>,
    stop: &Arc<AtomicBool>,
) -> std::io::Result<Vec<JoinHandle<()>>> {
    let mut responders = responders.into_iter();
    sockets
        .into_iter()
        .enumerate()
        .map(|(i, socket)| {
            socket.set_read_timeout(Some(POLL))?;
            let shared = Arc::clone(shared);
            let rrl = rrl.clone();
            let stop = Arc::clone(stop);
            let responder = responders.next().unwrap_or_else(|| self::responder(i));
            std::thread::Builder::new()
                .name(format!("dns-udp-{i}"))
                .spawn(move || {
                    let mut w = Worker {
                        handler: Handler::new(&shared, rrl.as_deref(), responder),
                    };
                    w.run(&socket, &stop);
                })
        })
        .collect()
}

/// One worker's state.
struct Worker<'a> {
    handler: Handler<'a>,
}

fn peer_of(addr: &SockaddrStorage) -> Option<SocketAddr> {
    if let Some(v4) = addr.as_sockaddr_in() {
        return Some(SocketAddr::from((v4.ip(), v4.port())));
    }
    addr.as_sockaddr_in6()
        .map(|v6| SocketAddr::from((v6.ip(), v6.port())))
}

impl Worker<'_> {
    fn run(&mut self, socket: &UdpSocket, stop: &AtomicBool) {
        let fd = socket.as_raw_fd();
        let mut tables = Cache::new(Arc::clone(&self.handler.shared().table));
        // On the heap (2 MiB, allocated once): the slices over them are
        // rebuilt per batch without allocating.
        let mut inbox: Box<[[u8; MAX_QUERY]; BATCH]> = vec![[0u8; MAX_QUERY]; BATCH]
            .into_boxed_slice()
            .try_into()
            .unwrap_or_else(|_| unreachable!("BATCH buffers were made"));
        let mut outbox: [Vec<u8>; BATCH] = std::array::from_fn(|_| Vec::with_capacity(1232));
        let mut peers: Vec<Option<SockaddrStorage>> = Vec::with_capacity(BATCH);
        let mut received: Vec<(usize, Option<SocketAddr>)> = Vec::with_capacity(BATCH);
        let mut rx = MultiHeaders::<SockaddrStorage>::preallocate(BATCH, None);
        let mut tx = MultiHeaders::<SockaddrStorage>::preallocate(BATCH, None);
        while !stop.load(Ordering::Relaxed) {
            received.clear();
            {
                let mut slices = inbox.each_mut().map(|b| [IoSliceMut::new(b)]);
                // Blocks (up to the socket's read timeout) for the first
                // datagram, then takes whatever else is already queued.
                match recvmmsg(
                    fd,
                    &mut rx,
                    slices.iter_mut(),
                    MsgFlags::MSG_WAITFORONE,
                    None,
                ) {
                    Ok(msgs) => received
                        .extend(msgs.map(|m| (m.bytes, m.address.as_ref().and_then(peer_of)))),
                    Err(nix::errno::Errno::EAGAIN | nix::errno::Errno::EINTR) => continue,
                    Err(e) => {
                        // Not a timeout: pause rather than spin on it.
                        tracing::warn!(error = %e, "udp receive failed");
                        std::thread::sleep(Duration::from_millis(50));
                        continue;
                    }
                }
            }
            let Some(table) = tables.load().as_deref() else {
                continue;
            };
            peers.clear();
            let mut n = 0;
            for (i, &(len, peer)) in received.iter().enumerate() {
                let Some(peer) = peer else { continue };
                let query = &inbox[i][..len.min(MAX_QUERY)];
                if self
                    .handler
                    .answer(table, query, peer, "udp", &mut outbox[n])
                {
                    peers.push(Some(SockaddrStorage::from(peer)));
                    n += 1;
                }
            }
            if n == 0 {
                continue;
            }
            let slices = outbox.each_ref().map(|o| [IoSlice::new(o)]);
            if let Err(e) = sendmmsg(
                fd,
                &mut tx,
                slices[..n].iter(),
                &peers,
                [],
                MsgFlags::empty(),
            ) {
                tracing::debug!(error = %e, "udp send failed");
            }
        }
    }
}
