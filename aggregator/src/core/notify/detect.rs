//! Which events a batch of health decisions amounts to: a member's
//! transitions to and from down, a pool's eligibility, fail-open and
//! protection as selection sees them before and after, and a location's
//! quarantine. Pure; called by the control core in the same step that
//! makes the decisions durable, so an event and its decision are stored
//! (and replicated) together.

use gslb_engine::{EvidenceOutcome, Output, Reason, Transition};
use gslb_shared::selection::{PoolRef, PoolState, pool_state};
use gslb_shared::{
    Catalog, EventKind, FailMode, Health, Member, MemberFacts, MemberId, Pool, PoolId, Resolved,
};

use super::{Event, Subject};

/// A pool's state as notifications see it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PoolFlags {
    /// Eligible for some family.
    pub eligible: bool,
    /// Its protection threshold presents every candidate.
    pub protected: bool,
    /// Not eligible, and its fail mode answers every member.
    pub fail_open: bool,
}

impl PoolFlags {
    /// The flags of `state`, selection's view of `pool`.
    pub fn of(pool: &Pool, state: PoolState) -> Self {
        Self {
            eligible: state.eligible,
            protected: state.protected,
            fail_open: state.fail_open && pool.fail_mode == FailMode::Open,
        }
    }
}

/// Selection's view of pool `pool` (members `ids`) with each member's
/// facts from `facts`; `None` when the pool does not exist. Costs the
/// pool's size.
pub fn state_of(
    catalog: &Catalog,
    pool: PoolId,
    ids: &[MemberId],
    facts: &dyn Fn(MemberId) -> MemberFacts,
    resolved: &gslb_shared::Map<MemberId, Resolved>,
) -> Option<PoolState> {
    let p = catalog.pools.get(&pool)?;
    Some(state_with(p, &members_of(catalog, ids), facts, resolved))
}

/// The members `ids` that exist, in order.
fn members_of(catalog: &Catalog, ids: &[MemberId]) -> Vec<Member> {
    (ids.iter())
        .filter_map(|id| catalog.members.get(id).cloned())
        .collect()
}

/// Selection's view of `pool` with `members` and their facts from `facts`.
fn state_with(
    pool: &Pool,
    members: &[Member],
    facts: &dyn Fn(MemberId) -> MemberFacts,
    resolved: &gslb_shared::Map<MemberId, Resolved>,
) -> PoolState {
    let facts: Vec<MemberFacts> = members.iter().map(|m| facts(m.id)).collect();
    pool_state(PoolRef {
        pool,
        members,
        facts: &facts,
        resolved: Some(resolved),
    })
}

/// The member event of a transition, if it is one: any move to down, and
/// up only from down (a first decision of up is not news).
pub fn member_event(catalog: &Catalog, t: &Transition) -> Option<Event> {
    let kind = match (t.from, t.to) {
        (from, Health::Down) if from != Health::Down => EventKind::MemberDown,
        (Health::Down, Health::Up) => EventKind::MemberUp,
        _ => return None,
    };
    let member = catalog.members.get(&t.member)?;
    let pool_name = catalog
        .pools
        .get(&member.pool)
        .map_or_else(String::new, |p| p.name.clone());
    Some(Event {
        seq: 0,
        at_ms: t.at.0,
        kind,
        subject: Subject::Member {
            id: member.id,
            name: member.name.clone(),
            pool: member.pool,
            pool_name,
        },
        detail: reason_text(t),
    })
}

/// Why a transition happened, in words.
fn reason_text(t: &Transition) -> String {
    let mut text = match t.reason {
        Reason::Quorum {
            score, rise, fall, ..
        } => format!("quorum score {score:.2} (rise {rise:.2}, fall {fall:.2})"),
        Reason::DampingReleased { score } => format!("flap damping released at score {score:.2}"),
        Reason::Heartbeat => "a heartbeat arrived".into(),
        Reason::HeartbeatTimeout { silent_ms } => {
            format!("no heartbeat for {} s", silent_ms / 1_000)
        }
        Reason::Manual => "set by an operator".into(),
        Reason::Config => "its check was added or removed".into(),
    };
    let failing: Vec<String> = (t.evidence.iter())
        .filter_map(|e| match e.outcome {
            EvidenceOutcome::Fail { reason } => Some(format!("{} {}", e.location, reason.as_str())),
            _ => None,
        })
        .collect();
    if !failing.is_empty() {
        text.push_str("; failing: ");
        text.push_str(&failing.join(", "));
    }
    text
}

