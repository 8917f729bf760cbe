//! Read views for the admin API: member and pool status (seed 000's fields
//! plus protection and fail-open), health log entries, explain, and the
//! agent and edge registries.

use std::collections::HashMap;

use gslb_proto::convert::{fail_reason_to_pb, health_to_pb, rtype_from_pb};
use gslb_proto::pb;
use gslb_shared::selection::{CatalogIndex, Family, Query, Selector};
use gslb_shared::status::{ExplainClientView, MemberStatusView, PoolStatusView};
use gslb_shared::*;
use rand::SeedableRng;
use tonic::Status;

use crate::api::geo::GeoData;
use crate::api::service::{Service, lock};
use crate::core::control::View;
use gslb_engine::{EvidenceOutcome, Output, Reason, StatusView, Timestamp};

/// (eligible, protected, fail-open) of a pool as selection sees it in
/// `snapshot`; `ids` are its members. Costs the pool's size.
pub(crate) fn pool_flags(
    snapshot: &Snapshot,
    pool: PoolId,
    ids: &[MemberId],
) -> (bool, bool, bool) {
    let facts = |id| snapshot.facts.get(&id).copied().unwrap_or_default();
    match crate::core::notify::detect::state_of(
        &snapshot.catalog,
        pool,
        ids,
        &facts,
        &snapshot.resolved,
    ) {
        Some(state) => (state.eligible, state.protected, state.fail_open),
        None => (false, false, true),
    }
}

/// A member's status: the core is asked only for its engine view (O(1));
/// the rest is read from the published view.
pub async fn member_status(
    s: &Service,
    id: MemberId,
    now: Timestamp,
) -> Result<MemberStatusView, Status> {
    let not_found = || Status::not_found(format!("member {id} does not exist"));
    let (view, status) = s.status_view().await;
    let pool = view.catalog().members.get(&id).ok_or_else(not_found)?.pool;
    let ids: Vec<MemberId> = view.state().pool_member_ids(pool).collect();
    let flags = pool_flags(view.snapshot(), pool, &ids);
    member_status_in(&view, &status, id, flags, now)
}

/// A member's status, its pool's flags given.
fn member_status_in(
    view: &View,
    status: &StatusView,
    id: MemberId,
    (_, protected, fail_open): (bool, bool, bool),
    now: Timestamp,
) -> Result<MemberStatusView, Status> {
    let not_found = || Status::not_found(format!("member {id} does not exist"));
    let member = view.catalog().members.get(&id).ok_or_else(not_found)?;
    let s = status.member_status(id, now).ok_or_else(not_found)?;
    Ok(MemberStatusView {
        member_id: id.0,
        enabled: member.enabled,
        state: gslb_shared::status::MemberState::Unknown,
        label: String::new(),
        gate: None,
        healthy: s.health == Health::Up,
        health: s.health,
        score: s.score,
        warming: s.warming,
        warmup_passes: s.warmup_passes,
        warmup_threshold: member.warmup_threshold,
        protected,
        fail_open,
        manual: s.manual,
        suppressed: s.suppressed,
        since_ms: s.since.0,
        decisions_paused: view.state().hold.holds(member.pool),
        ramp: s.ramp,
        locations: s.locations,
    }
    .name_state())
}

/// A pool's status with each member's, and the view it was read from: the
/// core is asked only for its engine view (O(1) of the members); flags and
/// rendering (one pass over the pool) happen afterwards, off the runtime's
/// workers.
pub async fn pool_status(
    s: &Service,
    id: PoolId,
    now: Timestamp,
) -> Result<(std::sync::Arc<View>, PoolStatusView), Status> {
    let (view, status) = s.status_view().await;
    // One pass over the pool: off the runtime's workers when it is large.
    crate::api::service::off_worker(move || pool_status_of(view, &status, id, now)).await
}

/// A pool's status from a view and the engine state taken with it.
fn pool_status_of(
    view: std::sync::Arc<View>,
    status: &StatusView,
    id: PoolId,
    now: Timestamp,
) -> Result<(std::sync::Arc<View>, PoolStatusView), Status> {
    if !view.catalog().pools.contains_key(&id) {
        return Err(Status::not_found(format!("pool {id} does not exist")));
    }
    let ids: Vec<MemberId> = view.state().pool_member_ids(id).collect();
    let flags = pool_flags(view.snapshot(), id, &ids);
    let (eligible, protected, fail_open) = flags;
    let members = ids
        .iter()
        .map(|m| member_status_in(&view, status, *m, flags, now))
        .collect::<Result<Vec<_>, _>>()?;
    let status = PoolStatusView {
        pool_id: id.0,
        eligible,
        protected,
        fail_open,
        members,
        decisions_paused: view.state().hold.holds(id),
    };
    Ok((view, status))
}

