//! The UI on a cluster follower: it shows everything from the node's own
//! replica, and refuses a change with the leader's UI address instead of
//! the REST API's redirect (a browser's script cannot follow a redirect to
//! another origin; its session, kept by the leader, is valid there too).

use axum::Json;
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::api::service::Service;

/// A refusal for a change sent to a node that does not lead, naming the
/// leader's UI when it is known.
pub async fn refuse_write(service: &Service, method: &Method) -> Option<Response> {
    if matches!(*method, Method::GET | Method::HEAD) {
        return None;
    }
    let cluster = service.cluster()?;
    if service.leading() {
        return None;
    }
    let (message, leader) = match cluster.leader(false) {
        Some(hint) if hint.0 != cluster.id => match cluster.leader_http(&hint).await {
            Some(http) => {
                let url = format!("{}://{http}/ui/", cluster.link.scheme());
                (
                    format!(
                        "leader: this node ({}) follows; changes are made on the leader, node {}, at {url}",
                        cluster.id, hint.0
                    ),
                    Some(url),
                )
            }
            None => (
                format!(
                    "leader: this node ({}) follows; changes are made on the leader, node {} ({})",
                    cluster.id, hint.0, hint.1
                ),
                None,
            ),
        },
        _ => (
            "leader: no leader is known (an election is under way or the quorum is lost); try again shortly".to_owned(),
            None,
        ),
    };
    Some(
        (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(serde_json::json!({
                "error": {"code": "unavailable", "message": message, "field": "leader"},
                "leader": leader,
            })),
        )
            .into_response(),
    )
}
