//! Outbound zone transfers: AXFR (RFC 5936) and IXFR (RFC 1995) over TCP
//! to the secondaries each zone allows, every request and reply signed
//! with TSIG (RFC 8945, HMAC-SHA256), and NOTIFY (RFC 1996) to the zone's
//! targets on each serial change (coalesced when only the serial moved).
//!
//! [`Transfers`] holds, per zone with transfer settings, the data a
//! secondary gets (the same as `gslbctl zone export`: pool-backed names
//! as their whole current answer, without steering) and the journal of
//! its last changes. The feed updates it after each applied snapshot;
//! TCP connections read it without a lock ([`serve`]).

pub mod journal;
pub mod notify;
pub mod serve;

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use arc_swap::ArcSwap;
use domain::base::ToName;
use domain::tsig::{Algorithm, Key, KeyName};
use gslb_shared::wire::zone_data;
use gslb_shared::wire::{Data, WireError, WireName, wire_name};
use gslb_shared::{DnsName, Snapshot, Zone};

use journal::{History, Rr, SetKey, ZoneSet};

/// Default number of changes a zone's journal keeps.
pub const DEFAULT_JOURNAL_DEPTH: usize = 64;
/// Most changes a zone's journal may keep.
pub const MAX_JOURNAL_DEPTH: usize = 10_000;

/// Keys by name and algorithm, as `domain`'s TSIG code looks them up.
pub type KeyStore = HashMap<(KeyName, Algorithm), Arc<Key>>;

/// One zone's transfer state at one snapshot version.
#[derive(Debug)]
pub struct ZoneXfr {
    /// The zone (its SOA fields and apex).
    pub zone: Zone,
    /// The apex in wire form.
    pub apex: WireName,
    /// Its data now and its last changes.
    pub history: History,
    /// Who may transfer it: address and the name of the key it must sign with.
    pub allow: Vec<(IpAddr, KeyName)>,
    /// The keys `allow` names.
    pub keys: KeyStore,
    /// Where NOTIFY goes, signed with the key when one is named.
    pub notify: Vec<(SocketAddr, Option<Arc<Key>>)>,
    /// Positions in `history.sets` of the pool-backed sets.
    dynamic: Arc<[usize]>,
}

impl ZoneXfr {
    /// The SOA record data at `version`.
    pub fn soa(&self, version: u64) -> Result<Data, WireError> {
        zone_data::soa(&self.zone, version)
    }
}

/// Every zone's transfer state, swapped whole after each snapshot.
#[derive(Debug)]
pub struct Transfers {
    depth: std::sync::atomic::AtomicUsize,
    zones: ArcSwap<HashMap<WireName, Arc<ZoneXfr>>>,
    /// Sends and retries NOTIFY.
    pub notifier: Arc<notify::Notifier>,
    /// Transfers sent: AXFR, IXFR (changes or current), IXFR answered with
    /// the whole zone.
    served: [std::sync::atomic::AtomicU64; 3],
    /// Requests refused or failing TSIG.
    refused: std::sync::atomic::AtomicU64,
    /// The record sets of the last snapshot taken in (a clone of a
    /// persistent map: it shares the snapshot's nodes).
    last_records: std::sync::Mutex<
        Option<gslb_shared::Map<gslb_shared::RecordSetId, gslb_shared::RecordSet>>,
    >,
}

/// What taking in a snapshot did.
#[derive(Debug, Default)]
pub struct Update {
    /// Zones whose data (or SOA fields, or transfer settings) changed:
    /// NOTIFY now.
    pub changed: Vec<Arc<ZoneXfr>>,
    /// Zones whose serial moved with nothing else changed: NOTIFY, at
    /// most once a [`notify::COALESCE`] per target.
    pub moved: Vec<Arc<ZoneXfr>>,
    /// Zones that could not be built.
    pub errors: Vec<XfrError>,
}

/// Why a zone's transfer state could not be built (the zone is then not
/// transferable until a snapshot fixes it; it is still answered).
#[derive(Debug, thiserror::Error)]
#[error("zone {apex}: {why}")]
pub struct XfrError {
    apex: DnsName,
    why: String,
}

fn key_name(name: &DnsName) -> Result<KeyName, String> {
    wire_name(name)
        .map_err(|e| e.to_string())?
        .try_to_name::<domain::dep::octseq::array::Array<255>>()
        .map_err(|_| format!("key name {name} is too long"))
}

