//! DNS over TCP (RFC 7766): length-prefixed messages, pipelined queries
//! answered in order, an idle timeout, a cap on connections per client
//! address and in all. When the drain window ends, idle connections are
//! closed and busy ones after their current answer.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use crate::answer::{Responder, Transport};
use crate::metrics::Counters;
use crate::state::Shared;

/// TCP limits.
#[derive(Debug, Clone, Copy)]
pub struct TcpConfig {
    /// Close a connection that sends nothing for this long.
    pub idle_timeout: Duration,
    /// Close a connection that does not take an answer within this (a
    /// client that never reads would otherwise hold its slot, and the
    /// drain, forever).
    pub write_timeout: Duration,
    /// Most open connections from one client address.
    pub max_per_client: usize,
    /// Most open connections in all.
    pub max_connections: usize,
}

/// Open connections per client address.
#[derive(Debug, Default)]
struct PerClient(Mutex<HashMap<IpAddr, usize>>);

impl PerClient {
    fn acquire(self: &Arc<Self>, ip: IpAddr, max: usize) -> Option<ClientSlot> {
        let mut m = self.0.lock().unwrap_or_else(|e| e.into_inner());
        let n = m.entry(ip).or_insert(0);
        if *n >= max {
            return None;
        }
        *n += 1;
        Some(ClientSlot(Arc::clone(self), ip))
    }
}

/// One connection's place in the per-client count.
struct ClientSlot(Arc<PerClient>, IpAddr);

impl Drop for ClientSlot {
    fn drop(&mut self) {
        let mut m = self.0.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(n) = m.get_mut(&self.1) {
            *n -= 1;
            if *n == 0 {
                m.remove(&self.1);
            }
        }
    }
}

/// Accept until `stop` turns true.
pub async fn serve(
    listener: TcpListener,
    shared: Arc<Shared>,
    cfg: TcpConfig,
    mut stop: watch::Receiver<bool>,
) {
    let per_client = Arc::new(PerClient::default());
    let counters = shared.metrics.worker();
    let mut seed = 0u64;
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = stop.wait_for(|s| *s) => return,
        };
        let (stream, peer) = match accepted {
            Ok(a) => a,
            Err(e) => {
                // Out of descriptors or memory: pause instead of spinning.
                tracing::warn!(error = %e, "tcp accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            }
        };
        if shared.tcp_open() >= cfg.max_connections {
            tracing::debug!(%peer, "tcp connection refused: too many connections");
            continue;
        }
        let Some(slot) = per_client.acquire(peer.ip(), cfg.max_per_client) else {
            tracing::debug!(%peer, "tcp connection refused: too many from this client");
            continue;
        };
        if shared.draining() {
            tracing::info!(%peer, open_connections = shared.tcp_open() + 1, "accepted a new DNS TCP connection while draining");
        }
        seed += 1;
        let guard = shared.tcp_opened();
        let shared = Arc::clone(&shared);
        let counters = Arc::clone(&counters);
        let stop = stop.clone();
        tokio::spawn(async move {
            let _slot = slot;
            let _guard = guard;
            if let Err(e) = connection(stream, peer, &shared, &counters, cfg, stop, seed).await {
                tracing::debug!(%peer, error = %e, "tcp connection ended");
            }
        });
    }
}

/// Write one length-prefixed message, within `timeout`; false when the
/// client did not take it.
async fn send(
    write: &mut tokio::net::tcp::OwnedWriteHalf,
    message: &[u8],
    timeout: Duration,
) -> std::io::Result<bool> {
    let len = u16::try_from(message.len())
        .map_err(|_| std::io::Error::other("a DNS message over 65,535 bytes"))?;
    let mut framed = Vec::with_capacity(message.len() + 2);
    framed.extend_from_slice(&len.to_be_bytes());
    framed.extend_from_slice(message);
    match tokio::time::timeout(timeout, write.write_all(&framed)).await {
        Ok(written) => written.map(|()| true),
        Err(_) => Ok(false),
    }
}

