//! What each admin call needs: the token role, and how a token's scope
//! applies to it. One table for REST routes (checked inside the REST router
//! by `rest::permit`, for the REST listener and the UI alike) and one for
//! gRPC methods (checked by `guard`); the core checks the objects of every
//! write against the scope as well (see `core::scope`).

use std::sync::Arc;

use axum::http::Method;

use crate::api::tokens::{Checked, TokenRole};
use crate::core::catalog::ObjectRef;
use crate::core::scope::Scope;
use gslb_shared::model::{CheckId, MemberId, PoolId, RecordSetId, ZoneId};

/// How a token's scope applies to a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    /// Names no object (the OpenAPI document): any scope may call it.
    Any,
    /// Concerns every pool, or objects of no zone or pool (agents, edges,
    /// TSIG keys, notifiers, explain, every pool's decisions): refused to a
    /// scoped token.
    Everything,
    /// The object the path's `{id}` names, checked before the handler runs.
    Object(Named),
    /// Limited by the handler (lists, audit, diff, export) or, for writes,
    /// by the core, which checks every object a write touches.
    Filtered,
}

/// The kind of object a path's `{id}` names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Named {
    /// `/zones/{id}…`
    Zone,
    /// `/records/{id}`
    Record,
    /// `/pools/{id}…`
    Pool,
    /// `/members/{id}…`
    Member,
    /// `/checks/{id}`
    Check,
}

impl Named {
    /// The object of this kind with `id`.
    pub fn object(self, id: u64) -> ObjectRef {
        match self {
            Named::Zone => ObjectRef::Zone(ZoneId(id)),
            Named::Record => ObjectRef::Record(RecordSetId(id)),
            Named::Pool => ObjectRef::Pool(PoolId(id)),
            Named::Member => ObjectRef::Member(MemberId(id)),
            Named::Check => ObjectRef::Check(CheckId(id)),
        }
    }
}

/// What a call needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Need {
    /// The weakest role that may make it.
    pub role: TokenRole,
    /// How a scope limits it.
    pub reach: Reach,
}

/// What the REST route `method` `path` (as routed, `{id}` and all) needs.
/// A route not named here reads with a read token and writes with a write
/// token; the table test in `tests/e2e/access.rs` walks every route.
pub fn rest(method: &Method, path: &str) -> Need {
    let reads = method == Method::GET || method == Method::HEAD;
    let role = match (reads, path) {
        (true, _) => TokenRole::Read,
        (
            false,
            "/api/v1/members/{id}/health"
            | "/api/v1/members/{id}/heartbeat"
            | "/api/v1/decisions"
            | "/api/v1/pools/{id}/decisions",
        ) => TokenRole::Operate,
        (false, p)
            if p.starts_with("/api/v1/tsig-keys")
                || p.starts_with("/api/v1/notifiers")
                || p.starts_with("/api/v1/zones/{id}/dnssec/") =>
        {
            TokenRole::Admin
        }
        (false, _) => TokenRole::Write,
    };
    let reach = if path == "/api/v1/openapi.json" {
        Reach::Any
    } else if reads && path == "/api/v1/config" {
        // The export is the whole catalog.
        Reach::Everything
    } else if let Some(named) = named(path) {
        Reach::Object(named)
    } else if [
        "/api/v1/tsig-keys",
        "/api/v1/notifiers",
        "/api/v1/notifications/",
        "/api/v1/agents",
        "/api/v1/edges",
        "/api/v1/explain",
        "/api/v1/decisions",
    ]
    .iter()
    .any(|p| path.starts_with(p))
    {
        Reach::Everything
    } else {
        Reach::Filtered
    };
    Need { role, reach }
}

/// The kind of object `{id}` names in `path`, if it names one.
fn named(path: &str) -> Option<Named> {
    let rest = path.strip_prefix("/api/v1/")?;
    let (kind, tail) = rest.split_once('/')?;
    if !tail.starts_with("{id}") {
        return None;
    }
    Some(match kind {
        "zones" => Named::Zone,
        "records" => Named::Record,
        "pools" => Named::Pool,
        "members" => Named::Member,
        "checks" => Named::Check,
        _ => return None,
    })
}

