//! Who a UI request is: sign-in and sign-out, and the middleware that
//! finds the session, checks its token again, and refuses a change without
//! the session's CSRF value or from another site.

use std::sync::Arc;
use std::time::SystemTime;

use axum::Json;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use bytes::Bytes;
use ring::rand::{SecureRandom, SystemRandom};
use serde::Deserialize;

use super::Ui;
use super::session::{self, SECRET_BYTES, Session};
use crate::api::tokens::{Refusal, TokenRole};

/// The header a page's script sends its CSRF value in.
pub const CSRF_HEADER: &str = "x-csrf-token";
/// The header the sign-in call must carry: a cross-site form cannot set it,
/// and a cross-site script may not without a CORS grant, which is never
/// given.
pub const SIGN_IN_HEADER: &str = "x-gslb-ui";
/// Largest sign-in body.
pub const MAX_SIGN_IN_BODY: usize = 4 * 1024;

/// The signed-in caller of a request, for handlers.
#[derive(Debug, Clone)]
pub struct Caller {
    /// Its session's CSRF value (the page carries it).
    pub csrf: String,
    /// Whether its token may write.
    pub can_write: bool,
    /// Its token's role.
    pub role: TokenRole,
    /// The zones and pools the token is limited to, if it is: pages show
    /// only those.
    pub scope: Option<Arc<crate::core::scope::Scope>>,
    /// On a cluster follower: what to tell about the leader (changes are
    /// made there).
    pub follower: Option<String>,
}

fn refuse(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    let message: String = message.into();
    (
        status,
        Json(serde_json::json!({"error": {"code": code, "message": message}})),
    )
        .into_response()
}

/// Whether a state-changing request comes from this very site: `Origin`
/// (sent by browsers on every cross-origin request and on same-origin
/// POST, PUT and DELETE) must name the host the request was sent to, and
/// `Sec-Fetch-Site`, when sent, must be `same-origin`.
fn same_site(headers: &HeaderMap) -> Result<(), &'static str> {
    if let Some(site) = headers.get("sec-fetch-site")
        && site.as_bytes() != b"same-origin"
    {
        return Err("sec-fetch-site: the request came from another site");
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let host = headers
            .get(header::HOST)
            .map(HeaderValue::as_bytes)
            .unwrap_or_default();
        let origin = origin.as_bytes();
        let authority = origin
            .strip_prefix(b"https://")
            .or_else(|| origin.strip_prefix(b"http://"));
        if authority != Some(host) {
            return Err("origin: the request came from another site");
        }
    }
    Ok(())
}

/// The role of `token`, checked as a bearer token is (known, not expired),
/// or why it is refused.
fn token_role(ui: &Ui, token: &str) -> Result<TokenRole, Refusal> {
    token_entry(ui, token).map(|c| c.role)
}

fn token_entry(ui: &Ui, token: &str) -> Result<crate::api::tokens::Checked, Refusal> {
    let bearer = format!("Bearer {token}");
    ui.tokens
        .check_entry(Some(bearer.as_bytes()), TokenRole::Read, SystemTime::now())
}

fn random_hex(rng: &SystemRandom) -> Option<String> {
    let mut bytes = [0u8; SECRET_BYTES];
    rng.fill(&mut bytes).ok()?;
    Some(hex::encode(bytes))
}

/// The sign-in body.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SignIn {
    token: String,
}

