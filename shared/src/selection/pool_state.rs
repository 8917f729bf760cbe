//! A pool's state as selection sees it, for status views (the aggregator's
//! pool status, the edge's `/status/pools`): one evaluation per address
//! family the pool has members of.

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
}

/// Evaluate `pool` for each family it has members of. Costs its size.
pub fn pool_state(pool: PoolRef<'_>) -> PoolState {
    let (mut eligible, mut protected) = (false, false);
    for family in [Family::V4, Family::V6] {
        if !pool.members.iter().any(|m| family.matches(&m.address)) {
            continue;
        }
        if let PoolVerdict::Eligible { protected: p } =
            evaluate_pool(pool, family, &mut Vec::new(), &mut Vec::new(), None)
        {
            eligible = true;
            protected |= p;
        }
    }
    PoolState {
        eligible,
        protected,
        fail_open: !eligible,
    }
}
