//! Zones, record sets, pools and checks. A create is the body over the
//! documented defaults; a `PUT` is a merge-patch over the current object
//! (fields not sent keep their value); the id always comes from the path.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use gslb_shared::*;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::error::{ApiError, ErrorBody, decode};
use crate::api::service::deliveries::StatusView;
use crate::api::service::{Service, now, off_worker};
use crate::core::catalog::{Change, Object, ObjectRef, Op, Shown, Written};
use gslb_shared::defaults::{Kind, base, to_json};

/// One object's reply: its JSON with `revision`, and the revision as `ETag`.
pub type Reply = Result<(StatusCode, HeaderMap, Json<Value>), ApiError>;

/// `value` with its `revision`, and the `ETag` header that carries it.
pub fn revised(mut value: Value, revision: u64) -> (HeaderMap, Value) {
    if let Value::Object(map) = &mut value {
        map.insert("revision".into(), Value::from(revision));
    }
    let mut headers = HeaderMap::new();
    if let Ok(tag) = HeaderValue::from_str(&format!("\"{revision}\"")) {
        headers.insert(header::ETAG, tag);
    }
    (headers, value)
}

/// A write's precondition: `If-Match` (`"N"`, as `ETag` gives it, or N;
/// `*` asks only that the object exists) or `revision` in the body. Both
/// given must agree.
pub fn precondition(headers: &HeaderMap, body: Option<Value>) -> Result<Option<u64>, ApiError> {
    let header = match headers.get(header::IF_MATCH) {
        None => None,
        Some(value) => {
            let text = value.to_str().unwrap_or("").trim();
            let text = text.strip_prefix("W/").unwrap_or(text).trim_matches('"');
            if text == "*" {
                None
            } else {
                Some(text.parse::<u64>().map_err(|_| {
                    ApiError::invalid(
                        "If-Match",
                        "must be one revision as ETag gives it (\"12\"), or *",
                    )
                })?)
            }
        }
    };
    let body = match body {
        None | Some(Value::Null) => None,
        Some(value) => Some(
            value
                .as_u64()
                .ok_or_else(|| ApiError::invalid("revision", "must be a whole number"))?,
        ),
    };
    match (header, body) {
        (Some(h), Some(b)) if h != b => Err(ApiError::invalid(
            "revision",
            format!("says {b}, If-Match says {h}: send one"),
        )),
        (h, b) => Ok(h.or(b)),
    }
}

/// A partial update (`PUT` or `PATCH`): the body's fields are laid over the
/// object inside the core, against the object as it stands then, so
/// concurrent updates of different fields all survive.
pub async fn patch(
    service: &Service,
    target: ObjectRef,
    headers: &HeaderMap,
    mut fields: Map<String, Value>,
) -> Reply {
    let expected = precondition(headers, fields.remove("revision"))?;
    write(
        service,
        Op::Patch { target, fields }.guarded(expected),
        false,
    )
    .await
}

/// `base` with the body's top-level fields laid over it, then `id` set.
pub fn merged<T: Serialize + DeserializeOwned>(
    base: Value,
    body: &[u8],
    id: u64,
) -> Result<T, ApiError> {
    let mut patch: Map<String, Value> = decode(body)?;
    // An object read back carries its revision; a create has none to keep.
    patch.remove("revision");
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
    let version = change.version;
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
    let (headers, value) = revised(value, version);
    Ok((status, headers, Json(value)))
}