/// `POST /ui/session`: exchange an admin token for a session cookie.
pub async fn sign_in(
    State(ui): State<Arc<Ui>>,
    peer: Option<axum::Extension<crate::net::listener::Peer>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    use gslb_shared::guesses::Failure;
    let source = peer.map(|p| p.0.addr.ip());
    let now = crate::core::now().0;
    if let Some(ip) = source
        && let Err(wait_ms) = ui.guesses.check(ip, now)
    {
        return refuse(
            StatusCode::TOO_MANY_REQUESTS,
            "resource_exhausted",
            format!(
                "sign-in: too many wrong tokens from {ip}; try again in {} s",
                wait_ms.div_ceil(1_000)
            ),
        );
    }
    if headers.get(SIGN_IN_HEADER).is_none() {
        return refuse(
            StatusCode::FORBIDDEN,
            "csrf",
            format!("{SIGN_IN_HEADER}: sign-in is accepted only from the UI's own page"),
        );
    }
    if let Err(why) = same_site(&headers) {
        return refuse(StatusCode::FORBIDDEN, "csrf", why);
    }
    if body.len() > MAX_SIGN_IN_BODY {
        return refuse(
            StatusCode::PAYLOAD_TOO_LARGE,
            "invalid_argument",
            format!("body: at most {MAX_SIGN_IN_BODY} bytes"),
        );
    }
    let Ok(SignIn { token }) = serde_json::from_slice::<SignIn>(&body) else {
        return refuse(
            StatusCode::BAD_REQUEST,
            "invalid_argument",
            "token: the body must be {\"token\": \"...\"}",
        );
    };
    let token = token.trim().to_owned();
    if let Err(refusal) = token_role(&ui, &token) {
        // Logged once per burst from a source, and when it is blocked.
        match source.map(|ip| (ip, ui.guesses.failed(ip, now))) {
            Some((_, Failure::First)) | None => {
                tracing::warn!(peer = ?source.map(|i| i.to_string()), reason = %refusal, "refused a UI sign-in (further wrong tries from this address within 10 s are counted, not logged)");
            }
            Some((ip, Failure::Blocked)) => {
                tracing::warn!(%ip, "UI sign-in: more than 10 wrong tokens from this address in 10 s; refused for 60 s");
            }
            Some((_, Failure::Again)) => {}
        }
        return refuse(
            StatusCode::UNAUTHORIZED,
            "unauthenticated",
            refusal.to_string(),
        );
    }
    let (Some(id), Some(csrf)) = (random_hex(&ui.rng), random_hex(&ui.rng)) else {
        return refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "no random bytes",
        );
    };
    if let Some(ip) = source {
        ui.guesses.succeeded(ip);
    }
    let opened = super::lock(&ui.sessions).open(&token, &id, &csrf, crate::core::now().0);
    if let Err(e) = opened {
        return refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            "resource_exhausted",
            e.to_string(),
        );
    }
    let mut response = StatusCode::NO_CONTENT.into_response();
    if let Ok(cookie) = HeaderValue::from_str(&session::set_cookie(Some(&id))) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}

/// `DELETE /ui/session`: sign out (behind [`require`], so CSRF-checked).
pub async fn sign_out(State(ui): State<Arc<Ui>>, headers: HeaderMap) -> Response {
    if let Some(id) = cookie(&headers) {
        super::lock(&ui.sessions).close(id);
    }
    let mut response = StatusCode::NO_CONTENT.into_response();
    if let Ok(cookie) = HeaderValue::from_str(&session::set_cookie(None)) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}

/// Whether session `id` is still open and its token still valid (a long
/// request, the event stream, asks this as it goes on).
pub fn signed_in(ui: &Ui, id: &str) -> bool {
    let Some(session) = super::lock(&ui.sessions).use_session(id, crate::core::now().0) else {
        return false;
    };
    let valid = token_role(ui, &session.token).is_ok();
    if !valid {
        super::lock(&ui.sessions).close(id);
    }
    valid
}

/// The session id a request's cookie carries.
pub fn cookie(headers: &HeaderMap) -> Option<&str> {
    session::cookie_value(
        headers
            .get_all(header::COOKIE)
            .iter()
            .map(HeaderValue::as_bytes),
    )
}

/// Whether a request wants a page (then an unknown caller is sent to the
/// sign-in page) rather than JSON or events.
fn wants_page(request: &Request) -> bool {
    let path = request.uri().path();
    request.method() == Method::GET && !path.starts_with("/ui/api/") && path != "/ui/events"
}

/// On a node that does not lead: where changes are made.
fn follower_note(ui: &Ui) -> Option<String> {
    let cluster = ui.service.cluster()?;
    if ui.service.leading() {
        return None;
    }
    Some(match cluster.leader(false) {
        Some((id, address)) if id != cluster.id => format!(
            "This node ({}) follows and shows its replica; changes are made on the leader, node {id} ({address}).",
            cluster.id
        ),
        _ => format!(
            "This node ({}) follows and knows no leader yet; changes wait for one.",
            cluster.id
        ),
    })
}

/// The answer to a caller with no live session: a page goes to sign-in
/// (which comes back to `asked`, the page's path and query), anything
/// else is refused with `why`.
fn signed_out(page: bool, asked: &str, why: String) -> Response {
    if page {
        Redirect::to(&login_for(asked)).into_response()
    } else {
        refuse(StatusCode::UNAUTHORIZED, "unauthenticated", why)
    }
}

/// The sign-in page that returns to `asked` once signed in (the
/// topology, `/ui/`, is where it goes anyway).
fn login_for(asked: &str) -> String {
    if asked == "/ui/" || !asked.starts_with("/ui/") {
        return "/ui/login".to_owned();
    }
    match serde_urlencoded::to_string([("next", asked)]) {
        Ok(query) => format!("/ui/login?{query}"),
        Err(_) => "/ui/login".to_owned(),
    }
}

