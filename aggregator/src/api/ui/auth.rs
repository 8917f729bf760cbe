//! Who a UI request is: sign-in and sign-out, and the middleware that
//! finds the session, checks its token again, and refuses a change without
//! the session's CSRF value or from another site.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use axum::Json;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Redirect, Response};
use bytes::Bytes;
use ring::rand::{SecureRandom, SystemRandom};
use serde::Deserialize;

use super::Ui;
use super::session::{self, SECRET_BYTES, Session};
use crate::api::forward::FORWARDED;
use crate::api::service::off_worker;
use crate::api::tokens::{Refusal, TokenRole};
use crate::core::sessions::SessionWrite;

/// The header a page's script sends its CSRF value in.
pub const CSRF_HEADER: &str = "x-csrf-token";
/// The header the sign-in call must carry: a cross-site form cannot set it,
/// and a cross-site script may not without a CORS grant, which is never
/// given.
pub const SIGN_IN_HEADER: &str = "x-gslb-ui";
/// Largest sign-in body.
pub const MAX_SIGN_IN_BODY: usize = 4 * 1024;
/// How long a follower that had the leader open or end a session waits
/// for the change to reach its own replica before it answers (so the
/// page's next request finds it here).
pub const REPLICA_WAIT: Duration = Duration::from_secs(5);

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

/// `token` checked as a bearer token is (known, not expired), or why it
/// is refused.
fn token_entry(ui: &Ui, token: &str) -> Result<crate::api::tokens::Checked, Refusal> {
    let bearer = format!("Bearer {token}");
    ui.tokens
        .check_entry(Some(bearer.as_bytes()), TokenRole::Read, SystemTime::now())
}

/// A session's token, by its public id, checked the same way.
fn session_token(ui: &Ui, session: &Session) -> Result<crate::api::tokens::Checked, Refusal> {
    ui.tokens
        .check_id(&session.token, TokenRole::Read, SystemTime::now())
}

/// Whether this node writes sessions itself (a single node, the leader);
/// a follower has the leader do it.
fn writes_here(ui: &Ui) -> bool {
    ui.service.cluster().is_none() || ui.service.leading()
}

/// The open session of cookie value `id`, its use counted (and stored
/// when due, off the request); `None` if none is open, or the store
/// cannot be read.
fn find(ui: &Ui, id: &str) -> Option<Session> {
    let digest = session::key(id);
    let now = crate::core::now().0;
    let view = ui.service.view();
    let record = match view.session(&digest) {
        Ok(record) => record?,
        Err(e) => {
            tracing::warn!(error = %e, "UI sessions: the store could not be read");
            return None;
        }
    };
    let mut seen = super::lock(&ui.seen);
    if !record.alive(seen.last(&digest), now) {
        seen.forget(&digest);
        return None;
    }
    let due = seen.used(&digest, record.used_ms, now);
    drop(seen);
    if due
        && writes_here(ui)
        && let Ok(runtime) = tokio::runtime::Handle::try_current()
    {
        let write = SessionWrite {
            touch: vec![(digest, now)],
            ..SessionWrite::default()
        };
        runtime.spawn(async move {
            if let Err(e) = off_worker(move || view.write_sessions(&write)).await {
                tracing::warn!(error = %e, "UI sessions: a use could not be stored; tried again on a later request");
            }
        });
    }
    Some(Session {
        token: record.token,
        csrf: session::csrf_of(id),
    })
}

