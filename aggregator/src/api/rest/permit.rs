//! The per-route check inside the REST router (so `/ui/api/v1/…` passes
//! it too): the caller's token, put in the request by the REST or UI
//! admission, must have the route's role (`api::access`), and an object a
//! path names by `{id}` must be in its scope. A refused write is audited.

use std::sync::Arc;

use axum::extract::{MatchedPath, Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::ApiError;
use crate::api::access::{Reach, refusal, rest, scope_of};
use crate::api::service::Service;
use crate::api::tokens::Checked;
use crate::core::catalog::ObjectRef;

/// Refuse a call the caller's token may not make, and an object by `{id}`
/// outside its scope.
pub async fn rest_access(
    State(service): State<Arc<Service>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(token) = request.extensions().get::<Checked>().cloned() else {
        // Every admission puts the token in; without one, fail closed.
        return ApiError::forbidden("authorization: no token was checked for this call")
            .into_response();
    };
    let Some(path) = request
        .extensions()
        .get::<MatchedPath>()
        .map(|p| p.as_str().to_owned())
    else {
        return next.run(request).await;
    };
    let need = rest(request.method(), &path);
    let call = format!("{} {path}", request.method());
    let writes = request.method() != Method::GET && request.method() != Method::HEAD;
    let id = request
        .uri()
        .path()
        .strip_prefix("/api/v1/")
        .and_then(|p| p.split('/').nth(1))
        .and_then(|id| id.parse::<u64>().ok());
    let named = match need.reach {
        Reach::Object(named) => id.map(|id| named.object(id)),
        _ => None,
    };
    if let Some(why) = refusal(&token, need, &call) {
        tracing::warn!(token = %token.name, call, reason = %why, "refused a REST call");
        return denied(&service, writes, why, named).await;
    }
    if let (Some(target), Some(scope)) = (named, scope_of(&token)) {
        let view = service.view();
        if let Err(e) = scope.see(view.catalog(), &target) {
            return denied(&service, writes, e.to_string(), Some(target)).await;
        }
    }
    next.run(request).await
}

/// The 403 of a refused call; a refused write is recorded in the audit
/// log, like the writes the core refuses.
async fn denied(
    service: &Service,
    writes: bool,
    why: String,
    target: Option<ObjectRef>,
) -> Response {
    if writes {
        let recorded = why.clone();
        let objects: Vec<ObjectRef> = target.into_iter().collect();
        // Best effort: the refusal stands whether or not it is recorded.
        service
            .call(move |c| c.audit_denied(recorded, objects, crate::api::service::now()))
            .await;
    }
    ApiError::forbidden(why).into_response()
}
