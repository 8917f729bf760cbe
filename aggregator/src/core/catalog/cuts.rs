//! Delegation rules on each write (see `gslb_shared::validate::cuts`):
//! a record set against the cuts above it, a new cut against the record
//! sets it would occlude, and a cut's DS set against the cut's removal.
//! Every lookup goes through the name index.

use gslb_shared::validate;
use gslb_shared::{DnsName, RecordSet, RecordSetId, RecordType, Zone};

use super::{CatalogError, CatalogState, invalid};

impl CatalogState {
    /// True when `zone` has an NS set at `name` (below its apex), other
    /// than record set `except`.
    fn is_cut(&self, zone: &Zone, name: &DnsName, except: RecordSetId) -> bool {
        name != &zone.apex
            && self.indexes().records_at(name).any(|id| {
                id != except
                    && self
                        .catalog
                        .records
                        .get(&id)
                        .is_some_and(|x| x.zone == zone.id && x.rtype == RecordType::Ns)
            })
    }

    /// Refuse `r` (about to be written into `zone`) when a cut hides it,
    /// or when it makes a cut that would hide record sets already there.
    pub(super) fn check_cuts(&self, r: &RecordSet, zone: &Zone) -> Result<(), CatalogError> {
        let new_cut = r.rtype == RecordType::Ns && r.name != zone.apex;
        let is_cut = |n: &DnsName| (new_cut && n == &r.name) || self.is_cut(zone, n, r.id);
        let cut = validate::highest_cut(&r.name, &zone.apex, is_cut);
        validate::placement(r, zone, cut.as_ref()).map_err(|e| invalid(&e.field, e.rule))?;
        if let Some(old) = self.catalog.records.get(&r.id)
            && (old.name != r.name || old.rtype != r.rtype)
            && let Some(ds) = self.orphan_of(old)
        {
            return Err(invalid(
                "name",
                format!(
                    "record set {} ({} DS) needs the delegation this NS set makes: delete it first",
                    ds.id, ds.name
                ),
            ));
        }
        if !new_cut {
            return Ok(());
        }
        let index = self.indexes();
        let hidden = index
            .records_at(&r.name)
            .chain(index.records_below(&r.name))
            .filter(|&id| id != r.id)
            .filter_map(|id| self.catalog.records.get(&id))
            .filter(|x| x.zone == zone.id);
        for x in hidden {
            let cut = validate::highest_cut(&x.name, &zone.apex, is_cut);
            if let Err(e) = validate::placement(x, zone, cut.as_ref()) {
                return Err(invalid(
                    "name",
                    format!(
                        "an NS set makes {} a delegation point, and record set {} ({} {}) {}",
                        r.name, x.id, x.name, x.rtype, e.rule
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The DS set that needs the cut `r` makes, if `r` is a cut's NS set
    /// and one is there.
    pub(super) fn orphan_of(&self, r: &RecordSet) -> Option<&RecordSet> {
        if r.rtype != RecordType::Ns {
            return None;
        }
        self.indexes()
            .records_at(&r.name)
            .filter_map(|id| self.catalog.records.get(&id))
            .find(|x| x.zone == r.zone && x.rtype == RecordType::Ds)
    }
}
