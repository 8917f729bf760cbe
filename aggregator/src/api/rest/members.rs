//! Members in seed 000's shape: created under their pool
//! (`POST /api/v1/pools/{poolId}/members`), addressed as `ipAddress`,
//! partially updated with `PUT /api/v1/members/{id}`, and always returned
//! with `warmupThreshold`. An `ephemeral` policy in the body registers a
//! heartbeat-kept member.

use super::error::ErrorBody;
use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use gslb_shared::*;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::error::{ApiError, decode};
use super::objects::{Reply, current, deleted, listed, merged, patch, write};
use crate::api::service::{Service, now, off_worker};
use crate::core::catalog::{ObjectRef, Op};
use axum::http::HeaderMap;
use gslb_engine::Input;

pub use super::objects::member_view as view;

/// A member as REST shows and takes it: the model's fields, with the
/// address as `ipAddress` and the pool as `poolId` (seed 000's names).
pub struct MemberView;

impl utoipa::PartialSchema for MemberView {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        let mut schema = <Member as utoipa::PartialSchema>::schema();
        if let utoipa::openapi::RefOr::T(utoipa::openapi::schema::Schema::Object(object)) =
            &mut schema
        {
            for (model, rest) in [("address", "ipAddress"), ("pool", "poolId")] {
                if let Some(property) = object.properties.remove(model) {
                    object.properties.insert(rest.to_owned(), property);
                }
                for required in object.required.iter_mut() {
                    if required == model {
                        *required = rest.to_owned();
                    }
                }
            }
        }
        schema
    }
}

impl utoipa::ToSchema for MemberView {}

/// Turn an API body into the model's field names, validating the address
/// text under the name the client used: a plain IP (seed 004) or a
/// hostname, by the same rule as gRPC, gslbctl and documents.
fn normalised(body: &[u8], pool: Option<PoolId>) -> Result<Vec<u8>, ApiError> {
    let mut map: Map<String, Value> = decode(body)?;
    if map.contains_key("ipAddress") && map.contains_key("address") {
        return Err(ApiError::invalid(
            "ipAddress",
            "give ipAddress (seed 000's name) or address, not both",
        ));
    }
    for name in ["ipAddress", "address"] {
        if let Some(value) = map.remove(name) {
            let text = value
                .as_str()
                .ok_or_else(|| ApiError::invalid(name, "must be a string"))?;
            let address =
                MemberAddress::parse(text).map_err(|e| ApiError::invalid(name, e.to_string()))?;
            map.insert("address".into(), Value::from(address.to_string()));
        }
    }
    if let Some(value) = map.remove("poolId") {
        map.insert("pool".into(), value);
    }
    if let Some(pool) = pool {
        map.insert("pool".into(), Value::from(pool.0));
    }
    let mut policy = match map.remove("ephemeral") {
        // Nacos's shape: a flag; `true` takes seed 004's defaults.
        Some(Value::Bool(true)) => Some(Map::new()),
        Some(Value::Bool(false)) | None => None,
        Some(Value::Object(p)) => Some(p),
        Some(_) => {
            return Err(ApiError::invalid(
                "ephemeral",
                "must be a heartbeat policy object (or true for the defaults)",
            ));
        }
    };
    if let Some(metadata) = map.remove("metadata") {
        heartbeat_metadata(metadata, &mut policy)?;
    }
    if let Some(policy) = policy {
        map.insert("kind".into(), serde_json::json!({ "ephemeral": policy }));
    }
    Ok(serde_json::to_vec(&map).unwrap_or_default())
}

/// Seed 004's reserved metadata keys, each the alias of a policy field.
const HEARTBEAT_KEYS: [(&str, &str); 3] = [
    ("preserved.heart.beat.interval", "heartbeatInterval"),
    ("preserved.heart.beat.timeout", "heartbeatTimeout"),
    ("preserved.ip.delete.timeout", "deleteTimeout"),
];

