//! The agent stream: an agent registers, receives its assignment set and
//! then changes to it, and sends result batches that are ingested into the
//! engine and acknowledged. A malformed result is counted in the ack and
//! dropped; it never disturbs other agents.

use crate::net::listener::Peer;
use gslb_proto::link::identity::Role;
use std::sync::Arc;

use gslb_proto::convert::assignments_to_pb;
use gslb_proto::pb;
use gslb_proto::pb::agent_message::Msg as AgentMsg;
use gslb_proto::pb::aggregator_message::Msg;
use gslb_shared::assignment::TargetKey;
use gslb_shared::{LocationId, ProbeResult, Region, validate};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};

use super::{AgentInfo, Service, lock, now, off_worker, registry};
use crate::core::assignments::{AssignmentSet, diff};
use gslb_engine::Input;

/// The `AgentService` gRPC service.
#[derive(Debug, Clone)]
pub struct AgentStreams(pub Arc<Service>);

fn message(m: Msg) -> Result<pb::AggregatorMessage, Status> {
    Ok(pb::AggregatorMessage { msg: Some(m) })
}

#[tonic::async_trait]
impl pb::agent_service_server::AgentService for AgentStreams {
    type SessionStream = ReceiverStream<Result<pb::AggregatorMessage, Status>>;

