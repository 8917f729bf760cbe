//! Notifications: the events worth telling an operator about, made where
//! health is decided and kept in the replicated store's outbox until each
//! notification target has them. Pure: which events a batch of decisions
//! amounts to (`detect`), which targets want an event (`route`), the retry
//! schedule (`retry`) and each kind's payload and signature (`payload`).
//! Sending them is the API's (`crate::api::notify`).

pub mod detect;
pub mod payload;
pub mod retry;
pub mod route;

use std::collections::{BTreeMap, BTreeSet};

use gslb_shared::{EventKind, MemberId, NotifierId, PoolId};
use serde::{Deserialize, Serialize};

/// Most events the outbox keeps; past it the oldest are dropped (and
/// counted), so a target that never answers cannot fill the disk.
pub const MAX_OUTBOX_EVENTS: u64 = 100_000;

/// What an event is about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    tag = "type"
)]
pub enum Subject {
    /// A pool member.
    Member {
        /// Its id.
        id: MemberId,
        /// Its name.
        name: String,
        /// Its pool's id.
        pool: PoolId,
        /// Its pool's name.
        pool_name: String,
    },
    /// A pool.
    Pool {
        /// Its id.
        id: PoolId,
        /// Its name.
        name: String,
    },
    /// A probe location.
    Location {
        /// Its name.
        name: String,
    },
    /// A DNS edge.
    Edge {
        /// Its id.
        name: String,
    },
    /// A probe agent.
    Agent {
        /// Its id.
        name: String,
        /// Its location.
        location: String,
    },
}

impl Subject {
    /// A stable text key: `member/12`, `pool/3`, `location/eu-west`, ...
    pub fn key(&self) -> String {
        match self {
            Subject::Member { id, .. } => format!("member/{id}"),
            Subject::Pool { id, .. } => format!("pool/{id}"),
            Subject::Location { name } => format!("location/{name}"),
            Subject::Edge { name } => format!("edge/{name}"),
            Subject::Agent { name, .. } => format!("agent/{name}"),
        }
    }

    /// How the subject reads in a message: `member web-1 (pool web)`.
    pub fn describe(&self) -> String {
        match self {
            Subject::Member {
                name, pool_name, ..
            } => format!("member {name} (pool {pool_name})"),
            Subject::Pool { name, .. } => format!("pool {name}"),
            Subject::Location { name } => format!("location {name}"),
            Subject::Edge { name } => format!("edge {name}"),
            Subject::Agent { name, location } => format!("agent {name} ({location})"),
        }
    }
}

/// One event in the outbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// Its place in the outbox, assigned when the store applies it (0
    /// before): the same on every replica.
    #[serde(default)]
    pub seq: u64,
    /// When it happened, ms since the Unix epoch.
    pub at_ms: u64,
    /// What happened.
    pub kind: EventKind,
    /// To what.
    pub subject: Subject,
    /// Why, in words (the engine's reason, or the watcher's finding).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

/// The problem an event starts or ends: a PagerDuty incident is keyed by
/// it, and the watcher's levels (`Outbox::watched`) too.
pub fn problem(kind: EventKind) -> &'static str {
    match kind {
        EventKind::MemberDown | EventKind::MemberUp => "down",
        EventKind::PoolNotEligible | EventKind::PoolEligible => "not-eligible",
        EventKind::FailOpenOn | EventKind::FailOpenOff => "fail-open",
        EventKind::ProtectionOn | EventKind::ProtectionOff => "protection",
        EventKind::LocationQuarantined | EventKind::LocationReleased => "quarantine",
        EventKind::EdgeStale | EventKind::EdgeFresh => "stale",
        EventKind::AgentLost | EventKind::AgentBack => "lost",
    }
}

impl Event {
    /// The key a receiver de-duplicates deliveries by: the same on every
    /// retry and from every leader.
    pub fn idempotency_key(&self) -> String {
        format!("gslb-{}-{}", self.seq, self.at_ms)
    }

    /// The incident it opens or closes: `gslb/member/12/down`.
    pub fn dedup_key(&self) -> String {
        format!("gslb/{}/{}", self.subject.key(), problem(self.kind))
    }

    /// One line for people: `member web-1 (pool web) is down: ...`.
    pub fn summary(&self) -> String {
        let what = match self.kind {
            EventKind::MemberDown => "is down",
            EventKind::MemberUp => "is up",
            EventKind::PoolNotEligible => "is not eligible (too few usable members)",
            EventKind::PoolEligible => "is eligible again",
            EventKind::FailOpenOn => "failed open (answering every member)",
            EventKind::FailOpenOff => "no longer fails open",
            EventKind::ProtectionOn => "is protected (answering every candidate)",
            EventKind::ProtectionOff => "is no longer protected",
            EventKind::LocationQuarantined => "is quarantined (its results are set aside)",
            EventKind::LocationReleased => "is released from quarantine",
            EventKind::EdgeStale => "is stale",
            EventKind::EdgeFresh => "caught up",
            EventKind::AgentLost => "is lost",
            EventKind::AgentBack => "is back",
        };
        let mut line = format!("{} {what}", self.subject.describe());
        if !self.detail.is_empty() {
            line.push_str(": ");
            line.push_str(&self.detail);
        }
        line
    }
}

/// A write to the outbox by the deciding node's notifier (not a health
/// decision): events it watched for itself (edges, agents), how far each
/// target got, and what may go.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutboxWrite {
    /// Events to append.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<Event>,
    /// Watched problems to forget without an event (their subject is gone).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forget: Vec<String>,
    /// Targets' new positions: every event up to the sequence number is done.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cursors: Vec<(NotifierId, u64)>,
    /// Drop events up to this sequence number (every target is past them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trim_through: Option<u64>,
}

impl OutboxWrite {
    /// True when it changes nothing.
    pub fn is_empty(&self) -> bool {
        self.events.is_empty()
            && self.forget.is_empty()
            && self.cursors.is_empty()
            && self.trim_through.is_none()
    }
}

/// The outbox's bookkeeping as stored (without the events themselves).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Outbox {
    /// Sequence number of the newest event (0: none yet).
    pub last_seq: u64,
    /// Sequence number of the oldest event kept (`last_seq + 1` when empty).
    pub first_seq: u64,
    /// Events dropped unsent because the outbox was full.
    pub dropped: u64,
    /// Each target's position.
    pub cursors: BTreeMap<NotifierId, u64>,
    /// Problems the watcher has announced and not yet ended
    /// (`edge/NAME/stale`, `agent/NAME/lost`).
    pub watched: BTreeSet<String>,
}

impl Outbox {
    /// Events kept.
    pub fn len(&self) -> u64 {
        (self.last_seq + 1).saturating_sub(self.first_seq.max(1))
    }

    /// True when no event is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The watched-problem key an event sets or clears.
    pub fn watch_key(event: &Event) -> String {
        format!("{}/{}", event.subject.key(), problem(event.kind))
    }
}

/// The whole outbox, as a Raft snapshot carries it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OutboxDump {
    /// Bookkeeping.
    pub outbox: Outbox,
    /// Every event kept, oldest first.
    pub events: Vec<Event>,
}
