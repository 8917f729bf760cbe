//! Status, health logs, explain, agents and edges as JSON: the same views as
//! the gRPC API (built once in `service::admin::views`), in seed 000's shape.

use super::error::ErrorBody;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::response::IntoResponse;
use gslb_proto::pb;
use gslb_shared::status::MemberStatusView;
use gslb_shared::{MemberId, PoolId};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::error::ApiError;
use crate::api::service::admin::views;
use crate::api::service::{Service, now};
pub(crate) use gslb_proto::convert::{decisions_json, failure_name, health_name};

fn status_error(status: tonic::Status) -> ApiError {
    ApiError::not_found(status.message().to_owned())
}

/// `GET /api/v1/members/{id}/status`.
#[utoipa::path(
    get,
    path = "/api/v1/members/{id}/status",
    operation_id = "status_member_status",
    tag = "status",
    summary = "A member's health, warm-up, per-location results and answer state",
    params(("id" = u64, Path, description = "The object's id")),
    responses((status = 200, description = "The member's status", body = serde_json::Value), (status = 404, description = "No such object", body = ErrorBody))
)]
pub async fn member_status(
    State(s): State<Arc<Service>>,
    Path(id): Path<u64>,
) -> Result<Json<Value>, ApiError> {
    let status = views::member_status(&s, MemberId(id), now())
        .await
        .map_err(status_error)?;
    Ok(Json(gslb_shared::defaults::to_json(&status)))
}

/// `GET /api/v1/pools/{id}/status`: `members` in seed 000's shape, keyed by
/// IP (`ip:port` where two members share an IP); `membersById` the same
/// entries keyed by member id (each entry carries `ipAddress` and `port`).
#[utoipa::path(
    get,
    path = "/api/v1/pools/{id}/status",
    operation_id = "status_pool_status",
    tag = "status",
    summary = "A pool's eligibility, protection and fail mode, and every member's status (members keyed by IP, as seed 000; membersById keyed by member id)",
    params(("id" = u64, Path, description = "The pool's id")),
    responses((status = 200, description = "The pool's status", body = serde_json::Value), (status = 404, description = "No such object", body = ErrorBody))
)]
pub async fn pool_status(
    State(s): State<Arc<Service>>,
    Path(id): Path<u64>,
) -> Result<axum::response::Response, ApiError> {
    // Reading and rendering 100,000 members is long work (never on the
    // core, which is asked only for the members' engine state): off the
    // worker, to bytes.
    let (view, status) = views::pool_status(&s, PoolId(id), now())
        .await
        .map_err(status_error)?;
    let body = crate::api::service::off_worker(move || {
        // Addresses from the very view the statuses were read from.
        let endpoint = |m: &MemberStatusView| {
            view.catalog()
                .members
                .get(&MemberId(m.member_id))
                .map(|x| (x.address.clone(), x.port))
        };
        // Seed 000 keys members by IP; two members may share an IP on
        // different ports, and those are keyed `ip:port` there instead.
        let mut per_ip: std::collections::HashMap<gslb_shared::MemberAddress, usize> =
            Default::default();
        for (ip, _) in status.members.iter().filter_map(endpoint) {
            *per_ip.entry(ip).or_default() += 1;
        }
        let entries: Vec<(String, PoolEntry)> = status
            .members
            .iter()
            .map(|m| match endpoint(m) {
                Some((ip, port)) => {
                    let key = match &ip {
                        _ if per_ip.get(&ip).copied().unwrap_or(0) <= 1 => ip.to_string(),
                        gslb_shared::MemberAddress::Ip(a) => {
                            std::net::SocketAddr::new(*a, port).to_string()
                        }
                        gslb_shared::MemberAddress::Host(h) => format!("{h}:{port}"),
                    };
                    let entry = PoolEntry {
                        status: m,
                        ip_address: Some(ip.to_string()),
                        port: Some(port),
                    };
                    (key, entry)
                }
                None => (m.member_id.to_string(), PoolEntry::bare(m)),
            })
            .collect();
        // Written straight from the views: at 100,000 members a tree of
        // JSON values (built, cloned for the second key, dropped) cost
        // seconds.
        serde_json::to_vec(&PoolBody {
            pool_id: status.pool_id,
            eligible: status.eligible,
            protected: status.protected,
            fail_open: status.fail_open,
            decisions_paused: status.decisions_paused,
            members: Keyed {
                entries: &entries,
                by_id: false,
            },
            members_by_id: Keyed {
                entries: &entries,
                by_id: true,
            },
        })
        .unwrap_or_default()
    })
    .await;
    Ok((
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response())
}

/// A pool status as REST sends it: seed 000's members by address and,
/// unambiguously, by id beside them.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PoolBody<'a> {
    pool_id: u64,
    eligible: bool,
    protected: bool,
    fail_open: bool,
    decisions_paused: bool,
    members: Keyed<'a>,
    members_by_id: Keyed<'a>,
}

