//! The operator's brake on health decisions: `GET /api/v1/decisions`,
//! `PUT /api/v1/decisions` (every pool) and `PUT /api/v1/pools/{id}/decisions`,
//! each with the body `{"paused": true | false}`.

use super::error::ErrorBody;
use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use gslb_shared::PoolId;
use serde::Deserialize;
use serde_json::Value;

use super::error::{ApiError, decode};
use super::status::decisions_json;
use crate::api::service::admin::views::paused_pools;
use crate::api::service::{Service, now};
use crate::core::catalog::DecisionHold;

/// Body of a pause or resume.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct DecisionsBody {
    /// True pauses, false resumes.
    paused: bool,
}

fn hold_json(hold: &DecisionHold) -> Value {
    decisions_json(hold.all_since_ms.unwrap_or(0), &paused_pools(hold))
}

/// `GET /api/v1/decisions`: the hold in force.
#[utoipa::path(
    get,
    path = "/api/v1/decisions",
    operation_id = "decisions_get",
    tag = "decisions",
    summary = "The health-decision hold in force",
    responses((status = 200, description = "The hold", body = serde_json::Value))
)]
pub async fn get(State(s): State<Arc<Service>>) -> Json<Value> {
    Json(hold_json(&s.view().state().hold))
}

/// `PUT /api/v1/decisions`: pause or resume every pool.
#[utoipa::path(
    put,
    path = "/api/v1/decisions",
    operation_id = "decisions_set_all",
    tag = "decisions",
    summary = "Pause or resume health decisions for every pool",
    request_body(content = DecisionsBody),
    responses((status = 200, description = "The hold", body = serde_json::Value), (status = 400, description = "Refused: the field and the rule", body = ErrorBody), (status = 503, description = "Not stored: no leader or quorum (the write may still commit; check before retrying)", body = ErrorBody))
)]
pub async fn set_all(State(s): State<Arc<Service>>, body: Bytes) -> Result<Json<Value>, ApiError> {
    set(&s, None, &body).await
}

/// `PUT /api/v1/pools/{id}/decisions`: pause or resume one pool.
#[utoipa::path(
    put,
    path = "/api/v1/pools/{id}/decisions",
    operation_id = "decisions_set_pool",
    tag = "decisions",
    summary = "Pause or resume health decisions for one pool",
    params(("id" = u64, Path, description = "The pool's id")),
    request_body(content = DecisionsBody),
    responses((status = 200, description = "The hold", body = serde_json::Value), (status = 400, description = "Refused: the field and the rule", body = ErrorBody), (status = 404, description = "No such object", body = ErrorBody), (status = 503, description = "Not stored: no leader or quorum (the write may still commit; check before retrying)", body = ErrorBody))
)]
pub async fn set_pool(
    State(s): State<Arc<Service>>,
    Path(id): Path<u64>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    set(&s, Some(PoolId(id)), &body).await
}

async fn set(s: &Service, pool: Option<PoolId>, body: &[u8]) -> Result<Json<Value>, ApiError> {
    let DecisionsBody { paused } = decode(body)?;
    let hold = s
        .call(move |c| c.audited(true, now(), |c| c.set_decisions(pool, paused, now())))
        .await?;
    Ok(Json(hold_json(&hold)))
}