/// Delete `r` (with `If-Match`, only if it is still at that revision).
pub async fn deleted(
    service: &Service,
    r: ObjectRef,
    headers: &HeaderMap,
) -> Result<StatusCode, ApiError> {
    let expected = precondition(headers, None)?;
    service.write_one(Op::Delete(r).guarded(expected)).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// One object as views show it, with its revision and `ETag`.
pub fn current<T: Serialize + Shown>(
    service: &Service,
    r: ObjectRef,
    show: impl FnOnce(&T) -> Value,
    get: impl FnOnce(&Catalog) -> Option<T>,
) -> Reply {
    let view = service.view();
    let value = get(view.catalog())
        .map(|x| show(&x.shown()))
        .ok_or_else(|| ApiError::not_found(format!("{r} does not exist")))?;
    let (headers, value) = revised(value, view.state().revision(r).unwrap_or(0));
    Ok((StatusCode::OK, headers, Json(value)))
}

/// Each object of a list as views show it, with its revision; only those
/// `scope` sees when the caller's token is limited.
pub fn listed<'a, T: Shown + 'a>(
    state: &'a crate::core::catalog::CatalogState,
    scope: Option<&crate::core::scope::Scope>,
    objects: impl Iterator<Item = &'a T> + 'a,
    reference: impl Fn(&T) -> ObjectRef + 'a,
    show: impl Fn(&T) -> Value + 'a,
) -> Value {
    Value::Array(
        objects
            .filter(|x| crate::api::caller::sees(scope, &state.catalog, reference(x)))
            .map(|x| {
                let revision = state.revision(reference(x)).unwrap_or(0);
                revised(show(&x.shown()), revision).1
            })
            .collect(),
    )
}

macro_rules! object_routes {
    ($list:ident, $create:ident, $get:ident, $update:ident, $delete:ident, $ty:ty, $variant:ident, $refv:ident, $idty:ident, $map:ident, $base:expr, $coll:literal, $item:literal, $tag:literal) => {
        /// List.
        #[utoipa::path(get, path = $coll, tag = $tag, operation_id = stringify!($list), summary = "List",
            responses((status = 200, description = "Every one, secrets left out", body = Vec<$ty>)))]
        pub async fn $list(State(s): State<Arc<Service>>) -> Json<Value> {
            let view = s.view();
            // Taken here: the task that knows the caller does not go along.
            let scope = crate::api::caller::scope();
            Json(
                off_worker(move || {
                    let state = view.state();
                    listed(state, scope.as_deref(), state.catalog.$map.values(), |x| ObjectRef::$refv(x.id), to_json)
                })
                .await,
            )
        }

        /// Create from the body over the defaults.
        #[utoipa::path(post, path = $coll, tag = $tag, operation_id = stringify!($create), summary = "Create (defaults fill what is left out; the id is the server's)",
            request_body = $ty,
            responses(
                (status = 201, description = "As stored (a generated secret shown this once)", body = $ty),
                (status = 400, description = "Refused: the field and the rule", body = ErrorBody),
                (status = 503, description = "Not stored: no leader or quorum", body = ErrorBody)))]
        pub async fn $create(State(s): State<Arc<Service>>, body: Bytes) -> Reply {
            let object: $ty = merged($base, &body, 0)?;
            write(&s, Op::Create(Object::$variant(object)), true).await
        }

        /// Read one.
        #[utoipa::path(get, path = $item, tag = $tag, operation_id = stringify!($get), summary = "Read one",
            params(("id" = u64, Path, description = "The object's id")),
            responses(
                (status = 200, description = "The object, secrets left out", body = $ty),
                (status = 404, description = "No such object", body = ErrorBody)))]
        pub async fn $get(
            State(s): State<Arc<Service>>,
            Path(id): Path<u64>,
        ) -> Reply {
            let r = ObjectRef::$refv($idty(id));
            current(&s, r, to_json, |c| c.$map.get(&$idty(id)).cloned())
        }

        /// Merge-patch one.
        #[utoipa::path(put, path = $item, tag = $tag, operation_id = stringify!($update), summary = "Merge-patch one (fields not sent keep their value)",
            params(("id" = u64, Path, description = "The object's id"), ("If-Match" = Option<String>, Header, description = "Write only if the object is still at this revision (its ETag)")),
            request_body = $ty,
            responses(
                (status = 200, description = "As stored", body = $ty),
                (status = 400, description = "Refused: the field and the rule", body = ErrorBody),
                (status = 404, description = "No such object", body = ErrorBody), (status = 412, description = "Precondition failed: the object changed since that revision (currentRevision says its revision now)", body = ErrorBody),
                (status = 503, description = "Not stored: no leader or quorum", body = ErrorBody)))]
        pub async fn $update(
            State(s): State<Arc<Service>>,
            Path(id): Path<u64>,
            headers: HeaderMap,
            body: Bytes,
        ) -> Reply {
            patch(&s, ObjectRef::$refv($idty(id)), &headers, decode(&body)?).await
        }

        /// Delete one.
        #[utoipa::path(delete, path = $item, tag = $tag, operation_id = stringify!($delete), summary = "Delete one",
            params(("id" = u64, Path, description = "The object's id"), ("If-Match" = Option<String>, Header, description = "Write only if the object is still at this revision (its ETag)")),
            responses(
                (status = 204, description = "Deleted"),
                (status = 404, description = "No such object", body = ErrorBody), (status = 412, description = "Precondition failed: the object changed since that revision (currentRevision says its revision now)", body = ErrorBody),
                (status = 409, description = "In use", body = ErrorBody),
                (status = 503, description = "Not stored: no leader or quorum", body = ErrorBody)))]
        pub async fn $delete(
            State(s): State<Arc<Service>>,
            Path(id): Path<u64>,
            headers: HeaderMap,
        ) -> Result<StatusCode, ApiError> {
            deleted(&s, ObjectRef::$refv($idty(id)), &headers).await
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
    base(Kind::Zone),
    "/api/v1/zones",
    "/api/v1/zones/{id}",
    "zones"
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
    base(Kind::Pool),
    "/api/v1/pools",
    "/api/v1/pools/{id}",
    "pools"
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
    base(Kind::Check),
    "/api/v1/checks",
    "/api/v1/checks/{id}",
    "checks"
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
    base(Kind::Record),
    "/api/v1/records",
    "/api/v1/records/{id}",
    "records"
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
    serde_json::json!({}),
    "/api/v1/notifiers",
    "/api/v1/notifiers/{id}",
    "notifications"
);