/// One member's status with its endpoint.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct PoolEntry<'a> {
    #[serde(flatten)]
    status: &'a MemberStatusView,
    #[serde(skip_serializing_if = "Option::is_none")]
    ip_address: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    port: Option<u16>,
}

impl<'a> PoolEntry<'a> {
    fn bare(status: &'a MemberStatusView) -> Self {
        Self {
            status,
            ip_address: None,
            port: None,
        }
    }
}

/// The entries as a JSON object, keyed by member id or by address.
struct Keyed<'a> {
    entries: &'a [(String, PoolEntry<'a>)],
    by_id: bool,
}

impl Serialize for Keyed<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(self.entries.len()))?;
        for (address, entry) in self.entries {
            if self.by_id {
                map.serialize_entry(&entry.status.member_id.to_string(), entry)?;
            } else {
                map.serialize_entry(address, entry)?;
            }
        }
        map.end()
    }
}

/// `?limit=` of the log.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct LogQuery {
    /// The newest this many entries (1 to 1,000; 100 by default).
    limit: Option<usize>,
}

/// `GET /api/v1/members/{id}/logs`: transitions with per-location evidence.
#[utoipa::path(
    get,
    path = "/api/v1/members/{id}/logs",
    operation_id = "status_member_logs",
    tag = "status",
    summary = "A member's health log: transitions with each location's result",
    params(("id" = u64, Path, description = "The member's id"), LogQuery),
    responses((status = 200, description = "Entries, oldest first", body = Vec<serde_json::Value>), (status = 404, description = "No such object", body = ErrorBody))
)]
pub async fn member_logs(
    State(s): State<Arc<Service>>,
    Path(id): Path<u64>,
    Query(q): Query<LogQuery>,
) -> Result<Json<Value>, ApiError> {
    let view = s.view();
    if !view.catalog().members.contains_key(&MemberId(id)) {
        return Err(ApiError::not_found(format!("member {id} does not exist")));
    }
    let limit = q.limit.unwrap_or(100).clamp(1, 1_000);
    let entries = view
        .health_log(MemberId(id), limit)
        .map_err(crate::core::control::ControlError::from)?;
    let entries: Vec<Value> = entries
        .iter()
        .filter_map(views::log_entry)
        .map(|e| {
            json!({
                "atMs": e.at_ms, "from": health_name(e.from), "to": health_name(e.to), "reason": e.reason,
                "score": e.score, "cycle": e.cycle,
                "evidence": e.evidence.iter().map(|ev| json!({
                    "location": ev.location, "outcome": ev.outcome, "failure": failure_name(ev.failure), "latencyUs": ev.latency_us,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    Ok(Json(json!({ "memberId": id, "entries": entries })))
}

/// `?name=&type=&client=` of explain.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ExplainQuery {
    /// The name asked.
    name: String,
    /// The type asked (A by default).
    #[serde(rename = "type", default = "a_record")]
    rtype: String,
    /// The client: a region, or an address placed with the aggregator's
    /// `--geo-file` and `--geo-mmdb` (the edges' files).
    #[serde(default)]
    client: String,
}

fn a_record() -> String {
    "A".into()
}

/// `GET /api/v1/explain`: every selection step for a name, type and client.
#[utoipa::path(
    get,
    path = "/api/v1/explain",
    operation_id = "status_explain",
    tag = "status",
    summary = "Every selection step of an answer for a name, type and client",
    params(ExplainQuery),
    responses((status = 200, description = "The steps and the answer", body = serde_json::Value), (status = 400, description = "Refused: the field and the rule", body = ErrorBody), (status = 404, description = "No such object", body = ErrorBody))
)]
pub async fn explain(
    State(s): State<Arc<Service>>,
    Query(q): Query<ExplainQuery>,
) -> Result<Json<Value>, ApiError> {
    let rtype = match q.rtype.to_ascii_uppercase().as_str() {
        "A" => pb::RecordType::A,
        "AAAA" => pb::RecordType::Aaaa,
        other => {
            return Err(ApiError::invalid(
                "type",
                format!("{other:?} must be A or AAAA"),
            ));
        }
    };
    let request = pb::ExplainRequest {
        name: q.name,
        r#type: rtype as i32,
        client: q.client,
    };
    let r = s.explain(&request).map_err(|st| match st.code() {
        tonic::Code::NotFound => ApiError::not_found(st.message().to_owned()),
        _ => ApiError::invalid("name", st.message().to_owned()),
    })?;
    let steps: Vec<Value> = r
        .steps
        .iter()
        .map(|st| serde_json::from_str(&st.detail_json).unwrap_or(Value::Null))
        .collect();
    let outcome: Value =
        serde_json::from_str(&r.outcome).unwrap_or(Value::String(r.outcome.clone()));
    let client = gslb_shared::status::ExplainClientView::from(r.client.unwrap_or_default());
    Ok(Json(
        json!({ "outcome": outcome, "answers": r.answers, "steps": steps, "client": client }),
    ))
}

/// `GET /api/v1/agents`.
#[utoipa::path(
    get,
    path = "/api/v1/agents",
    operation_id = "status_agents",
    tag = "status",
    summary = "Agents: location, version, connection, results",
    responses((status = 200, description = "One row per agent", body = Vec<serde_json::Value>))
)]
pub async fn agents(State(s): State<Arc<Service>>) -> Json<Value> {
    let list = views::agents(&s);
    Json(Value::Array(
        list.agents
            .iter()
            .map(|a| json!({
                "agentId": a.agent_id, "location": a.location, "region": a.region, "version": a.version,
                "lastSeenMs": a.last_seen_ms, "connected": a.connected, "assignments": a.assignments,
                "connectedSinceMs": a.connected_since_ms, "resultsPerSecond": a.results_per_second,
            }))
            .collect(),
    ))
}

/// `?limit=&after=` of the edge list.
#[derive(Debug, Deserialize, utoipa::IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct EdgesQuery {
    /// At most this many rows (1 to 1,000; 100 by default).
    limit: Option<usize>,
    /// The next page: rows whose `edgeId` sorts after this one.
    after: Option<String>,
}

/// `GET /api/v1/edges`: a page of the registry, by edge id.
#[utoipa::path(
    get,
    path = "/api/v1/edges",
    operation_id = "status_edges",
    tag = "status",
    summary = "Edges: applied version, lag, connection (a page by edge id: ?limit=&after=)",
    params(EdgesQuery),
    responses((status = 200, description = "One row per edge", body = Vec<serde_json::Value>), (status = 400, description = "Refused: the field and the rule", body = ErrorBody))
)]
pub async fn edges(
    State(s): State<Arc<Service>>,
    Query(q): Query<EdgesQuery>,
) -> Result<Json<Value>, ApiError> {
    let limit = q.limit.unwrap_or(100);
    if !(1..=1_000).contains(&limit) {
        return Err(ApiError::invalid("limit", "must be between 1 and 1000"));
    }
    let list = views::edges_page(&s, q.after.as_deref(), limit);
    Ok(Json(Value::Array(
        list.edges
            .iter()
            .map(|e| {
                json!({
                    "edgeId": e.edge_id, "appliedVersion": e.applied_version, "lagMs": e.lag_ms,
                    "lastSeenMs": e.last_seen_ms, "connected": e.connected,
                    "degraded": !e.skipped.is_empty(), "skipped": e.skipped,
                })
            })
            .collect(),
    )))
}
