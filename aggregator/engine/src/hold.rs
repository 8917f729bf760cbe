//! Operator holds (docs/semantics.md, "Pausing decisions"): while a
//! member's pool is held, results are still taken in (scores, warm-up
//! passes, per-location evidence move as ever) but the engine changes none
//! of its health: no hysteresis flip, no warm-up gate opening, no heartbeat
//! timeout, revival or expiry, no damping release. Operators' own writes
//! (manual health, configuration) still apply. On resume the engine
//! decides at once from the evidence it holds, as the startup gate does.

use gslb_shared::{MemberKind, PoolId};
use rustc_hash::FxHashSet;

use super::output::Output;
use super::{Engine, Timestamp};

/// The pools whose decisions are held.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Hold {
    all: bool,
    pools: FxHashSet<PoolId>,
}

impl Hold {
    /// True when `pool`'s members are held.
    pub fn covers(&self, pool: PoolId) -> bool {
        self.all || self.pools.contains(&pool)
    }
}

impl Engine {
    /// True when the engine may change this member's health now: the
    /// startup gate is open for it and no hold covers its pool.
    pub(super) fn decides_for(&self, slot: usize) -> bool {
        self.gate_open_for(slot)
            && self
                .members
                .get(slot)
                .is_some_and(|m| !self.hold.covers(m.pool))
    }

    /// True when an operator holds this member's pool.
    pub(super) fn held(&self, slot: usize) -> bool {
        self.members
            .get(slot)
            .is_some_and(|m| self.hold.covers(m.pool))
    }

    /// Replace the hold; members it releases are decided at once.
    pub(super) fn set_hold(
        &mut self,
        now: Timestamp,
        all: bool,
        pools: &[PoolId],
        out: &mut Vec<Output>,
    ) {
        let before = std::mem::replace(
            &mut self.hold,
            Hold {
                all,
                pools: pools.iter().copied().collect(),
            },
        );
        for slot in 0..self.members.len() {
            // Members the startup gate still holds are decided when it opens.
            let released = self.gate_open_for(slot)
                && self
                    .members
                    .get(slot)
                    .is_some_and(|m| before.covers(m.pool) && !self.hold.covers(m.pool));
            if released {
                self.decide_released(slot, now, out);
            }
        }
    }

    /// What the member's evidence says now that its hold is lifted: its
    /// warm-up gate, its window's hysteresis, or (ephemeral) a heartbeat
    /// heard while held. Timeouts and expiry follow on the next tick.
    fn decide_released(&mut self, slot: usize, now: Timestamp, out: &mut Vec<Output>) {
        let Some(m) = self.members.get_mut(slot) else {
            return;
        };
        if let MemberKind::Ephemeral(policy) = m.kind {
            if now.since(m.last_heartbeat) < policy.heartbeat_timeout {
                out.extend(m.revive(now));
            }
        } else {
            out.extend(m.open_gate_if_due(now));
            if let Some(p) = m.last_pass_fraction {
                self.apply_score(slot, None, p, now, out);
            }
        }
        self.publish(slot, now, out);
    }
}
