//! What a scoped token may see and change: zones (by apex) with their
//! record sets, and pools (by name) with their members. Checks, TSIG keys
//! and notifiers belong to no zone or pool: a scoped token never changes
//! them, and sees a check only when a pool of its scope uses it. One
//! decision, used by the core for every write and by the API for reads.

use std::collections::BTreeSet;

use crate::core::catalog::{CatalogState, Change, Object, ObjectRef, Written};
use gslb_shared::model::{Catalog, DnsName, Pool, PoolId, Zone, ZoneId};

/// A token's zones and pools.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scope {
    /// The token's name, for refusals.
    pub token: String,
    /// Zone apexes, normalised.
    pub zones: BTreeSet<String>,
    /// Pool names.
    pub pools: BTreeSet<String>,
}

/// Why a write was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("scope: token {token:?} is limited to {scope}; {what} is outside it")]
pub struct OutOfScope {
    /// The token.
    pub token: String,
    /// Its zones and pools, as text.
    pub scope: String,
    /// The object refused, as text.
    pub what: String,
}

impl Scope {
    /// A scope of `zones` (apexes, any case, trailing dot or not) and `pools`.
    pub fn new(token: &str, zones: &[String], pools: &[String]) -> Scope {
        let zone = |z: &String| {
            DnsName::parse(z).map_or_else(|_| z.to_ascii_lowercase(), |n| n.as_str().to_owned())
        };
        Scope {
            token: token.to_owned(),
            zones: zones.iter().map(zone).collect(),
            pools: pools.iter().cloned().collect(),
        }
    }

    /// The zones and pools, as refusals name them.
    pub fn describe(&self) -> String {
        let list = |s: &BTreeSet<String>| s.iter().cloned().collect::<Vec<_>>().join(", ");
        match (self.zones.is_empty(), self.pools.is_empty()) {
            (false, true) => format!("zones [{}]", list(&self.zones)),
            (true, false) => format!("pools [{}]", list(&self.pools)),
            _ => format!(
                "zones [{}] and pools [{}]",
                list(&self.zones),
                list(&self.pools)
            ),
        }
    }

    fn zone(&self, catalog: &Catalog, id: &ZoneId) -> bool {
        (catalog.zones.get(id)).is_some_and(|z| self.zones.contains(z.apex.as_str()))
    }

    fn pool(&self, catalog: &Catalog, id: &PoolId) -> bool {
        (catalog.pools.get(id)).is_some_and(|p| self.pools.contains(&p.name))
    }

    /// Whether `object` (with its parent looked up in `catalog`) may be
    /// changed under this scope.
    pub fn writes(&self, catalog: &Catalog, object: &Object) -> bool {
        match object {
            Object::Zone(z) => self.zones.contains(z.apex.as_str()),
            Object::Record(r) => self.zone(catalog, &r.zone),
            Object::Pool(p) => self.pools.contains(&p.name),
            Object::Member(m) => self.pool(catalog, &m.pool),
            Object::Check(_) | Object::TsigKey(_) | Object::Notifier(_) => false,
        }
    }

    /// Whether the object `target` names in `catalog` may be seen: what it
    /// may change, and the checks its pools use. A missing object is not
    /// visible (a scoped caller learns nothing of what exists elsewhere).
    pub fn sees(&self, catalog: &Catalog, target: &ObjectRef) -> bool {
        match target {
            ObjectRef::Zone(id) => self.zone(catalog, id),
            ObjectRef::Record(id) => {
                (catalog.records.get(id)).is_some_and(|r| self.zone(catalog, &r.zone))
            }
            ObjectRef::Pool(id) => self.pool(catalog, id),
            ObjectRef::Member(id) => {
                (catalog.members.get(id)).is_some_and(|m| self.pool(catalog, &m.pool))
            }
            ObjectRef::Check(id) => catalog
                .pools
                .values()
                .any(|p| p.check == Some(*id) && self.pools.contains(&p.name)),
            ObjectRef::TsigKey(_) | ObjectRef::Notifier(_) => false,
        }
    }

    /// Refuse `target` unless it may be seen, naming it.
    pub fn see(&self, catalog: &Catalog, target: &ObjectRef) -> Result<(), OutOfScope> {
        if self.sees(catalog, target) {
            Ok(())
        } else {
            Err(self.refuse(target))
        }
    }

    /// The part of `catalog` this scope sees: its zones with their record
    /// sets, its pools with their members, and the checks those use. Costs
    /// a scan of the catalog and a copy of what is seen.
    pub fn restrict(&self, catalog: &Catalog) -> Catalog {
        let zones: imbl::OrdMap<ZoneId, Zone> = (catalog.zones.iter())
            .filter(|(_, z)| self.zones.contains(z.apex.as_str()))
            .map(|(id, z)| (*id, z.clone()))
            .collect();
        let pools: imbl::OrdMap<PoolId, Pool> = (catalog.pools.iter())
            .filter(|(_, p)| self.pools.contains(&p.name))
            .map(|(id, p)| (*id, p.clone()))
            .collect();
        Catalog {
            records: (catalog.records.iter())
                .filter(|(_, r)| zones.contains_key(&r.zone))
                .map(|(id, r)| (*id, r.clone()))
                .collect(),
            members: (catalog.members.iter())
                .filter(|(_, m)| pools.contains_key(&m.pool))
                .map(|(id, m)| (*id, m.clone()))
                .collect(),
            checks: (catalog.checks.iter())
                .filter(|(id, _)| pools.values().any(|p| p.check == Some(**id)))
                .map(|(id, c)| (*id, c.clone()))
                .collect(),
            zones,
            pools,
            ..Catalog::default()
        }
    }

    /// Check every change of a write: what it removes or replaces must have
    /// been in scope `before`, and what it writes must be in scope once
    /// written (its zone or pool looked up `after`, where a batch may have
    /// just made it). Moving a member between pools needs both pools.
    pub fn permits(
        &self,
        before: &CatalogState,
        after: &CatalogState,
        changes: &[Change],
    ) -> Result<(), OutOfScope> {
        for change in changes {
            let target = match &change.what {
                Written::Upserted(o) => o.reference(),
                Written::Deleted(r) => *r,
            };
            if let Some(old) = before.object(target)
                && !self.writes(&before.catalog, &old)
            {
                return Err(self.refuse(&target));
            }
            if let Written::Upserted(new) = &change.what
                && !self.writes(&after.catalog, new)
            {
                return Err(self.refuse(&target));
            }
        }
        Ok(())
    }

    /// The refusal of `target`.
    pub fn refuse(&self, target: &ObjectRef) -> OutOfScope {
        self.outside(target.to_string())
    }

    /// The refusal of `what` (described).
    pub fn outside(&self, what: String) -> OutOfScope {
        OutOfScope {
            token: self.token.clone(),
            scope: self.describe(),
            what,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn zone_names_are_normalised_and_described() {
        let s = Scope::new("t", &["Example.TEST.".into()], &["web".into()]);
        assert!(s.zones.contains("example.test"));
        assert_eq!(s.describe(), "zones [example.test] and pools [web]");
    }
}
