//! The audit log and the catalog's history: `GET /api/v1/audit` (paged,
//! newest first, filtered by time, object and identity; `acceptedOnly`
//! is the history of versions), `GET /api/v1/diff` (what changed between
//! two catalog versions) and `POST /api/v1/rollback` (plan, and apply, the
//! catalog back to an earlier version).

use std::sync::Arc;

use axum::Json;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use serde::Deserialize;
use serde_json::{Value, json};

use super::error::{ApiError, ErrorBody};
use super::objects::Reply;
use crate::api::service::{Service, now, off_worker};
use crate::core::audit::{AuditQuery, parse_object};
use crate::core::control::history::RecordView;

/// The audit log's filters and page.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct AuditParams {
    /// Records at or after this time: RFC 3339 (`2026-12-06T20:00:00Z`) or ms since the Unix epoch.
    since: Option<String>,
    /// Only records touching this object: `KIND/ID` (`member/3`, `pool/2`).
    object: Option<String>,
    /// Only records whose identity contains this text (a token's name).
    who: Option<String>,
    /// The next page: records numbered below this (`next` of the last page).
    before: Option<u64>,
    /// At most this many (default 100, at most 1000).
    limit: Option<usize>,
    /// Only accepted writes: the history of catalog versions.
    #[serde(default)]
    accepted_only: bool,
}

/// A time in a query: RFC 3339, or ms since the Unix epoch.
pub fn parse_time(field: &str, text: &str) -> Result<u64, ApiError> {
    crate::core::audit::parse_time(text).ok_or_else(|| {
        ApiError::invalid(
            field,
            "must be an RFC 3339 time (2026-12-06T20:00:00Z) or ms since the Unix epoch",
        )
    })
}

impl AuditParams {
    fn query(self) -> Result<AuditQuery, ApiError> {
        Ok(AuditQuery {
            since_ms: self.since.map(|t| parse_time("since", &t)).transpose()?,
            object: (self.object)
                .map(|o| parse_object(&o).map_err(|e| ApiError::invalid("object", e)))
                .transpose()?,
            who: self.who,
            before_seq: self.before,
            accepted_only: self.accepted_only,
            limit: self.limit.unwrap_or(0),
            scope: None,
        })
    }
}

/// `GET /api/v1/audit`.
#[utoipa::path(
    get,
    path = "/api/v1/audit",
    operation_id = "audit_list",
    tag = "audit",
    summary = "The audit log, newest first: who changed what (field by field) and when, refusals included",
    params(AuditParams),
    responses((status = 200, description = "Records and the next page's `before`", body = serde_json::Value), (status = 400, description = "Refused: the field and the rule", body = ErrorBody))
)]
pub async fn list(
    State(s): State<Arc<Service>>,
    Query(params): Query<AuditParams>,
) -> Result<Json<Value>, ApiError> {
    let mut query = params.query()?;
    let view = s.view();
    query.scope = crate::api::caller::judged(&view);
    let judged = query.scope.clone();
    let page = query.page();
    let records = off_worker(move || view.audit(&query))
        .await
        .map_err(crate::core::control::ControlError::from)?;
    let next = (records.len() == page).then(|| records.last().map(|r| r.seq));
    let records: Vec<RecordView> = (records.into_iter())
        .map(|r| match &judged {
            Some(j) => RecordView::from(&j.trimmed(r)),
            None => RecordView::from(&r),
        })
        .collect();
    Ok(Json(json!({ "records": records, "next": next.flatten() })))
}

/// `?from=&to=` of the diff.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DiffParams {
    /// The earlier catalog version.
    from: u64,
    /// The later one (default: the current).
    to: Option<u64>,
}

/// `GET /api/v1/diff`.
#[utoipa::path(
    get,
    path = "/api/v1/diff",
    operation_id = "catalog_diff",
    tag = "audit",
    summary = "What changed in the catalog between two versions, object by object and field by field",
    params(DiffParams),
    responses((status = 200, description = "The objects that differ", body = serde_json::Value), (status = 400, description = "Refused: the field and the rule", body = ErrorBody))
)]
pub async fn diff(
    State(s): State<Arc<Service>>,
    Query(params): Query<DiffParams>,
) -> Result<Json<Value>, ApiError> {
    let view = s.view();
    let to = params.to.unwrap_or(view.state().catalog_version);
    let judged = crate::api::caller::judged(&view);
    let changes = off_worker(move || view.diff(params.from, params.to, judged.as_ref())).await?;
    Ok(Json(
        json!({ "from": params.from, "to": to, "changes": changes }),
    ))
}

/// `?version=&dryRun=&expectVersion=` of a rollback.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct RollbackParams {
    /// The catalog version to go back to.
    version: u64,
    /// Plan only.
    #[serde(default)]
    dry_run: bool,
    /// Refuse (412) unless the catalog is still at this version (the plan's `catalogVersion`).
    expect_version: Option<u64>,
}

/// `POST /api/v1/rollback`.
#[utoipa::path(
    post,
    path = "/api/v1/rollback",
    operation_id = "catalog_rollback",
    tag = "audit",
    summary = "Plan the catalog back to an earlier version and apply it as one write (dryRun only plans)",
    params(RollbackParams),
    responses((status = 200, description = "The plan and the version after it", body = serde_json::Value), (status = 400, description = "Refused: the field and the rule", body = ErrorBody), (status = 412, description = "The catalog moved since the plan", body = ErrorBody), (status = 503, description = "Not stored: no leader or quorum", body = ErrorBody))
)]
pub async fn rollback(State(s): State<Arc<Service>>, Query(p): Query<RollbackParams>) -> Reply {
    let (plan, version, catalog_version) = s
        .call(move |c| {
            c.audited(!p.dry_run, now(), |c| {
                let (plan, version) = c.rollback(p.version, p.dry_run, p.expect_version, now())?;
                Ok((plan, version, c.catalog_version()))
            })
        })
        .await?;
    Ok((
        StatusCode::OK,
        HeaderMap::new(),
        Json(json!({
            "plan": plan.lines,
            "version": version,
            "catalogVersion": catalog_version,
            "applied": !p.dry_run
        })),
    ))
}
