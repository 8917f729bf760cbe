//! Binding and serving: the gRPC services (agents, edges, admin, reflection)
//! on one listener, `/livez`, `/readyz` and `/metrics` on another, and the
//! engine's clock. `run` takes bound listeners so tests can use port 0.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use gslb_proto::pb;
use tokio::net::TcpListener;
use tokio_stream::wrappers::TcpListenerStream;

use crate::engine::Input;
use crate::service::admin::Admin;
use crate::service::agents::AgentStreams;
use crate::service::edges::EdgeStreams;
use crate::service::{Service, lock, now};

/// Largest gRPC message: a location with 100,000 targets receives an
/// assignment set, and an edge a full snapshot, far above tonic's 4 MiB default.
pub const MAX_MESSAGE: usize = 256 * 1024 * 1024;

/// Serve until `shutdown` completes.
pub async fn run(
    service: Arc<Service>,
    grpc: TcpListener,
    http: TcpListener,
    tick: Duration,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let reflection = tonic_reflection::server::Builder::configure()
        .register_encoded_file_descriptor_set(gslb_proto::FILE_DESCRIPTOR_SET)
        .build_v1()?;
    let grpc_server = tonic::transport::Server::builder()
        .add_service(reflection)
        .add_service(
            pb::agent_service_server::AgentServiceServer::new(AgentStreams(service.clone()))
                .max_encoding_message_size(MAX_MESSAGE)
                .max_decoding_message_size(MAX_MESSAGE),
        )
        .add_service(
            pb::edge_feed_server::EdgeFeedServer::new(EdgeStreams(service.clone()))
                .max_encoding_message_size(MAX_MESSAGE),
        )
        .add_service(
            pb::admin_service_server::AdminServiceServer::new(Admin(service.clone()))
                .max_encoding_message_size(MAX_MESSAGE)
                .max_decoding_message_size(MAX_MESSAGE),
        )
        .serve_with_incoming_shutdown(TcpListenerStream::new(grpc), shutdown);
    let http_server = axum::serve(http, router(service.clone()));
    let ticker = tokio::spawn(clock(service, tick));
    tokio::select! {
        result = grpc_server => result?,
        result = http_server => result?,
    }
    ticker.abort();
    Ok(())
}

/// Tick the engine: cycles close at their deadlines, timers run.
async fn clock(service: Arc<Service>, tick: Duration) {
    let mut interval = tokio::time::interval(tick);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        interval.tick().await;
        if let Err(err) = service.with_control(|c| c.step(Input::Tick, now())) {
            tracing::error!(error = %err, "engine tick failed");
        }
    }
}

fn router(service: Arc<Service>) -> Router {
    let operations = Router::new()
        .route("/livez", get(|| async { "ok" }))
        .route("/readyz", get(|| async { "ready" }))
        .route("/metrics", get(metrics))
        .with_state(service.clone());
    crate::rest::router(service).merge(operations)
}

async fn metrics(State(service): State<Arc<Service>>) -> String {
    let (version, members, store_bytes, counters, gate) = service.with_control(|c| {
        (
            c.version(),
            c.catalog().members.len(),
            c.store_size(),
            c.engine().counters(),
            c.engine().decisions_enabled(),
        )
    });
    let agents = lock(&service.agents)
        .values()
        .filter(|a| a.connected)
        .count();
    let edges = lock(&service.edges)
        .values()
        .filter(|e| e.connected)
        .count();
    let max_lag = lock(&service.edges)
        .values()
        .filter(|e| e.connected)
        .map(|e| e.lag_ms)
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    let mut metric = |name: &str, help: &str, kind: &str, value: u64| {
        out.push_str(&format!(
            "# HELP {name} {help}\n# TYPE {name} {kind}\n{name} {value}\n"
        ));
    };
    metric(
        "gslb_aggregator_version",
        "Current snapshot version",
        "gauge",
        version,
    );
    metric(
        "gslb_aggregator_members",
        "Configured members",
        "gauge",
        members as u64,
    );
    metric(
        "gslb_aggregator_agents_connected",
        "Agent streams open",
        "gauge",
        agents as u64,
    );
    metric(
        "gslb_aggregator_edges_connected",
        "Edge subscriptions open",
        "gauge",
        edges as u64,
    );
    metric(
        "gslb_aggregator_edge_lag_max_milliseconds",
        "Largest publish-to-apply lag reported by a connected edge",
        "gauge",
        max_lag,
    );
    metric(
        "gslb_aggregator_store_bytes",
        "Store size on disk",
        "gauge",
        store_bytes,
    );
    metric(
        "gslb_aggregator_results_accepted_total",
        "Results ingested into cycles",
        "counter",
        counters.accepted,
    );
    metric(
        "gslb_aggregator_results_late_total",
        "Results for cycles already closed",
        "counter",
        counters.late,
    );
    metric(
        "gslb_aggregator_results_future_total",
        "Results for cycles too far ahead (clock skew)",
        "counter",
        counters.future,
    );
    metric(
        "gslb_aggregator_results_unknown_member_total",
        "Results for unknown members",
        "counter",
        counters.unknown_member,
    );
    metric(
        "gslb_aggregator_results_stale_check_total",
        "Results for a check or location no longer assigned",
        "counter",
        counters.stale_check,
    );
    metric(
        "gslb_aggregator_results_invalid_target_total",
        "invalid-target results",
        "counter",
        counters.invalid_target,
    );
    metric(
        "gslb_aggregator_decisions_enabled",
        "1 once the startup gate is open",
        "gauge",
        u64::from(gate),
    );
    out
}
