//! Zone files over REST: `POST /api/v1/zonefile` imports a master file
//! into its zone (the plan as `apply` shows it, applied all or nothing),
//! `GET /api/v1/zonefile?apex=` writes the zone as one.

use super::error::ErrorBody;
use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::{Query, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use gslb_shared::DnsName;
use serde::Deserialize;
use serde_json::Value;

use super::error::ApiError;
use crate::api::service::{Service, now, off_worker};
use crate::core::zonefile;

/// `?apex=&dryRun=` of a zone file import or export.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ZoneFileQuery {
    /// The zone (export), or the origin of relative names (import).
    #[serde(default)]
    apex: Option<String>,
    /// Plan and check only.
    #[serde(default)]
    dry_run: bool,
    /// Import: delete the zone's static record sets the file leaves out
    /// (refused otherwise, naming them).
    #[serde(default)]
    prune: bool,
    /// Import: drop the file's DNSSEC records (RRSIG, NSEC, NSEC3,
    /// NSEC3PARAM, DNSKEY, CDS, CDNSKEY, ZONEMD) instead of refusing it.
    #[serde(default)]
    strip_dnssec: bool,
}

fn apex(q: &ZoneFileQuery) -> Result<Option<DnsName>, ApiError> {
    q.apex
        .as_deref()
        .map(|a| DnsName::parse(a).map_err(|e| ApiError::invalid("apex", e.to_string())))
        .transpose()
}

/// `POST /api/v1/zonefile`: import a master file (the body, text).
#[utoipa::path(
    post,
    path = "/api/v1/zonefile",
    operation_id = "zonefile_import",
    tag = "zone files",
    summary = "Import an RFC 1035 master file (all or nothing)",
    params(ZoneFileQuery),
    request_body(content = String, content_type = "text/dns", description = "The master file (48 MiB, 500,000 records at most; no $INCLUDE)"),
    responses((status = 200, description = "The plan and the version after it", body = serde_json::Value), (status = 201, description = "Applied: the plan and the version after it", body = serde_json::Value), (status = 400, description = "Refused: the field and the rule", body = ErrorBody), (status = 503, description = "Not stored: no leader or quorum (the write may still commit; check before retrying)", body = ErrorBody))
)]
pub async fn import(
    State(s): State<Arc<Service>>,
    Query(q): Query<ZoneFileQuery>,
    body: Bytes,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    let origin = apex(&q)?;
    let text = String::from_utf8(body.to_vec())
        .map_err(|_| ApiError::invalid("body", "must be UTF-8 text"))?;
    // Reading a large zone is long work: off the worker.
    let options = zonefile::Options {
        strip_dnssec: q.strip_dnssec,
    };
    let file = off_worker(move || zonefile::read(&text, origin.as_ref(), options)).await?;
    let (dry_run, prune) = (q.dry_run, q.prune);
    let (plan, version) = s
        .call(move |c| {
            c.audited(!dry_run, now(), |c| {
                c.import_zone(&file, dry_run, prune, now())
            })
        })
        .await?;
    Ok((
        StatusCode::OK,
        Json(serde_json::json!({
            "plan": plan.lines,
            "notes": plan.notes,
            "version": version,
            "applied": !dry_run,
        })),
    ))
}

/// `GET /api/v1/zonefile?apex=`: the zone as a master file (`text/dns`).
#[utoipa::path(
    get,
    path = "/api/v1/zonefile",
    operation_id = "zonefile_export",
    tag = "zone files",
    summary = "A zone as a master file",
    params(ZoneFileQuery),
    responses((status = 200, description = "The master file", body = String, content_type = "text/dns"), (status = 400, description = "Refused: the field and the rule", body = ErrorBody), (status = 404, description = "No such object", body = ErrorBody))
)]
pub async fn export(
    State(s): State<Arc<Service>>,
    Query(q): Query<ZoneFileQuery>,
) -> Result<Response, ApiError> {
    for (given, name) in [
        (q.dry_run, "dryRun"),
        (q.prune, "prune"),
        (q.strip_dnssec, "stripDnssec"),
    ] {
        if given {
            return Err(ApiError::invalid(name, "applies to an import (POST) only"));
        }
    }
    let apex = apex(&q)?.ok_or_else(|| ApiError::invalid("apex", "is required"))?;
    if let Some(scope) = crate::api::caller::scope()
        && !scope.zones.contains(apex.as_str())
    {
        return Err(ApiError::forbidden(
            scope.outside(format!("zone {apex}")).to_string(),
        ));
    }
    let snapshot = s.view().snapshot().clone();
    let shown = apex.clone();
    let text = off_worker(move || zonefile::export(&snapshot, &apex))
        .await
        .map_err(|e| ApiError::invalid("apex", e.to_string()))?
        .ok_or_else(|| ApiError::not_found(format!("no zone {shown}")))?;
    Ok(([(header::CONTENT_TYPE, "text/dns; charset=utf-8")], text).into_response())
}
