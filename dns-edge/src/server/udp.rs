//! UDP workers: one OS thread per socket, each with its own responder,
//! buffers and counters. A query takes no lock: the table is read through a
//! per-thread `arc_swap` cache that only touches shared memory when a new
//! snapshot was installed.

use std::net::UdpSocket;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use arc_swap::Cache;

use crate::answer::{self, Responder, Transport};
use crate::rrl::{Limiter, Verdict};
use crate::state::Shared;

/// How often an idle worker looks at the stop flag.
const POLL: Duration = Duration::from_millis(100);
/// Largest UDP query read (anything longer is truncated and then FORMERR).
const MAX_QUERY: usize = 4096;

/// Start one worker per socket; they stop when `stop` is set.
pub fn spawn(
    sockets: Vec<UdpSocket>,
    shared: &Arc<Shared>,
    rrl: Option<Arc<Limiter>>,
    stop: &Arc<AtomicBool>,
) -> std::io::Result<Vec<JoinHandle<()>>> {
    let epoch = Instant::now();
    sockets
        .into_iter()
        .enumerate()
        .map(|(i, socket)| {
            socket.set_read_timeout(Some(POLL))?;
            let shared = Arc::clone(shared);
            let rrl = rrl.clone();
            let stop = Arc::clone(stop);
            std::thread::Builder::new()
                .name(format!("dns-udp-{i}"))
                .spawn(move || worker(i as u64, &socket, &shared, rrl.as_deref(), &stop, epoch))
        })
        .collect()
}

fn worker(
    seed: u64,
    socket: &UdpSocket,
    shared: &Shared,
    rrl: Option<&Limiter>,
    stop: &AtomicBool,
    epoch: Instant,
) {
    let counters = shared.metrics.worker();
    let mut responder = Responder::new(seed ^ 0x9e37_79b9_7f4a_7c15);
    let mut tables = Cache::new(Arc::clone(&shared.table));
    let mut buf = [0u8; MAX_QUERY];
    let mut out = Vec::with_capacity(4096);
    while !stop.load(Ordering::Relaxed) {
        let (len, peer) = match socket.recv_from(&mut buf) {
            Ok(r) => r,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                continue;
            }
            Err(e) => {
                tracing::debug!(error = %e, "udp receive failed");
                continue;
            }
        };
        let started = Instant::now();
        let _busy = counters.begin();
        let Some(table) = tables.load().as_deref() else {
            continue;
        };
        let query = &buf[..len];
        let Some(summary) = responder.respond(
            table,
            &shared.geo,
            query,
            peer.ip(),
            Transport::Udp,
            &mut out,
        ) else {
            counters.dropped();
            continue;
        };
        if let Some(limiter) = rrl {
            let now = started.duration_since(epoch).as_nanos() as u64;
            match limiter.check(peer.ip(), now) {
                Verdict::Send => {}
                Verdict::Slip => {
                    counters.rrl_slipped();
                    if !answer::truncated(query, &mut out) {
                        continue;
                    }
                }
                Verdict::Drop => {
                    counters.rrl_dropped();
                    continue;
                }
            }
        }
        if let Err(e) = socket.send_to(&out, peer) {
            tracing::debug!(error = %e, %peer, "udp send failed");
        }
        counters.answered(&summary, started.elapsed());
    }
}
