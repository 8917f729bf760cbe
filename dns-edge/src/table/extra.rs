//! Zone cuts and the additional section, resolved when a snapshot is
//! compiled: which record sets are delegations, which are occluded (kept
//! only as glue), and the in-zone addresses that NS, MX, SRV, SVCB and
//! HTTPS answers
//! and referrals carry in their additional section.

use std::collections::HashSet;

use super::*;
use gslb_shared::RecordSet;

/// Where a record set goes in the table.
pub(super) enum Place {
    /// Answered as data.
    Data,
    /// The NS set of a zone cut.
    Cut,
    /// At or below a cut (or a served child zone's apex): not answered;
    /// its addresses are glue.
    Occluded,
}

/// What additional addresses are computed for.
pub(super) enum Slot {
    /// The referral of the cut at this entry.
    Cut(u32),
    /// The set of this type at this entry.
    Set(u32, RecordType),
}

/// The names a static record set points to whose addresses go in the
/// additional section (RFC 1035 3.3.9, 3.3.11; RFC 2782; RFC 9460 4.1),
/// or `None` for types that carry none.
pub(super) fn targets(record: &RecordSet) -> Option<Vec<DnsName>> {
    let RecordData::Static(rdata) = &record.data else {
        return None;
    };
    let mut names = Vec::new();
    for r in rdata {
        let name = match r {
            Rdata::Ns(n) => n,
            Rdata::Mx { exchange, .. } => exchange,
            Rdata::Srv { target, .. } => target,
            // The root target (the owner itself) adds nothing, as in Knot.
            Rdata::Svcb(b) | Rdata::Https(b) => match &b.target {
                Some(target) => target,
                None => continue,
            },
            _ => return None,
        };
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    Some(names)
}

impl Builder<'_> {
    /// Every zone's cuts: its NS sets below the apex, but at the apex of a
    /// zone served here (that zone answers for itself).
    pub(super) fn find_cuts(&mut self) {
        let snapshot = self.snapshot;
        self.apexes = snapshot
            .catalog
            .zones
            .values()
            .map(|z| z.apex.clone())
            .collect();
        for r in snapshot.catalog.records.values() {
            if let Some(zone) = snapshot.catalog.zones.get(&r.zone)
                && lookup::is_cut(r, zone, |n| self.apexes.contains(n))
            {
                self.cuts.entry(r.zone).or_default().insert(r.name.clone());
            }
        }
    }

    /// Whether `record` (inside its zone `apex`) is data, a cut, or occluded.
    pub(super) fn placement(&self, record: &RecordSet, apex: &DnsName) -> Place {
        let zones = &self.snapshot.catalog.zones;
        let cuts = self.cuts.get(&record.zone);
        if zones.len() == 1 && cuts.is_none() {
            return Place::Data;
        }
        // A more specific zone served here answers at and below its apex;
        // the parent keeps the DS set there.
        if zones.len() > 1 {
            let mut n = Some(record.name.clone());
            while let Some(name) = n {
                if &name == apex {
                    break;
                }
                if self.apexes.contains(&name) {
                    return if name == record.name && record.rtype == RecordType::Ds {
                        Place::Data
                    } else {
                        Place::Occluded
                    };
                }
                n = name.parent();
            }
        }
        let Some(cut) = cuts.and_then(|c| lookup::cut_above(c, &record.name, apex)) else {
            return Place::Data;
        };
        match record.rtype {
            RecordType::Ns if cut == &record.name => Place::Cut,
            RecordType::Ds if cut == &record.name => Place::Data,
            _ => Place::Occluded,
        }
    }

    /// Keep an occluded record's addresses as glue.
    pub(super) fn keep_glue(&mut self, record: &RecordSet) -> Result<(), CompileError> {
        let RecordData::Static(rdata) = &record.data else {
            return Ok(());
        };
        if !matches!(record.rtype, RecordType::A | RecordType::Aaaa) {
            return Ok(());
        }
        let Some(&zone) = self.zone_slot.get(&record.zone) else {
            return Ok(());
        };
        let owner = wire_name(&record.name)?;
        let glue = self
            .glue
            .entry((zone, wire_key(&record.name).into_boxed_slice()))
            .or_default();
        for r in rdata {
            glue.push(Extra {
                owner: owner.clone(),
                ttl: ttl(record.ttl),
                data: gslb_shared::wire::data(r).map_err(|e| error("record", &record.name, e))?,
            });
        }
        Ok(())
    }

    /// Fill in the additional addresses of referrals, of NS, MX and SRV
    /// sets, and of each zone's apex NS set.
    pub(super) fn extras(&mut self) -> Result<(), CompileError> {
        for (slot, targets) in std::mem::take(&mut self.wanted) {
            let (entry, rtype) = match slot {
                Slot::Cut(e) => (e, None),
                Slot::Set(e, t) => (e, Some(t)),
            };
            let zone = self.table.entries[entry as usize].zone;
            let extra = self.addresses_of(zone, &targets)?;
            let e = &mut self.entries()[entry as usize];
            match rtype {
                None => {
                    if let Some(cut) = e.cut.as_mut() {
                        // In-domain glue first, each part in NS order.
                        let (mut glue, sibling): (Vec<Extra>, Vec<Extra>) = extra
                            .into_vec()
                            .into_iter()
                            .partition(|g| g.owner.ends_with(&cut.owner));
                        cut.required = glue.len();
                        glue.extend(sibling);
                        cut.glue = glue.into_boxed_slice();
                    }
                }
                Some(t) => {
                    if let Some(set) = e.sets.iter_mut().find(|s| s.rtype == t) {
                        set.extra = extra;
                    }
                }
            }
        }
        for zone in self.snapshot.catalog.zones.values() {
            let slot = self.zone_slot[&zone.id];
            let mut names: Vec<DnsName> = Vec::with_capacity(zone.ns.len());
            for n in &zone.ns {
                if !names.contains(n) {
                    names.push(n.clone());
                }
            }
            self.table.zones[slot as usize].ns_extra = self.addresses_of(slot, &names)?;
        }
        Ok(())
    }

    /// The static addresses of `names` in zone `zone`: their own A and
    /// AAAA sets, their glue, or the wildcard that synthesises them.
    /// Pool-backed sets are left out: their answer is chosen per query.
    fn addresses_of(&self, zone: u32, names: &[DnsName]) -> Result<Box<[Extra]>, CompileError> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        for name in names {
            if !seen.insert(name) {
                continue;
            }
            let key = wire_key(name);
            let glue = self.glue.get(&(zone, key.clone().into_boxed_slice()));
            if let Some(glue) = glue {
                out.extend(glue.iter().cloned());
            }
            let own = match self.table.names.get(key.as_slice()) {
                Some(&i) => Some(i),
                None if glue.is_none() => self.wildcard_for(zone, name),
                None => None,
            };
            let Some(i) = own else { continue };
            let e = &self.table.entries[i as usize];
            if e.zone != zone || e.cut.is_some() {
                continue;
            }
            let owner = wire_name(name)?;
            for set in e.sets.iter() {
                if let (RecordType::A | RecordType::Aaaa, SetData::Static(records)) =
                    (set.rtype, &set.data)
                {
                    out.extend(records.iter().map(|data| Extra {
                        owner: owner.clone(),
                        ttl: set.ttl,
                        data: data.clone(),
                    }));
                }
            }
        }
        Ok(out.into_boxed_slice())
    }

    /// The wildcard entry that answers for a missing `name` in `zone`: the
    /// `*` child of its closest encloser, never across a cut.
    fn wildcard_for(&self, zone: u32, name: &DnsName) -> Option<u32> {
        let mut up = name.parent();
        while let Some(p) = up {
            if let Some(&i) = self.table.names.get(wire_key(&p).as_slice()) {
                let e = &self.table.entries[i as usize];
                if e.zone != zone || e.cut.is_some() {
                    return None;
                }
                return e.wildcard;
            }
            up = p.parent();
        }
        None
    }
}
