//! Bearer tokens on the REST API (axum middleware): who the caller is. What
//! the token's role and scope allow is checked per route inside the router
//! (`api::rest::permit`, by the table in `api::access`), for the REST
//! listener and the UI alike.

use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::caller::{scoped, token_identity};
use super::tokens::{Checked, TokenRole, Tokens};
use crate::core::audit::Attribution;

pub use super::caller::source;

/// Refuse a request without a valid token; give the router the token that
/// passed, and the caller's identity to the writes it makes.
pub async fn require_token(
    State(tokens): State<Arc<Tokens>>,
    mut request: Request,
    next: Next,
) -> Response {
    let authorization = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.as_bytes());
    match tokens.check_entry(authorization, TokenRole::Read, SystemTime::now()) {
        Ok(checked) => {
            let by = attribution(&request, &checked, false);
            request.extensions_mut().insert(checked);
            match by {
                Some(by) => scoped(by, next.run(request)).await,
                None => next.run(request).await,
            }
        }
        Err(refusal) => {
            tracing::warn!(
                method = %request.method(),
                path = request.uri().path(),
                reason = %refusal,
                "refused a REST call"
            );
            let (status, code) = if refusal.unauthenticated() {
                (StatusCode::UNAUTHORIZED, "unauthenticated")
            } else {
                (StatusCode::FORBIDDEN, "permission_denied")
            };
            let body = axum::Json(serde_json::json!({
                "error": {"code": code, "message": refusal.to_string()}
            }));
            let mut response = (status, body).into_response();
            if status == StatusCode::UNAUTHORIZED {
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    header::HeaderValue::from_static("Bearer"),
                );
            }
            response
        }
    }
}

/// Who a request is for: built for writes, and for every call of a scoped
/// token (its handlers and the core limit what it sees by it). An
/// unlimited token's reads write nothing to attribute and build nothing.
pub fn attribution(request: &Request, checked: &Checked, ui: bool) -> Option<Attribution> {
    let reads = request.method() == Method::GET || request.method() == Method::HEAD;
    let scope = crate::api::access::scope_of(checked);
    if reads && scope.is_none() {
        return None;
    }
    Some(Attribution {
        who: if ui {
            format!("ui:{} ({})", checked.name, checked.id)
        } else {
            token_identity(&checked.name, &checked.id, None)
        },
        source: source(request),
        operation: format!("{} {}", request.method(), request.uri().path()),
        scope,
    })
}
