//! Pools: a set of members behind one health check.

use std::net::IpAddr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{CheckId, PoolId};

/// A pool of members.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Pool {
    /// Pool id.
    pub id: PoolId,
    /// Human name, unique among pools.
    pub name: String,
    /// The health check of its members, or none.
    pub check: Option<CheckId>,
    /// The pool answers only with at least this many usable members.
    pub min_healthy: u32,
    /// When `healthy / candidates <= protectThreshold` (and it is > 0), all
    /// candidates are answered as if healthy. 0 turns protection off.
    pub protect_threshold: f64,
    /// What to answer when no pool of a record is eligible.
    pub fail_mode: FailMode,
    /// Fixed addresses answered in `static` fail mode.
    #[serde(default)]
    #[schema(value_type = Vec<String>)]
    pub fallback: Vec<IpAddr>,
    /// A member entering rotation ramps its weight from 10% to 100% over
    /// this long (slow start); `None` gives it its full weight at once.
    #[serde(
        default,
        with = "crate::duration::optional",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(value_type = Option<String>)]
    pub slow_start: Option<Duration>,
}

/// Behaviour when every pool of a record has failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum FailMode {
    /// Answer all candidates of the first pool that has any.
    Open,
    /// Answer NODATA.
    Closed,
    /// Answer the pool's fixed fallback addresses.
    Static,
}

impl Pool {
    /// A pool with the documented defaults.
    pub fn new(id: PoolId, name: impl Into<String>) -> Self {
        Self {
            id,
            name: name.into(),
            check: None,
            min_healthy: 1,
            protect_threshold: 0.0,
            fail_mode: FailMode::Open,
            fallback: Vec::new(),
            slow_start: None,
        }
    }
}
