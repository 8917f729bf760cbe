//! Configuration inputs: checks, members, locations, restored state, and
//! operator actions (manual health, heartbeats).

use gslb_shared::{Check, CheckId, Health, Member, MemberId};
use std::sync::Arc;
use std::time::Duration;

use super::locset::LocationSet;
use super::output::{Output, Reason, Transition, WarmupEvent};
use super::state::{CheckState, MemberState, ScoreWindow};
use super::warmup::WarmupGate;
use super::{Engine, EngineError, RestoredMember, Startup, Timestamp};

impl Engine {
    pub(super) fn restore(
        &mut self,
        now: Timestamp,
        members: &[RestoredMember],
        first_start: bool,
        out: &mut Vec<Output>,
    ) {
        self.set_latched(now, members);
        let any_active = self.checks.iter().any(|c| c.spec.is_active());
        if first_start || !any_active {
            self.startup = Startup::Open;
            out.push(Output::StartupGateOpened { at: now });
        } else {
            self.startup = Startup::Waiting { loaded: now };
            for c in 0..self.checks.len() {
                if let Some(check) = self.checks.get_mut(c) {
                    check.gate = Default::default();
                }
            }
        }
        for slot in 0..self.members.len() {
            self.publish_as_is(slot, out);
        }
    }

    /// Take the leader's decided state for `members` and publish their facts.
    pub(super) fn replicated(
        &mut self,
        now: Timestamp,
        members: &[RestoredMember],
        out: &mut Vec<Output>,
    ) {
        for slot in self.set_latched(now, members) {
            self.publish_as_is(slot, out);
        }
    }

    /// Set stored or replicated state; the slots touched.
    fn set_latched(&mut self, now: Timestamp, members: &[RestoredMember]) -> Vec<usize> {
        let mut touched = Vec::with_capacity(members.len());
        for r in members {
            let Some(&slot) = self.member_slots.get(&r.member) else {
                continue;
            };
            let Some(m) = self.members.get_mut(slot) else {
                continue;
            };
            m.health = r.health;
            m.manual = r.manual;
            m.gate = WarmupGate::restored(r.gate_open, 0);
            m.since = now;
            m.last_heartbeat = now;
            if m.resume_ramp(r.ramp, now) {
                self.ramping.insert(r.member);
            } else {
                self.ramping.remove(&r.member);
            }
            touched.push(slot);
        }
        touched
    }

    pub(super) fn assigned_for(&self, check: &Check) -> LocationSet {
        let mut set = LocationSet::EMPTY;
        for (slot, _) in self.locations.iter().enumerate() {
            set.insert(slot);
        }
        if check.locations.is_empty() {
            return set;
        }
        let mut listed = LocationSet::EMPTY;
        for location in &check.locations {
            if let Some(&slot) = self.location_slots.get(location) {
                listed.insert(slot);
            }
        }
        listed
    }

    /// Recompute which locations a check's cycles wait for: every assigned,
    /// connected one (DESIGN "Cycles"). A stale location is waited for too
    /// (up to the deadline), so after a blip that silenced every location
    /// the first to report again does not decide a cycle alone; a
    /// quarantined one is waited for so its results are tallied toward its
    /// release (they never count toward the score while it is set aside).
    pub(super) fn refresh_expected(&mut self, check_slot: usize) {
        let Some(check) = self.checks.get_mut(check_slot) else {
            return;
        };
        let mut expected = LocationSet::EMPTY;
        for slot in check.assigned.iter() {
            if self.locations[slot].connected {
                expected.insert(slot);
            }
        }
        check.expected = expected;
    }

    pub(super) fn upsert_check(&mut self, now: Timestamp, spec: &Check, out: &mut Vec<Output>) {
        let assigned = self.assigned_for(spec);
        let slot = match self.check_slots.get(&spec.id) {
            Some(&slot) => {
                let Some(state) = self.checks.get_mut(slot) else {
                    return;
                };
                let retimed = state.spec.interval != spec.interval;
                state.spec = spec.clone();
                state.assigned = assigned;
                if retimed {
                    // Cycle numbers depend on the interval: open tallies no longer apply.
                    self.members.update_where(
                        |m| m.check == Some(slot),
                        |m| {
                            m.open.clear();
                            m.last_closed = 0;
                        },
                    );
                }
                slot
            }
            None => {
                let current = now.cycle(spec.interval);
                let last_heard = self
                    .locations
                    .iter()
                    .map(|l| if l.connected { current } else { 0 })
                    .collect();
                let state = CheckState {
                    spec: spec.clone(),
                    assigned,
                    last_heard,
                    expected: LocationSet::EMPTY,
                    gate: Default::default(),
                };
                let slot = self.checks.push(state);
                self.check_slots.insert(spec.id, slot);
                self.members
                    .update_where(|m| m.check_id == Some(spec.id), |m| m.check = Some(slot));
                slot
            }
        };
        self.refresh_expected(slot);
        self.republish_check_members(now, spec.id, out);
    }

