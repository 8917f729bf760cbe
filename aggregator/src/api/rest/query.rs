//! Query strings: a route that reads none refuses one, so a parameter a
//! caller believes in (`?dryRun=true` on a route without a plan) is never
//! silently ignored. Routes that read one decode it into a struct that
//! refuses unknown fields, naming them. `stale` is the listener's own (a
//! read a follower may answer: [`crate::api::leader`]); it is taken out
//! here, after that layer has read it.

use std::collections::HashSet;
use std::sync::Arc;

use axum::extract::{MatchedPath, Request, State};
use axum::http::Method;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::ApiError;

/// (method, route path) of the routes that read a query string.
pub type Routes = HashSet<(Method, &'static str)>;

/// Refuse a query string on a route that reads none, naming its first
/// parameter.
pub async fn refuse_unasked(
    State(routes): State<Arc<Routes>>,
    mut request: Request,
    next: Next,
) -> Response {
    without_stale(&mut request);
    let query = request.uri().query().unwrap_or("");
    if !query.is_empty() {
        let path = request
            .extensions()
            .get::<MatchedPath>()
            .map_or("", MatchedPath::as_str);
        let method = request.method().clone();
        if !routes.iter().any(|(m, p)| *m == method && *p == path) {
            let name = query.split('&').next().unwrap_or("");
            let name = name.split('=').next().unwrap_or("");
            // The name as decoded, and short: it is echoed in the error.
            let name: String = percent(name).chars().take(64).collect();
            return ApiError::invalid(name, format!("{method} {path} takes no query parameters"))
                .into_response();
        }
    }
    next.run(request).await
}

/// Drop the `stale` parameter (with or without a value) from the query.
fn without_stale(request: &mut Request) {
    let uri = request.uri();
    let Some(query) = uri.query() else {
        return;
    };
    let is_stale = |p: &&str| *p == "stale" || p.starts_with("stale=");
    if !query.split('&').any(|p| is_stale(&p)) {
        return;
    }
    let kept: Vec<&str> = query
        .split('&')
        .filter(|p| !p.is_empty() && !is_stale(p))
        .collect();
    let path = uri.path();
    let rebuilt = if kept.is_empty() {
        path.to_owned()
    } else {
        format!("{path}?{}", kept.join("&"))
    };
    if let Ok(rebuilt) = rebuilt.parse() {
        *request.uri_mut() = rebuilt;
    }
}

/// `name` with `%XX` escapes and `+` decoded (lossy for bad UTF-8).
fn percent(name: &str) -> String {
    serde_urlencoded::from_str::<Vec<(String, String)>>(name)
        .ok()
        .and_then(|pairs| pairs.into_iter().next())
        .map_or_else(|| name.to_owned(), |(k, _)| k)
}
