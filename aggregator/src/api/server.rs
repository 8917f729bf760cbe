//! Binding and serving: the gRPC services (agents, edges, admin, reflection)
//! on one listener, each behind its access rule; the REST API (tokens),
//! `/livez`, `/readyz` and `/metrics` on another; and the engine's clock.
//! `run` takes bound listeners so tests can use port 0.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use gslb_proto::pb;
use tokio::net::TcpListener;

use crate::api::Security;
use crate::api::gated::Gated;
use crate::api::guard::{Access, Guard};
use crate::api::leader::Leader;
use crate::api::membership::Membership;
use crate::api::service::admin::Admin;
use crate::api::service::agents::AgentStreams;
use crate::api::service::edges::EdgeStreams;
use crate::api::service::{Service, now};
use crate::net::listener::{HttpListener, Limits, grpc_incoming};
use gslb_engine::Input;
use gslb_proto::link::identity::Role;

mod http;

/// What bounds the two listeners (see `--max-connections`,
/// `--http-idle-timeout`, `--http-header-timeout`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ServeLimits {
    /// Open connections per listener at most.
    pub max_connections: usize,
    /// HTTP: a connection with no byte either way for this long is closed.
    pub http_idle: Duration,
    /// HTTP: a request's headers must arrive within this.
    pub http_header: Duration,
}

pub use gslb_proto::MAX_MESSAGE;
/// Largest message an agent may send: a batch of 50,000 results (the
/// agent's largest `--batch-size`) is about 10 MiB.
pub const MAX_AGENT_MESSAGE: usize = 16 * 1024 * 1024;
/// Largest message an edge may send (a subscription, an applied report).
pub const MAX_EDGE_MESSAGE: usize = 1024 * 1024;
/// Largest admin request: a declarative document of 100,000 members is
/// about 10 MiB.
pub const MAX_ADMIN_MESSAGE: usize = 64 * 1024 * 1024;

/// How long a shutdown waits for open requests. Agent and edge streams never
/// end on their own, so graceful shutdown alone would wait forever; their
/// clients reconnect (to this aggregator or another) by themselves.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

/// Serve until `shutdown` completes (then at most [`SHUTDOWN_GRACE`] more).
pub async fn run(
    service: Arc<Service>,
    grpc: TcpListener,
    http: TcpListener,
    tick: Duration,
    security: Security,
    limits: ServeLimits,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let (tx, stop) = tokio::sync::watch::channel(false);
    tokio::spawn(async move {
        shutdown.await;
        let _ = tx.send(true);
    });
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(gslb_proto::FILE_DESCRIPTOR_SET)
        .build_v1()?;
    let tokens = &security.tokens;
    let only = |roles| Access::Roles(roles);
    let grpc_server = tonic::transport::Server::builder()
        // Dead peers are found by HTTP/2 pings, not left holding a slot.
        .http2_keepalive_interval(Some(Duration::from_secs(30)))
        .http2_keepalive_timeout(Some(Duration::from_secs(10)))
        .add_service(Gated::new(
            reflection,
            Guard::new(only(&Role::ALL), tokens.clone()),
        ))
        .add_service(Gated::new(
            pb::agent_service_server::AgentServiceServer::new(AgentStreams(service.clone()))
                .max_encoding_message_size(MAX_MESSAGE)
                .max_decoding_message_size(MAX_AGENT_MESSAGE),
            Guard::new(only(&[Role::Agent]), tokens.clone()),
        ))
        .add_service(Gated::new(
            pb::edge_feed_server::EdgeFeedServer::new(EdgeStreams(service.clone()))
                .max_encoding_message_size(MAX_MESSAGE)
                .max_decoding_message_size(MAX_EDGE_MESSAGE),
            Guard::new(only(&[Role::Edge]), tokens.clone()),
        ))
        .add_service(Gated::new(
            Gated::new(
                pb::admin_service_server::AdminServiceServer::new(Admin(service.clone()))
                    .max_encoding_message_size(MAX_MESSAGE)
                    .max_decoding_message_size(MAX_ADMIN_MESSAGE),
                Leader(service.clone()),
            ),
            Guard::audited(Access::Admin, tokens.clone(), service.clone()),
        ))
        .add_service(Gated::new(
            Gated::new(
                pb::cluster_service_server::ClusterServiceServer::new(Membership(service.clone())),
                Leader(service.clone()),
            ),
            Guard::audited(Access::Cluster, tokens.clone(), service.clone()),
        ))
        .add_optional_service(service.cluster().map(|c| {
            Gated::new(
                c.rpc(),
                Guard::new(only(&[Role::Aggregator]), tokens.clone()),
            )
        }))
        .serve_with_incoming_shutdown(
            grpc_incoming(
                grpc,
                security.tls.clone(),
                Limits {
                    max_connections: limits.max_connections,
                    idle: None,
                },
            ),
            stopping(stop.clone()),
        );
    let http_listener = HttpListener::new(
        http,
        security.tls.clone(),
        Limits {
            max_connections: limits.max_connections,
            idle: Some(limits.http_idle),
        },
    )?;
    let http_server = http::serve(
        http_listener,
        router(
            service.clone(),
            security.tokens.clone(),
            limits.http_idle,
            security.tls.as_ref().map(|t| t.files().cert.clone()),
        ),
        limits.http_header,
        stop.clone(),
    );
    let ticker = tokio::spawn(clock(service, tick));
    tokio::select! {
        result = grpc_server => result?,
        () = http_server => {}
        () = async {
            stopping(stop).await;
            tokio::time::sleep(SHUTDOWN_GRACE).await;
        } => tracing::info!("closing the streams still open"),
    }
    ticker.abort();
    Ok(())
}

