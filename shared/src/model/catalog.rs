//! The catalog: every configured object, keyed by id. It is what an operator
//! writes and what a snapshot carries besides the health facts.

use serde::{Deserialize, Serialize};

use super::{
    Check, CheckId, Member, MemberId, Notifier, NotifierId, Pool, PoolId, RecordSet, RecordSetId,
    TsigKey, TsigKeyId, Zone, ZoneId,
};

/// The map the catalog keeps its objects in: persistent (a clone shares
/// every node, a change copies only its path), so a snapshot of the
/// catalog costs nothing and a reader holds it without blocking writers.
pub type Map<K, V> = imbl::OrdMap<K, V>;

/// All configured zones, records, pools, members, checks, TSIG keys and
/// notification targets.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Catalog {
    /// Zones by id.
    #[serde(default)]
    pub zones: Map<ZoneId, Zone>,
    /// Record sets by id.
    #[serde(default)]
    pub records: Map<RecordSetId, RecordSet>,
    /// Pools by id.
    #[serde(default)]
    pub pools: Map<PoolId, Pool>,
    /// Members by id.
    #[serde(default)]
    pub members: Map<MemberId, Member>,
    /// Checks by id.
    #[serde(default)]
    pub checks: Map<CheckId, Check>,
    /// TSIG keys by id.
    #[serde(default)]
    pub tsig_keys: Map<TsigKeyId, TsigKey>,
    /// Notification targets by id (never sent to edges).
    #[serde(default)]
    pub notifiers: Map<NotifierId, Notifier>,
}

impl Catalog {
    /// Members of a pool, in id order.
    pub fn pool_members(&self, pool: PoolId) -> impl Iterator<Item = &Member> {
        self.members.values().filter(move |m| m.pool == pool)
    }

    /// The TSIG key named `name`.
    pub fn tsig_key(&self, name: &super::DnsName) -> Option<&TsigKey> {
        self.tsig_keys.values().find(|k| &k.name == name)
    }

    /// The check that governs a member, if its pool has one.
    pub fn member_check(&self, member: &Member) -> Option<&Check> {
        let check = self.pools.get(&member.pool)?.check?;
        self.checks.get(&check)
    }
}
