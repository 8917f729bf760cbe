//! The operator's brake on health decisions: `GET /api/v1/decisions`,
//! `PUT /api/v1/decisions` (every pool) and `PUT /api/v1/pools/{id}/decisions`,
//! each with the body `{"paused": true | false}`.

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
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DecisionsBody {
    paused: bool,
}

fn hold_json(hold: &DecisionHold) -> Value {
    decisions_json(hold.all_since_ms.unwrap_or(0), &paused_pools(hold))
}

/// `GET /api/v1/decisions`: the hold in force.
pub async fn get(State(s): State<Arc<Service>>) -> Json<Value> {
    Json(hold_json(&s.view().state().hold))
}

/// `PUT /api/v1/decisions`: pause or resume every pool.
pub async fn set_all(State(s): State<Arc<Service>>, body: Bytes) -> Result<Json<Value>, ApiError> {
    set(&s, None, &body).await
}

/// `PUT /api/v1/pools/{id}/decisions`: pause or resume one pool.
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
        .call(move |c| c.set_decisions(pool, paused, now()))
        .await?;
    Ok(Json(hold_json(&hold)))
}
