//! CNAME chains and wildcards, resolved when a snapshot is compiled: each
//! name that owns a CNAME gets its chain (links, then where it ends), and
//! each encloser of a wildcard learns its `*` child.

use super::*;

impl Builder<'_> {
    /// Resolve the chain of every name that owns a CNAME.
    pub(super) fn chains(&mut self) -> Result<(), CompileError> {
        let snapshot = self.snapshot;
        let mut cnames = snapshot
            .catalog
            .records
            .values()
            .filter(|r| r.rtype == RecordType::Cname)
            .peekable();
        if cnames.peek().is_none() {
            return Ok(());
        }
        // Only now: most snapshots of pool-backed names have no CNAME.
        let index = lookup::Index::new(snapshot);
        for record in cnames {
            let key = wire_key(&record.name);
            let Some(&entry) = self.table.names.get(key.as_slice()) else {
                continue;
            };
            let chain = self.chain(&index, &record.name)?;
            self.entries()[entry as usize].cname = chain.map(Box::new);
        }
        Ok(())
    }

    fn chain(
        &self,
        index: &lookup::Index<'_>,
        name: &DnsName,
    ) -> Result<Option<Chain>, CompileError> {
        // Any type but CNAME follows the chain; what the final name holds
        // is decided per query type, so only the chain itself matters here.
        let Resolution::Answer {
            cnames,
            found,
            zone,
            ..
        } = index.resolve(name, QueryType::Other(0))
        else {
            return Ok(None);
        };
        let mut links = Vec::with_capacity(cnames.len());
        let mut owner: Option<DnsName> = None;
        let mut target: Option<DnsName> = None;
        // Each CNAME goes in once: a loop ends the chain where it closes.
        let mut seen = std::collections::HashSet::new();
        for set in &cnames {
            if !seen.insert(set.id) {
                break;
            }
            let RecordData::Static(rdata) = &set.data else {
                return Ok(None);
            };
            let Some(first) = rdata.first() else {
                return Ok(None);
            };
            links.push(Link {
                owner: owner.as_ref().map(wire_name).transpose()?,
                ttl: ttl(set.ttl),
                data: gslb_shared::wire::data(first).map_err(|e| error("record", &set.name, e))?,
                zone: self.zone_slot.get(&set.zone).copied().unwrap_or(0),
                sigs: None,
            });
            if let Rdata::Cname(t) = first {
                owner = Some(t.clone());
                target = Some(t.clone());
            }
        }
        // A name whose CNAME is a pool has no chain: it answers itself.
        if links.is_empty() {
            return Ok(None);
        }
        let end = match (found, target) {
            (Found::NxDomain, _) => ChainEnd::NxDomain {
                zone: self.zone_slot.get(&zone.id).copied().unwrap_or(0),
            },
            // At the cut itself the query type decides (DS is answered).
            (Found::Referral(cut), Some(t)) if cut != &t => {
                match self.table.names.get(wire_key(cut).as_slice()) {
                    Some(&entry) => ChainEnd::Referral { entry },
                    None => ChainEnd::Elsewhere,
                }
            }
            (Found::Elsewhere, _) | (_, None) => ChainEnd::Elsewhere,
            (_, Some(t)) => match self.final_entry(&t) {
                Some(entry) => ChainEnd::Entry {
                    entry,
                    owner: wire_name(&t)?,
                },
                // The chain ended in a loop or overlong: answer what we have.
                None => ChainEnd::Elsewhere,
            },
        };
        // A loop leaves the last target owning a CNAME: stop there.
        if let ChainEnd::Entry { entry, .. } = end
            && self.table.entries[entry as usize].cname_set.is_some()
        {
            return Ok(Some(Chain {
                links: links.into_boxed_slice(),
                end: ChainEnd::Elsewhere,
            }));
        }
        Ok(Some(Chain {
            links: links.into_boxed_slice(),
            end,
        }))
    }

    /// The entry that answers for `name`: its own, or the wildcard of its
    /// closest encloser.
    fn final_entry(&self, name: &DnsName) -> Option<u32> {
        if let Some(&i) = self.table.names.get(wire_key(name).as_slice()) {
            return Some(i);
        }
        let mut up = name.parent();
        while let Some(p) = up {
            if self.table.names.contains_key(wire_key(&p).as_slice()) {
                let star = DnsName::parse(&format!("*.{p}")).ok()?;
                return self.table.names.get(wire_key(&star).as_slice()).copied();
            }
            up = p.parent();
        }
        None
    }

    pub(super) fn wildcards(&mut self) {
        let mut links = Vec::new();
        for (key, &index) in self.table.names.iter() {
            // "\x01*" followed by the encloser's wire name.
            if key.len() > 2
                && key[0] == 1
                && key[1] == b'*'
                && let Some(&encloser) = self.table.names.get(&key[2..])
            {
                links.push((encloser, index));
            }
        }
        for (encloser, wildcard) in links {
            self.entries()[encloser as usize].wildcard = Some(wildcard);
        }
    }
}