fn reason_text(reason: &Reason) -> String {
    match reason {
        Reason::Quorum {
            score,
            pass_fraction,
            rise,
            fall,
        } => {
            format!(
                "quorum: score {score:.2} (cycle {pass_fraction:.2}) against rise {rise} / fall {fall}"
            )
        }
        Reason::DampingReleased { score } => format!("flap damping released at score {score:.2}"),
        Reason::Heartbeat => "heartbeat".into(),
        Reason::HeartbeatTimeout { silent_ms } => format!("no heartbeat for {silent_ms} ms"),
        Reason::Manual => "manual".into(),
        Reason::Config => "configuration changed who owns the health".into(),
    }
}

/// A stored log entry (an engine output) as the API shows it.
pub fn log_entry(output: &Output) -> Option<pb::HealthLogEntry> {
    let h = |x: Health| health_to_pb(x) as i32;
    Some(match output {
        Output::Transition(t) => {
            let score = match t.reason {
                Reason::Quorum { score, .. } | Reason::DampingReleased { score } => Some(score),
                _ => None,
            };
            pb::HealthLogEntry {
                member_id: t.member.0,
                at_ms: t.at.0,
                from: h(t.from),
                to: h(t.to),
                reason: reason_text(&t.reason),
                score,
                cycle: t.cycle.unwrap_or(0),
                evidence: t
                    .evidence
                    .iter()
                    .map(|e| {
                        let (outcome, failure) = match e.outcome {
                            EvidenceOutcome::Pass => ("pass", None),
                            EvidenceOutcome::Fail { reason } => ("fail", Some(reason)),
                            EvidenceOutcome::Quarantined { .. } => ("quarantined", None),
                            EvidenceOutcome::Missing => ("missing", None),
                            EvidenceOutcome::Stale => ("stale", None),
                        };
                        pb::Evidence {
                            location: e.location.to_string(),
                            outcome: outcome.into(),
                            failure: fail_reason_to_pb(failure) as i32,
                            latency_us: e.latency_us,
                        }
                    })
                    .collect(),
            }
        }
        Output::Warmup {
            member,
            at,
            event,
            passes,
            threshold,
        } => pb::HealthLogEntry {
            member_id: member.0,
            at_ms: at.0,
            reason: format!("warm-up gate {event:?} at {passes}/{threshold}").to_lowercase(),
            ..Default::default()
        },
        Output::Expired { member, at } => pb::HealthLogEntry {
            member_id: member.0,
            at_ms: at.0,
            reason: "expired: no heartbeat within the delete timeout".into(),
            ..Default::default()
        },
        Output::Facts { .. }
        | Output::Rtt { .. }
        | Output::Quarantine { .. }
        | Output::StartupGateOpened { .. } => {
            return None;
        }
    })
}

/// Where the client of an explain is: a region asked for, or an address
/// placed with the geo data the aggregator was given (the edges' own
/// files), said in one sentence either way.
fn place_client(asked: &str, geo: &GeoData) -> (ExplainClientView, Option<Region>, Place) {
    let mut client = ExplainClientView {
        asked: asked.to_owned(),
        ..Default::default()
    };
    let Ok(ip) = asked.parse::<std::net::IpAddr>() else {
        if asked.is_empty() {
            client.note = "no client given: branches for regions and places are not taken".into();
            return (client, None, Place::UNKNOWN);
        }
        client.region = asked.to_owned();
        client.region_from = "asked".into();
        client.note = format!("region {asked} as asked");
        return (client, Some(Region::new(asked)), Place::UNKNOWN);
    };
    let mut said = Vec::new();
    let region = match (&geo.table, &geo.table_path) {
        (Some(table), Some(path)) => {
            client.files.push(path.display().to_string());
            match table.lookup(ip) {
                Some(m) => {
                    client.region = m.region.to_string();
                    client.region_from = "geo-file".into();
                    client.prefix_len = m.prefix_len;
                    said.push(format!(
                        "region {} from {} (prefix /{})",
                        m.region,
                        path.display(),
                        m.prefix_len
                    ));
                    Some(m.region.clone())
                }
                None => {
                    said.push(format!(
                        "no prefix of {} holds {ip}: no region",
                        path.display()
                    ));
                    None
                }
            }
        }
        _ => {
            said.push("this aggregator has no --geo-file, so it cannot place the address in a region (give it the edges' file)".into());
            None
        }
    };
    let place = match &geo.dbs {
        Some(dbs) => {
            client
                .files
                .extend(geo.mmdb.iter().map(|p| p.display().to_string()));
            let place = dbs.locate(ip).place;
            let code =
                |c: Option<gslb_shared::GeoCode>| c.map_or_else(String::new, |c| c.to_string());
            client.country = code(place.country);
            client.continent = code(place.continent);
            client.subdivision = code(place.subdivision);
            client.asn = place.asn.unwrap_or(0);
            said.push(if place == Place::UNKNOWN {
                "the MaxMind files know nothing of it".to_owned()
            } else {
                "placed by the MaxMind files".to_owned()
            });
            place
        }
        None => {
            said.push("no --geo-mmdb: no country, continent, subdivision or AS".into());
            Place::UNKNOWN
        }
    };
    client.note = format!("{ip}: {}", said.join("; "));
    (client, region, place)
}

