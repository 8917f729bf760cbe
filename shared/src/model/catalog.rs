//! The catalog: every configured object, keyed by id. It is what an operator
//! writes and what a snapshot carries besides the health facts.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::{Check, CheckId, Member, MemberId, Pool, PoolId, RecordSet, RecordSetId, Zone, ZoneId};

/// All configured zones, records, pools, members and checks.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Catalog {
    /// Zones by id.
    #[serde(default)]
    pub zones: BTreeMap<ZoneId, Zone>,
    /// Record sets by id.
    #[serde(default)]
    pub records: BTreeMap<RecordSetId, RecordSet>,
    /// Pools by id.
    #[serde(default)]
    pub pools: BTreeMap<PoolId, Pool>,
    /// Members by id.
    #[serde(default)]
    pub members: BTreeMap<MemberId, Member>,
    /// Checks by id.
    #[serde(default)]
    pub checks: BTreeMap<CheckId, Check>,
}

impl Catalog {
    /// Members of a pool, in id order.
    pub fn pool_members(&self, pool: PoolId) -> impl Iterator<Item = &Member> {
        self.members.values().filter(move |m| m.pool == pool)
    }

    /// The check that governs a member, if its pool has one.
    pub fn member_check(&self, member: &Member) -> Option<&Check> {
        let check = self.pools.get(&member.pool)?.check?;
        self.checks.get(&check)
    }
}
