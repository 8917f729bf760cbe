//! Serving the HTTP listener (REST, `/livez`, `/readyz`, `/metrics`):
//! hyper's HTTP/1.1 per accepted connection, each bounded by the
//! listener's limits (a connection cap, an idle timeout: see
//! [`crate::net::listener::Limits`]) and a header-read timeout, so
//! slow or silent clients cannot hold the listener. On stop, connections
//! finish the request under way and close.

use std::time::Duration;

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::sync::watch;

use crate::net::listener::HttpListener;

/// Resolves once `stop` turns true (or its sender is gone).
async fn stopped(mut stop: watch::Receiver<bool>) {
    let _ = stop.wait_for(|stopped| *stopped).await;
}

/// Serve `router` on `listener` until `stop` turns true.
pub async fn serve(
    mut listener: HttpListener,
    router: Router,
    header_timeout: Duration,
    stop: watch::Receiver<bool>,
) {
    loop {
        let conn = tokio::select! {
            conn = listener.next() => conn,
            () = stopped(stop.clone()) => return,
        };
        // Each request carries its connection's peer (the audit log names
        // the caller's address).
        let peer = tonic::transport::server::Connected::connect_info(&conn);
        let service = TowerToHyperService::new(tower::ServiceExt::map_request(
            router.clone(),
            move |mut request: hyper::Request<hyper::body::Incoming>| {
                request.extensions_mut().insert(peer.clone());
                request
            },
        ));
        let stop = stop.clone();
        tokio::spawn(async move {
            let mut builder = hyper::server::conn::http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout);
            let conn = builder.serve_connection(TokioIo::new(conn), service);
            tokio::pin!(conn);
            tokio::select! {
                result = conn.as_mut() => {
                    if let Err(e) = result {
                        tracing::debug!(error = %e, "http connection ended");
                    }
                }
                () = stopped(stop) => {
                    conn.as_mut().graceful_shutdown();
                    let _ = conn.await;
                }
            }
        });
    }
}