/// Run selection for a name and type with a full trace. `client` is a
/// region name, or an address: placed with the aggregator's geo data `geo`
/// (the edges' region table and MaxMind files, if it was given them) and
/// hashed for sticky steering.
pub fn explain(
    view: &View,
    r: &pb::ExplainRequest,
    geo: &GeoData,
) -> Result<pb::ExplainResponse, Status> {
    let name =
        DnsName::parse(&r.name).map_err(|e| Status::invalid_argument(format!("name: {e}")))?;
    let rtype = rtype_from_pb(r.r#type).map_err(|e| Status::invalid_argument(e.to_string()))?;
    let snapshot = view.snapshot();
    let record = snapshot
        .catalog
        .records
        .values()
        .find(|x| x.name == name && x.rtype == rtype)
        .ok_or_else(|| Status::not_found(format!("no {rtype:?} record set at {name}")))?;
    let RecordData::Dynamic(dynamic) = &record.data else {
        return Ok(pb::ExplainResponse {
            outcome: "static record: answered as configured".into(),
            ..Default::default()
        });
    };
    let family = Family::of(rtype).unwrap_or(Family::V4);
    let client_ip = r.client.parse::<std::net::IpAddr>().ok();
    let (client, region, place) = place_client(&r.client, geo);
    let facts: HashMap<_, _> = snapshot.facts.iter().map(|(k, v)| (*k, *v)).collect();
    let index = CatalogIndex::new(&snapshot.catalog, &facts)
        .with_resolved(snapshot.resolved.clone())
        .with_rtt(snapshot.rtt.clone());
    let mut trace = Vec::new();
    let mut rng = rand::rngs::StdRng::seed_from_u64(0);
    let query = Query {
        family,
        region: region.as_ref(),
        place,
        rotation: 0,
        affinity: client_ip.map(|ip| gslb_shared::selection::affinity(ip, None).0),
    };
    let mut selector = Selector::new();
    let (outcome, answers) = selector.select(&index, dynamic, query, &mut rng, Some(&mut trace));
    let steps = trace
        .iter()
        .map(|s| {
            let value = serde_json::to_value(s).unwrap_or_default();
            pb::ExplainStep {
                step: value
                    .get("step")
                    .and_then(|v| v.as_str())
                    .unwrap_or("")
                    .to_owned(),
                detail_json: value.to_string(),
            }
        })
        .collect();
    Ok(pb::ExplainResponse {
        steps,
        names: trace_names(view, &trace),
        // A hostname member answers with its name (a CNAME pool) or, in a
        // flattened record, with the addresses it resolved to.
        answers: answers
            .iter()
            .flat_map(|a| match (a.address, a.member) {
                (Some(ip), _) => vec![ip.to_string()],
                (None, Some(id)) if family == Family::Name => vec![
                    snapshot
                        .catalog
                        .members
                        .get(&id)
                        .map_or_else(|| id.to_string(), |m| m.address.to_string()),
                ],
                (None, Some(id)) => (index.resolved(id).into_iter())
                    .flat_map(|r| r.of_family(family == Family::V6))
                    .map(|ip| ip.to_string())
                    .collect(),
                (None, None) => Vec::new(),
            })
            .collect(),
        outcome: serde_json::to_string(&outcome).unwrap_or_default(),
        client: Some(client.into()),
    })
}

/// Names of the pools `trace` branches to and of their members, by id.
/// Costs the size of those pools.
fn trace_names(view: &View, trace: &[gslb_shared::selection::Step]) -> HashMap<u64, String> {
    let catalog = view.catalog();
    let mut names = HashMap::new();
    let pools = trace.iter().flat_map(|s| match s {
        gslb_shared::selection::Step::Branch { pools, .. } => pools.as_slice(),
        _ => &[],
    });
    for pool in pools {
        if let Some(p) = catalog.pools.get(pool) {
            names.insert(pool.0, p.name.clone());
        }
        for id in view.state().pool_member_ids(*pool) {
            if let Some(m) = catalog.members.get(&id) {
                names.insert(id.0, m.name.clone());
            }
        }
    }
    names
}

/// The agent registry.
pub fn agents(service: &Service) -> pb::AgentList {
    service.evict_agents();
    let at = crate::core::now().0;
    pb::AgentList {
        agents: lock(&service.agents)
            .rows()
            .map(|a| pb::AgentInfo {
                agent_id: a.agent_id.clone(),
                location: a.location.to_string(),
                region: a.region.clone(),
                version: a.version.clone(),
                last_seen_ms: a.last_seen_ms,
                connected: a.connected,
                assignments: a.assignments as u32,
                connected_since_ms: a.connected_since_ms,
                results_per_second: if a.connected {
                    a.results.per_second(at)
                } else {
                    0.0
                },
            })
            .collect(),
    }
}

/// The edge registry.
pub fn edges(service: &Service) -> pb::EdgeList {
    edges_page(service, None, usize::MAX)
}

/// At most `limit` rows of the edge registry, those after edge id `after`.
pub fn edges_page(service: &Service, after: Option<&str>, limit: usize) -> pb::EdgeList {
    use std::ops::Bound;
    let start = after.map_or(Bound::Unbounded, |a| Bound::Excluded(a.to_owned()));
    pb::EdgeList {
        edges: lock(&service.edges)
            .range((start, Bound::Unbounded))
            .take(limit)
            .map(|(_, e)| pb::EdgeInfo {
                edge_id: e.edge_id.clone(),
                applied_version: e.applied_version,
                lag_ms: e.lag_ms,
                last_seen_ms: e.last_seen_ms,
                connected: e.connected,
                skipped: e.skipped.clone(),
            })
            .collect(),
    }
}

/// The engine's settings and state, with the operator's decision hold.
pub fn engine(
    engine: &gslb_engine::Engine,
    hold: &crate::core::catalog::DecisionHold,
) -> pb::EngineStatus {
    let config = engine.config();
    let q = &config.quarantine;
    pb::EngineStatus {
        decisions_enabled: engine.decisions_enabled(),
        cycle_grace_ms: config.cycle_grace.as_millis() as u64,
        quarantine_enabled: q.enabled,
        quarantine_round_ms: q.round.as_millis() as u64,
        quarantine_min_samples: q.min_samples,
        quarantine_location_fail: q.location_fail,
        quarantine_others_fail_max: q.others_fail_max,
        quarantine_clean_rounds: q.clean_rounds,
        quarantined: engine
            .quarantined_locations()
            .iter()
            .map(ToString::to_string)
            .collect(),
        paused_since_ms: hold.all_since_ms.unwrap_or(0),
        paused_pools: paused_pools(hold),
    }
}

/// The pools an operator holds one by one.
pub fn paused_pools(hold: &crate::core::catalog::DecisionHold) -> Vec<pb::PausedPool> {
    hold.pools
        .iter()
        .map(|(pool, since)| pb::PausedPool {
            pool_id: pool.0,
            since_ms: *since,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn with_table(text: &str) -> GeoData {
        GeoData {
            table: Some(std::sync::Arc::new(
                gslb_shared::region_table::RegionTable::parse(text).unwrap(),
            )),
            table_path: Some("/etc/gslb/geo.txt".into()),
            ..GeoData::default()
        }
    }

    #[test]
    fn a_client_is_placed_with_the_edges_table_or_it_is_said_why_not() {
        let (client, region, _) = place_client("", &GeoData::default());
        assert_eq!((client.region.as_str(), region), ("", None));
        assert!(client.note.starts_with("no client given"), "{client:?}");

        let (client, region, _) = place_client("eu-west", &GeoData::default());
        assert_eq!(region, Some(Region::new("eu-west")));
        assert_eq!(client.region_from, "asked");

        let (client, region, place) = place_client("198.51.100.7", &GeoData::default());
        assert_eq!((region, place), (None, Place::UNKNOWN));
        assert!(
            client
                .note
                .contains("no --geo-file, so it cannot place the address in a region")
                && client.note.contains("no --geo-mmdb"),
            "{client:?}"
        );

        let geo = with_table("198.51.100.0/24 eu\n2001:db8::/32 ap\n");
        let (client, region, _) = place_client("198.51.100.7", &geo);
        assert_eq!(region, Some(Region::new("eu")));
        assert_eq!(
            (client.region_from.as_str(), client.prefix_len),
            ("geo-file", 24)
        );
        assert_eq!(client.files, ["/etc/gslb/geo.txt"]);
        assert!(
            client
                .note
                .starts_with("198.51.100.7: region eu from /etc/gslb/geo.txt (prefix /24)"),
            "{client:?}"
        );
        let (client, region, _) = place_client("203.0.113.1", &geo);
        assert_eq!(region, None);
        assert!(
            client
                .note
                .contains("no prefix of /etc/gslb/geo.txt holds 203.0.113.1"),
            "{client:?}"
        );
    }
}
