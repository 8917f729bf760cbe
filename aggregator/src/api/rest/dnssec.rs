//! DNSSEC rollover commands: start a rollover of a zone's key, and say the
//! new DS is at the parent. Each replies with the zone as views show it
//! (public keys, their states).

use super::error::ErrorBody;
use gslb_shared::Zone;
use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use gslb_shared::{KeyRole, ZoneId};
use serde::Deserialize;
use serde_json::Value;

use super::error::{ApiError, decode};
use crate::api::service::Service;
use crate::core::catalog::{Change, Object, Written};

/// The body of a rollover.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Rollover {
    /// zsk, ksk or csk.
    role: String,
}

fn zone_of(change: Option<Change>) -> Result<Json<Value>, ApiError> {
    match change.map(|c| c.what) {
        Some(Written::Upserted(o)) => match *o {
            Object::Zone(z) => Ok(Json(gslb_shared::defaults::to_json(&z.redacted()))),
            _ => Err(ApiError::invalid("zone", "the command wrote another kind")),
        },
        _ => Err(ApiError::invalid("zone", "the command wrote nothing")),
    }
}

/// `POST /api/v1/zones/{id}/dnssec/rollover` with `{"role": "zsk"}`.
#[utoipa::path(
    post,
    path = "/api/v1/zones/{id}/dnssec/rollover",
    operation_id = "dnssec_rollover",
    tag = "zones",
    summary = "Start a key rollover of a signed zone",
    params(("id" = u64, Path, description = "The zone's id")),
    request_body(content = Rollover),
    responses((status = 200, description = "The zone (public keys only)", body = Zone), (status = 400, description = "Refused: the field and the rule", body = ErrorBody), (status = 404, description = "No such object", body = ErrorBody), (status = 409, description = "In use, or a precondition failed", body = ErrorBody), (status = 503, description = "Not stored: no leader or quorum (the write may still commit; check before retrying)", body = ErrorBody))
)]
pub async fn rollover(
    State(s): State<Arc<Service>>,
    Path(id): Path<u64>,
    body: Bytes,
) -> Result<Json<Value>, ApiError> {
    let r: Rollover = decode(&body)?;
    let role: KeyRole = r
        .role
        .parse()
        .map_err(|e: String| ApiError::invalid("role", e))?;
    zone_of(s.start_rollover(ZoneId(id), role).await?)
}

/// `POST /api/v1/zones/{id}/dnssec/ds-seen`.
#[utoipa::path(
    post,
    path = "/api/v1/zones/{id}/dnssec/ds-seen",
    operation_id = "dnssec_ds_seen",
    tag = "zones",
    summary = "Confirm the new DS is at the parent (KSK and CSK rollovers)",
    params(("id" = u64, Path, description = "The zone's id")),
    responses((status = 200, description = "The zone (public keys only)", body = Zone), (status = 404, description = "No such object", body = ErrorBody), (status = 409, description = "In use, or a precondition failed", body = ErrorBody), (status = 503, description = "Not stored: no leader or quorum (the write may still commit; check before retrying)", body = ErrorBody))
)]
pub async fn ds_seen(
    State(s): State<Arc<Service>>,
    Path(id): Path<u64>,
) -> Result<Json<Value>, ApiError> {
    zone_of(s.ds_seen(ZoneId(id)).await?)
}