fn tsig_key(snapshot: &Snapshot, name: &DnsName) -> Result<Arc<Key>, String> {
    let key =
        (snapshot.catalog.tsig_key(name)).ok_or_else(|| format!("TSIG key {name} is missing"))?;
    Key::new(
        Algorithm::Sha256,
        &key.secret.0,
        key_name(name)?,
        None,
        None,
    )
    .map(Arc::new)
    .map_err(|e| format!("TSIG key {name}: {e}"))
}

impl Transfers {
    /// No zone transferable yet; journals keep `depth` changes.
    pub fn new(depth: usize) -> Self {
        Self {
            depth: depth.into(),
            zones: ArcSwap::from_pointee(HashMap::new()),
            notifier: Arc::default(),
            served: Default::default(),
            refused: Default::default(),
            last_records: Default::default(),
        }
    }

    /// Count a transfer sent of `kind` (a [`serve::Verdict::Transfer`] kind).
    pub fn count_served(&self, kind: &str) {
        let i = match kind {
            "AXFR" => 0,
            "IXFR-as-AXFR" => 2,
            _ => 1,
        };
        self.served[i].fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Count a refused request.
    pub fn count_refused(&self) {
        self.refused
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }

    /// Counters for metrics: AXFR, IXFR, IXFR as AXFR sent; refused;
    /// NOTIFY answered; NOTIFY given up on.
    pub fn counts(&self) -> [u64; 6] {
        let r = |a: &std::sync::atomic::AtomicU64| a.load(std::sync::atomic::Ordering::Relaxed);
        [
            r(&self.served[0]),
            r(&self.served[1]),
            r(&self.served[2]),
            r(&self.refused),
            r(&self.notifier.answered),
            r(&self.notifier.unanswered),
        ]
    }

    /// Keep `depth` changes per zone from the next snapshot on.
    pub fn set_depth(&self, depth: usize) {
        self.depth
            .store(depth, std::sync::atomic::Ordering::Relaxed);
    }

    /// The transfer state of the zone at `apex`, if it has one.
    pub fn zone(&self, apex: &WireName) -> Option<Arc<ZoneXfr>> {
        self.zones.load().get(apex).cloned()
    }

    /// Take in a new snapshot: rebuild every zone with transfer settings
    /// and extend its journal.
    pub fn update(&self, snapshot: &Snapshot) -> Update {
        let old = self.zones.load_full();
        let mut zones = HashMap::new();
        let mut out = Update::default();
        let wanted: Vec<&Zone> = (snapshot.catalog.zones.values())
            .filter(|z| !z.transfer.is_empty())
            .collect();
        if wanted.is_empty() {
            self.notifier.forget(|_| false);
            self.zones.store(Arc::new(zones));
            *self.last_records.lock().unwrap_or_else(|e| e.into_inner()) = None;
            return out;
        }
        let index = zone_data::index(snapshot);
        // Health changes leave the catalog's record sets as they were (the
        // same persistent map): only pool-backed sets are made again.
        let records_unchanged = {
            let mut last = self.last_records.lock().unwrap_or_else(|e| e.into_inner());
            let same = last
                .as_ref()
                .is_some_and(|l| l.ptr_eq(&snapshot.catalog.records));
            *last = Some(snapshot.catalog.records.clone());
            same
        };
        for zone in wanted {
            match self.build(snapshot, &index, zone, &old, records_unchanged) {
                Ok((x, data_changed)) => {
                    let x = Arc::new(x);
                    let moved = old
                        .get(&x.apex)
                        .is_some_and(|p| p.history.version != x.history.version);
                    if data_changed {
                        out.changed.push(Arc::clone(&x));
                    } else if moved {
                        out.moved.push(Arc::clone(&x));
                    }
                    zones.insert(x.apex.clone(), x);
                }
                Err(why) => out.errors.push(XfrError {
                    apex: zone.apex.clone(),
                    why,
                }),
            }
        }
        self.notifier.forget(|apex| zones.contains_key(apex));
        self.zones.store(Arc::new(zones));
        out
    }

    /// The sets of `zone` now: a full pass over its record sets, or, when
    /// no record set of the catalog changed since `prev` was built (a
    /// health change), `prev`'s sets with only the pool-backed ones made
    /// again.
    fn sets(
        snapshot: &Snapshot,
        index: &gslb_shared::selection::CatalogIndex,
        zone: &Zone,
        prev: Option<&ZoneXfr>,
        records_unchanged: bool,
    ) -> Result<(Vec<ZoneSet>, Arc<[usize]>), String> {
        let err = |e: WireError| e.to_string();
        let rr_of = |owner: &WireName, ttl: u32, data: Vec<Data>| -> Arc<[Rr]> {
            (data.into_iter())
                .map(|data| Rr {
                    owner: owner.clone(),
                    ttl,
                    data,
                })
                .collect::<Vec<_>>()
                .into()
        };
        if let Some(prev) = prev.filter(|p| records_unchanged && p.zone == *zone) {
            let mut sets = prev.history.sets.to_vec();
            for &i in prev.dynamic.iter() {
                let SetKey::Set(id) = sets[i].key else {
                    continue;
                };
                let Some(r) = snapshot.catalog.records.get(&id) else {
                    continue;
                };
                let owner = wire_name(&r.name).map_err(err)?;
                let data = zone_data::set_records(index, r).map_err(err)?;
                let records = rr_of(&owner, zone_data::set_ttl(index, r), data);
                // Unchanged answers keep the old Arc: the diff skips them.
                if *records != *sets[i].records {
                    sets[i].records = records;
                }
            }
            return Ok((sets, Arc::clone(&prev.dynamic)));
        }
        let apex = wire_name(&zone.apex).map_err(err)?;
        let mut out = vec![ZoneSet {
            key: SetKey::ApexNs,
            records: rr_of(
                &apex,
                zone.apex_ns_ttl(),
                zone_data::apex_ns(zone).map_err(err)?,
            ),
        }];
        let mut dynamic = Vec::new();
        for r in zone_data::sorted_sets(snapshot, zone) {
            if matches!(r.data, gslb_shared::RecordData::Dynamic(_)) {
                dynamic.push(out.len());
            }
            let owner = wire_name(&r.name).map_err(err)?;
            let data = zone_data::set_records(index, r).map_err(err)?;
            out.push(ZoneSet {
                key: SetKey::Set(r.id),
                records: rr_of(&owner, zone_data::set_ttl(index, r), data),
            });
        }
        Ok((out, dynamic.into()))
    }

    fn build(
        &self,
        snapshot: &Snapshot,
        index: &gslb_shared::selection::CatalogIndex,
        zone: &Zone,
        old: &HashMap<WireName, Arc<ZoneXfr>>,
        records_unchanged: bool,
    ) -> Result<(ZoneXfr, bool), String> {
        let apex = wire_name(&zone.apex).map_err(|e| e.to_string())?;
        let prev = old.get(&apex);
        let (sets, dynamic) = Self::sets(
            snapshot,
            index,
            zone,
            prev.map(Arc::as_ref),
            records_unchanged,
        )?;
        let (history, changed) = match prev {
            Some(prev) => {
                let mut h = prev.history.clone();
                let depth = self.depth.load(std::sync::atomic::Ordering::Relaxed);
                let data_changed = h.advance(snapshot.version, sets, depth);
                let soa_changed =
                    prev.zone.soa != zone.soa || prev.zone.default_ttl != zone.default_ttl;
                (
                    h,
                    data_changed || soa_changed || prev.zone.transfer != zone.transfer,
                )
            }
            None => (History::new(snapshot.version, sets), true),
        };
        let mut keys = KeyStore::new();
        let mut allow = Vec::with_capacity(zone.transfer.allow.len());
        for peer in &zone.transfer.allow {
            let key = tsig_key(snapshot, &peer.key)?;
            allow.push((peer.address, key.name().clone()));
            keys.insert((key.name().clone(), key.algorithm()), key);
        }
        let notify = (zone.transfer.notify.iter())
            .map(|n| {
                Ok((
                    n.address,
                    n.key.as_ref().map(|k| tsig_key(snapshot, k)).transpose()?,
                ))
            })
            .collect::<Result<_, String>>()?;
        Ok((
            ZoneXfr {
                zone: zone.clone(),
                apex,
                history,
                allow,
                keys,
                notify,
                dynamic,
            },
            changed,
        ))
    }
}
