//! Lookups over the catalog that writes check against, so each rule costs
//! a lookup, not a scan of every object: members by pool, name and
//! endpoint, record sets by name (in reversed-label order, so the names at
//! and below a delegation are one range).

use gslb_shared::validate::name_key;
use gslb_shared::{DnsName, Member, MemberId, PoolId, RecordSet, RecordSetId, RecordType};

/// Built on first use, then kept up to date by [`super::CatalogState::put`]
/// and [`super::CatalogState::remove`]; persistent maps, so a copy of the
/// state (a read view, an apply's trial) shares them. Not part of the
/// state's value: two states are equal whatever their indexes hold.
#[derive(Debug, Clone, Default)]
pub(crate) struct ObjectIndex(pub(super) std::sync::OnceLock<Indexes>);

impl PartialEq for ObjectIndex {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

/// The maps of an [`ObjectIndex`].
#[derive(Debug, Clone, Default)]
pub(super) struct Indexes {
    /// Member ids by pool, in id order (a pool's reads cost its size).
    pub by_pool: imbl::OrdSet<(PoolId, MemberId)>,
    /// Member ids by (pool, name).
    /// Members by pool and [`name_key`] of their name.
    pub by_name: imbl::OrdMap<(PoolId, String), MemberId>,
    /// Member ids by (pool, address, port).
    pub by_endpoint: imbl::OrdMap<(PoolId, gslb_shared::MemberAddress, u16), MemberId>,
    /// Record set ids by (reversed name, type).
    pub records: imbl::OrdMap<(String, RecordType), RecordSetId>,
    /// Dynamic record sets by the pools they name (any branch).
    pub pool_users: imbl::OrdSet<(PoolId, RecordSetId)>,
}

/// Every pool a record set names (none for static data).
fn pools_of(r: &RecordSet) -> Vec<PoolId> {
    match &r.data {
        gslb_shared::RecordData::Dynamic(d) => d.all_pools().copied().collect(),
        gslb_shared::RecordData::Static(_) => Vec::new(),
    }
}

/// A name's labels from the top down, joined by dots
/// (`www.example.test` -> `test.example.www`): descendants of a name
/// sort right after it, sharing its key and a dot as prefix.
pub(super) fn reversed(name: &DnsName) -> String {
    let mut labels: Vec<&str> = name.as_str().split('.').collect();
    labels.reverse();
    labels.join(".")
}

impl Indexes {
    pub fn add(&mut self, m: &Member) {
        self.by_pool.insert((m.pool, m.id));
        self.by_name.insert((m.pool, name_key(&m.name)), m.id);
        self.by_endpoint
            .insert((m.pool, m.address.clone(), m.port), m.id);
    }

    pub fn drop_member(&mut self, m: &Member) {
        self.by_pool.remove(&(m.pool, m.id));
        self.by_name.remove(&(m.pool, name_key(&m.name)));
        self.by_endpoint
            .remove(&(m.pool, m.address.clone(), m.port));
    }

    pub fn add_record(&mut self, r: &RecordSet) {
        self.records.insert((reversed(&r.name), r.rtype), r.id);
        for p in pools_of(r) {
            self.pool_users.insert((p, r.id));
        }
    }

    pub fn drop_record(&mut self, r: &RecordSet) {
        for p in pools_of(r) {
            self.pool_users.remove(&(p, r.id));
        }
        // Only when it is this set's entry: a write that replaced it keeps
        // the newer one.
        let key = (reversed(&r.name), r.rtype);
        if self.records.get(&key) == Some(&r.id) {
            self.records.remove(&key);
        }
    }

    /// Ids of the record sets owned by `name`, of any type.
    pub fn records_at(&self, name: &DnsName) -> impl Iterator<Item = RecordSetId> + '_ {
        let key = reversed(name);
        let from = (key.clone(), RecordType::A); // the first type in order
        self.records
            .range(from..)
            .take_while(move |((n, _), _)| *n == key)
            .map(|(_, id)| *id)
    }

    /// Ids of the dynamic record sets that name `pool`.
    pub fn pool_users(&self, pool: PoolId) -> impl Iterator<Item = RecordSetId> + '_ {
        let (first, last) = ((pool, RecordSetId(0)), (pool, RecordSetId(u64::MAX)));
        self.pool_users.range(first..=last).map(|(_, id)| *id)
    }

    /// Ids of the record sets strictly below `name`.
    pub fn records_below(&self, name: &DnsName) -> impl Iterator<Item = RecordSetId> + '_ {
        let prefix = format!("{}.", reversed(name));
        let from = (prefix.clone(), RecordType::A); // the first type in order
        self.records
            .range(from..)
            .take_while(move |((n, _), _)| n.starts_with(&prefix))
            .map(|(_, id)| *id)
    }
}
