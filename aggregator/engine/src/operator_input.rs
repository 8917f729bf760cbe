//! Operator and runtime inputs: locations connecting and leaving, manual
//! health, and ephemeral members' heartbeats.

use gslb_shared::{Health, LocationId, MemberId, MemberKind};

use super::locset::MAX_LOCATIONS;
use super::output::{Output, Reason, Transition};
use super::state::LocationState;
use super::{Engine, EngineError, Timestamp};

impl Engine {
    pub(super) fn location_connected(
        &mut self,
        now: Timestamp,
        id: &LocationId,
    ) -> Result<(), EngineError> {
        let slot = match self.location_slots.get(id) {
            Some(&slot) => slot,
            None => {
                if self.locations.len() >= MAX_LOCATIONS {
                    return Err(EngineError::TooManyLocations);
                }
                self.locations.push(LocationState {
                    id: id.clone(),
                    connected: false,
                });
                self.quarantine.push(Default::default());
                let slot = self.locations.len() - 1;
                self.location_slots.insert(id.clone(), slot);
                for c in 0..self.checks.len() {
                    let Some(spec) = self.checks.get(c).map(|c| c.spec.clone()) else {
                        continue;
                    };
                    let assigned = self.assigned_for(&spec);
                    if let Some(state) = self.checks.get_mut(c) {
                        state.assigned = assigned;
                        state.last_heard.resize(slot + 1, 0);
                    }
                }
                slot
            }
        };
        self.locations[slot].connected = true;
        for c in 0..self.checks.len() {
            if let Some(state) = self.checks.get_mut(c) {
                // A newly connected location is waited for until it proves stale.
                let current = now.cycle(state.interval());
                state.last_heard[slot] = state.last_heard[slot].max(current);
            }
            self.refresh_expected(c);
        }
        Ok(())
    }

    pub(super) fn location_disconnected(&mut self, id: &LocationId) -> Result<(), EngineError> {
        let slot = *self
            .location_slots
            .get(id)
            .ok_or_else(|| EngineError::UnknownLocation(id.clone()))?;
        self.locations[slot].connected = false;
        for c in 0..self.checks.len() {
            self.refresh_expected(c);
        }
        Ok(())
    }

    pub(super) fn manual_health(
        &mut self,
        now: Timestamp,
        id: MemberId,
        health: Option<Health>,
        out: &mut Vec<Output>,
    ) -> Result<(), EngineError> {
        let slot = *self
            .member_slots
            .get(&id)
            .ok_or(EngineError::UnknownMember(id))?;
        let checked = self
            .members
            .get(slot)
            .is_some_and(|m| m.checked(&self.checks));
        let Some(m) = self.members.get_mut(slot) else {
            return Err(EngineError::UnknownMember(id));
        };
        if matches!(m.kind, MemberKind::Ephemeral(_)) {
            return Err(EngineError::ManualHealthRefused {
                member: id,
                why: "an ephemeral member's health is kept by its heartbeats",
            });
        }
        if checked {
            return Err(EngineError::ManualHealthRefused {
                member: id,
                why: "its pool has an active health check, which owns its health (use a check of protocol none)",
            });
        }
        let from = m.effective_health(false);
        m.manual = health;
        let to = m.effective_health(false);
        if from != to {
            m.since = now;
            out.push(Output::Transition(Transition::without_evidence(
                id,
                now,
                from,
                to,
                Reason::Manual,
            )));
        }
        self.publish(slot, now, out);
        Ok(())
    }

    pub(super) fn heartbeat(
        &mut self,
        now: Timestamp,
        id: MemberId,
        out: &mut Vec<Output>,
    ) -> Result<(), EngineError> {
        let slot = *self
            .member_slots
            .get(&id)
            .ok_or(EngineError::UnknownMember(id))?;
        let held = self.held(slot);
        let Some(m) = self.members.get_mut(slot) else {
            return Err(EngineError::UnknownMember(id));
        };
        if !matches!(m.kind, MemberKind::Ephemeral(_)) {
            return Err(EngineError::NotEphemeral(id));
        }
        m.last_heartbeat = now;
        // Held: the heartbeat is recorded; the revival waits for the resume.
        if !held {
            out.extend(m.revive(now));
        }
        self.publish(slot, now, out);
        Ok(())
    }
}
