//! Bearer tokens on the REST API (axum middleware): reads need a read or
//! write token, everything else a write token.

use std::sync::Arc;
use std::time::SystemTime;

use axum::extract::{Request, State};
use axum::http::{Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::caller::{scoped, token_identity};
use super::tokens::{TokenRole, Tokens};
use crate::core::audit::Attribution;

/// The caller's address, as the HTTP listener put it in the request.
pub fn source(request: &Request) -> String {
    (request.extensions().get::<crate::net::listener::Peer>())
        .map_or_else(String::new, |p| p.addr.to_string())
}

/// Refuse a request whose token does not allow it.
pub async fn require_token(
    State(tokens): State<Arc<Tokens>>,
    request: Request,
    next: Next,
) -> Response {
    let need = if request.method() == Method::GET || request.method() == Method::HEAD {
        TokenRole::Read
    } else {
        TokenRole::Write
    };
    let authorization = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(|v| v.as_bytes());
    match tokens.check_entry(authorization, need, SystemTime::now()) {
        // Reads write nothing to attribute: no identity is built for them.
        Ok(_) if need == TokenRole::Read => next.run(request).await,
        Ok(checked) => {
            let by = Attribution {
                who: token_identity(&checked.name, &checked.id, None),
                source: source(&request),
                operation: format!("{} {}", request.method(), request.uri().path()),
            };
            scoped(by, next.run(request)).await
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