/// Read seed 004's heartbeat keys from `metadata` (milliseconds, as a
/// number or a string of digits, as Nacos clients send them) into the
/// ephemeral `policy`. Other keys are refused: no metadata is stored, so
/// taking them would drop them silently.
fn heartbeat_metadata(
    metadata: Value,
    policy: &mut Option<Map<String, Value>>,
) -> Result<(), ApiError> {
    let Value::Object(metadata) = metadata else {
        return Err(ApiError::invalid("metadata", "must be an object"));
    };
    for (key, value) in metadata {
        let Some((_, field)) = HEARTBEAT_KEYS.iter().find(|(k, _)| *k == key) else {
            return Err(ApiError::invalid(
                format!("metadata.{key}"),
                "is not read: only the heartbeat keys preserved.heart.beat.interval, \
                 preserved.heart.beat.timeout and preserved.ip.delete.timeout are (no other metadata is kept)",
            ));
        };
        let ms = match &value {
            Value::Number(n) => n.as_u64(),
            Value::String(t) if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) => {
                t.parse().ok()
            }
            _ => None,
        }
        .ok_or_else(|| {
            ApiError::invalid(format!("metadata.{key}"), "must be milliseconds (digits)")
        })?;
        let Some(policy) = policy.as_mut() else {
            return Err(ApiError::invalid(
                format!("metadata.{key}"),
                "applies to ephemeral members: give ephemeral too",
            ));
        };
        let alias = Value::from(format!("{ms}ms"));
        let same = |given: &Value| {
            given
                .as_str()
                .and_then(|t| humantime::parse_duration(t).ok())
                .is_some_and(|d| d.as_millis() == u128::from(ms))
        };
        match policy.get(*field) {
            Some(given) if !same(given) => {
                return Err(ApiError::invalid(
                    format!("metadata.{key}"),
                    format!("says {ms}ms but ephemeral.{field} says {given}: give one of them"),
                ));
            }
            _ => {
                policy.insert((*field).to_owned(), alias);
            }
        }
    }
    Ok(())
}

/// `POST /api/v1/pools/{poolId}/members`.
#[utoipa::path(
    post,
    path = "/api/v1/pools/{id}/members",
    operation_id = "members_create",
    tag = "members",
    summary = "Create a member in a pool",
    params(("id" = u64, Path, description = "The pool's id")),
    request_body(content = MemberView, description = "The member (ipAddress for address; defaults fill what is left out)"),
    responses((status = 201, description = "The member as stored", body = MemberView), (status = 400, description = "Refused: the field and the rule", body = ErrorBody), (status = 404, description = "No such object", body = ErrorBody), (status = 503, description = "Not stored: no leader or quorum (the write may still commit; check before retrying)", body = ErrorBody))
)]
pub async fn create(State(s): State<Arc<Service>>, Path(pool): Path<u64>, body: Bytes) -> Reply {
    let body = normalised(&body, Some(PoolId(pool)))?;
    let fields: Map<String, Value> = decode(&body)?;
    for required in ["name", "address"] {
        if !fields.contains_key(required) {
            let name = if required == "address" {
                "ipAddress"
            } else {
                required
            };
            return Err(ApiError::invalid(name, "is required"));
        }
    }
    let member: Member = merged(
        gslb_shared::defaults::base(gslb_shared::defaults::Kind::Member),
        &body,
        0,
    )?;
    write(
        &s,
        Op::Create(crate::core::catalog::Object::Member(member)),
        true,
    )
    .await
}

/// `GET /api/v1/pools/{poolId}/members`.
#[utoipa::path(
    get,
    path = "/api/v1/pools/{id}/members",
    operation_id = "members_list",
    tag = "members",
    summary = "List a pool's members",
    params(("id" = u64, Path, description = "The pool's id")),
    responses((status = 200, description = "Its members", body = Vec<MemberView>), (status = 404, description = "No such object", body = ErrorBody))
)]
pub async fn list(
    State(s): State<Arc<Service>>,
    Path(pool): Path<u64>,
) -> Result<Json<Value>, ApiError> {
    let shown = s.view();
    if !shown.catalog().pools.contains_key(&PoolId(pool)) {
        return Err(ApiError::not_found(format!("pool {pool} does not exist")));
    }
    // The pool is in the caller's scope (checked by its path): so are
    // its members.
    Ok(Json(
        off_worker(move || {
            let state = shown.state();
            listed(
                state,
                None,
                state.pool_members(PoolId(pool)),
                |m| ObjectRef::Member(m.id),
                view,
            )
        })
        .await,
    ))
}

/// `GET /api/v1/members/{id}`.
#[utoipa::path(
    get,
    path = "/api/v1/members/{id}",
    operation_id = "members_get",
    tag = "members",
    summary = "Read a member",
    params(("id" = u64, Path, description = "The object's id")),
    responses((status = 200, description = "The member", body = MemberView), (status = 404, description = "No such object", body = ErrorBody))
)]
pub async fn get(State(s): State<Arc<Service>>, Path(id): Path<u64>) -> Reply {
    let r = ObjectRef::Member(MemberId(id));
    current(&s, r, view, |c| c.members.get(&MemberId(id)).cloned())
}

