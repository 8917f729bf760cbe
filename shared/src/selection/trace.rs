//! The explain trace: one entry per selection step, in order.

use serde::Serialize;

use super::latency::Compared;
use super::{Answer, Exclusion, Outcome, PoolVerdict};
use crate::model::{FailMode, Health, LocationId, MemberId, Place, PoolId, Region, Steering};

/// A step of selection and what it decided.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    tag = "step"
)]
pub enum Step {
    /// The geo branch used (`None` = default branch) and its pools.
    Branch {
        /// Index into `geo`, or none for the default branch.
        geo_branch: Option<usize>,
        /// The client region looked up.
        region: Option<Region>,
        /// What the geo database said of the client, if anything.
        #[serde(skip_serializing_if = "Option::is_none")]
        place: Option<Place>,
        /// Pools of the branch in priority order.
        pools: Vec<PoolId>,
    },
    /// A pool named by the record does not exist (skipped).
    MissingPool {
        /// The missing pool.
        pool: PoolId,
    },
    /// Step 1.
    Candidates {
        /// Pool.
        pool: PoolId,
        /// Members that are candidates.
        candidates: Vec<MemberId>,
        /// Members excluded, with the reason.
        excluded: Vec<(MemberId, Exclusion)>,
        /// Candidates in slow start, with the weight steering gives them.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        ramping: Vec<Ramping>,
    },
    /// Step 2.
    Healthy {
        /// Pool.
        pool: PoolId,
        /// Healthy candidates.
        healthy: Vec<MemberId>,
        /// Other candidates and their health.
        unhealthy: Vec<(MemberId, Health)>,
    },
    /// Step 3.
    Backup {
        /// Pool.
        pool: PoolId,
        /// No primary is healthy, so healthy backups took over.
        using_backups: bool,
        /// The set chosen.
        chosen: Vec<MemberId>,
    },
    /// Step 4.
    MinHealthy {
        /// Pool.
        pool: PoolId,
        /// Size of the chosen set.
        usable: usize,
        /// The pool's minimum.
        min_healthy: u32,
    },
    /// Step 5.
    Protection {
        /// Pool.
        pool: PoolId,
        /// Healthy candidates.
        healthy: usize,
        /// All candidates.
        candidates: usize,
        /// The pool's threshold (0 = off).
        threshold: f64,
        /// Whether protection applied.
        protected: bool,
    },
    /// Step 6: the pool's verdict.
    PoolVerdict {
        /// Pool.
        pool: PoolId,
        /// Eligible or not.
        verdict: PoolVerdict,
    },
    /// Step 7: no pool was eligible.
    AllFailed {
        /// Fail mode of the branch's first pool.
        mode: FailMode,
        /// What it led to.
        outcome: Outcome,
    },
    /// Step 8, latency steering: the round-trip times compared.
    Latency {
        /// The client region.
        region: Option<Region>,
        /// Its locations (`regionLocations`); none means every location.
        locations: Option<Vec<LocationId>>,
        /// The fastest member's time (µs), if any member is measured.
        fastest_micros: Option<u32>,
        /// The slowest time answered (the band's edge).
        limit_micros: Option<u32>,
        /// Every chosen member's time and whether it is answered.
        compared: Vec<Compared>,
    },
    /// Step 8: the final answer.
    Answer {
        /// How it was decided.
        outcome: Outcome,
        /// Ordering policy.
        steering: Steering,
        /// Trim.
        first_n: u32,
        /// Addresses in answer order.
        answers: Vec<Answer>,
    },
}

/// A candidate in slow start (pool `slowStart`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Ramping {
    /// Member.
    pub member: MemberId,
    /// Percent of its weight it takes now.
    pub percent: u8,
    /// Its configured weight.
    pub weight: u32,
    /// The weight steering uses.
    pub effective_weight: u32,
}

/// The ordered steps of one selection.
pub type Trace = Vec<Step>;
