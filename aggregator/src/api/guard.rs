//! Who may call what on the gRPC listener: each service names the roles
//! whose certificates may reach it; admin calls need an operator
//! certificate and a bearer token as well (read or write by method).
//! Plain-text (`--insecure`) connections carry no identity: roles are not
//! checked there, tokens still are.

use std::sync::Arc;
use std::time::SystemTime;

use tonic::Status;
use tonic::body::Body;
use tonic::codegen::{BoxFuture, http};

use super::caller::token_identity;
use super::tokens::{Checked, TokenRole, Tokens};
use crate::api::gated::Admission;
use crate::core::audit::Attribution;
use crate::net::listener::Peer;
use gslb_proto::link::identity::Role;

/// What a service requires of its callers.
#[derive(Debug, Clone, Copy)]
pub enum Access {
    /// A certificate of one of these roles.
    Roles(&'static [Role]),
    /// An operator certificate and a token (write for writing methods).
    Admin,
    /// Cluster membership: another aggregator may ask for status without a
    /// token; an operator needs one (write to add or remove nodes).
    Cluster,
}

/// Admission of gRPC calls by an [`Access`] rule (see [`crate::api::gated::Gated`]).
#[derive(Clone)]
pub struct Guard {
    access: Access,
    tokens: Arc<Tokens>,
    /// Where a known token's refused writes are recorded (admin services).
    audit: Option<Arc<crate::api::service::Service>>,
}

impl Guard {
    /// Admit by `access`, with `tokens` for admin calls.
    pub fn new(access: Access, tokens: Arc<Tokens>) -> Self {
        Guard {
            access,
            tokens,
            audit: None,
        }
    }

