//! Health-only refreshes: a delta that changes nothing but member facts
//! (or hostname members' addresses) re-decides the pool-backed sets that
//! name those members' pools and shares everything else with the table it
//! follows: names, static data, signatures. A full compile costs the
//! catalog; a refresh costs what changed.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use domain::base::iana::Rtype;
use gslb_shared::{Member, MemberId, PoolId, Snapshot};
use rustc_hash::FxHashMap;

use super::decide::Decider;
use super::signing::Signatures;
use super::{CompileError, Dynamic, SERIAL, Table, zone_info};

/// Which pool-backed sets name each pool, and each pool's members: what a
/// refresh needs to go from a member to the sets its facts reach without a
/// pass over the catalog.
#[derive(Debug, Default)]
pub struct PoolIndex {
    /// Indexes into [`Table::dynamic`] by pool named (in any branch).
    slots: FxHashMap<PoolId, Box<[u32]>>,
    /// Member ids by pool, in id order.
    members: FxHashMap<PoolId, Box<[MemberId]>>,
}

impl PoolIndex {
    /// Index the sets of a compiled table and the decider's members.
    pub(super) fn new(decider: &Decider<'_>, dynamic: &[Arc<Dynamic>]) -> Self {
        let mut slots: FxHashMap<PoolId, Vec<u32>> = FxHashMap::default();
        for (i, d) in dynamic.iter().enumerate() {
            for pool in d.record.all_pools() {
                let of_pool = slots.entry(*pool).or_default();
                if of_pool.last() != Some(&(i as u32)) {
                    of_pool.push(i as u32);
                }
            }
        }
        Self {
            slots: (slots.into_iter())
                .map(|(p, s)| (p, s.into_boxed_slice()))
                .collect(),
            members: (decider.members()).map(|(p, m)| (p, m.collect())).collect(),
        }
    }
}

impl Table {
    /// The table after a health-only delta to `snapshot`: the sets naming
    /// the pools of `touched` decided anew, the SOA serial moved (and
    /// signed again), everything else shared with `self`. `None` when
    /// this table's static signatures are due (a full compile makes them).
    pub fn refresh(
        &self,
        snapshot: &Snapshot,
        touched: &[MemberId],
        now: u64,
    ) -> Result<Option<Table>, CompileError> {
        if self.signatures.refresh_at.is_some_and(|at| at <= now)
            || self.zones.len() != snapshot.catalog.zones.len()
        {
            return Ok(None);
        }
        let serial = SERIAL.fetch_add(1, Ordering::Relaxed);
        let catalog = &snapshot.catalog;
        let mut slots: Vec<u32> = (touched.iter())
            .filter_map(|id| catalog.members.get(id))
            .filter_map(|m| self.pools.slots.get(&m.pool))
            .flat_map(|s| s.iter().copied())
            .collect();
        slots.sort_unstable();
        slots.dedup();
        // Only the pools those sets name, found through the index.
        let mut members: FxHashMap<PoolId, Vec<&Member>> = FxHashMap::default();
        for &slot in &slots {
            for pool in self.dynamic[slot as usize].record.all_pools() {
                if members.contains_key(pool) {
                    continue;
                }
                let ids = self.pools.members.get(pool).map_or(&[][..], |m| m);
                let found = ids.iter().filter_map(|id| catalog.members.get(id));
                members.insert(*pool, found.collect());
            }
        }
        let mut decider = Decider::with_members(snapshot, members);
        let mut dynamic = self.dynamic.clone();
        for &slot in &slots {
            let old = &self.dynamic[slot as usize];
            dynamic[slot as usize] = Arc::new(Dynamic {
                record: old.record.clone(),
                family: old.family,
                decided_in: serial,
                geo_region: old.geo_region,
                geo_place: old.geo_place,
                decisions: decider.decide(&old.record, old.family),
            });
        }
        let mut signatures = Signatures {
            fixed: Arc::clone(&self.signatures.fixed),
            cache: Arc::clone(&self.signatures.cache),
            now,
            refresh_at: self.signatures.refresh_at,
        };
        let mut zones = self.zones.clone();
        for (info, zone) in zones.iter_mut().zip(catalog.zones.values()) {
            info.soa = zone_info(zone, snapshot.version)?.soa;
            if let Some(signer) = &info.signer {
                let soa = std::slice::from_ref(&info.soa);
                info.soa_sigs = signer.sign(&info.apex, Rtype::SOA, info.soa_ttl, soa, now);
                if let Some(s) = &info.soa_sigs {
                    let at = signatures
                        .refresh_at
                        .map_or(s.refresh_at, |r| r.min(s.refresh_at));
                    signatures.refresh_at = Some(at);
                }
            }
        }
        Ok(Some(Table {
            serial,
            lineage: self.lineage,
            version: snapshot.version,
            published_at_ms: snapshot.published_at_ms,
            zones,
            entries: Arc::clone(&self.entries),
            names: Arc::clone(&self.names),
            dynamic,
            pools: Arc::clone(&self.pools),
            skipped: self.skipped.clone(),
            snapshot: Arc::new(snapshot.clone()),
            signatures,
        }))
    }

    /// How many pool-backed sets were decided by this table itself (all
    /// of them for a full compile; those a refresh touched otherwise).
    pub fn decided_here(&self) -> usize {
        (self.dynamic.iter())
            .filter(|d| d.decided_in == self.serial)
            .count()
    }
}
