//! The status listener, bound at process start (seed 003): `/livez`,
//! `/readyz` (both with `?verbose=1`), `/status/ready`, `/status/config`,
//! `/status/pools`, `/metrics`, and `/internal/warmup` for peers (seed 001).

mod exposition;

use std::sync::Arc;

use axum::Router;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;

use crate::state::Shared;

struct App {
    shared: Arc<Shared>,
    registry: prometheus_client::registry::Registry,
}

/// The status routes over `shared`; `/metrics` shows the expiry of the
/// edge's certificate `cert` too.
pub fn app(shared: Arc<Shared>, cert: Option<std::path::PathBuf>) -> Router {
    let registry = exposition::registry(Arc::clone(&shared), cert);
    Router::new()
        .route("/livez", get(livez))
        .route("/readyz", get(readyz))
        .route("/status/ready", get(status_ready))
        .route("/status/config", get(status_config))
        .route("/status/pools", get(status_pools))
        .route("/metrics", get(metrics))
        .route("/internal/warmup", get(warmup))
        .route(crate::warmup::endpoint::SEED_PATH, get(warmup))
        .with_state(Arc::new(App { shared, registry }))
}

/// `?verbose=1`: list each check (for people; probes use the status code).
#[derive(Debug, Default, serde::Deserialize)]
struct Verbose {
    verbose: Option<String>,
}

impl Verbose {
    fn on(&self) -> bool {
        matches!(self.verbose.as_deref(), Some("1" | "true"))
    }
}

/// Each check with its state, seed 003's style: `[+]` holds, `[-]` does
/// not; the feed line is information (readiness never depends on it).
fn checks(shared: &Shared) -> Vec<String> {
    let status = shared.status();
    let mark = |ok: bool| if ok { "[+]" } else { "[-]" };
    let snapshot = if shared.loaded() {
        format!(
            "snapshot ok: version {} from {}",
            status.version,
            status.source.as_deref().unwrap_or("?")
        )
    } else {
        "snapshot: none applied yet".to_owned()
    };
    let dns = shared.dns_bound().map_or_else(
        || "dns-listeners: not bound (bound once a snapshot is applied)".to_owned(),
        |addr| format!("dns-listeners ok: {addr}"),
    );
    let draining = if shared.draining() {
        format!(
            "draining: yes (in_flight {}, open_connections {})",
            shared.metrics.in_flight(),
            shared.tcp_open()
        )
    } else {
        "draining: no".to_owned()
    };
    let feed = status.state.name();
    vec![
        format!("{}{snapshot}", mark(shared.loaded())),
        format!("{}{dns}", mark(shared.dns_bound().is_some())),
        format!("{}{draining}", mark(!shared.draining())),
        format!("[i]feed: {feed} (information only)"),
    ]
}

fn verbose_body(shared: &Shared, probe: &str, passed: bool) -> String {
    let verdict = if passed { "passed" } else { "failed" };
    format!("{}\n{probe} check {verdict}\n", checks(shared).join("\n"))
}

/// 200 while the process runs, draining included (seed 003).
async fn livez(State(app): State<Arc<App>>, Query(v): Query<Verbose>) -> (StatusCode, String) {
    if v.on() {
        (StatusCode::OK, verbose_body(&app.shared, "livez", true))
    } else {
        (StatusCode::OK, "ok\n".to_owned())
    }
}

/// 200 once a snapshot is applied, until draining starts. An aggregator
/// outage does not change it: the edge answers from its last snapshot.
async fn readyz(State(app): State<Arc<App>>, Query(v): Query<Verbose>) -> (StatusCode, String) {
    let (code, text) = if app.shared.draining() {
        (StatusCode::SERVICE_UNAVAILABLE, "draining\n")
    } else if !app.shared.loaded() {
        (StatusCode::SERVICE_UNAVAILABLE, "no snapshot applied yet\n")
    } else if app.shared.dns_bound().is_none() {
        // Between the first snapshot and the bind: warming up.
        (
            StatusCode::SERVICE_UNAVAILABLE,
            "DNS listeners not bound yet\n",
        )
    } else {
        (StatusCode::OK, "ready\n")
    };
    if v.on() {
        (
            code,
            verbose_body(&app.shared, "readyz", code == StatusCode::OK),
        )
    } else {
        (code, text.to_owned())
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

/// The pools of the table being served; 503 before the first snapshot.
async fn status_pools(State(app): State<Arc<App>>) -> Response {
    let Some(table) = app.shared.table.load_full() else {
        return (StatusCode::SERVICE_UNAVAILABLE, "no snapshot applied yet\n").into_response();
    };
    // One pass over the members: on a blocking thread, not a status worker.
    let view = tokio::task::spawn_blocking(move || crate::pools::view(&table.snapshot)).await;
    match view {
        Ok(view) => axum::Json(view).into_response(),
        Err(_) => StatusCode::INTERNAL_SERVER_ERROR.into_response(),
    }
}

/// Seed 001's endpoint: the hot keys, for a peer with the token (the
/// snapshot only on the TLS warm-up listener).
async fn warmup(
    State(app): State<Arc<App>>,
    axum::extract::ConnectInfo(peer): axum::extract::ConnectInfo<std::net::SocketAddr>,
    headers: axum::http::HeaderMap,
    uri: axum::http::Uri,
) -> Response {
    use crate::warmup::endpoint::{self, Snapshot};
    let warmup = &app.shared.warmup;
    if let Some(refused) = endpoint::refusal(warmup, &headers, peer.ip()) {
        return refused;
    }
    let body = endpoint::body(warmup, app.shared.status().version);
    let snapshot = if endpoint::asks_snapshot(uri.query()) {
        Snapshot::NotHere
    } else {
        Snapshot::NotAsked
    };
    endpoint::answer(&body, snapshot, uri.path() == endpoint::SEED_PATH)
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
