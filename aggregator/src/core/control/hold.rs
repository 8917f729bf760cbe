//! The operator's brake on health decisions: pause and resume, for every
//! pool or one pool, made durable (and replicated) as its own version. The
//! engine holds the members of a held pool (see `engine::hold`).

use gslb_shared::PoolId;

use super::{Control, ControlError};
use crate::core::audit::AuditRecord;
use crate::core::catalog::{CatalogError, Change, DecisionHold, ObjectRef, Written};
use crate::core::feed::delta_of;
use crate::core::store::Commit;
use gslb_engine::{Input, Timestamp};

impl Control {
    /// Pause (`paused`) or resume health decisions for every pool (`pool`
    /// none) or one pool. Setting what is already set changes nothing (no
    /// new version). On resume the engine decides at once from the
    /// evidence taken in meanwhile. Returns the hold in force.
    pub fn set_decisions(
        &mut self,
        pool: Option<PoolId>,
        paused: bool,
        now: Timestamp,
    ) -> Result<DecisionHold, ControlError> {
        self.decides()?;
        self.flush_deferred()?;
        if let Some(p) = pool
            && !self.state.catalog.pools.contains_key(&p)
        {
            return Err(CatalogError::NotFound(ObjectRef::Pool(p)).into());
        }
        match pool {
            Some(p) => self.within(ObjectRef::Pool(p))?,
            None => self.unscoped("the decisions of every pool")?,
        }
        let mut hold = self.state.hold.clone();
        hold.set(pool, paused, now.0);
        if hold == self.state.hold {
            return Ok(hold);
        }
        let scope = pool.map_or_else(|| "every pool".to_owned(), |p| format!("pool {p}"));
        let what = if paused { "paused" } else { "resumed" };
        let record = AuditRecord::action(
            self.attribution(),
            now.0,
            format!("health decisions {what} for {scope}"),
            Some(self.state.version + 1),
        );
        let stored = self.store.commit(&Commit {
            version: self.state.version + 1,
            last_id: self.state.last_id,
            hold: Some(hold.clone()),
            audit: vec![record],
            ..Commit::default()
        })?;
        self.state.version = stored;
        self.state.hold = hold.clone();
        let mut delta = delta_of(&[], &[], now.0);
        delta.epoch = self.state.epoch;
        self.feed.publish(delta, stored);
        if paused {
            tracing::warn!(
                version = stored,
                "health decisions paused by an operator for {scope}: health is held as it is until resumed"
            );
        } else {
            tracing::warn!(
                version = stored,
                still_held = %describe(&hold),
                "health decisions resumed by an operator for {scope}"
            );
        }
        self.sync_hold(now)?;
        self.publish(&[], now)?;
        Ok(hold)
    }

    /// The decision hold in force.
    pub fn hold(&self) -> &DecisionHold {
        &self.state.hold
    }

    /// Tell the engine which pools are held (a leader's engine only: a
    /// follower's decides nothing, and a promoted one is rebuilt from the
    /// store, hold included).
    pub(super) fn sync_hold(&mut self, now: Timestamp) -> Result<(), ControlError> {
        let pools = self.state.hold.pool_ids();
        let input = Input::Hold {
            all: self.state.hold.all_since_ms.is_some(),
            pools: &pools,
        };
        self.engine.step(now, input, &mut self.outputs)?;
        Ok(())
    }

    /// Log, at start, a hold that is in force (it outlives restarts).
    pub(super) fn announce_hold(&self) {
        if self.state.hold != DecisionHold::default() {
            tracing::warn!(
                held = %describe(&self.state.hold),
                "health decisions are paused by an operator (gslbctl decisions resume lifts it)"
            );
        }
    }
}

/// The hold after `changes`, when they delete a pool it holds (its hold
/// goes with it): stored in the same commit.
pub(super) fn hold_after(hold: &DecisionHold, changes: &[Change]) -> Option<DecisionHold> {
    let mut after = hold.clone();
    for change in changes {
        if let Written::Deleted(ObjectRef::Pool(p)) = change.what {
            after.pools.remove(&p);
        }
    }
    (after != *hold).then_some(after)
}

/// A hold for a log line: `every pool`, `pools 3, 7` or `none`.
fn describe(hold: &DecisionHold) -> String {
    if hold.all_since_ms.is_some() {
        return "every pool".into();
    }
    if hold.pools.is_empty() {
        return "none".into();
    }
    let ids: Vec<String> = hold.pools.keys().map(ToString::to_string).collect();
    format!("pools {}", ids.join(", "))
}
