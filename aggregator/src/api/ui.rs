//! The web UI at `/ui/` on the HTTP listener (same TLS as REST): seed 000's
//! topology editor with live member states, the slide-over member editor,
//! declarative apply, the probe matrix, health logs, agents, edges, the
//! cluster and explain.
//!
//! Pages are rendered here (maud escapes every value) and embedded in the
//! binary with one stylesheet and one script; nothing is fetched from
//! elsewhere. Reads and changes from the page go to `/ui/api/v1/…`, which
//! is the REST API itself (the same handlers and core), authenticated by
//! the session cookie and CSRF value instead of a bearer token. Live
//! states come from [`events`].

mod assets;
mod auth;
mod events;
mod follower;
mod live;
mod pages;
mod session;
mod sse;

use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::from_fn_with_state;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{any, get, post};
use ring::rand::SystemRandom;
use tower::ServiceExt;

use crate::api::service::Service;
use crate::api::tokens::Tokens;

pub use events::{MAX_EVENT_STREAMS, MAX_STREAMS_PER_SESSION, MAX_STREAMS_PER_TOKEN, MIN_REFRESH};
pub use session::{
    MAX_SESSIONS, MAX_SESSIONS_PER_TOKEN, SESSION_IDLE_MS, SESSION_LIFETIME_MS, TOUCH_EVERY_MS,
};

/// What the UI's handlers share.
pub struct Ui {
    service: Arc<Service>,
    tokens: Arc<Tokens>,
    /// Uses of each session seen here (the store keeps the sessions).
    seen: Mutex<session::Seen>,
    rng: SystemRandom,
    /// Wrong sign-in tokens per source address.
    guesses: gslb_shared::guesses::Guesses,
    hub: Arc<events::Hub>,
    /// The REST router, which `/ui/api/v1/…` is passed to.
    rest: Router,
}

