//! Zones, record sets, pools and checks. A create is the body over the
//! documented defaults; a `PUT` is a merge-patch over the current object
//! (fields not sent keep their value); the id always comes from the path.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use gslb_shared::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::error::{ApiError, decode};
use crate::api::service::{Service, now, off_worker};
use crate::core::catalog::{Change, Object, ObjectRef, Op, Shown, Written};
use gslb_shared::defaults::{Kind, base, to_json};

type Reply = Result<(StatusCode, Json<Value>), ApiError>;

/// `base` with the body's top-level fields laid over it, then `id` set.
pub fn merged<T: Serialize + DeserializeOwned>(
    base: Value,
    body: &[u8],
    id: u64,
) -> Result<T, ApiError> {
    let patch: Map<String, Value> = decode(body)?;
    // The id is the path's (an update) or the server's (a create): a body
    // naming another is refused rather than silently overridden.
    if let Some(given) = patch.get("id").filter(|v| !v.is_null())
        && given.as_u64() != Some(id)
    {
        let rule = if id == 0 {
            format!("ids are assigned by the server; leave id out (or 0) on create, not {given}")
        } else {
            format!("must be the id in the path ({id}), not {given}")
        };
        return Err(ApiError::invalid("id", rule));
    }
    Ok(gslb_shared::defaults::decode(
        "",
        gslb_shared::defaults::overlay(base, patch, id),
    )?)
}

/// Write one op; the object written, as JSON.
pub async fn write(service: &Service, op: Op, created: bool) -> Reply {
    let change: Change = service.write_one(op).await?;
    let value = match change.what {
        Written::Upserted(object) => match *object {
            Object::Zone(x) => to_json(&x.redacted()),
            Object::Record(x) => to_json(&x),
            Object::Pool(x) => to_json(&x),
            Object::Member(x) => member_view(&x),
            Object::Check(x) => to_json(&x),
            // The one time the secret is shown: to the client creating it.
            Object::TsigKey(x) if created => to_json(&x),
            Object::TsigKey(x) => to_json(&x.redacted()),
            Object::Notifier(x) if created => to_json(&x),
            Object::Notifier(x) => to_json(&x.redacted()),
        },
        Written::Deleted(_) => Value::Null,
    };
    let status = if created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(value)))
}

async fn deleted(service: &Service, r: ObjectRef) -> Result<StatusCode, ApiError> {
    service.write_one(Op::Delete(r)).await?;
    Ok(StatusCode::NO_CONTENT)
}

fn current<T: Serialize + Shown>(
    service: &Service,
    r: ObjectRef,
    get: impl FnOnce(&Catalog) -> Option<T>,
) -> Result<Value, ApiError> {
    get(service.view().catalog())
        .map(|x| to_json(&*x.shown()))
        .ok_or_else(|| ApiError::not_found(format!("{r} does not exist")))
}

macro_rules! object_routes {
    ($list:ident, $create:ident, $get:ident, $update:ident, $delete:ident, $ty:ty, $variant:ident, $refv:ident, $idty:ident, $map:ident, $base:expr) => {
        /// List.
        pub async fn $list(State(s): State<Arc<Service>>) -> Json<Value> {
            let view = s.view();
            Json(
                off_worker(move || {
                    Value::Array(
                        view.catalog()
                            .$map
                            .values()
                            .map(|x| to_json(&*x.shown()))
                            .collect(),
                    )
                })
                .await,
            )
        }

        /// Create from the body over the defaults.
        pub async fn $create(State(s): State<Arc<Service>>, body: Bytes) -> Reply {
            let object: $ty = merged($base, &body, 0)?;
            write(&s, Op::Create(Object::$variant(object)), true).await
        }

        /// Read one.
        pub async fn $get(
            State(s): State<Arc<Service>>,
            Path(id): Path<u64>,
        ) -> Result<Json<Value>, ApiError> {
            let r = ObjectRef::$refv($idty(id));
            current(&s, r, |c| c.$map.get(&$idty(id)).cloned()).map(Json)
        }

        /// Merge-patch one.
        pub async fn $update(
            State(s): State<Arc<Service>>,
            Path(id): Path<u64>,
            body: Bytes,
        ) -> Reply {
            let r = ObjectRef::$refv($idty(id));
            let base = current(&s, r, |c| c.$map.get(&$idty(id)).cloned())?;
            let object: $ty = merged(base, &body, id)?;
            write(&s, Op::Update(Object::$variant(object)), false).await
        }

        /// Delete one.
        pub async fn $delete(
            State(s): State<Arc<Service>>,
            Path(id): Path<u64>,
        ) -> Result<StatusCode, ApiError> {
            deleted(&s, ObjectRef::$refv($idty(id))).await
        }
    };
}

