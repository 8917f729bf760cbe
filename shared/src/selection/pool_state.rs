//! A pool's state as selection sees it, for status views (the aggregator's
//! pool status, the edge's `/status/pools`): one evaluation per address
//! family (or hostnames) the pool has members of.

use serde::Serialize;

use super::{Family, PoolRef, PoolVerdict, evaluate_pool};

/// Eligible, protected, fail-open.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolState {
    /// Eligible for at least one family it has members of.
    pub eligible: bool,
    /// Its protection threshold presents every candidate (some family).
    pub protected: bool,
    /// Not eligible for any family: its fail mode decides.
    pub fail_open: bool,
    /// Some family answers from backup members (no primary is healthy).
    pub using_backups: bool,
}

/// Evaluate `pool` for each family it has members of. Costs its size.
pub fn pool_state(pool: PoolRef<'_>) -> PoolState {
    let (mut eligible, mut protected, mut using_backups) = (false, false, false);
    let (mut candidates, mut chosen) = (Vec::new(), Vec::new());
    for family in [Family::V4, Family::V6, Family::Name] {
        let resolved = |id| pool.resolved.and_then(|r| r.get(id));
        if !(pool.members.iter()).any(|m| family.admits(&m.address, resolved(&m.id))) {
            continue;
        }
        if let PoolVerdict::Eligible { protected: p } =
            evaluate_pool(pool, family, &mut candidates, &mut chosen, None)
        {
            eligible = true;
            protected |= p;
            using_backups |= !p && chosen.iter().any(|c| c.backup);
        }
    }
    PoolState {
        eligible,
        protected,
        fail_open: !eligible,
        using_backups,
    }
}
