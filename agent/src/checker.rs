//! Checkers: one module per protocol behind one trait, and a registry that
//! maps a protocol name to its checker, so a new protocol is one new module
//! and one `register` call.

pub mod destination;
pub mod dns;
pub mod grpc;
pub mod http;
pub mod icmp;
pub mod mysql;
pub mod none;
pub mod tcp;
pub mod tls;
pub mod udp;

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::pin::Pin;
use std::sync::Arc;

use gslb_shared::FailReason;
use tokio::net::{TcpStream, UdpSocket};

use crate::checker::destination::DenyList;
use crate::metrics::CertExpiry;
use crate::target::Target;
use gslb_proto::link::resolve::Resolver;

/// A failed probe: a machine-readable reason and a short human detail.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// Why.
    pub reason: FailReason,
    /// For logs ("connect: connection refused").
    pub detail: String,
}

impl Failure {
    /// A failure with a detail.
    pub fn new(reason: FailReason, detail: impl Into<String>) -> Self {
        Self {
            reason,
            detail: detail.into(),
        }
    }

    /// Classify an I/O error from connecting, reading or writing.
    pub fn io(step: &str, err: &io::Error) -> Self {
        let reason = match err.kind() {
            io::ErrorKind::ConnectionRefused => FailReason::Refused,
            io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe => FailReason::Reset,
            io::ErrorKind::TimedOut => FailReason::Timeout,
            io::ErrorKind::HostUnreachable
            | io::ErrorKind::NetworkUnreachable
            | io::ErrorKind::NetworkDown => FailReason::Unreachable,
            io::ErrorKind::UnexpectedEof => FailReason::Protocol,
            _ => FailReason::Other,
        };
        Self::new(reason, format!("{step}: {err}"))
    }
}

/// The result of one probe.
pub type Outcome = Result<(), Failure>;

/// A boxed probe future.
pub type ProbeFuture<'a> = Pin<Box<dyn Future<Output = Outcome> + Send + 'a>>;

/// A protocol checker. The caller enforces the check timeout on the whole
/// probe and times it; a checker only decides pass or fail.
pub trait Checker: Send + Sync {
    /// Run one probe against a validated target.
    fn probe<'a>(&'a self, target: &'a Target) -> ProbeFuture<'a>;
}

/// Protocol name → checker.
#[derive(Default, Clone)]
pub struct Registry {
    checkers: HashMap<&'static str, Arc<dyn Checker>>,
    deny: Arc<DenyList>,
}

/// Connect over TCP to `addr` unless it, or the address the socket ended up
/// connected to, is denied (then the socket closes with nothing sent).
pub async fn connect_tcp(addr: SocketAddr, deny: &DenyList) -> Result<TcpStream, Failure> {
    destination::check(deny, addr)?;
    let stream = TcpStream::connect(addr)
        .await
        .map_err(|e| Failure::io("connect", &e))?;
    let peer = stream.peer_addr().map_err(|e| Failure::io("connect", &e))?;
    destination::check(deny, peer)?;
    Ok(stream)
}

/// A UDP socket connected to `addr` (so an ICMP port-unreachable reads
/// as refused) unless it, or the peer the socket ended up with, is denied.
pub async fn connect_udp(addr: SocketAddr, deny: &DenyList) -> Result<UdpSocket, Failure> {
    destination::check(deny, addr)?;
    let local: IpAddr = if addr.is_ipv4() {
        Ipv4Addr::UNSPECIFIED.into()
    } else {
        Ipv6Addr::UNSPECIFIED.into()
    };
    let socket = UdpSocket::bind(SocketAddr::new(local, 0))
        .await
        .map_err(|e| Failure::io("bind", &e))?;
    socket
        .connect(addr)
        .await
        .map_err(|e| Failure::io("connect", &e))?;
    destination::check(
        deny,
        socket.peer_addr().map_err(|e| Failure::io("connect", &e))?,
    )?;
    Ok(socket)
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut names: Vec<_> = self.checkers.keys().collect();
        names.sort();
        f.debug_struct("Registry")
            .field("protocols", &names)
            .finish()
    }
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Self::default()
    }

    /// Every built-in checker. `tls` configures HTTPS and gRPC verification,
    /// `resolver` looks up the hosts redirects name, `certs` records how
    /// long servers' certificates have left.
    pub fn builtin(
        tls: tls::ProbeTls,
        deny: Arc<DenyList>,
        resolver: Resolver,
        certs: CertExpiry,
    ) -> Self {
        let mut r = Self::new();
        let http = Arc::new(http::HttpChecker::new(
            tls.clone(),
            deny.clone(),
            resolver,
            certs.clone(),
        ));
        r.register("none", Arc::new(none::NoneChecker));
        r.register("icmp", Arc::new(icmp::IcmpChecker::new()));
        r.register("tcp", Arc::new(tcp::TcpChecker { deny: deny.clone() }));
        r.register("udp", Arc::new(udp::UdpChecker { deny: deny.clone() }));
        r.register("http", http.clone());
        r.register("https", http);
        r.register(
            "mysql",
            Arc::new(mysql::MysqlChecker { deny: deny.clone() }),
        );
        r.register("dns", Arc::new(dns::DnsChecker { deny: deny.clone() }));
        r.register(
            "grpc",
            Arc::new(grpc::GrpcChecker::new(tls, deny.clone(), certs)),
        );
        r.deny = deny;
        r
    }

    /// The destinations every probe is checked against.
    pub fn deny(&self) -> &DenyList {
        &self.deny
    }

    /// Add or replace the checker of a protocol.
    pub fn register(&mut self, protocol: &'static str, checker: Arc<dyn Checker>) {
        self.checkers.insert(protocol, checker);
    }

    /// The checker of a protocol.
    pub fn get(&self, protocol: &str) -> Option<&Arc<dyn Checker>> {
        self.checkers.get(protocol)
    }
}