/// The middleware in front of every UI path but the sign-in page, the
/// sign-in call and the static files.
pub async fn require(State(ui): State<Arc<Ui>>, mut request: Request, next: Next) -> Response {
    let page = wants_page(&request);
    let asked = request
        .uri()
        .path_and_query()
        .map_or_else(String::new, |p| p.as_str().to_owned());
    let session: Option<Session> = cookie(request.headers())
        .and_then(|id| super::lock(&ui.sessions).use_session(id, crate::core::now().0));
    let Some(session) = session else {
        return signed_out(
            page,
            &asked,
            "session: not signed in, or the session ended; sign in at /ui/login".into(),
        );
    };
    let reads = matches!(*request.method(), Method::GET | Method::HEAD);
    // The token is checked on every request: revoking or expiring it ends
    // its sessions at once.
    let checked = match token_entry(&ui, &session.token) {
        Ok(checked) => checked,
        Err(refusal) => {
            if let Some(id) = cookie(request.headers()) {
                super::lock(&ui.sessions).close(id);
            }
            return signed_out(page, &asked, refusal.to_string());
        }
    };
    let role = checked.role;
    if !reads {
        let sent = request
            .headers()
            .get(CSRF_HEADER)
            .map(HeaderValue::as_bytes);
        if !session::csrf_matches(&session, sent) {
            tracing::warn!(
                path = request.uri().path(),
                "refused a UI change without its CSRF value"
            );
            return refuse(
                StatusCode::FORBIDDEN,
                "csrf",
                format!("{CSRF_HEADER}: missing or wrong; reload the page"),
            );
        }
        // Signing out is allowed from behind a proxy that rewrites `Host`:
        // the CSRF value above already proves the page, and a forged
        // sign-out could do no more than end a session.
        let signing_out =
            request.method() == Method::DELETE && request.uri().path() == "/ui/session";
        if !signing_out && let Err(why) = same_site(request.headers()) {
            tracing::warn!(
                path = request.uri().path(),
                why,
                "refused a cross-site UI change"
            );
            return refuse(StatusCode::FORBIDDEN, "csrf", why);
        }
    }
    // What the token's role and scope allow is checked per route by the
    // REST router `/ui/api/v1/…` is passed to (`api::rest::permit`).
    let by = crate::api::rest_auth::attribution(&request, &checked, true);
    request.extensions_mut().insert(Caller {
        csrf: session.csrf,
        can_write: role >= TokenRole::Write,
        role,
        scope: crate::api::access::scope_of(&checked),
        follower: follower_note(&ui),
    });
    request.extensions_mut().insert(checked);
    let Some(by) = by else {
        return next.run(request).await;
    };
    crate::api::caller::scoped(by, next.run(request)).await
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(*k, HeaderValue::from_static(v));
        }
        h
    }

    #[test]
    fn sign_in_returns_to_the_page_asked_for_and_only_to_a_ui_page() {
        assert_eq!(login_for("/ui/"), "/ui/login");
        assert_eq!(
            login_for("/ui/audit?object=member/7&who=a b"),
            "/ui/login?next=%2Fui%2Faudit%3Fobject%3Dmember%2F7%26who%3Da+b"
        );
        assert_eq!(login_for("//attacker.test/ui/"), "/ui/login");
        assert_eq!(login_for("/api/v1/pools"), "/ui/login");
    }

    #[test]
    fn only_the_uis_own_origin_may_change_things() {
        let host = ("host", "127.0.0.1:7080");
        assert!(
            same_site(&headers(&[host])).is_ok(),
            "no Origin: a same-origin GET or a tool"
        );
        assert!(same_site(&headers(&[host, ("origin", "https://127.0.0.1:7080")])).is_ok());
        assert!(same_site(&headers(&[host, ("origin", "http://127.0.0.1:7080")])).is_ok());
        assert!(same_site(&headers(&[host, ("sec-fetch-site", "same-origin")])).is_ok());
        for bad in [
            ("origin", "https://attacker.test"),
            ("origin", "https://127.0.0.1:7081"),
            ("origin", "null"),
            ("sec-fetch-site", "cross-site"),
            ("sec-fetch-site", "same-site"),
        ] {
            assert!(
                same_site(&headers(&[host, bad])).is_err(),
                "{bad:?} let through"
            );
        }
    }
}
