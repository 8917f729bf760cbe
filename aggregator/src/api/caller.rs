//! Who is calling: the identity the REST, UI and gRPC admission found
//! (token, certificate, UI session) with the caller's address and the
//! operation, carried with the request's task so the writes it makes are
//! attributed in their audit records without every handler passing it.

use std::future::Future;

use crate::core::audit::Attribution;

tokio::task_local! {
    static CALLER: Attribution;
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
pub fn judged(view: &crate::core::control::View) -> Option<crate::core::scope::Judged> {
    scope().map(|scope| crate::core::scope::Judged {
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