/// Resolves once `stop` turns true (or its sender is gone).
async fn stopping(mut stop: tokio::sync::watch::Receiver<bool>) {
    let _ = stop.wait_for(|stopped| *stopped).await;
}

/// `/readyz`: 503 while a cluster node knows no leader (it can neither
/// write nor answer linearizable reads); the body names each check. The
/// listener is bound only once the store is open and loaded, so nothing
/// answers before that. Never waits for the control core.
fn readiness(service: &Service) -> (axum::http::StatusCode, String) {
    let view = service.view();
    let mut lines = vec![format!(
        "store: open and loaded (version {}, {} members)",
        view.version(),
        view.catalog().members.len()
    )];
    let mut ready = true;
    if let Some(cluster) = service.cluster() {
        if service.leading() {
            lines.push("cluster: this node leads".into());
        } else if let Some((id, addr)) = cluster.leader(false) {
            lines.push(format!("cluster: leader is node {id} at {addr}"));
        } else {
            ready = false;
            lines.push("cluster: no leader known (election under way or quorum lost)".into());
        }
    }
    let head = if ready { "ready" } else { "not ready" };
    let status = if ready {
        axum::http::StatusCode::OK
    } else {
        axum::http::StatusCode::SERVICE_UNAVAILABLE
    };
    (status, format!("{head}\n{}\n", lines.join("\n")))
}

/// Tick the engine: cycles close at their deadlines, timers run.
async fn clock(service: Arc<Service>, tick: Duration) {
    let mut interval = tokio::time::interval(tick);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        interval.tick().await;
        if let Err(err) = service.call(|c| c.step(Input::Tick, now())).await {
            tracing::error!(error = %err, "engine tick failed");
        }
    }
}

fn router(
    service: Arc<Service>,
    tokens: Arc<crate::api::tokens::Tokens>,
    idle: Duration,
    cert: Option<std::path::PathBuf>,
) -> Router {
    let (ui, ui_metrics) = crate::api::ui::router(service.clone(), tokens.clone(), idle);
    let metrics = Arc::new(
        crate::api::metrics::Metrics::new(&service)
            .with(Box::new(ui_metrics))
            .with_cert(cert),
    );
    let ready = service.clone();
    let operations = Router::new()
        .route("/livez", get(|| async { "ok" }))
        .route(
            "/readyz",
            get(move || std::future::ready(readiness(&ready))),
        )
        .route(
            "/metrics",
            get(|State(m): State<Arc<crate::api::metrics::Metrics>>| async move {
                m.scrape().await
            }),
        )
        .with_state(metrics);
    // Layers run outside in: the token is checked before a follower
    // redirects to the leader.
    crate::api::rest::router(service.clone())
        .layer(axum::middleware::from_fn_with_state(
            service,
            crate::api::leader::rest,
        ))
        .layer(axum::middleware::from_fn_with_state(
            tokens,
            crate::api::rest_auth::require_token,
        ))
        .merge(operations)
        .merge(ui)
        .layer(axum::middleware::from_fn(crate::api::ui::headers))
}
