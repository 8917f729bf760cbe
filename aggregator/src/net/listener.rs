//! Accepting connections: TCP with Nagle off, then (unless the listener
//! is plain text) a TLS handshake with the current config, off the accept
//! loop so a slow client does not hold up others. Refused handshakes are
//! logged with the peer's address and the reason.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};
use tokio::time::{Instant, Sleep};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;
use tokio_stream::wrappers::ReceiverStream;

use super::tls::ReloadingTls;
use gslb_proto::link::identity::{Identity, of_certificate};

/// Longest a TLS handshake may take, its first byte included: a socket
/// that says nothing is closed quickly.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(3);

/// One source address's share of a listener's connections: a quarter of
/// the cap (at least 4), so one host cannot take them all.
pub fn per_source(max_connections: usize) -> usize {
    (max_connections / 4).max(4)
}

/// The connections kept for peers that authenticated with a client
/// certificate: an eighth of the cap (at least 2). Connections without one
/// (plain text, TLS without a certificate) and every handshake may use the
/// rest only, except that a source address that authenticated before
/// (a reconnecting agent, edge or operator) may handshake in the reserve.
pub fn reserve(max_connections: usize) -> usize {
    (max_connections / 8).max(2)
}

/// Source addresses remembered as having authenticated (the oldest
/// forgotten past this many).
const MAX_KNOWN_SOURCES: usize = 4_096;

/// The peer of a connection, as request extensions carry it.
#[derive(Debug, Clone)]
pub struct Peer {
    /// Its address.
    pub addr: SocketAddr,
    /// Its verified identity; `None` on a plain-text (`--insecure`)
    /// listener or a listener that asks for no client certificate.
    pub identity: Option<Identity>,
    /// Whether the connection is plain text.
    pub plain: bool,
}

/// What one listener allows.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Open connections at most; more are closed as they arrive.
    pub max_connections: usize,
    /// Close a connection that moves no byte either way for this long
    /// (the HTTP listener: idle keep-alives, never-reading clients).
    pub idle: Option<Duration>,
}

/// An accepted connection.
pub struct Conn {
    io: Io,
    peer: Peer,
    /// Its place under the listener's connection cap.
    _permit: Option<OwnedSemaphorePermit>,
    /// Its place outside the authenticated reserve, until it authenticates.
    _unauthenticated: Option<OwnedSemaphorePermit>,
    /// Its place in its source address's share.
    _source: Option<SourceGuard>,
    /// Fires when the connection has been idle too long.
    idle: Option<(Duration, Pin<Box<Sleep>>)>,
}

impl Conn {
    /// Progress was made: the idle clock starts again.
    fn progressed(&mut self) {
        if let Some((limit, sleep)) = &mut self.idle {
            sleep.as_mut().reset(Instant::now() + *limit);
        }
    }

    /// The inner IO is pending: fail once the idle limit has passed.
    fn pending<T>(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        if let Some((limit, sleep)) = &mut self.idle
            && sleep.as_mut().poll(cx).is_ready()
        {
            return Poll::Ready(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                format!("no progress for {limit:?} (idle timeout)"),
            )));
        }
        Poll::Pending
    }
}

enum Io {
    Plain(TcpStream),
    Tls(Box<TlsStream<TcpStream>>),
}

impl tonic::transport::server::Connected for Conn {
    type ConnectInfo = Peer;
    fn connect_info(&self) -> Peer {
        self.peer.clone()
    }
}

impl AsyncRead for Conn {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = match &mut this.io {
            Io::Plain(s) => Pin::new(s).poll_read(cx, buf),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
        };
        match polled {
            Poll::Pending => this.pending(cx),
            ready => {
                this.progressed();
                ready
            }
        }
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = match &mut this.io {
            Io::Plain(s) => Pin::new(s).poll_write(cx, buf),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
        };
        match polled {
            Poll::Pending => this.pending(cx),
            ready => {
                this.progressed();
                ready
            }
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let polled = match &mut this.io {
            Io::Plain(s) => Pin::new(s).poll_flush(cx),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
        };
        match polled {
            Poll::Pending => this.pending(cx),
            ready => ready,
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().io {
            Io::Plain(s) => Pin::new(s).poll_shutdown(cx),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
        }
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let polled = match &mut this.io {
            Io::Plain(s) => Pin::new(s).poll_write_vectored(cx, bufs),
            Io::Tls(s) => Pin::new(s.as_mut()).poll_write_vectored(cx, bufs),
        };
        match polled {
            Poll::Pending => this.pending(cx),
            ready => {
                this.progressed();
                ready
            }
        }
    }

    fn is_write_vectored(&self) -> bool {
        match &self.io {
            Io::Plain(s) => s.is_write_vectored(),
            Io::Tls(s) => s.is_write_vectored(),
        }
    }
}

/// Which of the two listeners: gRPC requires a client certificate, HTTP
/// (REST, metrics) does not.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The gRPC listener.
    Grpc,
    /// The HTTP listener.
    Http,
}