    /// [`Guard::new`], recording in `service`'s audit log the writes it
    /// refuses to a known token (its role or scope does not allow them).
    pub fn audited(
        access: Access,
        tokens: Arc<Tokens>,
        service: Arc<crate::api::service::Service>,
    ) -> Self {
        Guard {
            access,
            tokens,
            audit: Some(service),
        }
    }
}

/// The method name of a gRPC path `/package.Service/Method`.
fn method(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or_default()
}

/// Decide a call by `peer` to `path` with `authorization`.
pub fn admit(
    access: Access,
    tokens: &Tokens,
    peer: Option<&Peer>,
    path: &str,
    authorization: Option<&[u8]>,
    now: SystemTime,
) -> Result<Option<Checked>, Status> {
    let identity = peer.and_then(|p| p.identity.as_ref());
    let role_ok = |allowed: &[Role]| match (peer, identity) {
        (Some(p), None) if p.plain => true,
        (_, Some(id)) => allowed.contains(&id.role),
        _ => false,
    };
    let denied = |allowed: &[Role]| {
        let who = identity.map_or_else(
            || "a caller without a certificate".to_owned(),
            |i| format!("the {i} certificate"),
        );
        let need: Vec<&str> = allowed.iter().map(|r| r.as_str()).collect();
        Status::permission_denied(format!(
            "{who} may not call {path} (it needs role {})",
            need.join(" or ")
        ))
    };
    let token = || {
        let checked = tokens
            .check_entry(authorization, TokenRole::Read, now)
            .map_err(|refusal| Status::unauthenticated(refusal.to_string()))?;
        match crate::api::access::refusal(&checked, crate::api::access::grpc(method(path)), path) {
            Some(why) => Err(Status::permission_denied(why)),
            None => Ok(Some(checked)),
        }
    };
    match access {
        Access::Roles(allowed) => role_ok(allowed)
            .then_some(None)
            .ok_or_else(|| denied(allowed)),
        Access::Admin => {
            if !role_ok(&[Role::Operator]) {
                return Err(denied(&[Role::Operator]));
            }
            token()
        }
        Access::Cluster => {
            let status = method(path) == "Status";
            let peer_status = status
                && (identity.is_some_and(|i| i.role == Role::Aggregator)
                    || peer.is_some_and(|p| p.plain) && authorization.is_none());
            if peer_status {
                return Ok(None);
            }
            if !role_ok(&[Role::Operator]) {
                // Only Status is open to aggregator certificates; naming
                // that role for the membership calls would mislead.
                let allowed: &[Role] = if status {
                    &[Role::Operator, Role::Aggregator]
                } else {
                    &[Role::Operator]
                };
                return Err(denied(allowed));
            }
            token()
        }
    }
}

impl Admission for Guard {
    fn admit(&self, request: &http::Request<Body>) -> BoxFuture<Option<Attribution>, Status> {
        let peer = request.extensions().get::<Peer>();
        let verdict = admit(
            self.access,
            &self.tokens,
            peer,
            request.uri().path(),
            request
                .headers()
                .get(http::header::AUTHORIZATION)
                .map(|v| v.as_bytes()),
            SystemTime::now(),
        );
        if let Err(status) = &verdict {
            // The token is never logged; who called what and why it was refused is.
            tracing::warn!(
                peer = ?peer.map(|p| p.addr),
                identity = ?peer.and_then(|p| p.identity.as_ref()).map(ToString::to_string),
                path = request.uri().path(),
                code = ?status.code(),
                reason = status.message(),
                "refused a gRPC call"
            );
        }
        let writes = crate::api::access::writes(method(request.uri().path()));
        let cert = peer
            .and_then(|p| p.identity.as_ref())
            .map(ToString::to_string);
        let source = peer.map_or_else(String::new, |p| p.addr.to_string());
        let operation = (request.uri().path())
            .trim_start_matches("/gslb.v1.")
            .to_owned();
        if let (Err(status), Some(service), true) = (&verdict, &self.audit, writes)
            && status.code() == tonic::Code::PermissionDenied
            && let Ok(token) = self.tokens.check_entry(
                request
                    .headers()
                    .get(http::header::AUTHORIZATION)
                    .map(|v| v.as_bytes()),
                TokenRole::Read,
                SystemTime::now(),
            )
        {
            // A known token's refused write is recorded like the core's
            // refusals (best effort: the refusal stands either way).
            let by = Attribution {
                who: token_identity(&token.name, &token.id, cert.as_deref()),
                source,
                operation,
                scope: None,
            };
            let (service, status, why) = (
                Arc::clone(service),
                status.clone(),
                status.message().to_owned(),
            );
            return Box::pin(async move {
                crate::api::caller::scoped(
                    by,
                    service
                        .call(move |c| c.audit_denied(why, Vec::new(), crate::api::service::now())),
                )
                .await;
                Err(status)
            });
        }
        // Who it is, for the audit records of the writes it makes: the
        // token that passed (checked once), and the certificate. An
        // unlimited token's reads write nothing to attribute: no identity
        // is built for them; a scoped token's reads carry its scope.
        let by = verdict.map(|token| {
            let scope = token.as_ref().and_then(crate::api::access::scope_of);
            if !writes && scope.is_none() {
                return None;
            }
            let who = match (&token, &cert) {
                (Some(t), cert) => token_identity(&t.name, &t.id, cert.as_deref()),
                (None, Some(cert)) => format!("cert:{cert}"),
                (None, None) => return None,
            };
            Some(Attribution {
                who,
                source,
                operation,
                scope,
            })
        });
        Box::pin(std::future::ready(by))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use std::path::PathBuf;

    use super::*;
    use crate::api::tokens::TokenFile;
    use gslb_proto::link::identity::Identity;

    fn peer(role: Option<Role>) -> Peer {
        Peer {
            addr: "127.0.0.1:1".parse().unwrap(),
            identity: role.map(|role| Identity {
                role,
                name: "x".into(),
            }),
            plain: role.is_none(),
        }
    }

    /// The access matrix: each role against each service, with an admin
    /// token, a write token, a read token and none.
    #[test]
    fn each_service_admits_its_roles_and_admin_needs_a_token() {
        let dir = std::env::temp_dir().join(format!("gslb-guard-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path: PathBuf = dir.join("tokens.json");
        let mut file = TokenFile::default();
        let now = SystemTime::now();
        // "write" here is an admin token: cluster membership needs admin.
        let (write, _) = file
            .create("w", TokenRole::Admin, Default::default(), None, now)
            .unwrap();
        let (read, _) = file
            .create("r", TokenRole::Read, Default::default(), None, now)
            .unwrap();
        let (writer, _) = file
            .create("c", TokenRole::Write, Default::default(), None, now)
            .unwrap();
        file.save(&path).unwrap();
        let tokens = Tokens::load(path).unwrap();
        let (write, read) = (format!("Bearer {write}"), format!("Bearer {read}"));
        let writer = format!("Bearer {writer}");
        let (write, read, writer) = (write.as_str(), read.as_str(), writer.as_str());
        let code = |access, role, path: &str, auth: Option<&str>| {
            admit(
                access,
                &tokens,
                Some(&peer(role)),
                path,
                auth.map(str::as_bytes),
                now,
            )
            .err()
            .map(|s| s.code())
        };
        use tonic::Code::{PermissionDenied, Unauthenticated};
        let agents = Access::Roles(&[Role::Agent]);
        let (a, e, g, o) = (
            Some(Role::Agent),
            Some(Role::Edge),
            Some(Role::Aggregator),
            Some(Role::Operator),
        );
        let session = "/gslb.v1.AgentService/Session";
        assert_eq!(code(agents, a, session, None), None);
        for other in [e, g, o] {
            assert_eq!(
                code(agents, other, session, Some(write)),
                Some(PermissionDenied)
            );
        }
        let list = "/gslb.v1.AdminService/ListZones";
        let create = "/gslb.v1.AdminService/CreateZone";
        assert_eq!(code(Access::Admin, o, list, Some(read)), None);
        assert_eq!(code(Access::Admin, o, create, Some(write)), None);
        assert_eq!(
            code(Access::Admin, o, create, Some(read)),
            Some(PermissionDenied)
        );
        assert_eq!(code(Access::Admin, o, list, None), Some(Unauthenticated));
        for other in [a, e, g] {
            assert_eq!(
                code(Access::Admin, other, list, Some(write)),
                Some(PermissionDenied)
            );
        }
        // Plain text (--insecure): no identity, tokens still decide.
        assert_eq!(code(Access::Admin, None, list, None), Some(Unauthenticated));
        assert_eq!(code(Access::Admin, None, create, Some(write)), None);
        assert_eq!(code(agents, None, session, None), None);
        // Cluster status: a peer without a token, an operator with one.
        let status = "/gslb.v1.ClusterService/Status";
        let add = "/gslb.v1.ClusterService/AddNode";
        assert_eq!(code(Access::Cluster, g, status, None), None);
        assert_eq!(
            code(Access::Cluster, o, status, None),
            Some(Unauthenticated)
        );
        assert_eq!(code(Access::Cluster, o, status, Some(read)), None);
        assert_eq!(
            code(Access::Cluster, o, add, Some(read)),
            Some(PermissionDenied)
        );
        assert_eq!(code(Access::Cluster, o, add, Some(write)), None);
        assert_eq!(
            code(Access::Cluster, o, add, Some(writer)),
            Some(PermissionDenied),
            "cluster membership needs role admin"
        );
        assert_eq!(code(Access::Admin, o, create, Some(writer)), None);
        assert_eq!(
            code(Access::Cluster, g, add, Some(write)),
            Some(PermissionDenied)
        );
        assert_eq!(
            code(Access::Cluster, a, status, None),
            Some(PermissionDenied)
        );
        // Forming the cluster (gslbctl cluster init) is a write: an
        // operator with the write token, no one else.
        let form = "/gslb.v1.ClusterService/FormCluster";
        assert_eq!(code(Access::Cluster, o, form, Some(write)), None);
        assert_eq!(
            code(Access::Cluster, o, form, Some(read)),
            Some(PermissionDenied)
        );
        assert_eq!(code(Access::Cluster, o, form, None), Some(Unauthenticated));
        for other in [a, e, g] {
            assert_eq!(
                code(Access::Cluster, other, form, Some(write)),
                Some(PermissionDenied)
            );
        }
        // The refusal names the roles that may make that very call.
        let message = |role, path: &str| {
            admit(
                Access::Cluster,
                &tokens,
                Some(&peer(role)),
                path,
                Some(write.as_bytes()),
                now,
            )
            .unwrap_err()
            .message()
            .to_owned()
        };
        assert!(
            message(g, add).ends_with("(it needs role operator)"),
            "{}",
            message(g, add)
        );
        assert!(message(a, status).ends_with("(it needs role operator or aggregator)"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