/// Each notification target's delivery (`gslbctl notifications status`).
#[utoipa::path(
    get,
    path = "/api/v1/notifications/status",
    operation_id = "notification_status",
    tag = "notifications",
    summary = "The notification outbox and each target's delivery",
    responses((status = 200, description = "Outbox and targets", body = StatusView), (status = 503, description = "The store could not be read", body = ErrorBody))
)]
pub async fn notification_status(State(s): State<Arc<Service>>) -> Result<Json<Value>, ApiError> {
    let service = Arc::clone(&s);
    let view = off_worker(move || crate::api::service::deliveries::status(&service))
        .await
        .map_err(|e| ApiError::from(crate::core::control::ControlError::from(e)))?;
    Ok(Json(to_json(&view)))
}

/// `?zoneId=` filter of the record list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct RecordFilter {
    /// Only the record sets of this zone.
    zone_id: Option<u64>,
}

/// List record sets, optionally of one zone.
#[utoipa::path(
    get,
    path = "/api/v1/records",
    operation_id = "list_records",
    tag = "records",
    summary = "List record sets, of one zone with zoneId",
    params(RecordFilter),
    responses((status = 200, description = "Record sets", body = Vec<RecordSet>))
)]
pub async fn list_records(
    State(s): State<Arc<Service>>,
    Query(f): Query<RecordFilter>,
) -> Json<Value> {
    let Some(zone) = f.zone_id else {
        return list_records_all(State(s)).await;
    };
    let view = s.view();
    let scope = crate::api::caller::scope();
    Json(
        off_worker(move || {
            let state = view.state();
            let of_zone = state.catalog.records.values().filter(|r| r.zone.0 == zone);
            listed(
                state,
                scope.as_deref(),
                of_zone,
                |x| ObjectRef::Record(x.id),
                to_json,
            )
        })
        .await,
    )
}

