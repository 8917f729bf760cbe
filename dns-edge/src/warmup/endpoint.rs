//! `GET /internal/warmup` on the status listener: the snapshot version,
//! the capture time and the hot keys, for a peer that presents the bearer
//! token. Without the token: 401 and nothing else. An edge without a token
//! file serves nothing (404).

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::Warmup;
use super::keys::{Body, to_text};

/// Answer one request to an edge serving snapshot `version`.
pub fn answer(warmup: &Warmup, version: u64, headers: &HeaderMap) -> Response {
    let Some(token) = warmup.token.get() else {
        return (
            StatusCode::NOT_FOUND,
            "warm-up endpoint off: this edge has no --warmup-token-file\n",
        )
            .into_response();
    };
    let sent = headers.get(header::AUTHORIZATION).map(|v| v.as_bytes());
    if !token.admits(sent) {
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
        )
            .into_response();
    }
    let hot = warmup.hot.get();
    let keys = hot.map(|h| h.keys()).unwrap_or_default();
    let body = Body {
        version,
        captured_at_ms: gslb_shared::clock::now_ms(),
        sample_every: hot.map_or(0, |h| h.every()),
        keys: (keys.iter())
            .filter_map(|(k, region)| to_text(k, region.as_deref()))
            .collect(),
    };
    axum::Json(body).into_response()
}
