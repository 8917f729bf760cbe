//! `/status/pools` (seed 003's `/status/models` for pools): what the table
//! being served holds for each pool, so an operator can see why this edge
//! answers differently from the aggregator. Computed on request from the
//! table's own snapshot, off the DNS workers.

use gslb_shared::selection::{PoolRef, PoolState, pool_state};
use gslb_shared::{FailMode, Health, Member, MemberFacts, PoolId, Snapshot};
use serde::Serialize;

/// The pools of one served snapshot.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolsView {
    /// The snapshot version being served.
    pub version: u64,
    /// When the aggregator published it (ms since the Unix epoch).
    pub published_at_ms: u64,
    /// Every pool, in id order.
    pub pools: Vec<PoolView>,
}

/// One pool as the edge's table holds it.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolView {
    /// Pool id.
    pub id: PoolId,
    /// Pool name.
    pub name: String,
    /// Members in all.
    pub members: usize,
    /// Up, enabled and not warming: answerable.
    pub healthy: usize,
    /// Held back by the warm-up gate.
    pub warming: usize,
    /// Down or unknown.
    pub unhealthy: usize,
    /// Disabled by an operator.
    pub disabled: usize,
    /// Eligible, protected (threshold presents all), fail-open.
    #[serde(flatten)]
    pub state: PoolState,
    /// What happens when no pool of a record is eligible.
    pub fail_mode: FailMode,
}

/// Every pool of `snapshot`: one pass over its members.
pub fn view(snapshot: &Snapshot) -> PoolsView {
    let mut by_pool: rustc_hash::FxHashMap<PoolId, Vec<Member>> = Default::default();
    for m in snapshot.catalog.members.values() {
        by_pool.entry(m.pool).or_default().push(m.clone());
    }
    let pools = snapshot
        .catalog
        .pools
        .values()
        .map(|pool| {
            let members = by_pool.remove(&pool.id).unwrap_or_default();
            let facts: Vec<MemberFacts> = members
                .iter()
                .map(|m| snapshot.facts.get(&m.id).copied().unwrap_or_default())
                .collect();
            let count = |f: &dyn Fn(&Member, &MemberFacts) -> bool| {
                members.iter().zip(&facts).filter(|(m, x)| f(m, x)).count()
            };
            PoolView {
                id: pool.id,
                name: pool.name.clone(),
                members: members.len(),
                healthy: count(&|m, f| m.enabled && f.health == Health::Up && !f.warming),
                warming: count(&|m, f| m.enabled && f.health == Health::Up && f.warming),
                unhealthy: count(&|m, f| m.enabled && f.health != Health::Up),
                disabled: count(&|m, _| !m.enabled),
                state: pool_state(PoolRef {
                    pool,
                    members: &members,
                    facts: &facts,
                    resolved: Some(&snapshot.resolved),
                }),
                fail_mode: pool.fail_mode,
            }
        })
        .collect();
    PoolsView {
        version: snapshot.version,
        published_at_ms: snapshot.published_at_ms,
        pools,
    }
}
