//! TSIG keys. A create without `secret` gets one from the server, and its
//! reply is the only place the secret is ever shown; lists, reads and
//! update replies leave it out. An update without `secret` keeps it.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use gslb_shared::{TsigKey, TsigKeyId};
use serde_json::{Value, json};

use super::error::ApiError;
use super::objects::{merged, write};
use crate::api::service::Service;
use crate::core::catalog::{Object, ObjectRef, Op};

type Reply = Result<(StatusCode, Json<Value>), ApiError>;

fn view(key: &TsigKey) -> Value {
    gslb_shared::defaults::to_json(&key.redacted())
}

/// List, secrets left out.
pub async fn list(State(s): State<Arc<Service>>) -> Json<Value> {
    let view_ = s.view();
    Json(Value::Array(
        view_.catalog().tsig_keys.values().map(view).collect(),
    ))
}

/// Read one, its secret left out.
pub async fn get(
    State(s): State<Arc<Service>>,
    Path(id): Path<u64>,
) -> Result<Json<Value>, ApiError> {
    let view_ = s.view();
    view_
        .catalog()
        .tsig_keys
        .get(&TsigKeyId(id))
        .map(|k| Json(view(k)))
        .ok_or_else(|| ApiError::not_found(format!("TSIG key {id} does not exist")))
}

/// Create: `{"name": …, "secret"?: base64}`; the reply shows the secret.
pub async fn create(State(s): State<Arc<Service>>, body: Bytes) -> Reply {
    let key: TsigKey = merged(json!({}), &body, 0)?;
    write(&s, Op::Create(Object::TsigKey(key)), true).await
}

/// Merge-patch one (a rename, or a new secret).
pub async fn update(State(s): State<Arc<Service>>, Path(id): Path<u64>, body: Bytes) -> Reply {
    let base = get(State(Arc::clone(&s)), Path(id)).await?.0;
    let key: TsigKey = merged(base, &body, id)?;
    write(&s, Op::Update(Object::TsigKey(key)), false).await
}

/// Delete one (refused while a zone names it).
pub async fn delete(
    State(s): State<Arc<Service>>,
    Path(id): Path<u64>,
) -> Result<StatusCode, ApiError> {
    s.write_one(Op::Delete(ObjectRef::TsigKey(TsigKeyId(id))))
        .await?;
    Ok(StatusCode::NO_CONTENT)
}