/// Body of `POST /api/v1/apply`.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ApplyBody {
    /// Operations, in order.
    ops: Vec<Op>,
    /// Check only.
    #[serde(default)]
    dry_run: bool,
    /// Refuse (412, naming what changed) unless the catalog is still at
    /// this version: a plan's `catalogVersion`.
    #[serde(default)]
    expect_version: Option<u64>,
}

/// `?dryRun=` of `POST /api/v1/apply` (the body's `dryRun` does the same).
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ApplyQuery {
    /// Check only: nothing is written.
    #[serde(default)]
    dry_run: bool,
}

/// Apply a batch all-or-nothing (or only validate it with `dryRun`).
#[utoipa::path(
    post,
    path = "/api/v1/apply",
    operation_id = "apply",
    tag = "catalog",
    summary = "Apply create, update and delete operations all or nothing (dryRun only checks)",
    params(ApplyQuery),
    request_body(content = ApplyBody),
    responses((status = 200, description = "The changes and the version after them", body = serde_json::Value), (status = 400, description = "Refused: the field and the rule", body = ErrorBody), (status = 404, description = "No such object", body = ErrorBody), (status = 409, description = "In use, or a precondition failed", body = ErrorBody), (status = 503, description = "Not stored: no leader or quorum (the write may still commit; check before retrying)", body = ErrorBody))
)]
pub async fn apply(
    State(s): State<Arc<Service>>,
    Query(q): Query<ApplyQuery>,
    body: Bytes,
) -> Reply {
    let mut value: Value = decode(&body)?;
    revisions_as_preconditions(&mut value);
    let ApplyBody {
        mut ops,
        dry_run,
        expect_version,
    } = decode(&serde_json::to_vec(&value).unwrap_or_default())?;
    // Either place asks for a plan; a plan is never turned into a write.
    let dry_run = dry_run || q.dry_run;
    crate::api::service::deliveries::refuse_denied(&s, &ops).await?;
    crate::api::secrets::fill(&mut ops);
    let creates = crate::api::secrets::creates(&ops);
    let (changes, version, catalog_version) = s
        .call(move |c| {
            c.audited(!dry_run, now(), |c| {
                c.expect_catalog(expect_version)?;
                let (changes, version) = c.apply_ops(ops, dry_run, now())?;
                Ok((changes, version, c.catalog_version()))
            })
        })
        .await?;
    let changes = crate::api::secrets::shown(changes, &creates);
    Ok((
        StatusCode::OK,
        HeaderMap::new(),
        Json(serde_json::json!({
            "applied": changes,
            "version": version,
            "catalogVersion": catalog_version,
            "dryRun": dry_run
        })),
    ))
}

/// Objects in an apply's ops may carry the `revision` they were read
/// with: an update's becomes its precondition, a create's is dropped.
fn revisions_as_preconditions(body: &mut Value) {
    let Some(ops) = body.get_mut("ops").and_then(Value::as_array_mut) else {
        return;
    };
    for op in ops {
        let revision = op
            .get_mut("object")
            .and_then(Value::as_object_mut)
            .and_then(|o| o.remove("revision"));
        if let (Some(revision), Some("update")) = (revision, op.get("op").and_then(Value::as_str)) {
            let write = op.take();
            *op = serde_json::json!({"op": "ifRevision", "revision": revision, "write": write});
        }
    }
}

/// `?dryRun=` of the config apply.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ConfigQuery {
    /// Plan and check only.
    #[serde(default)]
    dry_run: bool,
    /// Delete what the document leaves out (refused otherwise).
    #[serde(default)]
    prune: bool,
    /// Refuse (412, naming what changed) unless the catalog is still at
    /// this version: the plan's `catalogVersion`.
    #[serde(default)]
    expect_version: Option<u64>,
}