    pub(super) fn remove_check(
        &mut self,
        now: Timestamp,
        id: CheckId,
        out: &mut Vec<Output>,
    ) -> Result<(), EngineError> {
        let slot = self
            .check_slots
            .remove(&id)
            .ok_or(EngineError::UnknownCheck(id))?;
        self.checks.set(slot, None);
        self.members.update_where(
            |m| m.check == Some(slot),
            |m| {
                m.check = None;
                m.open.clear();
            },
        );
        self.republish_check_members(now, id, out);
        Ok(())
    }

    fn republish_check_members(&mut self, now: Timestamp, check: CheckId, out: &mut Vec<Output>) {
        for slot in 0..self.members.len() {
            if self
                .members
                .get(slot)
                .is_some_and(|m| m.check_id == Some(check))
            {
                self.publish_with_config_transition(slot, now, out);
            }
        }
    }

    /// Publish, logging a transition when configuration alone changed the
    /// effective health (e.g. a check was added to the pool).
    fn publish_with_config_transition(
        &mut self,
        slot: usize,
        now: Timestamp,
        out: &mut Vec<Output>,
    ) {
        let checks = &self.checks;
        let Some(m) = self.members.get_mut(slot) else {
            return;
        };
        let to = m.effective_health(m.checked(checks));
        if let Some(published) = m.published
            && published.health != to
        {
            m.since = now;
            out.push(Output::Transition(Transition::without_evidence(
                m.id,
                now,
                published.health,
                to,
                Reason::Config,
            )));
        }
        self.publish(slot, now, out);
    }

    pub(super) fn upsert_member(
        &mut self,
        now: Timestamp,
        member: &Member,
        check: Option<CheckId>,
        slow_start: Option<Duration>,
        out: &mut Vec<Output>,
    ) {
        let check_slot = check.and_then(|id| self.check_slots.get(&id).copied());
        let slot = match self.member_slots.get(&member.id) {
            Some(&slot) => slot,
            None => {
                let free = self.free_member_slots.pop();
                self.next_generation = self.next_generation.wrapping_add(1);
                let mut state = MemberState {
                    id: member.id,
                    pool: member.pool,
                    generation: self.next_generation,
                    check_id: check,
                    check: check_slot,
                    enabled: member.enabled,
                    kind: member.kind,
                    warmup_threshold: member.warmup_threshold,
                    rewarm_after_down: member.rewarm_after_down,
                    health: Health::Unknown,
                    manual: None,
                    gate: WarmupGate::OPEN,
                    scores: ScoreWindow::default(),
                    last_pass_fraction: None,
                    open: Vec::new(),
                    last_closed: 0,
                    locs: Vec::new(),
                    damping: Default::default(),
                    last_heartbeat: now,
                    since: now,
                    published: None,
                    in_rotation: false,
                    slow_start,
                    ramp_since: None,
                    ramp: None,
                };
                // A new member with a check and a threshold starts warming.
                if state.checked(&self.checks) && member.warmup_threshold > 0 {
                    state.gate = WarmupGate::CLOSED;
                }
                if member.is_ephemeral() {
                    state.health = Health::Up; // registering is the first heartbeat
                    self.ephemeral.insert(member.id);
                }
                let slot = match free {
                    Some(slot) => {
                        self.members.set(slot, Some(state));
                        slot
                    }
                    None => self.members.push(state),
                };
                Arc::make_mut(&mut self.member_slots).insert(member.id, slot);
                self.publish(slot, now, out);
                return;
            }
        };
        if let Some(m) = self.members.get_mut(slot) {
            m.pool = member.pool;
        }
        let decisions = self.decides_for(slot);
        let Some(m) = self.members.get_mut(slot) else {
            return;
        };
        let reenabled = !m.enabled && member.enabled;
        m.enabled = member.enabled;
        m.warmup_threshold = member.warmup_threshold;
        if reenabled && m.warmup_threshold > 0 {
            // Disabled -> enabled restarts the gate (seed 000); other edits keep it.
            m.gate.restart();
            out.push(m.gate_event(now, WarmupEvent::Restarted));
        }
        m.rewarm_after_down = member.rewarm_after_down;
        m.slow_start = slow_start;
        if slow_start.is_none() && m.ramp.is_some() {
            m.stop_ramp(); // slow start turned off: full weight now
            self.ramping.remove(&member.id);
        }
        if m.check_id != check {
            m.check_id = check;
            m.check = check_slot;
            m.open.clear();
            m.scores.clear();
            m.last_pass_fraction = None;
            m.last_closed = 0;
        }
        if m.kind != member.kind {
            if member.is_ephemeral() {
                m.health = Health::Up;
                m.last_heartbeat = now;
                self.ephemeral.insert(member.id);
            } else {
                m.health = Health::Unknown;
                self.ephemeral.remove(&member.id);
            }
            m.kind = member.kind;
        }
        if decisions {
            out.extend(m.open_gate_if_due(now));
        }
        self.publish_with_config_transition(slot, now, out);
    }

    pub(super) fn remove_member(&mut self, id: MemberId) -> Result<(), EngineError> {
        let slot = Arc::make_mut(&mut self.member_slots)
            .remove(&id)
            .ok_or(EngineError::UnknownMember(id))?;
        self.members.set(slot, None);
        self.free_member_slots.push(slot);
        self.ephemeral.remove(&id);
        self.suppressed.remove(&id);
        self.ramping.remove(&id);
        Ok(())
    }
}
