//! What the deciding node watches for itself: an agent that stays
//! disconnected, an edge that stops reporting or stays behind the
//! published version. Each is a level (`core::notify::detect::Level`);
//! a problem that starts or ends past the grace period is an event.
//! Only agents and edges this node has heard of count: after a leader
//! change, one that never reconnects to the new leader goes unreported
//! (its metrics and alerts still show it).

use std::collections::BTreeSet;
use std::time::Duration;

use gslb_shared::EventKind;

use crate::api::service::Service;
use crate::core::control::View;
use crate::core::lock;
use crate::core::notify::detect::{Level, level_events};
use crate::core::notify::{OutboxWrite, Subject};

/// How long an agent may stay away, or an edge stay behind, before it is
/// an event.
pub const WATCH_GRACE: Duration = Duration::from_secs(60);

/// The outbox write for the agents' and edges' levels now.
pub fn scan(service: &Service, view: &View, watched: &BTreeSet<String>) -> OutboxWrite {
    let now = gslb_shared::clock::now_ms();
    let grace = WATCH_GRACE.as_millis() as u64;
    let mut levels = Vec::new();
    for agent in lock(&service.agents).rows() {
        let away = now.saturating_sub(agent.last_seen_ms);
        levels.push(Level {
            subject: Subject::Agent {
                name: agent.agent_id.clone(),
                location: agent.location.to_string(),
            },
            on: EventKind::AgentLost,
            off: EventKind::AgentBack,
            active: !agent.connected && away > grace,
            detail: format!("last heard {} s ago", away / 1_000),
        });
    }
    let snapshot = view.snapshot();
    let published = snapshot.published_at_ms;
    for edge in lock(&service.edges).values() {
        let away = now.saturating_sub(edge.last_seen_ms);
        let behind = edge.applied_version < snapshot.version;
        let lost = !edge.connected && away > grace;
        let lagging = edge.connected && behind && now.saturating_sub(published) > grace;
        levels.push(Level {
            subject: Subject::Edge {
                name: edge.edge_id.clone(),
            },
            on: EventKind::EdgeStale,
            off: EventKind::EdgeFresh,
            active: lost || lagging,
            detail: if lost {
                format!("disconnected, last heard {} s ago", away / 1_000)
            } else {
                format!(
                    "at version {} of {}",
                    edge.applied_version, snapshot.version
                )
            },
        });
    }
    level_events(
        &levels,
        watched,
        &[EventKind::AgentLost, EventKind::EdgeStale],
        now,
    )
}
