//! gRPC: the standard `grpc.health.v1.Health/Check` (tonic-health's client)
//! over one fresh HTTP/2 connection per probe, plain or TLS with the same
//! settings as HTTPS. The connection is made here, through the deny-list,
//! and handed to tonic, so a probe reaches exactly the target address.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use gslb_shared::{FailReason, GrpcProbe, Probe};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};
use tonic::Code;
use tonic::transport::{Endpoint, Uri};
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

use super::tls::ProbeTls;
use super::{Checker, Failure, Outcome, ProbeFuture};
use crate::checker::destination::DenyList;
use crate::metrics::CertExpiry;
use crate::target::Target;

/// Largest health response read, in bytes.
pub const MAX_RESPONSE: usize = 4096;

/// gRPC health checker.
#[derive(Debug, Clone)]
pub struct GrpcChecker {
    tls: ProbeTls,
    deny: Arc<DenyList>,
    certs: CertExpiry,
}

impl GrpcChecker {
    /// A checker with these TLS settings, never reaching `deny`, recording
    /// certificate expiry in `certs`.
    pub fn new(tls: ProbeTls, deny: Arc<DenyList>, certs: CertExpiry) -> Self {
        Self { tls, deny, certs }
    }
}

impl Checker for GrpcChecker {
    fn probe<'a>(&'a self, target: &'a Target) -> ProbeFuture<'a> {
        Box::pin(async move {
            let Probe::Grpc(grpc) = &target.check.probe else {
                return Err(Failure::new(FailReason::Other, "not a grpc check"));
            };
            let tcp = super::connect_tcp(SocketAddr::new(target.address, target.port), &self.deny)
                .await?;
            let _ = tcp.set_nodelay(true);
            super::tcp::reset_on_close(&tcp);
            let sni = super::tls::server_name(&grpc.tls_server_name, target);
            // The :authority a server may route on: the name, else the address.
            let authority = match (&sni, target.address) {
                (Some(name), _) => format!("{name}:{}", target.port),
                (None, std::net::IpAddr::V6(v6)) => format!("[{v6}]:{}", target.port),
                (None, std::net::IpAddr::V4(v4)) => format!("{v4}:{}", target.port),
            };
            if !grpc.tls {
                return health_check(tcp, grpc, &authority).await;
            }
            let stream = super::tls::handshake(
                self.tls.config_h2(grpc.tls_verify),
                tcp,
                sni.as_deref(),
                target.address,
                &self.certs,
                target.key,
            )
            .await?;
            health_check(stream, grpc, &authority).await
        })
    }
}

/// Ask the health service over a connected stream, naming `authority`.
async fn health_check<S>(io: S, grpc: &GrpcProbe, authority: &str) -> Outcome
where
    S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
{
    // tonic dials through a connector; this one hands over the connection
    // already made, once.
    let slot = Arc::new(Mutex::new(Some(io)));
    let connector = tower::service_fn(move |_: Uri| {
        let io = slot.lock().ok().and_then(|mut s| s.take());
        async move {
            io.map(TokioIo::new)
                .ok_or_else(|| std::io::Error::other("the probe connection was already used"))
        }
    });
    let endpoint = Endpoint::from_shared(format!("http://{authority}"))
        .map_err(|e| Failure::new(FailReason::Other, format!("authority {authority:?}: {e}")))?;
    let channel = endpoint
        .connect_with_connector(connector)
        .await
        .map_err(|e| Failure::new(FailReason::Protocol, format!("http/2: {e}")))?;
    let request = HealthCheckRequest {
        service: grpc.service.clone(),
    };
    // A health response is a few bytes; a server sending more is refused
    // rather than read.
    let response = HealthClient::new(channel)
        .max_decoding_message_size(MAX_RESPONSE)
        .check(request)
        .await
        .map_err(|status| status_failure(&status, &grpc.service))?;
    match response.into_inner().status() {
        ServingStatus::Serving => Ok(()),
        other => Err(Failure::new(
            FailReason::Status,
            format!("health status {}", other.as_str_name()),
        )),
    }
}

fn status_failure(status: &tonic::Status, service: &str) -> Failure {
    use std::error::Error;
    if let Some(io) = status
        .source()
        .and_then(|s| s.downcast_ref::<std::io::Error>())
    {
        return Failure::io("grpc", io);
    }
    let reason = match status.code() {
        Code::NotFound => {
            return Failure::new(
                FailReason::Status,
                format!("service {service:?} is unknown to the server"),
            );
        }
        Code::Unimplemented => FailReason::Protocol,
        Code::DeadlineExceeded => FailReason::Timeout,
        _ => FailReason::Status,
    };
    Failure::new(
        reason,
        format!("grpc status {:?}: {}", status.code(), status.message()),
    )
}
