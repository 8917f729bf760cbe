//! What selection reads: pools with their members and, index for index,
//! their health facts (so a query never looks a member up by id).

use std::collections::HashMap;

use rustc_hash::FxHashMap;

use crate::model::{Catalog, Map, Member, MemberFacts, MemberId, Pool, PoolId, Resolved, Rtts};

/// A pool together with its members and their facts.
#[derive(Debug, Clone, Copy)]
pub struct PoolRef<'a> {
    /// The pool.
    pub pool: &'a Pool,
    /// Its members.
    pub members: &'a [Member],
    /// `facts[i]` belongs to `members[i]`.
    pub facts: &'a [MemberFacts],
    /// What hostname members resolved to (flattened records), if known.
    pub resolved: Option<&'a Map<MemberId, Resolved>>,
}

/// Read access to pools; the edge implements it over its compiled tables,
/// the aggregator over its catalog.
pub trait SelectionInput {
    /// A pool, its members and their facts.
    fn pool(&self, id: PoolId) -> Option<PoolRef<'_>>;

    /// Round-trip times per member, for latency steering (none known by
    /// default).
    fn rtts(&self) -> &Map<MemberId, Rtts> {
        static NONE: std::sync::LazyLock<Map<MemberId, Rtts>> = std::sync::LazyLock::new(Map::new);
        &NONE
    }
}

#[derive(Debug, Clone)]
struct IndexedPool {
    pool: Pool,
    members: Vec<Member>,
    facts: Vec<MemberFacts>,
}

/// A [`SelectionInput`] built from a catalog and a facts map. Members
/// without facts are `unknown` and not warming.
#[derive(Debug, Clone, Default)]
pub struct CatalogIndex {
    pools: FxHashMap<PoolId, IndexedPool>,
    resolved: Map<MemberId, Resolved>,
    rtt: Map<MemberId, Rtts>,
}

impl CatalogIndex {
    /// Index a catalog's pools and members with the given facts.
    pub fn new(catalog: &Catalog, facts: &HashMap<MemberId, MemberFacts>) -> Self {
        // Exact capacities: with many small pools, growth slack would be
        // most of the index.
        let mut sizes: FxHashMap<PoolId, usize> = FxHashMap::default();
        for member in catalog.members.values() {
            *sizes.entry(member.pool).or_default() += 1;
        }
        let mut pools: FxHashMap<PoolId, IndexedPool> = catalog
            .pools
            .values()
            .map(|p| {
                let n = sizes.get(&p.id).copied().unwrap_or(0);
                (
                    p.id,
                    IndexedPool {
                        pool: p.clone(),
                        members: Vec::with_capacity(n),
                        facts: Vec::with_capacity(n),
                    },
                )
            })
            .collect();
        for member in catalog.members.values() {
            if let Some(entry) = pools.get_mut(&member.pool) {
                entry.members.push(member.clone());
                entry
                    .facts
                    .push(facts.get(&member.id).copied().unwrap_or_default());
            }
        }
        Self {
            pools,
            resolved: Map::new(),
            rtt: Map::new(),
        }
    }

    /// The same, with what hostname members resolved to (a snapshot's).
    pub fn with_resolved(mut self, resolved: Map<MemberId, Resolved>) -> Self {
        self.resolved = resolved;
        self
    }

    /// The same, with round-trip times per member (a snapshot's).
    pub fn with_rtt(mut self, rtt: Map<MemberId, Rtts>) -> Self {
        self.rtt = rtt;
        self
    }

    /// What a hostname member resolved to, if known.
    pub fn resolved(&self, member: MemberId) -> Option<&Resolved> {
        self.resolved.get(&member)
    }

    /// Replace one member's facts (no-op for an unknown member).
    pub fn set_facts(&mut self, member: MemberId, facts: MemberFacts) {
        for entry in self.pools.values_mut() {
            if let Some(i) = entry.members.iter().position(|m| m.id == member) {
                entry.facts[i] = facts;
                return;
            }
        }
    }
}

impl SelectionInput for CatalogIndex {
    fn pool(&self, id: PoolId) -> Option<PoolRef<'_>> {
        self.pools.get(&id).map(|e| PoolRef {
            pool: &e.pool,
            members: &e.members,
            facts: &e.facts,
            resolved: Some(&self.resolved),
        })
    }

    fn rtts(&self) -> &Map<MemberId, Rtts> {
        &self.rtt
    }
}
