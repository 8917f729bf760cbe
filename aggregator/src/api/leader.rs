//! Routing admin calls in a cluster. Writes go to the leader: a follower
//! answers UNAVAILABLE with the leader's address in `gslb-leader` metadata
//! (gslbctl follows it); over REST it forwards the write to the leader's
//! REST listener and passes the answer back (`api::forward`).
//! Reads are linearizable by default: the leader confirms its quorum first,
//! a follower sends the reader to the leader; a read marked stale
//! (`gslb-stale` metadata or header) is served by whichever node it reaches.

use crate::core::audit::Attribution;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tonic::Status;
use tonic::body::Body;
use tonic::codegen::{BoxFuture, http};

use crate::api::gated::Admission;
use crate::api::service::Service;
pub use gslb_proto::metadata::{LEADER, STALE};

pub(crate) use crate::api::access::writes;

pub use crate::api::service::status::not_leader;

/// Let a call through, or say where to send it.
async fn admit(service: &Service, write: bool, stale: bool) -> Result<(), Status> {
    let Some(cluster) = service.cluster() else {
        return Ok(());
    };
    if !write && stale {
        return Ok(());
    }
    if !service.leading() {
        return Err(not_leader(cluster.leader(false)));
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

/// Admission of gRPC calls by [`admit`] (see [`crate::api::gated::Gated`]).
#[derive(Debug, Clone)]
pub struct Leader(pub Arc<Service>);

impl Admission for Leader {
    fn admit(&self, request: &http::Request<Body>) -> BoxFuture<Option<Attribution>, Status> {
        let service = self.0.clone();
        let method = request.uri().path().rsplit('/').next().unwrap_or_default();
        let write = writes(method);
        let stale = request.headers().contains_key(STALE);
        // Forming the cluster is what makes a leader: the reached node
        // takes it (and refuses it once formed).
        if method == "FormCluster" {
            return Box::pin(async { Ok(None) });
        }
        Box::pin(async move { admit(&service, write, stale).await.map(|()| None) })
    }
}

/// The same path on the leader's HTTP listener, when a leader is known
/// and tells its address.
async fn leader_location(service: &Service, path: &str) -> Option<String> {
    let cluster = service.cluster()?;
    let hint = cluster.leader(service.leading())?;
    if hint.0 == cluster.id {
        return None;
    }
    let http = cluster.leader_http(&hint).await?;
    // The REST listener speaks TLS exactly when the peers' links do.
    Some(format!("{}://{http}{path}", cluster.link.scheme()))
}

/// The leader's REST address and how to reach it, when a leader other
/// than this node is known. The CA is read per forwarded call, so a
/// rotated one is used at once.
pub(crate) async fn forwarder(
    service: &Service,
) -> Option<(String, crate::api::forward::Forwarder)> {
    let cluster = service.cluster()?;
    let hint = cluster.leader(service.leading())?;
    if hint.0 == cluster.id {
        return None;
    }
    let http = cluster.leader_http(&hint).await?;
    let ca = cluster.link.tls.as_ref().and_then(|t| t.ca.as_deref());
    match crate::api::forward::Forwarder::new(ca, cluster.id) {
        Ok(f) => Some((http, f)),
        Err(e) => {
            tracing::warn!(
                error = format!("{e:#}"),
                "cannot forward to the leader; redirecting"
            );
            None
        }
    }
}

/// The REST side of [`admit`] (axum middleware): a follower sends writes
/// on to the leader (`api::forward`) and redirects reads to the leader's
/// REST listener (307), or answers 503 with the leader's gRPC address in
/// `gslb-leader` when it cannot learn the leader's.
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
            // A write is sent on to the leader (once: a forwarded call
            // that reaches a node which does not lead is answered here).
            if write
                && !request
                    .headers()
                    .contains_key(crate::api::forward::FORWARDED)
                && let Some((leader, forwarder)) = forwarder(&service).await
            {
                return forwarder.forward(&leader, request).await;
            }
            let path = request
                .uri()
                .path_and_query()
                .map_or_else(|| "/".to_owned(), |p| p.as_str().to_owned());
            if let Some(location) = leader_location(&service, &path).await {
                // 307 keeps the method and body: the client repeats the
                // call on the leader (curl -L, browsers, most libraries).
                let mut response = axum::http::StatusCode::TEMPORARY_REDIRECT.into_response();
                if let Ok(value) = location.parse() {
                    response
                        .headers_mut()
                        .insert(axum::http::header::LOCATION, value);
                }
                return response;
            }
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
