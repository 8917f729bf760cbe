//! What selection reads: pools with their members, and each member's facts.

use std::collections::HashMap;

use crate::model::{Catalog, Member, MemberFacts, MemberId, Pool, PoolId};

/// A pool together with its members.
#[derive(Debug, Clone, Copy)]
pub struct PoolRef<'a> {
    /// The pool.
    pub pool: &'a Pool,
    /// Its members.
    pub members: &'a [Member],
}

/// Read access to pools and health facts; the edge implements it over its
/// compiled tables, the aggregator over its catalog.
pub trait SelectionInput {
    /// A pool and its members.
    fn pool(&self, id: PoolId) -> Option<PoolRef<'_>>;
    /// A member's facts; unknown members are `Unknown` and not warming.
    fn facts(&self, member: MemberId) -> MemberFacts;
}

/// A [`SelectionInput`] built from a catalog and a facts map.
#[derive(Debug, Clone, Default)]
pub struct CatalogIndex {
    pools: HashMap<PoolId, (Pool, Vec<Member>)>,
    facts: HashMap<MemberId, MemberFacts>,
}

impl CatalogIndex {
    /// Index a catalog's pools and members with the given facts.
    pub fn new(catalog: &Catalog, facts: &HashMap<MemberId, MemberFacts>) -> Self {
        let mut pools: HashMap<PoolId, (Pool, Vec<Member>)> = catalog
            .pools
            .values()
            .map(|p| (p.id, (p.clone(), Vec::new())))
            .collect();
        for member in catalog.members.values() {
            if let Some((_, members)) = pools.get_mut(&member.pool) {
                members.push(member.clone());
            }
        }
        Self {
            pools,
            facts: facts.clone(),
        }
    }

    /// Replace one member's facts.
    pub fn set_facts(&mut self, member: MemberId, facts: MemberFacts) {
        self.facts.insert(member, facts);
    }
}

impl SelectionInput for CatalogIndex {
    fn pool(&self, id: PoolId) -> Option<PoolRef<'_>> {
        self.pools
            .get(&id)
            .map(|(pool, members)| PoolRef { pool, members })
    }

    fn facts(&self, member: MemberId) -> MemberFacts {
        self.facts.get(&member).copied().unwrap_or_default()
    }
}
