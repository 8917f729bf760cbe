//! DNSSEC rollover commands: start a rollover of a zone's key, and say the
//! new DS is at the parent. Each replies with the zone as views show it
//! (public keys, their states).

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
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Rollover {
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
pub async fn ds_seen(
    State(s): State<Arc<Service>>,
    Path(id): Path<u64>,
) -> Result<Json<Value>, ApiError> {
    zone_of(s.ds_seen(ZoneId(id)).await?)
}
