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