impl std::fmt::Debug for Ui {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ui").finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Every UI route, and the UI's metrics. `idle` is the HTTP listener's
/// idle timeout.
pub fn router(service: Arc<Service>, tokens: Arc<Tokens>, idle: Duration) -> (Router, UiMetrics) {
    let ui = Arc::new(Ui {
        hub: events::Hub::start(service.clone(), idle),
        rest: crate::api::rest::router(service.clone()),
        service,
        tokens,
        seen: Mutex::default(),
        rng: SystemRandom::new(),
        guesses: Default::default(),
    });
    let signed_in = Router::new()
        .route("/ui/", get(pages::topology::page))
        .route("/ui/topology", get(pages::topology::fragment))
        .route("/ui/topology/manifest", get(pages::topology::manifest))
        .route("/ui/topology/find", get(pages::topology::find))
        .route(
            "/ui/topology/pools/{id}",
            get(pages::topology::pool_fragment),
        )
        .route("/ui/overview", get(pages::overview::page))
        .route("/ui/pools/{id}", get(pages::matrix::page))
        .route("/ui/pools/{id}/matrix", get(pages::matrix::fragment))
        .route("/ui/members/{id}/log", get(pages::log::page))
        .route("/ui/agents", get(pages::fleet::agents))
        .route("/ui/edges", get(pages::fleet::edges))
        .route("/ui/cluster", get(pages::fleet::cluster))
        .route("/ui/explain", get(pages::explain::page))
        .route("/ui/apply", get(pages::apply::page))
        .route("/ui/audit", get(pages::audit::page))
        .route("/ui/objects", get(pages::objects::page))
        .route("/ui/dnssec", get(pages::dnssec::page))
        .route("/ui/tsig", get(pages::tsig::page))
        .route("/ui/notifications", get(pages::notifications::page))
        .route("/ui/zonefiles", get(pages::zonefiles::page))
        .route("/ui/tokens", get(pages::tokens::page))
        .route("/ui/events", get(events_stream))
        .route("/ui/session", axum::routing::delete(auth::sign_out))
        .route("/ui/api/{*rest}", any(api))
        .layer(from_fn_with_state(ui.clone(), auth::require));
    let metrics = UiMetrics(Arc::downgrade(&ui));
    let router = Router::new()
        .route("/ui", get(|| async { Redirect::permanent("/ui/") }))
        .route("/ui/login", get(pages::login::page))
        .route("/ui/session", post(auth::sign_in))
        .route("/ui/assets/{name}", get(assets::serve))
        .merge(signed_in)
        // gzip for a browser that takes it: the topology of 10,000 members
        // is megabytes of repetitive HTML. The event stream is left alone
        // (tower-http's default predicate skips `text/event-stream`: each
        // event must leave at once). No secret is at risk of a BREACH-style
        // guess: the cookie is SameSite=Strict, so no other site can have
        // a signed-in page compressed with its own text in it.
        .layer(tower_http::compression::CompressionLayer::new())
        .with_state(ui);
    (router, metrics)
}

/// The web UI's figures on `/metrics`: sessions, open event streams, and
/// what the live view's refreshes cost.
#[derive(Debug)]
pub struct UiMetrics(std::sync::Weak<Ui>);

impl prometheus_client::collector::Collector for UiMetrics {
    fn encode(
        &self,
        mut e: prometheus_client::encoding::DescriptorEncoder,
    ) -> Result<(), std::fmt::Error> {
        use crate::api::metrics::{counter, gauge};
        let Some(ui) = self.0.upgrade() else {
            return Ok(());
        };
        let sessions = ui.service.view().session_count().unwrap_or(0);
        let (streams, refreshes, seconds) = ui.hub.figures();
        gauge(&mut e, "ui_sessions", "Web UI sessions signed in", sessions)?;
        gauge(
            &mut e,
            "ui_event_streams",
            "Web UI pages with their live stream open",
            streams,
        )?;
        counter(
            &mut e,
            "ui_refreshes",
            "Live view refreshes (one frame of every member each)",
            refreshes,
        )?;
        counter(
            &mut e,
            "ui_refresh_seconds",
            "Time the live view's refreshes took",
            seconds,
        )?;
        Ok(())
    }
}

/// `/ui/api/v1/…`: the REST API, as this session's caller, after the
/// follower rule ([`follower`]).
async fn api(State(ui): State<Arc<Ui>>, request: Request) -> Response {
    let method = request.method().clone();
    if let Some(refusal) = follower::refuse_write(&ui.service, &method).await {
        return refusal;
    }
    let Some(rest) = request
        .uri()
        .path_and_query()
        .and_then(|p| p.as_str().strip_prefix("/ui"))
        .and_then(|p| p.parse().ok())
    else {
        return (StatusCode::BAD_REQUEST, "bad path\n").into_response();
    };
    // A new request of the same method, headers and body: this route's own
    // path parameters (kept in the extensions) must not reach the REST
    // handlers, which read their own.
    let (parts, body) = request.into_parts();
    let mut request = Request::new(body);
    *request.method_mut() = parts.method;
    *request.uri_mut() = rest;
    *request.headers_mut() = parts.headers;
    // The token the session holds: the REST router checks its role and
    // scope per route.
    if let Some(token) = parts.extensions.get::<crate::api::tokens::Checked>() {
        request.extensions_mut().insert(token.clone());
    }
    match ui.rest.clone().oneshot(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

/// `/ui/events`: the live stream.
async fn events_stream(
    State(ui): State<Arc<Ui>>,
    axum::Extension(caller): axum::Extension<auth::Caller>,
    token: Option<axum::Extension<crate::api::tokens::Checked>>,
    headers: axum::http::HeaderMap,
) -> Response {
    let Some(id) = auth::cookie(&headers).map(str::to_owned) else {
        return StatusCode::UNAUTHORIZED.into_response();
    };
    // Counted by the session's digest: the id itself is never kept.
    let session = session::key(&id);
    let held = Arc::clone(&ui);
    // An open page counts as use; the session's lifetime and its token's
    // validity still end it.
    let signed_in = move || auth::signed_in(&held, &id);
    // A scoped session's stream carries its members and pools only.
    let narrow = caller.scope.map(|scope| {
        let service = Arc::clone(&ui.service);
        Box::new(move || {
            let view = service.view();
            let seen = scope.restrict(view.catalog());
            events::Only {
                members: seen.members.keys().map(|m| m.0).collect(),
                pools: seen.pools.keys().map(|p| p.0).collect(),
            }
        }) as events::Narrow
    });
    let token = token.map_or_else(String::new, |t| t.0.id);
    match ui.hub.stream(signed_in, narrow, &session, &token) {
        Ok(stream) => stream,
        Err(events::StreamRefusal::Full) => (
            StatusCode::SERVICE_UNAVAILABLE,
            format!(
                "events: {MAX_EVENT_STREAMS} streams are open, the most this aggregator serves\n"
            ),
        )
            .into_response(),
        Err(events::StreamRefusal::Session) => (
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "events: this session holds {MAX_STREAMS_PER_SESSION} streams, the most one may: close a tab\n"
            ),
        )
            .into_response(),
        Err(events::StreamRefusal::Token) => (
            StatusCode::TOO_MANY_REQUESTS,
            format!(
                "events: this token's sessions hold {MAX_STREAMS_PER_TOKEN} streams, the most one token may\n"
            ),
        )
            .into_response(),
    }
}

/// Headers on every response of the HTTP listener, matched route or not:
/// nothing is sniffed into another type; under `/ui` (pages, fragments,
/// API passes, errors and unknown paths alike) only this site's own script
/// and styles run, nothing frames the UI, no referrer leaves it, and
/// nothing but the assets is cached (pages hold the CSRF value).
pub async fn headers(request: Request, next: axum::middleware::Next) -> Response {
    let path = request.uri().path();
    let ui = path == "/ui" || path.starts_with("/ui/");
    let static_file = path.starts_with("/ui/assets/");
    let mut response = next.run(request).await;
    let h = response.headers_mut();
    let set = |h: &mut axum::http::HeaderMap, name: &'static str, value: &'static str| {
        h.insert(name, HeaderValue::from_static(value));
    };
    set(h, "x-content-type-options", "nosniff");
    if !ui {
        return response;
    }
    set(
        h,
        "content-security-policy",
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; \
         connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    );
    set(h, "x-frame-options", "DENY");
    set(h, "referrer-policy", "no-referrer");
    if !static_file {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}
