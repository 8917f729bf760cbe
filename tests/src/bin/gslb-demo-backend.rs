//! A demo backend for the quickstart and the end-to-end tests: an HTTP
//! server that answers `GET /health` with 200 and `GET /` with its name, so
//! HTTP and TCP checks have something real to probe. Stopping the process
//! is how a demo or a test takes a backend down.
//!
//! With `--delays FILE` it answers some peers later: the file holds
//! `CIDR MILLIS [JITTER_MILLIS]` lines (first match wins, `#` comments)
//! and is read at every request, so a test changes delays while it runs.
//! It stands in for path latency per probe location where the kernel has
//! no `netem` qdisc.
//!
//! With `--tls-cert` and `--tls-key` it serves HTTPS instead, so HTTPS
//! checks (and the certificate-expiry metric they feed) have a server.

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::{ConnectInfo, State};
use axum::routing::get;
use clap::Parser;

/// gslb-demo-backend: a tiny HTTP server to point health checks at.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// Address to listen on (port 0 picks one).
    #[arg(long)]
    listen: SocketAddr,
    /// Name returned by `GET /`.
    #[arg(long, default_value = "backend")]
    name: String,
    /// Answer peers in a CIDR later: a file of `CIDR MILLIS [JITTER]` lines.
    #[arg(long)]
    delays: Option<PathBuf>,
    /// Serve HTTPS with this certificate chain (PEM; needs --tls-key).
    #[arg(long, requires = "tls_key")]
    tls_cert: Option<PathBuf>,
    /// The certificate's private key (PEM).
    #[arg(long, requires = "tls_cert")]
    tls_key: Option<PathBuf>,
}

struct Shared {
    name: String,
    delays: Option<PathBuf>,
    /// Requests seen: what the jitter of each is derived from.
    requests: AtomicU64,
}

/// True when `ip` is inside `net/len`.
fn contains(net: IpAddr, len: u32, ip: IpAddr) -> bool {
    let bits = |a: IpAddr| match a {
        IpAddr::V4(v4) => (u128::from(u32::from(v4)) << 96, 32),
        IpAddr::V6(v6) => (u128::from(v6), 128),
    };
    let ((n, width), (i, other)) = (bits(net), bits(ip.to_canonical()));
    if width != other || len > width {
        return false;
    }
    let mask = if len == 0 {
        0
    } else {
        u128::MAX << (128 - len)
    };
    n & mask == i & mask
}

/// The delay for `peer` from the file's current text (none if it is
/// missing or no line matches; a malformed line is skipped).
fn delay_for(text: &str, peer: IpAddr, request: u64) -> Option<Duration> {
    text.lines()
        .map(|l| l.split('#').next().unwrap_or("").split_whitespace())
        .filter_map(|mut f| {
            let (net, len) = f.next()?.split_once('/')?;
            let millis: u64 = f.next()?.parse().ok()?;
            let jitter: u64 = f.next().map_or(Some(0), |j| j.parse().ok())?;
            Some((net.parse().ok()?, len.parse().ok()?, millis, jitter))
        })
        .find(|(net, len, _, _)| contains(*net, *len, peer))
        .map(|(_, _, millis, jitter)| {
            // Spread evenly over ±jitter (a fixed mix of the request count).
            let mut x = request.wrapping_mul(0x9e37_79b9_7f4a_7c15);
            x ^= x >> 29;
            let offset = if jitter == 0 { 0 } else { x % (2 * jitter + 1) };
            Duration::from_millis((millis + offset).saturating_sub(jitter))
        })
}

async fn pause(shared: &Shared, peer: SocketAddr) {
    let Some(path) = &shared.delays else {
        return;
    };
    let request = shared.requests.fetch_add(1, Ordering::Relaxed);
    let text = tokio::fs::read_to_string(path).await.unwrap_or_default();
    if let Some(d) = delay_for(&text, peer.ip(), request) {
        tokio::time::sleep(d).await;
    }
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let shared = Arc::new(Shared {
        name: format!("{}\n", args.name),
        delays: args.delays,
        requests: AtomicU64::new(0),
    });
    let app = Router::new()
        .route(
            "/health",
            get(
                |State(s): State<Arc<Shared>>, ConnectInfo(peer): ConnectInfo<SocketAddr>| async move {
                    pause(&s, peer).await;
                    "ok\n"
                },
            ),
        )
        .route(
            "/",
            get(
                |State(s): State<Arc<Shared>>, ConnectInfo(peer): ConnectInfo<SocketAddr>| async move {
                    pause(&s, peer).await;
                    s.name.clone()
                },
            ),
        )
        .with_state(shared);
    let listener = tokio::net::TcpListener::bind(args.listen).await?;
    // The line the quickstart and the tests wait for.
    #[allow(clippy::print_stdout)]
    {
        println!("backend listening on {}", listener.local_addr()?);
    }
    if let (Some(cert), Some(key)) = (&args.tls_cert, &args.tls_key) {
        return serve_tls(listener, app, cert, key).await;
    }
    axum::serve(
        listener,
        app.into_make_service_with_connect_info::<SocketAddr>(),
    )
    .with_graceful_shutdown(async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await?;
    Ok(())
}

/// Serve `app` over TLS on `listener` until the process stops: one task
/// per connection, its peer address given to the handlers as axum's
/// `ConnectInfo`.
async fn serve_tls(
    listener: tokio::net::TcpListener,
    app: Router,
    cert: &std::path::Path,
    key: &std::path::Path,
) -> anyhow::Result<()> {
    use gslb_proto::link::tls;
    let mut config = rustls::ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(tls::read_chain(cert)?, tls::read_key(key)?)?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    loop {
        let (tcp, peer) = listener.accept().await?;
        let (acceptor, app) = (acceptor.clone(), app.clone());
        tokio::spawn(async move {
            // A failed handshake ends only this connection.
            let Ok(stream) = acceptor.accept(tcp).await else {
                return;
            };
            let app = app.layer(axum::Extension(ConnectInfo(peer)));
            let service = hyper_util::service::TowerToHyperService::new(app);
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_matching_line_decides_within_its_jitter() {
        let text = "# loc1\n10.200.1.0/24 40 5\n10.200.0.0/16 3\nbad line\n";
        let peer = |s: &str| s.parse::<IpAddr>().unwrap();
        for request in 0..100 {
            let d = delay_for(text, peer("10.200.1.2"), request).unwrap();
            assert!((35..=45).contains(&d.as_millis()), "{d:?}");
        }
        assert_eq!(
            delay_for(text, peer("10.200.2.2"), 0),
            Some(Duration::from_millis(3))
        );
        assert_eq!(delay_for(text, peer("127.0.0.1"), 0), None);
        assert_eq!(
            delay_for(text, peer("::ffff:10.200.2.2"), 0).map(|d| d.as_millis()),
            Some(3)
        );
    }
}