    async fn session(
        &self,
        request: Request<Streaming<pb::AgentMessage>>,
    ) -> Result<Response<Self::SessionStream>, Status> {
        // An agent's certificate names its location: a stolen key reports
        // for that one location at most, it cannot sway another's quorum.
        let certified = request
            .extensions()
            .get::<Peer>()
            .and_then(|p| p.identity.clone())
            .filter(|id| id.role == Role::Agent);
        // Counted before the first message is read: a session can carry
        // 16 MiB messages, so an identity may hold only a few.
        let who = super::quota::caller(request.extensions());
        let held = super::quota::take(&self.0, SESSIONS, who.as_deref())?;
        let mut inbound = request.into_inner();
        let first = inbound
            .message()
            .await?
            .ok_or_else(|| Status::invalid_argument("stream closed before register"))?;
        let Some(AgentMsg::Register(register)) = first.msg else {
            return Err(Status::invalid_argument(
                "the first message must be register",
            ));
        };
        let location = LocationId::new(register.location.clone());
        validate::location_id(&location)
            .map_err(|rule| Status::invalid_argument(format!("location: {rule}")))?;
        validate::region(&Region::new(register.region.clone()))
            .map_err(|rule| Status::invalid_argument(format!("region: {rule}")))?;
        registry::check_text("agentId", &register.agent_id, registry::MAX_AGENT_ID)
            .and_then(|()| {
                registry::check_text("version", &register.version, registry::MAX_AGENT_VERSION)
            })
            .map_err(Status::invalid_argument)?;
        if let Some(id) = certified
            && id.name != register.location
        {
            tracing::warn!(agent = %register.agent_id, certificate = %id.name, location = %register.location, "refused an agent reporting for another location");
            return Err(Status::permission_denied(format!(
                "location: the agent certificate is for location {:?}; it may not report as {:?}",
                id.name, register.location
            )));
        }
        let (tx, rx) = mpsc::channel(64);
        if let Err(hint) = self.0.leader_elsewhere() {
            // Results are decided on the leader: send the agent there.
            let redirect = redirect(&self.0, hint)?;
            tracing::info!(agent = %register.agent_id, leader = %redirect.leader_address, "agent sent to the leader");
            let _ = tx.send(message(Msg::Redirect(redirect))).await;
            return Ok(Response::new(ReceiverStream::new(rx)));
        }
        tokio::spawn(run(self.0.clone(), register, location, inbound, tx, held));
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}

/// Most agent sessions one agent certificate may hold: an agent needs
/// one, two while it reconnects.
pub const MAX_AGENT_SESSIONS_PER_IDENTITY: usize = 4;
/// Most agent sessions in all.
pub const MAX_AGENT_SESSIONS: usize = 1_024;

const SESSIONS: super::quota::Limit = super::quota::Limit {
    kind: "session",
    what: "agent sessions",
    per_identity: MAX_AGENT_SESSIONS_PER_IDENTITY,
    total: MAX_AGENT_SESSIONS,
};

/// The hint for an agent on a node that does not lead; UNAVAILABLE while
/// no leader is known (the agent retries with backoff).
fn redirect(
    service: &Service,
    hint: Option<crate::replication::cluster::LeaderHint>,
) -> Result<pb::LeaderHint, Status> {
    let (leader_id, address) = hint.ok_or_else(|| super::status::not_leader(None))?;
    let scheme = service.cluster().map_or("http", |c| c.link.scheme());
    Ok(pb::LeaderHint {
        leader_id,
        leader_address: format!("{scheme}://{address}"),
    })
}

async fn run(
    service: Arc<Service>,
    register: pb::Register,
    location: LocationId,
    mut inbound: Streaming<pb::AgentMessage>,
    tx: mpsc::Sender<Result<pb::AggregatorMessage, Status>>,
    _held: super::quota::Held,
) {
    let agent_id = register.agent_id.clone();
    let stream = connect(&service, &register, &location).await;
    tracing::info!(agent = %agent_id, %location, version = %register.version, "agent connected");
    let mut catalog = service.watch_catalog();
    let mut role = service.watch_role();
    // A pass over the catalog: on the published view, off the worker.
    let mut sent = assignments_of(&service, &location).await;
    let mut set_version = 1u64;
    let by_id = register.checks_by_id;
    let own_listeners: Vec<String> = service
        .own_listeners()
        .iter()
        .map(ToString::to_string)
        .collect();
    set_assignments(&service, &agent_id, stream, sent.len());
    let sent_whole = if register.sets_in_parts {
        send_in_parts(&sent, set_version, by_id, own_listeners, &tx).await
    } else {
        // One message per set: built on the blocking pool, like the set.
        let whole = {
            let sent = Arc::clone(&sent);
            off_worker(move || {
                let (assignments, checks) = assignments_to_pb(sent.values(), by_id);
                pb::AssignmentSet {
                    version: set_version,
                    assignments,
                    own_listeners,
                    checks,
                    more: false,
                }
            })
            .await
        };
        tx.send(message(Msg::Full(whole))).await.is_ok()
    };
    if !sent_whole {
        disconnect(&service, &agent_id, stream, &location).await;
        return;
    }
    loop {
        tokio::select! {
            incoming = inbound.message() => match incoming {
                Ok(Some(m)) => {
                    touch(&service, &agent_id, stream, results_in(&m));
                    if let Some(reply) = handle(&service, &location, &agent_id, m).await
                        && tx.send(message(reply)).await.is_err()
                    {
                        break;
                    }
                }
                Ok(None) => break,
                Err(status) => {
                    tracing::info!(agent = %agent_id, %status, "agent stream ended with an error");
                    break;
                }
            },
            changed = role.changed() => {
                if changed.is_err() {
                    break;
                }
                if let Err(hint) = service.leader_elsewhere() {
                    // Leadership moved: this node no longer decides.
                    if let Ok(redirect) = redirect(&service, hint) {
                        let _ = tx.send(message(Msg::Redirect(redirect))).await;
                    }
                    break;
                }
            }
            changed = catalog.changed() => {
                if changed.is_err() {
                    break;
                }
                let fresh = assignments_of(&service, &location).await;
                if let Some(delta) = delta(&sent, &fresh, &mut set_version, by_id) {
                    set_assignments(&service, &agent_id, stream, fresh.len());
                    sent = fresh;
                    if tx.send(message(Msg::Delta(delta))).await.is_err() {
                        break;
                    }
                }
            }
        }
    }
    disconnect(&service, &agent_id, stream, &location).await;
    tracing::info!(agent = %agent_id, %location, "agent disconnected");
}

/// Most assignments in one part of a set sent in parts: about 100 KiB on
/// the wire with checks by id, so no stream buffer grows to a whole set.
const SET_PART: usize = 4_096;

/// Send `set` as parts of at most [`SET_PART`] assignments (an empty set is
/// one empty part); false when the stream closed.
async fn send_in_parts(
    set: &AssignmentSet,
    version: u64,
    by_id: bool,
    own_listeners: Vec<String>,
    tx: &mpsc::Sender<Result<pb::AggregatorMessage, Status>>,
) -> bool {
    let mut assignments = set.values().peekable();
    loop {
        // A part's conversion is a few milliseconds: done here, between
        // sends, rather than holding the whole set's messages at once.
        let (part, checks) = assignments_to_pb(assignments.by_ref().take(SET_PART), by_id);
        let more = assignments.peek().is_some();
        let message_part = pb::AssignmentSet {
            version,
            assignments: part,
            own_listeners: own_listeners.clone(),
            checks,
            more,
        };
        if tx.send(message(Msg::Full(message_part))).await.is_err() {
            return false;
        }
        if !more {
            return true;
        }
    }
}

/// The location's assignment set from the published view, shared with
/// every location that runs the same checks (when built, a pass over the
/// catalog: on the blocking pool).
async fn assignments_of(service: &Service, location: &LocationId) -> Arc<AssignmentSet> {
    let (view, location) = (service.view(), location.clone());
    let sets = Arc::clone(&service.assignment_sets);
    off_worker(move || lock(&sets).get(view.catalog_generation(), view.catalog(), &location)).await
}

fn delta(
    sent: &Arc<AssignmentSet>,
    fresh: &Arc<AssignmentSet>,
    set_version: &mut u64,
    by_id: bool,
) -> Option<pb::AssignmentDelta> {
    if Arc::ptr_eq(sent, fresh) {
        return None;
    }
    let (upserts, removals) = diff(sent, fresh);
    if upserts.is_empty() && removals.is_empty() {
        return None;
    }
    let base_version = *set_version;
    *set_version += 1;
    let (upserts, checks) = assignments_to_pb(upserts, by_id);
    Some(pb::AssignmentDelta {
        base_version,
        version: *set_version,
        upserts,
        checks,
        removals: removals
            .into_iter()
            .map(|(member, check)| TargetKey { member, check }.into())
            .collect(),
    })
}

/// Handle one agent message; the reply to send, if any.
async fn handle(
    service: &Service,
    location: &LocationId,
    agent_id: &str,
    m: pb::AgentMessage,
) -> Option<Msg> {
    match m.msg? {
        AgentMsg::Results(batch) => {
            let pb::ResultBatch {
                seq,
                results: received,
                dropped,
            } = batch;
            let mut results = Vec::with_capacity(received.len());
            let mut rejected = 0u32;
            for r in &received {
                match ProbeResult::try_from(r) {
                    Ok(r) => results.push(r),
                    Err(_) => rejected += 1,
                }
            }
            // Let the wire form go before waiting for the core: twenty
            // agents' batches may wait at once.
            drop(received);
            if rejected > 0 {
                tracing::warn!(agent = %agent_id, rejected, "malformed results dropped");
            }
            if dropped > 0 {
                tracing::warn!(agent = %agent_id, dropped, "agent dropped results while disconnected");
            }
            let accepted = results.len() as u32;
            let location = location.clone();
            let outcome = service
                .call(move |c| {
                    c.step(
                        Input::Results {
                            location: &location,
                            results: &results,
                        },
                        now(),
                    )
                })
                .await;
            if let Err(err) = outcome {
                tracing::warn!(agent = %agent_id, error = %err, "results not ingested");
            }
            Some(Msg::Ack(pb::BatchAck {
                seq,
                accepted,
                rejected,
            }))
        }
        AgentMsg::Rejected(r) => {
            let key = r.key.unwrap_or_default();
            tracing::warn!(agent = %agent_id, member = key.member_id, check = key.check_id, field = %r.field, reason = %r.reason, "agent refused an assignment");
            None
        }
        AgentMsg::Register(_) => None,
    }
}

async fn connect(service: &Service, register: &pb::Register, location: &LocationId) -> u64 {
    let first = {
        let mut locations = lock(&service.locations);
        let count = locations.entry(location.clone()).or_default();
        *count += 1;
        *count == 1
    };
    if first {
        let at = location.clone();
        let result = service
            .call(move |c| c.step(Input::LocationConnected(&at), now()))
            .await;
        if let Err(err) = result {
            tracing::warn!(%location, error = %err, "location not tracked");
        }
    }
    service.evict_agents();
    lock(&service.agents).connect(AgentInfo {
        agent_id: register.agent_id.clone(),
        location: location.clone(),
        region: register.region.clone(),
        version: register.version.clone(),
        last_seen_ms: now().0,
        connected: true,
        assignments: 0,
        stream: 0,
        connected_since_ms: now().0,
        results: registry::Rate::starting(now().0),
    })
}

async fn disconnect(service: &Service, agent_id: &str, stream: u64, location: &LocationId) {
    lock(&service.agents).disconnect(agent_id, stream, now().0);
    let last = {
        let mut locations = lock(&service.locations);
        let count = locations.entry(location.clone()).or_default();
        *count = count.saturating_sub(1);
        *count == 0
    };
    if last {
        let at = location.clone();
        let _ = service
            .call(move |c| c.step(Input::LocationDisconnected(&at), now()))
            .await;
    }
}

/// Results carried by an agent message.
fn results_in(m: &pb::AgentMessage) -> u64 {
    match &m.msg {
        Some(AgentMsg::Results(batch)) => batch.results.len() as u64,
        _ => 0,
    }
}

fn touch(service: &Service, agent_id: &str, stream: u64, results: u64) {
    if let Some(agent) = lock(&service.agents).owned(agent_id, stream) {
        let at = now().0;
        agent.last_seen_ms = at;
        agent.results.add(results, at);
    }
}

fn set_assignments(service: &Service, agent_id: &str, stream: u64, n: usize) {
    if let Some(agent) = lock(&service.agents).owned(agent_id, stream) {
        agent.assignments = n;
    }
}
