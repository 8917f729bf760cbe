//! Hostname member rules on each write (see
//! `gslb_shared::validate::hostnames`): a member fits every record its pool
//! backs (hostnames behind CNAME pools and flattened records, addresses
//! behind the others), and no write closes a loop through our own names.
//! Records are found through the pool-users index, names through the name
//! index, so a write costs its pool and the chain it starts, not a scan.

use gslb_shared::validate::hostnames::{
    loop_from, loop_rule, member_fits, next_names, wildcard_for,
};
use gslb_shared::{DnsName, Member, PoolId, RecordData, RecordSet, RecordType};

use super::{CatalogError, CatalogState, Object, invalid};

/// A record set whose answer leads to other names (a static CNAME, a CNAME
/// pool or a flattened record).
fn leads_on(r: &RecordSet) -> bool {
    match &r.data {
        RecordData::Static(_) => r.rtype == RecordType::Cname,
        RecordData::Dynamic(d) => r.rtype == RecordType::Cname || d.flatten,
    }
}

impl CatalogState {
    /// Refuse a record or member write that breaks a hostname rule.
    pub(super) fn check_hostnames(&self, object: &Object) -> Result<(), CatalogError> {
        match object {
            Object::Record(r) => {
                if let RecordData::Dynamic(d) = &r.data {
                    for m in d.all_pools().flat_map(|p| self.pool_members(*p)) {
                        if let Some(rule) = member_fits(r.rtype, d.flatten, m) {
                            return Err(invalid("data.dynamic.pools", rule));
                        }
                    }
                }
                if leads_on(r) {
                    self.no_loop(&r.name, object, "data")?;
                }
                Ok(())
            }
            Object::Member(m) => {
                for r in self.records_using(m.pool) {
                    if let RecordData::Dynamic(d) = &r.data
                        && let Some(rule) = member_fits(r.rtype, d.flatten, m)
                    {
                        return Err(invalid(
                            "address",
                            format!(
                                "{rule}; pool {} backs record set {} ({} {})",
                                m.pool, r.id, r.name, r.rtype
                            ),
                        ));
                    }
                    if m.address.host().is_some() && leads_on(r) {
                        self.no_loop(&r.name, object, "address")?;
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// The dynamic record sets that name `pool` (any branch).
    fn records_using(&self, pool: PoolId) -> impl Iterator<Item = &RecordSet> + '_ {
        self.indexes()
            .pool_users(pool)
            .filter_map(|id| self.catalog.records.get(&id))
    }

    /// Refuse `written` when, with it in place, the names from `start`
    /// lead back to `start`.
    fn no_loop(&self, start: &DnsName, written: &Object, field: &str) -> Result<(), CatalogError> {
        let members = |p: PoolId| -> Vec<Member> {
            let mut out: Vec<Member> = self
                .pool_members(p)
                .filter(|m| !matches!(written, Object::Member(w) if w.id == m.id))
                .cloned()
                .collect();
            if let Object::Member(w) = written
                && w.pool == p
            {
                out.push(w.clone());
            }
            out
        };
        let next = |name: &DnsName| -> Vec<DnsName> {
            let mut sets: Vec<RecordSet> = self
                .indexes()
                .records_at(name)
                .filter(|id| !matches!(written, Object::Record(w) if w.id == *id))
                .filter_map(|id| self.catalog.records.get(&id).cloned())
                .collect();
            if let Object::Record(w) = written
                && &w.name == name
            {
                sets.push(w.clone());
            }
            if sets.is_empty() {
                let exists = |n: &DnsName| {
                    matches!(written, Object::Record(w) if &w.name == n)
                        || self
                            .indexes()
                            .records_at(n)
                            .any(|id| !matches!(written, Object::Record(w) if w.id == id))
                };
                return wildcard_for(name, exists).into_iter().collect();
            }
            sets.iter()
                .flat_map(|s| {
                    let pools: Vec<(PoolId, Vec<Member>)> = match &s.data {
                        RecordData::Dynamic(d) => {
                            d.all_pools().map(|p| (*p, members(*p))).collect()
                        }
                        RecordData::Static(_) => Vec::new(),
                    };
                    next_names(s, |p| {
                        pools
                            .iter()
                            .filter(move |(id, _)| *id == p)
                            .flat_map(|(_, ms)| ms.iter())
                    })
                })
                .collect()
        };
        match loop_from(start, next) {
            Some(path) => Err(invalid(field, loop_rule(&path))),
            None => Ok(()),
        }
    }
}
