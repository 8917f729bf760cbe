//! Turning engine outputs into durable state: latched member state, health
//! log entries, and the removal of expired ephemeral members.

use std::collections::BTreeMap;

use gslb_shared::{Member, MemberFacts, MemberId, PoolId, Rtts};

use super::{Control, ControlError};
use crate::core::catalog::{Change, ObjectRef, Op};
use crate::core::notify::Event;
use crate::core::notify::detect::{member_event, pool_events, quarantine_event};
use crate::core::store::{Latched, LogRecord};
use gslb_engine::{Output, Timestamp};

/// What one batch of engine outputs amounts to.
#[derive(Debug, Default)]
pub(super) struct Decisions {
    /// New facts per member.
    pub facts: BTreeMap<MemberId, MemberFacts>,
    /// New round-trip tables per member (`None`: no longer measured), only
    /// those that differ from what is published.
    pub rtt: BTreeMap<MemberId, Option<Rtts>>,
    /// Latched state to store.
    pub latched: Vec<(MemberId, Option<Latched>)>,
    /// Catalog deletions of expired ephemeral members.
    pub expired: Vec<Change>,
    /// Health log entries.
    pub log: Vec<LogRecord>,
    /// Notification events (members, pools, locations).
    pub events: Vec<Event>,
}

fn log_member(output: &Output) -> Option<MemberId> {
    match output {
        Output::Transition(t) => Some(t.member),
        Output::Warmup { member, .. } | Output::Expired { member, .. } => Some(*member),
        Output::Facts { .. }
        | Output::Rtt { .. }
        | Output::Quarantine { .. }
        | Output::StartupGateOpened { .. } => None,
    }
}

impl Control {
    pub(super) fn take_decisions(&mut self, now: Timestamp) -> Result<Decisions, ControlError> {
        if self.outputs.is_empty() {
            return Ok(Decisions::default());
        }
        let outputs = std::mem::take(&mut self.outputs);
        let mut d = Decisions::default();
        for output in outputs {
            match &output {
                Output::Facts { member, facts } => {
                    d.facts.insert(*member, *facts);
                }
                Output::Rtt { member, rtt } => {
                    let rtt = (!rtt.is_empty()).then(|| rtt.clone());
                    d.rtt.insert(*member, rtt);
                }
                Output::Expired { member, .. } => {
                    if self.state.exists(ObjectRef::Member(*member)) {
                        let change = self.state.apply(Op::Delete(ObjectRef::Member(*member)))?;
                        // Moved now: what reads the catalog below (pool
                        // events) sees it changed.
                        self.catalog_generation += 1;
                        d.expired.push(change);
                        d.facts.remove(member);
                        d.rtt.remove(member);
                        d.latched.push((*member, None));
                    }
                }
                Output::Quarantine {
                    location,
                    quarantined,
                    ..
                } => {
                    tracing::warn!(%location, quarantined, "location quarantine changed");
                    d.events.extend(quarantine_event(&output));
                }
                Output::StartupGateOpened { .. } => {
                    tracing::info!("startup gate open: health decisions resume")
                }
                Output::Transition(t) => {
                    tracing::info!(member = %t.member, from = ?t.from, to = ?t.to, reason = ?t.reason, "health transition");
                    d.events.extend(member_event(&self.state.catalog, t));
                }
                Output::Warmup {
                    member,
                    event,
                    passes,
                    threshold,
                    ..
                } => {
                    tracing::info!(%member, ?event, passes, threshold, "warm-up gate");
                }
            }
            // Moved, not cloned: a start decides every member at once, and
            // each transition carries its per-location evidence.
            if let Some(member) = log_member(&output) {
                d.log.push(LogRecord {
                    member,
                    entry: output,
                });
            }
        }
        for member in d.facts.keys() {
            if let Some(status) = self.engine.member_status(*member, now) {
                let latched = Latched {
                    health: status.health,
                    gate_open: !status.warming,
                    manual: status.manual,
                    ramp: status.ramp,
                };
                if self.latched.get(member) != Some(&latched) {
                    self.latched.insert(*member, latched);
                    d.latched.push((*member, Some(latched)));
                }
            }
        }
        self.pool_events(&mut d, now);
        // Only what changes what edges hold (a member deleted meanwhile,
        // or a table equal to the published one, is dropped).
        let held = &self.feed.snapshot().rtt;
        let members = &self.state.catalog.members;
        d.rtt.retain(|id, rtt| {
            members.contains_key(id)
                && match rtt {
                    Some(r) => held.get(id) != Some(r),
                    None => held.contains_key(id),
                }
        });
        for (member, value) in &d.latched {
            if value.is_none() {
                self.latched.remove(member);
            }
        }
        Ok(d)
    }
}

impl Control {
    /// The pool events of `d`'s new facts: each pool with a member whose
    /// facts changed, its flags before and after (under the current
    /// catalog, so only what the decisions changed counts). Costs the
    /// members changed ([`super::pool_watch`]).
    fn pool_events(&mut self, d: &mut Decisions, now: Timestamp) {
        if d.facts.is_empty() {
            return;
        }
        let catalog = &self.state.catalog;
        let mut changed: BTreeMap<PoolId, Vec<(&Member, MemberFacts)>> = BTreeMap::new();
        for (id, facts) in &d.facts {
            if let Some(m) = catalog.members.get(id) {
                changed.entry(m.pool).or_default().push((m, *facts));
            }
        }
        let held = self.feed.snapshot();
        for (pool, members) in changed {
            let Some(p) = catalog.pools.get(&pool) else {
                continue;
            };
            let (before, after) =
                (self.pools).step(&self.state, self.catalog_generation, p, held, &members);
            d.events
                .extend(pool_events(pool, &p.name, before, after, now.0));
        }
        if self.pools.len() > catalog.pools.len() {
            self.pools.retain(|id| catalog.pools.contains_key(&id));
        }
    }
}