object_routes!(
    list_zones,
    create_zone,
    get_zone,
    update_zone,
    delete_zone,
    Zone,
    Zone,
    Zone,
    ZoneId,
    zones,
    base(Kind::Zone)
);
object_routes!(
    list_pools,
    create_pool,
    get_pool,
    update_pool,
    delete_pool,
    Pool,
    Pool,
    Pool,
    PoolId,
    pools,
    base(Kind::Pool)
);
object_routes!(
    list_checks,
    create_check,
    get_check,
    update_check,
    delete_check,
    Check,
    Check,
    Check,
    CheckId,
    checks,
    base(Kind::Check)
);
object_routes!(
    list_records_all,
    create_record,
    get_record,
    update_record,
    delete_record,
    RecordSet,
    Record,
    Record,
    RecordSetId,
    records,
    base(Kind::Record)
);

object_routes!(
    list_notifiers,
    create_notifier,
    get_notifier,
    update_notifier,
    delete_notifier,
    Notifier,
    Notifier,
    Notifier,
    NotifierId,
    notifiers,
    serde_json::json!({})
);

/// Each notification target's delivery (`gslbctl notifications status`).
pub async fn notification_status(State(s): State<Arc<Service>>) -> Result<Json<Value>, ApiError> {
    let service = Arc::clone(&s);
    let view = off_worker(move || crate::api::service::deliveries::status(&service))
        .await
        .map_err(|e| ApiError::from(crate::core::control::ControlError::from(e)))?;
    Ok(Json(to_json(&view)))
}

/// `?zoneId=` filter of the record list.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordFilter {
    zone_id: Option<u64>,
}

/// List record sets, optionally of one zone.
pub async fn list_records(
    State(s): State<Arc<Service>>,
    Query(f): Query<RecordFilter>,
) -> Json<Value> {
    let Some(zone) = f.zone_id else {
        return list_records_all(State(s)).await;
    };
    let view = s.view();
    Json(
        off_worker(move || {
            Value::Array(
                view.catalog()
                    .records
                    .values()
                    .filter(|r| r.zone.0 == zone)
                    .map(to_json)
                    .collect(),
            )
        })
        .await,
    )
}

/// Body of `POST /api/v1/apply`.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApplyBody {
    ops: Vec<Op>,
    #[serde(default)]
    dry_run: bool,
}

/// Apply a batch all-or-nothing (or only validate it with `dryRun`).
pub async fn apply(State(s): State<Arc<Service>>, body: Bytes) -> Reply {
    let ApplyBody { mut ops, dry_run } = decode(&body)?;
    crate::api::service::deliveries::refuse_denied(&s, &ops).await?;
    crate::api::secrets::fill(&mut ops);
    let creates = crate::api::secrets::creates(&ops);
    let (changes, version) = s.call(move |c| c.apply_ops(ops, dry_run, now())).await?;
    let changes = crate::api::secrets::shown(changes, &creates);
    Ok((
        StatusCode::OK,
        Json(serde_json::json!({ "applied": changes, "version": version, "dryRun": dry_run })),
    ))
}

/// `?dryRun=` of the config apply.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigQuery {
    #[serde(default)]
    dry_run: bool,
    /// Delete what the document leaves out (refused otherwise).
    #[serde(default)]
    prune: bool,
}

/// `POST /api/v1/config`: make the catalog match a TOML or JSON document.
pub async fn apply_config(
    State(s): State<Arc<Service>>,
    Query(q): Query<ConfigQuery>,
    body: Bytes,
) -> Reply {
    let text = String::from_utf8(body.to_vec())
        .map_err(|_| ApiError::invalid("body", "must be UTF-8 text"))?;
    let desired = off_worker(move || crate::core::declarative::parse(&text)).await?;
    let (plan, version) = s
        .call(move |c| {
            c.apply_document(
                &desired,
                q.dry_run,
                q.prune,
                now(),
                crate::api::secrets::new_key,
            )
        })
        .await?;
    Ok((
        StatusCode::OK,
        Json(serde_json::json!({ "plan": plan.lines, "version": version, "applied": !q.dry_run })),
    ))
}

/// A member as the API shows it (seed 000: `ipAddress`, `poolId`).
pub fn member_view(m: &Member) -> Value {
    let mut value = serde_json::to_value(m).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut value {
        if let Some(address) = map.remove("address") {
            map.insert("ipAddress".into(), address);
        }
        if let Some(pool) = map.remove("pool") {
            map.insert("poolId".into(), pool);
        }
    }
    value
}