/// Answer a zone transfer request (AXFR or IXFR); false when the
/// connection must close.
async fn transfer(
    write: &mut tokio::net::tcp::OwnedWriteHalf,
    shared: &Shared,
    peer: std::net::SocketAddr,
    request: Vec<u8>,
    timeout: Duration,
) -> std::io::Result<bool> {
    use crate::xfr::serve::{Reply, Verdict, respond, zone_name};
    let started = Instant::now();
    let (reply, verdict) = respond(&shared.transfers, request, peer.ip());
    match (&verdict, reply) {
        (_, Reply::Single(bytes)) if bytes.is_empty() => Ok(false),
        (Verdict::Transfer(kind), Reply::Single(bytes)) => {
            tracing::debug!(%peer, kind, "transfer answered with one message");
            send(write, &bytes, timeout).await
        }
        (_, Reply::Single(bytes)) => {
            shared.transfers.count_refused();
            tracing::info!(%peer, verdict = ?verdict, "zone transfer refused");
            send(write, &bytes, timeout).await
        }
        (_, Reply::Stream(mut stream)) => {
            let kind = match verdict {
                Verdict::Transfer(kind) => kind,
                _ => "transfer",
            };
            let (zone, records) = (zone_name(&stream), stream.records());
            let mut messages = 0u64;
            while let Some(message) = stream.next_message() {
                let message = message.map_err(std::io::Error::other)?;
                if !send(write, &message, timeout).await? {
                    tracing::warn!(%peer, zone, kind, "zone transfer abandoned: the client did not read");
                    return Ok(false);
                }
                messages += 1;
            }
            shared.transfers.count_served(kind);
            tracing::info!(
                %peer,
                zone,
                kind,
                records,
                messages,
                ms = started.elapsed().as_millis() as u64,
                "zone transfer sent"
            );
            Ok(true)
        }
    }
}

async fn connection(
    stream: TcpStream,
    peer: std::net::SocketAddr,
    shared: &Shared,
    counters: &Counters,
    cfg: TcpConfig,
    mut stop: watch::Receiver<bool>,
    seed: u64,
) -> std::io::Result<()> {
    let _ = stream.set_nodelay(true);
    let (read, mut write) = stream.into_split();
    let mut read = BufReader::new(read);
    let mut responder = Responder::new(seed);
    responder.set_nsid(shared.nsid.get().cloned());
    // TCP answers are sampled into the hot keys like UDP ones (seed 001).
    let mut sampler = shared.warmup.hot.get().map(|h| h.sampler());
    let mut query = Vec::new();
    let mut out = Vec::with_capacity(4096);
    let mut framed = Vec::with_capacity(4096);
    loop {
        if *stop.borrow() {
            return Ok(());
        }
        // Idle: waiting for the next length prefix.
        let len = tokio::select! {
            r = tokio::time::timeout(cfg.idle_timeout, read.read_u16()) => match r {
                Ok(Ok(len)) => usize::from(len),
                Ok(Err(_)) | Err(_) => return Ok(()),
            },
            _ = stop.wait_for(|s| *s) => return Ok(()),
        };
        query.resize(len, 0);
        match tokio::time::timeout(cfg.idle_timeout, read.read_exact(&mut query)).await {
            Ok(Ok(_)) => {}
            Ok(Err(_)) | Err(_) => return Ok(()),
        }
        if crate::xfr::serve::transfer_type(&query).is_some() {
            let request = std::mem::take(&mut query);
            if !transfer(&mut write, shared, peer, request, cfg.write_timeout).await? {
                return Ok(());
            }
            continue;
        }
        let started = Instant::now();
        let _busy = counters.begin();
        shared.log_drain_query(&query, peer, "tcp");
        responder.set_closing(shared.draining());
        let table = shared.table.load_full();
        let Some(table) = table.as_deref() else {
            return Ok(());
        };
        let Some(summary) = responder.respond(
            table,
            &shared.geo,
            &query,
            peer.ip(),
            Transport::Tcp,
            &mut out,
        ) else {
            counters.dropped();
            continue;
        };
        if let Some(sampler) = &mut sampler {
            sampler.answered(&responder, &summary, &out, &shared.geo, started);
        }
        framed.clear();
        framed.extend_from_slice(&(out.len() as u16).to_be_bytes());
        framed.extend_from_slice(&out);
        match tokio::time::timeout(cfg.write_timeout, write.write_all(&framed)).await {
            Ok(written) => written?,
            Err(_) => {
                shared.tcp_write_timed_out();
                tracing::debug!(%peer, timeout_ms = cfg.write_timeout.as_millis() as u64, "tcp connection closed: the client did not read its answer");
                return Ok(());
            }
        }
        counters.answered(&summary, started);
    }
}
