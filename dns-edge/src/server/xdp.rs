//! The AF_XDP path (`--xdp IFACE`): the XDP program takes UDP queries for
//! the DNS address off the interface's queues, one worker thread per queue
//! answers them from its AF_XDP socket with the same request handler as
//! the kernel path, and writes the reply into the same frame. Everything
//! else (TCP, fragments, other ports) stays with the kernel. Any failure to
//! set it up is logged and leaves the edge on the kernel path.

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::thread::JoinHandle;
use std::time::Duration;

use arc_swap::Cache;
use gslb_xdp::frame;
use gslb_xdp::{Program, Socket};

use super::handler::Handler;
use crate::answer::Responder;
use crate::metrics::XdpOutcome;
use crate::rrl::Limiter;
use crate::state::Shared;

/// How long an idle worker waits for a frame before it looks at the stop flag.
const POLL: Duration = Duration::from_millis(100);
/// Longest wait for the workers to open their sockets.
const OPEN_TIMEOUT: Duration = Duration::from_secs(10);
/// Most queues served (the program's socket map has 256 entries).
const MAX_QUEUES: usize = 256;

/// The running AF_XDP path.
pub struct XdpPath {
    program: Program,
    stop: Arc<AtomicBool>,
    workers: Vec<JoinHandle<()>>,
    shared: Arc<Shared>,
}

/// What [`start`] needs besides the edge's state.
pub struct XdpSetup<'a> {
    /// The interface.
    pub iface: &'a str,
    /// The DNS address the edge is bound to.
    pub addr: SocketAddr,
    /// A kernel UDP socket bound to `addr`: replies too big for one frame
    /// leave through it (the kernel fragments them).
    pub kernel: &'a UdpSocket,
    /// Response rate limiting, shared with the kernel path.
    pub rrl: Option<Arc<Limiter>>,
    /// One responder per queue, warmed up with the kernel path's (a queue
    /// beyond them gets a new one).
    pub responders: Vec<Responder>,
}

/// The addresses the program matches: the bound one, or every address of
/// the interface in its family when bound to the unspecified address.
fn addresses(iface: &str, addr: IpAddr) -> Result<Vec<IpAddr>, String> {
    if !addr.is_unspecified() {
        return Ok(vec![addr]);
    }
    let all = nix::ifaddrs::getifaddrs().map_err(|e| format!("listing addresses: {e}"))?;
    let found: Vec<IpAddr> = all
        .filter(|a| a.interface_name == iface)
        .filter_map(|a| {
            let sa = a.address?;
            match (sa.as_sockaddr_in(), sa.as_sockaddr_in6()) {
                (Some(s), _) if addr.is_ipv4() => Some(IpAddr::V4(s.ip())),
                (_, Some(s)) if addr.is_ipv6() => Some(IpAddr::V6(s.ip())),
                _ => None,
            }
        })
        .collect();
    if found.is_empty() {
        return Err(format!(
            "{iface} has no {} address to answer on",
            if addr.is_ipv4() { "IPv4" } else { "IPv6" }
        ));
    }
    Ok(found)
}

fn sys_number(iface: &str, file: &str) -> Option<usize> {
    std::fs::read_to_string(format!("/sys/class/net/{iface}/{file}"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The interface's receive queues, from sysfs (1 if unknown): one worker
/// and socket each.
pub fn queue_count(iface: &str) -> usize {
    std::fs::read_dir(format!("/sys/class/net/{iface}/queues"))
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name().to_string_lossy().starts_with("rx-"))
                .count()
        })
        .unwrap_or(1)
        .clamp(1, MAX_QUEUES)
}

/// Attach the program and start one worker per queue. `Err` says why the
/// edge stays on the kernel path (nothing is left attached then).
pub fn start(shared: &Arc<Shared>, mut setup: XdpSetup<'_>) -> Result<XdpPath, String> {
    let iface = setup.iface;
    let ifindex = gslb_xdp::program::if_index(iface).map_err(|e| e.to_string())?;
    let addresses = addresses(iface, setup.addr.ip())?;
    // Frames larger than the MTU cannot leave the interface.
    let mtu = sys_number(iface, "mtu").unwrap_or(1500);
    let max_frame = frame::ETH_LEN + mtu;
    let mut program =
        Program::attach(iface, setup.addr.port(), &addresses).map_err(|e| e.to_string())?;
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let mut workers = Vec::new();
    let mut errors = Vec::new();
    let mut responders = std::mem::take(&mut setup.responders).into_iter();
    for queue in 0..queue_count(iface) as u32 {
        let responder = responders
            .next()
            .unwrap_or_else(|| super::udp::responder(MAX_QUEUES + queue as usize));
        // A failure here ends the loop, not the function: the workers
        // already started must be stopped with the rest below.
        let worker = Spawn {
            ifindex,
            queue,
            max_frame,
            responder,
        };
        match spawn_worker(shared, &setup, worker, &stop, tx.clone()) {
            Ok(w) => workers.push(w),
            Err(e) => {
                errors.push(e);
                break;
            }
        }
    }
    drop(tx);
    let (mut bound, mut zero_copy) = (0, 0);
    for _ in 0..workers.len() {
        match rx.recv_timeout(OPEN_TIMEOUT) {
            Ok(Ok((queue, fd, zc))) => match program.register(queue, fd) {
                Ok(()) => {
                    bound += 1;
                    zero_copy += usize::from(zc);
                }
                Err(e) => errors.push(e.to_string()),
            },
            Ok(Err(e)) => errors.push(e),
            Err(_) => errors.push("a worker did not open its socket in time".into()),
        }
    }
    let mut path = XdpPath {
        program,
        stop,
        workers,
        shared: Arc::clone(shared),
    };
    if bound == 0 {
        path.stop();
        return Err(errors.join("; "));
    }
    for e in &errors {
        tracing::warn!(iface, error = %e, "an AF_XDP queue was not opened: its queries go to the kernel path");
    }
    shared.metrics.set_xdp(Some((bound, zero_copy)));
    tracing::info!(
        iface,
        attach = path.program.mode().as_str(),
        sockets = bound,
        bind = if zero_copy == bound {
            "zero-copy"
        } else if zero_copy == 0 {
            "copy"
        } else {
            "mixed"
        },
        zero_copy_sockets = zero_copy,
        ?addresses,
        port = setup.addr.port(),
        "XDP path attached: UDP queries on this interface are answered from AF_XDP sockets"
    );
    Ok(path)
}

