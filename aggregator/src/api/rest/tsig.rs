//! TSIG keys. A create without `secret` gets one from the server, and its
//! reply is the only place the secret is ever shown; lists, reads and
//! update replies leave it out. An update without `secret` keeps it.

use super::error::ErrorBody;
use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use gslb_shared::{TsigKey, TsigKeyId};
use serde_json::{Value, json};

use super::error::ApiError;
use super::objects::{Reply, current, deleted, listed, merged, patch, write};
use crate::api::service::Service;
use crate::core::catalog::{Object, ObjectRef, Op};

fn view(key: &TsigKey) -> Value {
    gslb_shared::defaults::to_json(&key.redacted())
}

/// List, secrets left out.
#[utoipa::path(
    get,
    path = "/api/v1/tsig-keys",
    operation_id = "tsig_list",
    tag = "tsig keys",
    summary = "List TSIG keys (secrets left out)",
    responses((status = 200, description = "Keys", body = Vec<TsigKey>))
)]
pub async fn list(State(s): State<Arc<Service>>) -> Json<Value> {
    let view_ = s.view();
    let state = view_.state();
    // TSIG keys belong to no zone or pool: a scoped token never gets here.
    Json(listed(
        state,
        None,
        state.catalog.tsig_keys.values(),
        |k| ObjectRef::TsigKey(k.id),
        view,
    ))
}

/// Read one, its secret left out.
#[utoipa::path(
    get,
    path = "/api/v1/tsig-keys/{id}",
    operation_id = "tsig_get",
    tag = "tsig keys",
    summary = "Read a TSIG key (secret left out)",
    params(("id" = u64, Path, description = "The object's id")),
    responses((status = 200, description = "The key", body = TsigKey), (status = 404, description = "No such object", body = ErrorBody))
)]
pub async fn get(State(s): State<Arc<Service>>, Path(id): Path<u64>) -> Reply {
    let r = ObjectRef::TsigKey(TsigKeyId(id));
    current(&s, r, view, |c| c.tsig_keys.get(&TsigKeyId(id)).cloned())
}

/// Create: `{"name": …, "secret"?: base64}`; the reply shows the secret.
#[utoipa::path(
    post,
    path = "/api/v1/tsig-keys",
    operation_id = "tsig_create",
    tag = "tsig keys",
    summary = "Create a TSIG key; the reply is the only one that shows its secret",
    request_body(content = TsigKey),
    responses((status = 201, description = "The key, its secret shown this once", body = TsigKey), (status = 400, description = "Refused: the field and the rule", body = ErrorBody), (status = 503, description = "Not stored: no leader or quorum (the write may still commit; check before retrying)", body = ErrorBody))
)]
pub async fn create(State(s): State<Arc<Service>>, body: Bytes) -> Reply {
    let key: TsigKey = merged(json!({}), &body, 0)?;
    write(&s, Op::Create(Object::TsigKey(key)), true).await
}

/// Merge-patch one (a rename, or a new secret).
#[utoipa::path(
    put,
    path = "/api/v1/tsig-keys/{id}",
    operation_id = "tsig_update",
    tag = "tsig keys",
    summary = "Merge-patch a TSIG key (without secret it keeps its own)",
    params(("id" = u64, Path, description = "The object's id"), ("If-Match" = Option<String>, Header, description = "Write only if the object is still at this revision (its ETag)")),
    request_body(content = TsigKey),
    responses((status = 200, description = "The key", body = TsigKey), (status = 400, description = "Refused: the field and the rule", body = ErrorBody), (status = 404, description = "No such object", body = ErrorBody), (status = 412, description = "Precondition failed: the object changed since that revision (currentRevision says its revision now)", body = ErrorBody), (status = 503, description = "Not stored: no leader or quorum (the write may still commit; check before retrying)", body = ErrorBody))
)]
pub async fn update(
    State(s): State<Arc<Service>>,
    Path(id): Path<u64>,
    headers: HeaderMap,
    body: Bytes,
) -> Reply {
    let fields = super::error::decode(&body)?;
    patch(&s, ObjectRef::TsigKey(TsigKeyId(id)), &headers, fields).await
}

/// Delete one (refused while a zone names it).
#[utoipa::path(
    delete,
    path = "/api/v1/tsig-keys/{id}",
    operation_id = "tsig_delete",
    tag = "tsig keys",
    summary = "Delete a TSIG key (refused while a zone names it)",
    params(("id" = u64, Path, description = "The object's id"), ("If-Match" = Option<String>, Header, description = "Write only if the object is still at this revision (its ETag)")),
    responses((status = 204, description = "Deleted"), (status = 404, description = "No such object", body = ErrorBody), (status = 412, description = "Precondition failed: the object changed since that revision (currentRevision says its revision now)", body = ErrorBody), (status = 409, description = "In use, or a precondition failed", body = ErrorBody), (status = 503, description = "Not stored: no leader or quorum (the write may still commit; check before retrying)", body = ErrorBody))
)]
pub async fn delete(
    State(s): State<Arc<Service>>,
    Path(id): Path<u64>,
    headers: HeaderMap,
) -> Result<StatusCode, ApiError> {
    deleted(&s, ObjectRef::TsigKey(TsigKeyId(id)), &headers).await
}