/// A location's quarantine event.
pub fn quarantine_event(output: &Output) -> Option<Event> {
    match output {
        Output::Quarantine {
            location,
            at,
            quarantined,
        } => Some(Event {
            seq: 0,
            at_ms: at.0,
            kind: if *quarantined {
                EventKind::LocationQuarantined
            } else {
                EventKind::LocationReleased
            },
            subject: Subject::Location {
                name: location.to_string(),
            },
            detail: String::new(),
        }),
        _ => None,
    }
}

/// The events of a pool whose flags went from `before` to `after`.
pub fn pool_events(
    pool: PoolId,
    name: &str,
    before: PoolFlags,
    after: PoolFlags,
    at_ms: u64,
) -> Vec<Event> {
    let changes = [
        (
            before.eligible,
            after.eligible,
            EventKind::PoolEligible,
            EventKind::PoolNotEligible,
        ),
        (
            before.fail_open,
            after.fail_open,
            EventKind::FailOpenOn,
            EventKind::FailOpenOff,
        ),
        (
            before.protected,
            after.protected,
            EventKind::ProtectionOn,
            EventKind::ProtectionOff,
        ),
    ];
    changes
        .into_iter()
        .filter(|(was, is, ..)| was != is)
        .map(|(_, is, on, off)| Event {
            seq: 0,
            at_ms,
            kind: if is { on } else { off },
            subject: Subject::Pool {
                id: pool,
                name: name.to_owned(),
            },
            detail: String::new(),
        })
        .collect()
}

/// A problem the deciding node watches for itself (an edge's staleness,
/// an agent's absence), as it stands now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Level {
    /// What it is about.
    pub subject: Subject,
    /// The event that starts the problem.
    pub on: EventKind,
    /// The event that ends it.
    pub off: EventKind,
    /// True while the problem lasts.
    pub active: bool,
    /// Why, in words.
    pub detail: String,
}