/// Accept on `listener` forever; connections that pass arrive on the
/// returned channel. `tls: None` is plain text.
pub fn accept(
    listener: TcpListener,
    tls: Option<Arc<ReloadingTls>>,
    kind: Kind,
    limits: Limits,
) -> mpsc::Receiver<Conn> {
    let (tx, rx) = mpsc::channel(64);
    let slots = Arc::new(Semaphore::new(limits.max_connections));
    let reserved = reserve(limits.max_connections).min(limits.max_connections - 1);
    let unauthenticated = Arc::new(Semaphore::new(limits.max_connections - reserved));
    let reserve_slots = Arc::new(Semaphore::new(reserved));
    let known = Known::default();
    let sources = Sources::new(per_source(limits.max_connections));
    tokio::spawn(async move {
        let mut failures = 0u32;
        // One throttle per reason, so each is logged at least once a second.
        let (mut refused_share, mut refused, mut refused_reserve) = (
            Throttled::default(),
            Throttled::default(),
            Throttled::default(),
        );
        loop {
            let (stream, addr) = match listener.accept().await {
                Ok(accepted) => accepted,
                Err(e) => {
                    // Out of descriptors and the like: back off, 50 ms
                    // doubling to 1 s, and say so once per back-off.
                    let pause =
                        Duration::from_millis(50u64 << failures.min(4)).min(Duration::from_secs(1));
                    failures += 1;
                    tracing::warn!(error = %e, failures, pause_ms = pause.as_millis() as u64, "accept failed; pausing");
                    tokio::time::sleep(pause).await;
                    continue;
                }
            };
            failures = 0;
            // Each refusal closes at once, so waiting clients do not fill
            // the backlog; logged at most once a second.
            let Some(source) = sources.take(addr.ip()) else {
                if let Some(count) = refused_share.hit() {
                    tracing::warn!(peer = %addr, count, per_source = sources.share, "connection refused: this source address holds its share of the listener's connections (a quarter of max-connections)");
                }
                drop(stream);
                continue;
            };
            let Ok(permit) = slots.clone().try_acquire_owned() else {
                if let Some(count) = refused.hit() {
                    tracing::warn!(peer = %addr, count, max_connections = limits.max_connections, "connection refused: the listener is at its connection cap (max-connections)");
                }
                drop(stream);
                continue;
            };
            // The general pool, else (for a source that authenticated
            // before) the reserve.
            let unauth = match unauthenticated.clone().try_acquire_owned() {
                Ok(p) => p,
                Err(_) => match reserve_slots.clone().try_acquire_owned() {
                    Ok(p) if known.contains(addr.ip()) => p,
                    _ => {
                        if let Some(count) = refused_reserve.hit() {
                            tracing::warn!(peer = %addr, count, reserved, "connection refused: the rest of the listener's connections are kept for authenticated peers");
                        }
                        drop(stream);
                        continue;
                    }
                },
            };
            if let Err(e) = stream.set_nodelay(true) {
                tracing::debug!(error = %e, "TCP_NODELAY not set");
            }
            let sender = tx.clone();
            let tls = tls.clone();
            let known = known.clone();
            tokio::spawn(async move {
                let conn = match tls {
                    None => Some(Conn {
                        io: Io::Plain(stream),
                        peer: Peer {
                            addr,
                            identity: None,
                            plain: true,
                        },
                        _permit: None,
                        _unauthenticated: None,
                        _source: None,
                        idle: None,
                    }),
                    Some(tls) => handshake(stream, addr, &tls, kind).await,
                };
                if let Some(mut conn) = conn {
                    conn._permit = Some(permit);
                    conn._source = Some(source);
                    // A verified client certificate moves it into the
                    // reserve's side: it no longer counts against the rest.
                    if conn.peer.identity.is_none() {
                        conn._unauthenticated = Some(unauth);
                    } else {
                        known.insert(addr.ip());
                    }
                    conn.idle = limits
                        .idle
                        .map(|limit| (limit, Box::pin(tokio::time::sleep(limit))));
                    let _ = sender.send(conn).await;
                }
            });
            if tx.is_closed() {
                return;
            }
        }
    });
    rx
}

/// The stream tonic serves.
pub fn grpc_incoming(
    listener: TcpListener,
    tls: Option<Arc<ReloadingTls>>,
    limits: Limits,
) -> impl tokio_stream::Stream<Item = io::Result<Conn>> {
    use tokio_stream::StreamExt;
    ReceiverStream::new(accept(listener, tls, Kind::Grpc, limits)).map(Ok)
}

/// Source addresses that authenticated with a client certificate, the
/// most recent [`MAX_KNOWN_SOURCES`].
#[derive(Debug, Clone, Default)]
struct Known(Arc<std::sync::Mutex<(u64, std::collections::HashMap<std::net::IpAddr, u64>)>>);

impl Known {
    fn contains(&self, ip: std::net::IpAddr) -> bool {
        let known = self.0.lock().unwrap_or_else(|p| p.into_inner());
        known.1.contains_key(&ip.to_canonical())
    }