/// Wait until the session under `digest` is (or is no longer) in this
/// node's replica, at most [`REPLICA_WAIT`].
async fn replicated(ui: &Ui, digest: &str, present: bool) {
    let deadline = Instant::now() + REPLICA_WAIT;
    while Instant::now() < deadline {
        let view = ui.service.view();
        if view.session(digest).is_ok_and(|s| s.is_some() == present) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tracing::warn!(
        present,
        "UI sessions: the leader's change did not reach this node within {REPLICA_WAIT:?}"
    );
}

/// Send a session call to the leader (this node follows), as the page's
/// own call to the leader's UI: this node checked the page's origin, the
/// leader checks the rest.
async fn on_leader(ui: &Ui, method: Method, headers: &[(&str, &str)], body: Bytes) -> Response {
    let unknown = || {
        refuse(
            StatusCode::SERVICE_UNAVAILABLE,
            "unavailable",
            "leader: this node follows and knows no leader to keep the session; try again shortly",
        )
    };
    let Some(cluster) = ui.service.cluster() else {
        return unknown();
    };
    let Some((leader, forwarder)) = crate::api::leader::forwarder(&ui.service).await else {
        return unknown();
    };
    let mut request = Request::builder().method(method).uri("/ui/session").header(
        header::ORIGIN,
        format!("{}://{leader}", cluster.link.scheme()),
    );
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    match request.body(Body::from(body)) {
        Ok(request) => forwarder.forward(&leader, request).await,
        Err(_) => unknown(),
    }
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

/// The refusal of a wrong sign-in token, counted against its source
/// (logged once per burst from a source, and when it is blocked).
fn wrong_token(ui: &Ui, source: Option<std::net::IpAddr>, now: u64, refusal: &Refusal) -> Response {
    use gslb_shared::guesses::Failure;
    match source.map(|ip| (ip, ui.guesses.failed(ip, now))) {
        Some((_, Failure::First)) | None => {
            tracing::warn!(peer = ?source.map(|i| i.to_string()), reason = %refusal, "refused a UI sign-in (further wrong tries from this address within 10 s are counted, not logged)");
        }
        Some((ip, Failure::Blocked)) => {
            tracing::warn!(%ip, "UI sign-in: more than 10 wrong tokens from this address in 10 s; refused for 60 s");
        }
        Some((_, Failure::Again)) => {}
    }
    refuse(
        StatusCode::UNAUTHORIZED,
        "unauthenticated",
        refusal.to_string(),
    )
}

/// `POST /ui/session`: exchange an admin token for a session cookie.
pub async fn sign_in(
    State(ui): State<Arc<Ui>>,
    peer: Option<axum::Extension<crate::net::listener::Peer>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
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
    let checked = match token_entry(&ui, &token) {
        Ok(checked) => checked,
        Err(refusal) => return wrong_token(&ui, source, now, &refusal),
    };
    if let Some(ip) = source {
        ui.guesses.succeeded(ip);
    }
    if !writes_here(&ui) {
        if headers.contains_key(FORWARDED) {
            return refuse(
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                "leader: this node no longer leads; sign in again",
            );
        }
        let sent = [(SIGN_IN_HEADER, "1"), ("content-type", "application/json")];
        let response = on_leader(&ui, Method::POST, &sent, body).await;
        let opened = (response.headers().get(header::SET_COOKIE))
            .and_then(|v| session::cookie_value(std::iter::once(v.as_bytes())))
            .map(session::key);
        if let Some(digest) = opened {
            replicated(&ui, &digest, true).await;
        }
        return response;
    }
    let Some(id) = random_hex(&ui.rng) else {
        return refuse(
            StatusCode::INTERNAL_SERVER_ERROR,
            "internal",
            "no random bytes",
        );
    };
    let view = ui.service.view();
    let (digest, now) = (session::key(&id), crate::core::now().0);
    let opened = off_worker(move || {
        let stored = view.sessions().map_err(|e| e.to_string())?;
        let write = crate::core::sessions::open(&stored, digest, &checked.id, now)
            .map_err(|e| e.to_string())?;
        view.write_sessions(&write)
            .map_err(|e| format!("sessions: the session could not be stored: {e}"))
    })
    .await;
    if let Err(why) = opened {
        return refuse(StatusCode::SERVICE_UNAVAILABLE, "unavailable", why);
    }
    let mut response = StatusCode::NO_CONTENT.into_response();
    if let Ok(cookie) = HeaderValue::from_str(&session::set_cookie(Some(&id))) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}

/// `DELETE /ui/session`: sign out (behind [`require`], so CSRF-checked);
/// on a follower the leader ends the session.
pub async fn sign_out(State(ui): State<Arc<Ui>>, headers: HeaderMap) -> Response {
    let mut response = StatusCode::NO_CONTENT.into_response();
    if let Some(id) = cookie(&headers).map(str::to_owned) {
        let digest = session::key(&id);
        if !writes_here(&ui) && !headers.contains_key(FORWARDED) {
            let cookie = format!("{}={id}", session::COOKIE);
            let csrf = session::csrf_of(&id);
            let sent = [("cookie", cookie.as_str()), (CSRF_HEADER, csrf.as_str())];
            let response = on_leader(&ui, Method::DELETE, &sent, Bytes::new()).await;
            if response.status().is_success() {
                super::lock(&ui.seen).forget(&digest);
                replicated(&ui, &digest, false).await;
            }
            return response;
        }
        let write = SessionWrite {
            close: vec![digest.clone()],
            ..SessionWrite::default()
        };
        let view = ui.service.view();
        if let Err(e) = off_worker(move || view.write_sessions(&write)).await {
            return refuse(
                StatusCode::SERVICE_UNAVAILABLE,
                "unavailable",
                format!("sign-out: the session could not be ended: {e}; try again"),
            );
        }
        super::lock(&ui.seen).forget(&digest);
    }
    if let Ok(cookie) = HeaderValue::from_str(&session::set_cookie(None)) {
        response.headers_mut().insert(header::SET_COOKIE, cookie);
    }
    response
}

/// Whether session `id` is still open and its token still valid (a long
/// request, the event stream, asks this as it goes on).
pub fn signed_in(ui: &Ui, id: &str) -> bool {
    find(ui, id).is_some_and(|session| session_token(ui, &session).is_ok())
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
    let session: Option<Session> = cookie(request.headers()).and_then(|id| find(&ui, id));
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
    let checked = match session_token(&ui, &session) {
        Ok(checked) => checked,
        Err(refusal) => return signed_out(page, &asked, refusal.to_string()),
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