/// The outbox write that brings the watched problems (`watched`, keys of
/// [`Outbox::watch_key`](super::Outbox::watch_key)) in line with `levels`:
/// an event for each problem that started or ended, and, for problems of
/// the kinds `covered` whose subject is gone, a silent forget.
pub fn level_events(
    levels: &[Level],
    watched: &std::collections::BTreeSet<String>,
    covered: &[EventKind],
    now_ms: u64,
) -> super::OutboxWrite {
    let mut write = super::OutboxWrite::default();
    let mut seen = std::collections::BTreeSet::new();
    for level in levels {
        let key = format!("{}/{}", level.subject.key(), super::problem(level.on));
        let open = watched.contains(&key);
        if level.active != open {
            write.events.push(Event {
                seq: 0,
                at_ms: now_ms,
                kind: if level.active { level.on } else { level.off },
                subject: level.subject.clone(),
                detail: level.detail.clone(),
            });
        }
        seen.insert(key);
    }
    let suffixes: Vec<String> = (covered.iter())
        .map(|k| format!("/{}", super::problem(*k)))
        .collect();
    let prefixes = ["edge/", "agent/"];
    write.forget = (watched.iter())
        .filter(|k| !seen.contains(*k))
        .filter(|k| prefixes.iter().any(|p| k.starts_with(p)))
        .filter(|k| suffixes.iter().any(|s| k.ends_with(s.as_str())))
        .cloned()
        .collect();
    write
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use gslb_engine::{Evidence, Timestamp};
    use gslb_shared::{FailReason, LocationId};

    fn flags(eligible: bool, protected: bool, fail_open: bool) -> PoolFlags {
        PoolFlags {
            eligible,
            protected,
            fail_open,
        }
    }

    #[test]
    fn each_changed_flag_is_one_event_and_unchanged_ones_are_none() {
        // Every pair of flag sets: 6 bits.
        for bits in 0u8..64 {
            let bit = |i: u8| bits & (1 << i) != 0;
            let (e0, p0, f0, e1, p1, f1) = (bit(0), bit(1), bit(2), bit(3), bit(4), bit(5));
            let events = pool_events(PoolId(1), "web", flags(e0, p0, f0), flags(e1, p1, f1), 5);
            let changed = usize::from(e0 != e1) + usize::from(p0 != p1) + usize::from(f0 != f1);
            assert_eq!(events.len(), changed);
            for ev in &events {
                let expect_on = match ev.kind {
                    EventKind::PoolEligible | EventKind::PoolNotEligible => e1,
                    EventKind::ProtectionOn | EventKind::ProtectionOff => p1,
                    EventKind::FailOpenOn | EventKind::FailOpenOff => f1,
                    other => panic!("{other}"),
                };
                let on = matches!(
                    ev.kind,
                    EventKind::PoolEligible | EventKind::ProtectionOn | EventKind::FailOpenOn
                );
                assert_eq!(on, expect_on, "{ev:?}");
                assert_eq!(ev.at_ms, 5);
            }
        }
    }

    #[test]
    fn down_is_news_from_anywhere_and_up_only_from_down() {
        let mut catalog = Catalog::default();
        use gslb_shared::defaults::{Kind, base, decode, overlay};
        let patch = serde_json::json!({
            "pool": 1, "name": "web-1", "address": "192.0.2.7", "port": 80
        });
        let serde_json::Value::Object(patch) = patch else {
            unreachable!()
        };
        let member: Member = decode("", overlay(base(Kind::Member), patch, 7)).unwrap();
        catalog.members.insert(MemberId(7), member);
        let t = |from, to| Transition {
            member: MemberId(7),
            at: Timestamp(9),
            from,
            to,
            reason: Reason::Quorum {
                score: 0.1,
                pass_fraction: 0.0,
                rise: 0.85,
                fall: 0.2,
            },
            cycle: Some(3),
            evidence: vec![Evidence {
                location: LocationId::new("ams"),
                outcome: EvidenceOutcome::Fail {
                    reason: FailReason::Timeout,
                },
                latency_us: 0,
            }],
        };
        use Health::*;
        let kind = |from, to| member_event(&catalog, &t(from, to)).map(|e| e.kind);
        assert_eq!(kind(Up, Down), Some(EventKind::MemberDown));
        assert_eq!(kind(Unknown, Down), Some(EventKind::MemberDown));
        assert_eq!(kind(Down, Up), Some(EventKind::MemberUp));
        assert_eq!(kind(Unknown, Up), None);
        assert_eq!(kind(Up, Unknown), None);
        let e = member_event(&catalog, &t(Up, Down)).unwrap();
        assert_eq!(e.dedup_key(), "gslb/member/7/down");
        assert!(e.detail.contains("ams timeout"), "{}", e.detail);
        assert!(
            e.summary().starts_with("member web-1 (pool ) is down"),
            "{}",
            e.summary()
        );
    }

    #[test]
    fn levels_open_and_close_problems_once_and_forget_the_vanished() {
        let edge = |name: &str, active| Level {
            subject: Subject::Edge { name: name.into() },
            on: EventKind::EdgeStale,
            off: EventKind::EdgeFresh,
            active,
            detail: String::new(),
        };
        let covered = [EventKind::EdgeStale];
        let mut watched = std::collections::BTreeSet::new();
        let w = level_events(
            &[edge("e1", true), edge("e2", false)],
            &watched,
            &covered,
            7,
        );
        assert_eq!(w.events.len(), 1);
        assert_eq!(w.events[0].kind, EventKind::EdgeStale);
        assert_eq!(w.events[0].at_ms, 7);
        watched.insert("edge/e1/stale".to_owned());
        // Still stale: nothing new.
        assert!(level_events(&[edge("e1", true)], &watched, &covered, 8).is_empty());
        // Fresh again: one event.
        let w = level_events(&[edge("e1", false)], &watched, &covered, 9);
        assert_eq!(w.events[0].kind, EventKind::EdgeFresh);
        // Gone (evicted): forgotten without an event; other kinds are left alone.
        watched.insert("agent/a1/lost".to_owned());
        let w = level_events(&[], &watched, &covered, 10);
        assert!(w.events.is_empty());
        assert_eq!(w.forget, vec!["edge/e1/stale".to_owned()]);
    }
}