/// What a worker reports once its socket is open (or why not).
type Opened = Result<(u32, std::os::fd::RawFd, bool), String>;

/// One worker to start: its queue and what it answers with.
struct Spawn {
    ifindex: u32,
    queue: u32,
    /// Largest frame the interface sends (its MTU plus Ethernet).
    max_frame: usize,
    responder: Responder,
}

/// Start queue `queue`'s worker: it opens its socket, reports on `opened`
/// and answers until `stop`.
fn spawn_worker(
    shared: &Arc<Shared>,
    setup: &XdpSetup<'_>,
    worker: Spawn,
    stop: &Arc<AtomicBool>,
    opened: mpsc::Sender<Opened>,
) -> Result<JoinHandle<()>, String> {
    let Spawn {
        ifindex,
        queue,
        max_frame,
        responder,
    } = worker;
    let shared = Arc::clone(shared);
    let stop = Arc::clone(stop);
    let rrl = setup.rrl.clone();
    let kernel = setup
        .kernel
        .try_clone()
        .map_err(|e| format!("kernel socket: {e}"))?;
    std::thread::Builder::new()
        .name(format!("dns-xdp-{queue}"))
        .spawn(move || {
            // Opened on its own thread: the UMEM and rings stay there.
            let mut socket = match Socket::open(ifindex, queue) {
                Ok(s) => s,
                Err(e) => {
                    let _ = opened.send(Err(e.to_string()));
                    return;
                }
            };
            let _ = opened.send(Ok((queue, socket.fd(), socket.zero_copy())));
            drop(opened);
            let mut w = Worker {
                handler: Handler::new(&shared, rrl.as_deref(), responder),
                kernel,
                max_frame,
                out: Vec::with_capacity(4096),
            };
            w.run(&mut socket, &stop);
        })
        .map_err(|e| format!("starting a worker: {e}"))
}

impl XdpPath {
    /// Detach the program (every frame goes to the kernel again) and stop
    /// the workers. Idempotent.
    pub fn stop(&mut self) {
        self.program.detach();
        self.stop.store(true, Ordering::Relaxed);
        for w in self.workers.drain(..) {
            let _ = w.join();
        }
        self.shared.metrics.set_xdp(None);
    }
}

impl Drop for XdpPath {
    fn drop(&mut self) {
        self.stop();
    }
}

/// One queue's worker.
struct Worker<'a> {
    handler: Handler<'a>,
    kernel: UdpSocket,
    max_frame: usize,
    out: Vec<u8>,
}

impl Worker<'_> {
    fn run(&mut self, socket: &mut Socket, stop: &AtomicBool) {
        let mut tables = Cache::new(Arc::clone(&self.handler.shared().table));
        while !stop.load(Ordering::Relaxed) {
            let Some(table) = tables.load().as_deref() else {
                std::thread::sleep(POLL);
                continue;
            };
            let served = socket.serve(|buf, len| self.answer(table, buf, len));
            match served {
                Ok(s) => {
                    let missed = s.tx_full;
                    if missed > 0 {
                        self.handler.counters().xdp_n(XdpOutcome::TxFull, missed);
                    }
                    if s.received == 0 {
                        let _ = socket.wait(POLL);
                    }
                }
                Err(e) => {
                    tracing::warn!(error = %e, "AF_XDP ring error");
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        }
    }

    /// Answer the frame in `buf[..len]` in place; the reply frame's length.
    fn answer(&mut self, table: &crate::table::Table, buf: &mut [u8], len: usize) -> Option<usize> {
        let counters = self.handler.counters();
        let query = match frame::parse(&buf[..len]) {
            Ok(q) => q,
            Err(_) => {
                counters.xdp(XdpOutcome::Rejected);
                return None;
            }
        };
        if !self
            .handler
            .answer(table, query.payload(buf), query.peer, "xdp", &mut self.out)
        {
            self.handler.counters().xdp(XdpOutcome::Unanswered);
            return None;
        }
        let room = buf.len().min(self.max_frame) - query.header_len;
        if self.out.len() > room {
            // Too big for one frame: the kernel sends it (fragmented).
            let _ = self.kernel.send_to(&self.out, query.peer);
            self.handler.counters().xdp(XdpOutcome::KernelSent);
            return None;
        }
        buf[query.header_len..query.header_len + self.out.len()].copy_from_slice(&self.out);
        let n = query.write_reply(buf, self.out.len());
        self.handler.counters().xdp(if n.is_some() {
            XdpOutcome::Answered
        } else {
            XdpOutcome::Rejected
        });
        n
    }
}