/// `POST /api/v1/config`: make the catalog match a TOML or JSON document.
#[utoipa::path(
    post,
    path = "/api/v1/config",
    operation_id = "apply_config",
    tag = "catalog",
    summary = "Make the catalog match a declarative TOML or JSON document (prune deletes what it leaves out)",
    params(ConfigQuery),
    request_body(content = String, content_type = "application/toml", description = "The document (TOML, or JSON)"),
    responses((status = 200, description = "The plan and the version after it", body = serde_json::Value), (status = 400, description = "Refused: the field and the rule", body = ErrorBody), (status = 409, description = "In use, or a precondition failed", body = ErrorBody), (status = 503, description = "Not stored: no leader or quorum (the write may still commit; check before retrying)", body = ErrorBody))
)]
pub async fn apply_config(
    State(s): State<Arc<Service>>,
    Query(q): Query<ConfigQuery>,
    body: Bytes,
) -> Reply {
    let text = String::from_utf8(body.to_vec())
        .map_err(|_| ApiError::invalid("body", "must be UTF-8 text"))?;
    let desired = off_worker(move || crate::core::declarative::parse(&text)).await?;
    let (plan, version, catalog_version) = s
        .call(move |c| {
            c.audited(!q.dry_run, now(), |c| {
                c.expect_catalog(q.expect_version)?;
                let (plan, version) = c.apply_document(
                    &desired,
                    q.dry_run,
                    q.prune,
                    now(),
                    crate::api::secrets::new_key,
                )?;
                Ok((plan, version, c.catalog_version()))
            })
        })
        .await?;
    Ok((
        StatusCode::OK,
        HeaderMap::new(),
        Json(serde_json::json!({
            "plan": plan.lines,
            "version": version,
            "catalogVersion": catalog_version,
            "applied": !q.dry_run
        })),
    ))
}

/// `?format=` of the config export.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ExportQuery {
    /// `json` (the default) or `toml`.
    #[serde(default)]
    format: Option<String>,
}

/// `GET /api/v1/config`: the catalog as the declarative document
/// `POST /api/v1/config` and `gslbctl apply` take (applying it plans no
/// change). Whole-catalog: refused to a token limited to some zones or
/// pools.
#[utoipa::path(
    get,
    path = "/api/v1/config",
    operation_id = "export_config",
    tag = "catalog",
    summary = "The catalog as a declarative document (JSON, or TOML with ?format=toml) that apply takes back unchanged",
    params(ExportQuery),
    responses((status = 200, description = "The document", body = serde_json::Value), (status = 400, description = "Refused: the field and the rule", body = ErrorBody), (status = 403, description = "A token limited to some zones or pools", body = ErrorBody))
)]
pub async fn export_config(
    State(s): State<Arc<Service>>,
    Query(q): Query<ExportQuery>,
) -> Result<axum::response::Response, ApiError> {
    use axum::response::IntoResponse;
    let toml = match q.format.as_deref() {
        None | Some("json") => false,
        Some("toml") => true,
        Some(other) => {
            return Err(ApiError::invalid(
                "format",
                format!("must be json or toml, not {other:?}"),
            ));
        }
    };
    let view = s.view();
    let version = view.state().catalog_version;
    let file = if toml {
        "gslb-config.toml"
    } else {
        "gslb-config.json"
    };
    let disposition = format!("attachment; filename=\"{file}\"");
    let text = off_worker(move || {
        let document = crate::core::declarative::export::document(view.catalog());
        if toml {
            crate::core::declarative::export::toml(&document)
        } else {
            serde_json::to_string_pretty(&document).map_err(|e| e.to_string())
        }
    })
    .await
    .map_err(|e| ApiError::invalid("format", format!("the catalog does not fit it: {e}")))?;
    let kind = if toml {
        "application/toml; charset=utf-8"
    } else {
        "application/json"
    };
    let mut headers = HeaderMap::new();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(kind));
    if let Ok(v) = HeaderValue::from_str(&disposition) {
        headers.insert(header::CONTENT_DISPOSITION, v);
    }
    if let Ok(v) = HeaderValue::from_str(&version.to_string()) {
        headers.insert("x-gslb-catalog-version", v);
    }
    Ok((headers, text).into_response())
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
