//! Each pool's notification flags kept current member by member: a batch of
//! decisions costs the members it changed, not the size of their pools
//! (reading a 100,000-member pool twice per batch held every decision
//! behind it for tens of milliseconds).
//!
//! A tally is trusted only while nothing else moved what it counted: the
//! catalog generation and the resolutions it was counted under, and the
//! published facts it matches. Anything else (a write, a resolution, a
//! role change, a snapshot from the leader) makes the next batch count the
//! pool afresh, which is what every batch cost before.

use std::collections::HashMap;

use gslb_shared::selection::PoolTally;
use gslb_shared::{Map, Member, MemberFacts, MemberId, Pool, PoolId, Resolved, Snapshot};

use crate::core::catalog::CatalogState;
use crate::core::notify::detect::PoolFlags;

/// A pool's tally and what it was counted under.
#[derive(Debug)]
struct Kept {
    generation: u64,
    resolved: Map<MemberId, Resolved>,
    /// The published facts it matches.
    facts: Map<MemberId, MemberFacts>,
    tally: PoolTally,
}

/// Tallies of the pools decisions have touched.
#[derive(Debug, Default)]
pub(super) struct PoolWatch {
    kept: HashMap<PoolId, Kept>,
}

impl PoolWatch {
    /// Flags of `pool` under the published snapshot `held`, and with
    /// `changed` (its members' new facts) over it.
    pub fn step(
        &mut self,
        state: &CatalogState,
        generation: u64,
        pool: &Pool,
        held: &Snapshot,
        changed: &[(&Member, MemberFacts)],
    ) -> (PoolFlags, PoolFlags) {
        let fresh = |k: &Kept| {
            k.generation == generation
                && k.resolved.ptr_eq(&held.resolved)
                && k.facts.ptr_eq(&held.facts)
        };
        let kept = match self.kept.get_mut(&pool.id) {
            Some(k) if fresh(k) => k,
            _ => {
                let mut tally = PoolTally::default();
                for member in state.pool_members(pool.id) {
                    let facts = held.facts.get(&member.id).copied().unwrap_or_default();
                    tally.add(member, &facts, held.resolved.get(&member.id));
                }
                let kept = Kept {
                    generation,
                    resolved: held.resolved.clone(),
                    facts: held.facts.clone(),
                    tally,
                };
                self.kept.entry(pool.id).insert_entry(kept).into_mut()
            }
        };
        let before = PoolFlags::of(pool, kept.tally.state(pool));
        for (member, facts) in changed {
            let resolved = held.resolved.get(&member.id);
            let old = held.facts.get(&member.id).copied().unwrap_or_default();
            kept.tally.remove(member, &old, resolved);
            kept.tally.add(member, facts, resolved);
        }
        (before, PoolFlags::of(pool, kept.tally.state(pool)))
    }

    /// The feed moved from the facts `before` to `after`, and every change
    /// between them went through [`PoolWatch::step`]: tallies that matched
    /// `before` match `after` (those stepped counted the change; the others
    /// had no member in it).
    pub fn published(
        &mut self,
        before: &Map<MemberId, MemberFacts>,
        after: &Map<MemberId, MemberFacts>,
    ) {
        for kept in self.kept.values_mut() {
            if kept.facts.ptr_eq(before) {
                kept.facts = after.clone();
            }
        }
    }

    /// Pools tallied.
    pub fn len(&self) -> usize {
        self.kept.len()
    }

    /// Forget the pools gone from the catalog.
    pub fn retain(&mut self, exists: impl Fn(PoolId) -> bool) {
        self.kept.retain(|id, _| exists(*id));
    }
}