    fn insert(&self, ip: std::net::IpAddr) {
        let mut known = self.0.lock().unwrap_or_else(|p| p.into_inner());
        known.0 += 1;
        let tick = known.0;
        known.1.insert(ip.to_canonical(), tick);
        if known.1.len() > MAX_KNOWN_SOURCES {
            // Forget the least recently authenticated (rare: O(n) then).
            if let Some(oldest) = known.1.iter().min_by_key(|(_, t)| **t).map(|(ip, _)| *ip) {
                known.1.remove(&oldest);
            }
        }
    }
}

/// Open connections per source address, each at most `share`.
#[derive(Debug, Clone)]
struct Sources {
    share: usize,
    open: Arc<std::sync::Mutex<std::collections::HashMap<std::net::IpAddr, usize>>>,
}

/// A connection counted in its source's share; given back when dropped.
struct SourceGuard {
    sources: Sources,
    ip: std::net::IpAddr,
}

impl Sources {
    fn new(share: usize) -> Self {
        Sources {
            share,
            open: Arc::default(),
        }
    }

    fn take(&self, ip: std::net::IpAddr) -> Option<SourceGuard> {
        let ip = ip.to_canonical();
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let n = open.entry(ip).or_default();
        if *n >= self.share {
            return None;
        }
        *n += 1;
        Some(SourceGuard {
            sources: self.clone(),
            ip,
        })
    }
}

impl Drop for SourceGuard {
    fn drop(&mut self) {
        let mut open = self.sources.open.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = open.get_mut(&self.ip) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.ip);
            }
        }
    }
}

/// Counts events, and lets one through per second.
#[derive(Debug, Default)]
struct Throttled {
    last: Option<Instant>,
    count: u64,
}

impl Throttled {
    /// One more event; `Some(events so far)` when it is time to say so.
    fn hit(&mut self) -> Option<u64> {
        self.count += 1;
        let now = Instant::now();
        if self
            .last
            .is_some_and(|l| now.duration_since(l) < Duration::from_secs(1))
        {
            return None;
        }
        self.last = Some(now);
        Some(self.count)
    }
}

async fn handshake(
    stream: TcpStream,
    addr: SocketAddr,
    tls: &ReloadingTls,
    kind: Kind,
) -> Option<Conn> {
    let listener = match kind {
        Kind::Grpc => "grpc",
        Kind::Http => "http",
    };
    if speaks_plain_text(&stream).await {
        tracing::warn!(
            peer = %addr,
            listener,
            "refused a plain-text connection: this listener requires TLS (https:// and a client certificate from the cluster's CA)"
        );
        return None;
    }
    let (mutual, server_only) = tls.current();
    let config = match kind {
        Kind::Grpc => mutual,
        Kind::Http => server_only,
    };
    let accepted =
        tokio::time::timeout(HANDSHAKE_TIMEOUT, TlsAcceptor::from(config).accept(stream)).await;
    let stream = match accepted {
        Ok(Ok(stream)) => stream,
        Ok(Err(e)) => {
            tracing::warn!(peer = %addr, listener, error = %e, "refused a TLS connection: handshake failed");
            return None;
        }
        Err(_) => {
            tracing::warn!(peer = %addr, listener, "refused a TLS connection: no handshake within 3s");
            return None;
        }
    };
    let identity = match stream
        .get_ref()
        .1
        .peer_certificates()
        .and_then(|c| c.first())
    {
        None => None,
        Some(cert) => match of_certificate(cert) {
            Ok(identity) => Some(identity),
            Err(why) => {
                tracing::warn!(peer = %addr, listener, error = %why, "refused a TLS connection: the client certificate names no gslb identity");
                return None;
            }
        },
    };
    if kind == Kind::Grpc {
        tracing::debug!(peer = %addr, identity = ?identity, "TLS connection accepted");
    }
    Some(Conn {
        io: Io::Tls(Box::new(stream)),
        peer: Peer {
            addr,
            identity,
            plain: false,
        },
        _permit: None,
        _unauthenticated: None,
        _source: None,
        idle: None,
    })
}

/// Whether the client opened with HTTP (an h2 preface or an HTTP/1 verb)
/// instead of a TLS ClientHello (record type 0x16).
async fn speaks_plain_text(stream: &TcpStream) -> bool {
    let mut first = [0u8; 1];
    match tokio::time::timeout(HANDSHAKE_TIMEOUT, stream.peek(&mut first)).await {
        Ok(Ok(1)) => first[0] != 0x16,
        _ => false,
    }
}

/// The HTTP listener for axum: connections after their handshake.
pub struct HttpListener {
    rx: mpsc::Receiver<Conn>,
}

impl HttpListener {
    /// Accept on `listener` (TLS without client certificates, or plain text).
    pub fn new(
        listener: TcpListener,
        tls: Option<Arc<ReloadingTls>>,
        limits: Limits,
    ) -> io::Result<Self> {
        Ok(HttpListener {
            rx: accept(listener, tls, Kind::Http, limits),
        })
    }

    /// The next accepted connection (pending forever once the accept loop
    /// is gone, which happens only with the runtime).
    pub async fn next(&mut self) -> Conn {
        match self.rx.recv().await {
            Some(conn) => conn,
            None => std::future::pending().await,
        }
    }
}
