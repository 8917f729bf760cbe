//! Members in seed 000's shape: created under their pool
//! (`POST /api/v1/pools/{poolId}/members`), addressed as `ipAddress`,
//! partially updated with `PUT /api/v1/members/{id}`, and always returned
//! with `warmupThreshold`. An `ephemeral` policy in the body registers a
//! heartbeat-kept member.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use gslb_shared::validate::plain_ip;
use gslb_shared::*;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::error::{ApiError, decode};
use super::objects::{merged, write};
use crate::api::service::{Service, now, off_worker};
use crate::core::catalog::{ObjectRef, Op};
use gslb_engine::Input;

pub use super::objects::member_view as view;

/// Turn an API body into the model's field names, validating the address
/// text as a plain IP (seed 004) under the name the client used.
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
            let ip = plain_ip(text).map_err(|e| ApiError::invalid(name, e.to_string()))?;
            map.insert("address".into(), Value::from(ip.to_string()));
        }
    }
    if let Some(value) = map.remove("poolId") {
        map.insert("pool".into(), value);
    }
    if let Some(pool) = pool {
        map.insert("pool".into(), Value::from(pool.0));
    }
    if let Some(policy) = map.remove("ephemeral") {
        map.insert("kind".into(), serde_json::json!({ "ephemeral": policy }));
    }
    Ok(serde_json::to_vec(&map).unwrap_or_default())
}

/// `POST /api/v1/pools/{poolId}/members`.
pub async fn create(
    State(s): State<Arc<Service>>,
    Path(pool): Path<u64>,
    body: Bytes,
) -> Result<(StatusCode, Json<Value>), ApiError> {
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
pub async fn list(
    State(s): State<Arc<Service>>,
    Path(pool): Path<u64>,
) -> Result<Json<Value>, ApiError> {
    let shown = s.view();
    if !shown.catalog().pools.contains_key(&PoolId(pool)) {
        return Err(ApiError::not_found(format!("pool {pool} does not exist")));
    }
    Ok(Json(
        off_worker(move || {
            Value::Array(shown.state().pool_members(PoolId(pool)).map(view).collect())
        })
        .await,
    ))
}

/// `GET /api/v1/members/{id}`.
pub async fn get(
    State(s): State<Arc<Service>>,
    Path(id): Path<u64>,
) -> Result<Json<Value>, ApiError> {
    s.view()
        .catalog()
        .members
        .get(&MemberId(id))
        .map(view)
        .map(Json)
        .ok_or_else(|| ApiError::not_found(format!("member {id} does not exist")))
}

/// `PUT /api/v1/members/{id}`: fields not sent keep their value.
pub async fn update(
    State(s): State<Arc<Service>>,
    Path(id): Path<u64>,
    body: Bytes,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let base = s
        .view()
        .catalog()
        .members
        .get(&MemberId(id))
        .cloned()
        .ok_or_else(|| ApiError::not_found(format!("member {id} does not exist")))?;
    let body = normalised(&body, None)?;
    let member: Member = merged(serde_json::to_value(base).unwrap_or(Value::Null), &body, id)?;
    write(
        &s,
        Op::Update(crate::core::catalog::Object::Member(member)),
        false,
    )
    .await
}

/// `DELETE /api/v1/members/{id}` (also deregisters an ephemeral member).
pub async fn delete(
    State(s): State<Arc<Service>>,
    Path(id): Path<u64>,
) -> Result<StatusCode, ApiError> {
    s.write_one(Op::Delete(ObjectRef::Member(MemberId(id))))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Body of the manual-health call: `{"health": "up" | "down" | null}`.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ManualBody {
    health: Option<Health>,
}

/// `PUT /api/v1/members/{id}/health`: only for members whose pool check is
/// `none` (else 409 with who owns the health).
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