/// `PUT /api/v1/members/{id}`: fields not sent keep their value.
#[utoipa::path(
    put,
    path = "/api/v1/members/{id}",
    operation_id = "members_update",
    tag = "members",
    summary = "Update a member (fields not sent keep their value)",
    params(("id" = u64, Path, description = "The object's id"), ("If-Match" = Option<String>, Header, description = "Write only if the object is still at this revision (its ETag)")),
    request_body(content = MemberView, description = "Fields to change"),
    responses((status = 200, description = "The member as stored", body = MemberView), (status = 400, description = "Refused: the field and the rule", body = ErrorBody), (status = 404, description = "No such object", body = ErrorBody), (status = 412, description = "Precondition failed: the object changed since that revision (currentRevision says its revision now)", body = ErrorBody), (status = 503, description = "Not stored: no leader or quorum (the write may still commit; check before retrying)", body = ErrorBody))
)]
pub async fn update(
    State(s): State<Arc<Service>>,
    Path(id): Path<u64>,
    headers: HeaderMap,
    body: Bytes,
) -> Reply {
    let fields = decode(&normalised(&body, None)?)?;
    patch(&s, ObjectRef::Member(MemberId(id)), &headers, fields).await
}

/// `DELETE /api/v1/members/{id}` (also deregisters an ephemeral member).
#[utoipa::path(
    delete,
    path = "/api/v1/members/{id}",
    operation_id = "members_delete",
    tag = "members",
    summary = "Delete a member (an ephemeral one is deregistered)",
    params(("id" = u64, Path, description = "The object's id"), ("If-Match" = Option<String>, Header, description = "Write only if the object is still at this revision (its ETag)")),
    responses((status = 204, description = "Deleted"), (status = 404, description = "No such object", body = ErrorBody), (status = 412, description = "Precondition failed: the object changed since that revision (currentRevision says its revision now)", body = ErrorBody), (status = 503, description = "Not stored: no leader or quorum (the write may still commit; check before retrying)", body = ErrorBody))
)]
pub async fn delete(
    State(s): State<Arc<Service>>,
    Path(id): Path<u64>,
    headers: HeaderMap,
) -> Result<StatusCode, ApiError> {
    deleted(&s, ObjectRef::Member(MemberId(id)), &headers).await
}

/// Body of the manual-health call: `{"health": "up" | "down" | null}`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct ManualBody {
    /// up or down; null clears it.
    health: Option<Health>,
}

/// `PUT /api/v1/members/{id}/health`: only for members whose pool check is
/// `none` (else 409 with who owns the health).
#[utoipa::path(
    put,
    path = "/api/v1/members/{id}/health",
    operation_id = "members_manual_health",
    tag = "members",
    summary = "Set or clear a member's health (pools whose check is none)",
    params(("id" = u64, Path, description = "The object's id")),
    request_body(content = ManualBody),
    responses((status = 200, description = "The member's status", body = serde_json::Value), (status = 400, description = "Refused: the field and the rule", body = ErrorBody), (status = 404, description = "No such object", body = ErrorBody), (status = 409, description = "In use, or a precondition failed", body = ErrorBody), (status = 503, description = "Not stored: no leader or quorum (the write may still commit; check before retrying)", body = ErrorBody))
)]
pub async fn manual_health(
    State(s): State<Arc<Service>>,
    Path(id): Path<u64>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let ManualBody { health } = decode(&body)?;
    s.call(move |c| {
        c.step(
            Input::ManualHealth {
                member: MemberId(id),
                health,
            },
            now(),
        )
    })
    .await?;
    super::status::member_status(State(s), Path(id)).await
}

/// `POST /api/v1/members/{id}/heartbeat` for ephemeral members.
#[utoipa::path(
    post,
    path = "/api/v1/members/{id}/heartbeat",
    operation_id = "members_heartbeat",
    tag = "members",
    summary = "Heartbeat of an ephemeral member",
    params(("id" = u64, Path, description = "The object's id")),
    responses((status = 200, description = "Its health", body = serde_json::Value), (status = 404, description = "No such object", body = ErrorBody), (status = 409, description = "In use, or a precondition failed", body = ErrorBody), (status = 503, description = "Not stored: no leader or quorum (the write may still commit; check before retrying)", body = ErrorBody))
)]
pub async fn heartbeat(
    State(s): State<Arc<Service>>,
    Path(id): Path<u64>,
) -> Result<Json<Value>, ApiError> {
    let health = s
        .call(move |c| {
            c.step(Input::Heartbeat(MemberId(id)), now())?;
            Ok::<_, ApiError>(
                c.engine()
                    .member_status(MemberId(id), now())
                    .map(|st| st.health)
                    .unwrap_or_default(),
            )
        })
        .await?;
    Ok(Json(
        serde_json::json!({ "memberId": id, "health": health }),
    ))
}
