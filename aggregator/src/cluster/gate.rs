//! Routing admin calls in a cluster. Writes go to the leader: a follower
//! answers UNAVAILABLE with the leader's address in `gslb-leader` metadata
//! (gslbctl follows it), or 503 with a `gslb-leader` header over REST.
//! Reads are linearizable by default: the leader confirms its quorum first,
//! a follower sends the reader to the leader; a read marked stale
//! (`gslb-stale` metadata or header) is served by whichever node it reaches.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tonic::Status;
use tonic::body::Body;
use tonic::codegen::{BoxFuture, Service as TowerService, http};
use tonic::server::NamedService;

use super::LeaderHint;
use crate::service::Service;

/// Metadata (and HTTP header) naming the leader's gRPC address.
pub const LEADER: &str = "gslb-leader";
/// Metadata (and HTTP header) asking for a local, possibly stale read.
pub const STALE: &str = "gslb-stale";

/// Admin methods that write (everything else reads).
fn writes(method: &str) -> bool {
    [
        "Create",
        "Update",
        "Delete",
        "Set",
        "Register",
        "Heartbeat",
        "Deregister",
        "Apply",
        "Add",
        "Remove",
    ]
    .iter()
    .any(|verb| method.starts_with(verb))
}

/// The status a node that does not lead answers with.
pub fn not_leader(hint: Option<LeaderHint>) -> Status {
    match hint {
        Some((id, addr)) => {
            let mut status = Status::unavailable(format!(
                "this node is not the leader; node {id} at {addr} is (retry there)"
            ));
            if let Ok(value) = addr.parse() {
                status.metadata_mut().insert(LEADER, value);
            }
            status
        }
        None => Status::unavailable(
            "no leader is known (an election is under way or the quorum is lost); retry shortly",
        ),
    }
}

/// Let a call through, or say where to send it.
async fn admit(service: &Service, write: bool, stale: bool) -> Result<(), Status> {
    let Some(cluster) = service.cluster() else {
        return Ok(());
    };
    if !write && stale {
        return Ok(());
    }
    if !cluster.leading() {
        return Err(not_leader(cluster.leader()));
    }
    if write {
        // The proposal itself needs the quorum.
        return Ok(());
    }
    cluster
        .confirm()
        .await
        .map_err(|why| Status::unavailable(format!("leadership not confirmed: {why}")))
}

/// A gRPC service routed by [`admit`].
#[derive(Debug, Clone)]
pub struct LeaderGate<S> {
    inner: S,
    service: Arc<Service>,
}

impl<S> LeaderGate<S> {
    /// Put `inner` behind the gate.
    pub fn new(inner: S, service: Arc<Service>) -> Self {
        Self { inner, service }
    }
}

impl<S: NamedService> NamedService for LeaderGate<S> {
    const NAME: &'static str = S::NAME;
}

impl<S> TowerService<http::Request<Body>> for LeaderGate<S>
where
    S: TowerService<http::Request<Body>, Response = http::Response<Body>, Error = Infallible>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Self::Response, Self::Error>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: http::Request<Body>) -> Self::Future {
        // The clone is ready (tonic's generated servers always are); the
        // original stays for the next call.
        let mut inner = self.inner.clone();
        std::mem::swap(&mut inner, &mut self.inner);
        let service = self.service.clone();
        Box::pin(async move {
            let method = request.uri().path().rsplit('/').next().unwrap_or_default();
            let stale = request.headers().contains_key(STALE);
            if let Err(status) = admit(&service, writes(method), stale).await {
                return Ok(status.into_http());
            }
            inner.call(request).await
        })
    }
}

/// The REST side of [`admit`] (axum middleware).
pub async fn rest(State(service): State<Arc<Service>>, request: Request, next: Next) -> Response {
    let write = request.method() != axum::http::Method::GET;
    let stale = request.headers().contains_key(STALE)
        || request
            .uri()
            .query()
            .is_some_and(|q| q.split('&').any(|p| p == "stale" || p == "stale=true"));
    match admit(&service, write, stale).await {
        Ok(()) => next.run(request).await,
        Err(status) => {
            let leader = status.metadata().get(LEADER).cloned();
            let body = axum::Json(serde_json::json!({
                "error": {"code": "unavailable", "message": status.message()}
            }));
            let mut response = (axum::http::StatusCode::SERVICE_UNAVAILABLE, body).into_response();
            if let Some(leader) = leader.and_then(|l| l.to_str().ok().map(str::to_owned))
                && let Ok(value) = leader.parse()
            {
                response.headers_mut().insert(LEADER, value);
            }
            response
        }
    }
}
