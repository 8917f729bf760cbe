//! Who is calling: the identity the REST, UI and gRPC admission found
//! (token, certificate, UI session) with the caller's address and the
//! operation, carried with the request's task so the writes it makes are
//! attributed in their audit records without every handler passing it.

use std::future::Future;

use crate::core::audit::Attribution;

tokio::task_local! {
    static CALLER: Attribution;
}

/// The header that marks a REST call a follower forwarded to the leader
/// (the follower's node id).
pub const FORWARDED: &str = "x-gslb-forwarded-by";
/// The address the forwarding node took the call from (what the audit
/// log shows beside the forwarding node's own address, as claimed).
pub const FORWARDED_FOR: &str = "x-gslb-forwarded-for";

/// The caller's address, as the HTTP listener put it in the request; for
/// a call a follower forwarded, the follower's and, as it claims, the
/// client's.
pub fn source(request: &axum::extract::Request) -> String {
    let peer = (request.extensions().get::<crate::net::listener::Peer>())
        .map_or_else(String::new, |p| p.addr.to_string());
    let claimed = (request.headers())
        .get(FORWARDED_FOR)
        .and_then(|v| v.to_str().ok())
        .filter(|_| request.headers().contains_key(FORWARDED));
    match claimed {
        // Bounded: an address, not a story.
        Some(client) => format!("{peer} (forwarded for {})", &client[..client.len().min(64)]),
        None => peer,
    }
}

/// The caller of the request this task serves, if an admission named one.
pub fn current() -> Option<Attribution> {
    CALLER.try_with(Clone::clone).ok()
}

/// The zones and pools the caller is limited to, if it is.
pub fn scope() -> Option<std::sync::Arc<crate::core::scope::Scope>> {
    CALLER.try_with(|c| c.scope.clone()).ok().flatten()
}

/// Whether a caller limited to `scope` (none: not limited) may see
/// `target` in `catalog`.
pub fn sees(
    scope: Option<&crate::core::scope::Scope>,
    catalog: &gslb_shared::model::Catalog,
    target: crate::core::catalog::ObjectRef,
) -> bool {
    scope.is_none_or(|s| s.sees(catalog, &target))
}

/// The caller's scope judged against `view`'s catalog (for the audit log
/// and diffs), if the caller is limited.
pub fn judged(view: &crate::core::control::View) -> Option<crate::core::audit::Judged> {
    scope().map(|scope| crate::core::audit::Judged {
        scope,
        catalog: view.catalog().clone(),
    })
}

/// Run `f` as a request of `by`.
pub async fn scoped<F: Future>(by: Attribution, f: F) -> F::Output {
    CALLER.scope(by, f).await
}

/// A token's identity as audit records name it: `token:NAME (ID)`, and
/// the certificate it came with, if any.
pub fn token_identity(name: &str, id: &str, cert: Option<&str>) -> String {
    match cert {
        Some(cert) => format!("token:{name} ({id}) cert:{cert}"),
        None => format!("token:{name} ({id})"),
    }
}
