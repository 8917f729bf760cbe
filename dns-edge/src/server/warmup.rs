//! The TLS warm-up listener (`--listen-warmup`, seed 001): the same
//! `/internal/warmup` as the status listener, plus the snapshot itself
//! (`?snapshot=1`), over mutual TLS. A peer must present a certificate
//! signed by `--tls-ca` that names the edge role, and the bearer token:
//! the snapshot is the whole catalog.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::http::{Request, StatusCode};
use axum::response::{IntoResponse, Response};
use gslb_proto::link::identity::{Role, of_certificate};
use gslb_proto::link::tls;
use gslb_shared::config::LinkTls;
use hyper_util::rt::TokioIo;
use rustls::ServerConfig;
use rustls::server::WebPkiClientVerifier;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use crate::state::Shared;
use crate::warmup::endpoint::{self, Snapshot};
use crate::warmup::fetch::PATH;

/// Time allowed for a peer's TLS handshake.
const HANDSHAKE: Duration = Duration::from_secs(10);
/// Warm-up connections served at once; more wait to be accepted.
const MAX_CONNECTIONS: usize = 16;

/// The server config: this edge's certificate, client certificates
/// required from the CA.
pub fn server_config(link: &LinkTls) -> anyhow::Result<Arc<ServerConfig>> {
    let (Some((cert, key)), Some(ca)) = (&link.identity, &link.ca) else {
        anyhow::bail!("listen-warmup needs --tls-cert, --tls-key and --tls-ca");
    };
    let verifier = WebPkiClientVerifier::builder(Arc::new(tls::read_roots(ca)?)).build()?;
    let mut config = ServerConfig::builder()
        .with_client_cert_verifier(verifier)
        .with_single_cert(tls::read_chain(cert)?, tls::read_key(key)?)
        .map_err(|e| anyhow::anyhow!("tls-key {} does not match tls-cert: {e}", key.display()))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Serve peers on `listener` for ever.
pub async fn serve(listener: TcpListener, config: Arc<ServerConfig>, shared: Arc<Shared>) {
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let acceptor = TlsAcceptor::from(config);
    loop {
        let Ok(permit) = Arc::clone(&slots).acquire_owned().await else {
            return;
        };
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::warn!(error = %e, "warm-up listener: accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let (acceptor, shared) = (acceptor.clone(), Arc::clone(&shared));
        tokio::spawn(async move {
            connection(stream, peer, acceptor, shared).await;
            drop(permit);
        });
    }
}

async fn connection(
    stream: tokio::net::TcpStream,
    peer: SocketAddr,
    acceptor: TlsAcceptor,
    shared: Arc<Shared>,
) {
    let stream = match tokio::time::timeout(HANDSHAKE, acceptor.accept(stream)).await {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => {
            tracing::warn!(%peer, error = %e, "warm-up listener: TLS handshake refused");
            return;
        }
        Err(_) => {
            tracing::warn!(%peer, "warm-up listener: no TLS handshake within 10s");
            return;
        }
    };
    let identity = (stream.get_ref().1.peer_certificates())
        .and_then(|c| c.first())
        .map(of_certificate);
    match identity {
        Some(Ok(id)) if id.role == Role::Edge => {}
        other => {
            tracing::warn!(%peer, identity = ?other, "warm-up listener: refused a peer without an edge certificate");
            return;
        }
    }
    let service = hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
        let shared = Arc::clone(&shared);
        async move { Ok::<_, Infallible>(handle(&shared, &req, peer.ip()).await) }
    });
    let served = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .await;
    if let Err(e) = served {
        tracing::debug!(%peer, error = %e, "warm-up connection ended");
    }
}

async fn handle(
    shared: &Shared,
    req: &Request<hyper::body::Incoming>,
    peer: std::net::IpAddr,
) -> Response {
    let seed = req.uri().path() == endpoint::SEED_PATH;
    if req.uri().path() != PATH && !seed {
        return StatusCode::NOT_FOUND.into_response();
    }
    if let Some(refused) = endpoint::refusal(&shared.warmup, req.headers(), peer) {
        return refused;
    }
    let table = shared.table.load_full();
    let version = table.as_ref().map_or(0, |t| t.version);
    let body = endpoint::body(&shared.warmup, version);
    if !endpoint::asks_snapshot(req.uri().query()) {
        return endpoint::answer(&body, Snapshot::NotAsked, seed);
    }
    let encoded = match table {
        // Encoding a large catalog takes a while: off the runtime's workers.
        Some(t) => tokio::task::spawn_blocking(move || crate::cache::encode(&t.snapshot))
            .await
            .ok(),
        None => None,
    };
    endpoint::answer(&body, Snapshot::Encoded(encoded), seed)
}