/// What the admin gRPC method `method` (its bare name) needs. The guard
/// refuses the role and [`Reach::Everything`]; handlers limit what they read
/// by id or list, and the core every write.
pub fn grpc(method: &str) -> Need {
    let writes = writes(method);
    let admin = [
        "StartRollover",
        "ConfirmDsSeen",
        "BackupStore",
        "ResetEdges",
        "AddNode",
        "RemoveNode",
        "FormCluster",
    ];
    let role = if !writes {
        TokenRole::Read
    } else if ["SetManualHealth", "Heartbeat", "SetDecisions"].contains(&method) {
        TokenRole::Operate
    } else if admin.contains(&method) || method.ends_with("TsigKey") || method.ends_with("Notifier")
    {
        TokenRole::Admin
    } else {
        TokenRole::Write
    };
    let everything = method.contains("TsigKey")
        || method.contains("Notifi")
        || [
            "ListAgents",
            "ListEdges",
            "GetEngine",
            "Explain",
            "BackupStore",
            "ResetEdges",
            "Status",
            "AddNode",
            "RemoveNode",
            "FormCluster",
        ]
        .contains(&method);
    Need {
        role,
        reach: if everything {
            Reach::Everything
        } else {
            Reach::Filtered
        },
    }
}

/// Why `token` may not make a call that needs `need`, if it may not.
pub fn refusal(token: &Checked, need: Need, call: &str) -> Option<String> {
    if token.role < need.role {
        return Some(format!(
            "authorization: token {:?} has role {}; {call} needs role {}",
            token.name, token.role, need.role
        ));
    }
    if need.reach == Reach::Everything {
        let scope = scope_of(token)?;
        return Some(format!(
            "{}; it concerns objects of no zone or pool",
            scope.outside(call.to_owned())
        ));
    }
    None
}

/// The scope a checked token carries into the core, if it is limited.
pub fn scope_of(token: &Checked) -> Option<Arc<Scope>> {
    (!token.scope.is_empty()).then(|| {
        Arc::new(Scope::new(
            &token.name,
            &token.scope.zones,
            &token.scope.pools,
        ))
    })
}

/// Admin methods that write (everything else reads).
pub fn writes(method: &str) -> bool {
    [
        "Create",
        "Update",
        "Delete",
        "Set",
        "Register",
        "Heartbeat",
        "Deregister",
        "Apply",
        "Import",
        "Add",
        "Remove",
        "Backup",
        "Reset",
        "Start",
        "Confirm",
        "Form",
        "Rollback",
    ]
    .iter()
    .any(|verb| method.starts_with(verb))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roles_and_reach_of_a_few_routes() {
        let get = |p| rest(&Method::GET, p);
        let put = |p| rest(&Method::PUT, p);
        let post = |p| rest(&Method::POST, p);
        assert_eq!(get("/api/v1/openapi.json").reach, Reach::Any);
        assert_eq!(
            get("/api/v1/members/{id}/status").reach,
            Reach::Object(Named::Member)
        );
        assert_eq!(put("/api/v1/members/{id}/health").role, TokenRole::Operate);
        assert_eq!(post("/api/v1/tsig-keys").role, TokenRole::Admin);
        assert_eq!(post("/api/v1/tsig-keys").reach, Reach::Everything);
        assert_eq!(
            post("/api/v1/zones/{id}/dnssec/rollover").role,
            TokenRole::Admin
        );
        assert_eq!(post("/api/v1/apply").reach, Reach::Filtered);
        assert_eq!(grpc("SetManualHealth").role, TokenRole::Operate);
        assert_eq!(grpc("CreateNotifier").role, TokenRole::Admin);
        assert_eq!(grpc("ListNotifiers").role, TokenRole::Read);
        assert_eq!(grpc("ListNotifiers").reach, Reach::Everything);
        assert_eq!(grpc("UpdateMember").role, TokenRole::Write);
        assert_eq!(grpc("AddNode").role, TokenRole::Admin);
    }
}
