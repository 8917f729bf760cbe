//! A Raft follower's control core: it mirrors the replicated log (catalog
//! changes, latched health) into its catalog, engine and feed under the
//! leader's versions, so edges subscribed to it see what the leader's see,
//! and refuses everything that would decide or write on its own.

use super::{Control, ControlError, Role};
use crate::core::catalog::Written;
use crate::core::feed::delta_of;
use crate::core::store::{Commit, StoreError};
use gslb_engine::{Input, RestoredMember, Timestamp};

impl Control {
    /// Turn this core into a follower's mirror.
    pub fn into_replica(mut self) -> Self {
        self.role = Role::Follower;
        self.engine.set_follower(true);
        self
    }

    /// Turn this core into a cluster leader's decider.
    pub fn into_leader(mut self) -> Self {
        self.role = Role::Leader;
        self.engine.set_follower(false);
        self
    }

    /// Refuse when this core only mirrors the log.
    pub(super) fn decides(&self) -> Result<(), ControlError> {
        if self.role == Role::Follower {
            return Err(ControlError::Store(StoreError::NotReplicated {
                why: "this node is a follower".into(),
                leader: None,
            }));
        }
        Ok(())
    }

    /// Apply a commit the log applied at `version` (its index). Versions
    /// this core holds already (its own writes, as leader) are skipped.
    pub fn apply_replicated(
        &mut self,
        version: u64,
        commit: &Commit,
        now: Timestamp,
    ) -> Result<(), ControlError> {
        if version <= self.state.version {
            return Ok(());
        }
        for change in &commit.changes {
            match &change.what {
                Written::Upserted(object) => self.state.put(object.as_ref().clone()),
                Written::Deleted(r) => self.state.remove(*r),
            }
            self.state.note(change);
        }
        self.state.last_id = commit.last_id;
        self.state.version = version;
        if let Some(epoch) = commit.epoch {
            self.state.epoch = epoch;
        }
        if let Some(hold) = &commit.hold {
            // For reads; this core's engine decides nothing (see `sync_hold`).
            self.state.hold = hold.clone();
        }
        for change in &commit.changes {
            self.feed_engine(change, now)?;
        }
        let mut restored = Vec::with_capacity(commit.latched.len());
        for (member, latched) in &commit.latched {
            match latched {
                Some(l) => {
                    self.latched.insert(*member, *l);
                    restored.push(RestoredMember {
                        member: *member,
                        health: l.health,
                        gate_open: l.gate_open,
                        manual: l.manual,
                        ramp: l.ramp,
                    });
                }
                None => {
                    self.latched.remove(member);
                }
            }
        }
        self.engine
            .step(now, Input::Replicated(&restored), &mut self.outputs)?;
        let facts: Vec<_> = self.facts_from_outputs().into_iter().collect();
        if !commit.changes.is_empty() {
            self.catalog_generation += 1;
        }
        let mut delta = delta_of(&commit.changes, &facts, now.0);
        super::add_resolved(&mut delta, &commit.resolved);
        super::add_rtt(&mut delta, &commit.rtt);
        delta.epoch = self.state.epoch;
        self.feed.publish(delta, version);
        Ok(())
    }
}
