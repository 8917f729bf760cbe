//! The status listener, bound at process start (seed 003): `/livez`,
//! `/readyz`, `/status/ready`, `/status/config` and `/metrics`.

use std::sync::Arc;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::state::Shared;

struct App {
    shared: Arc<Shared>,
    registry: prometheus_client::registry::Registry,
}

/// The status routes over `shared`.
pub fn app(shared: Arc<Shared>) -> Router {
    let registry = crate::metrics::registry(Arc::clone(&shared));
    Router::new()
        .route("/livez", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .route("/status/ready", get(status_ready))
        .route("/status/config", get(status_config))
        .route("/metrics", get(metrics))
        .with_state(Arc::new(App { shared, registry }))
}

/// 200 once a snapshot is applied, until draining starts. An aggregator
/// outage does not change it: the edge answers from its last snapshot.
async fn readyz(State(app): State<Arc<App>>) -> (StatusCode, &'static str) {
    if app.shared.draining() {
        (StatusCode::SERVICE_UNAVAILABLE, "draining\n")
    } else if !app.shared.loaded() {
        (StatusCode::SERVICE_UNAVAILABLE, "no snapshot applied yet\n")
    } else {
        (StatusCode::OK, "ready\n")
    }
}

/// The configuration-only startup gate: 503 before the first snapshot.
async fn status_ready(State(app): State<Arc<App>>) -> (StatusCode, &'static str) {
    if app.shared.loaded() {
        (StatusCode::OK, "snapshot applied\n")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "no snapshot applied yet\n")
    }
}

async fn status_config(State(app): State<Arc<App>>) -> Response {
    axum::Json(app.shared.status()).into_response()
}

async fn metrics(State(app): State<Arc<App>>) -> Response {
    let mut text = String::new();
    if prometheus_client::encoding::text::encode(&mut text, &app.registry).is_err() {
        return StatusCode::INTERNAL_SERVER_ERROR.into_response();
    }
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        text,
    )
        .into_response()
}
