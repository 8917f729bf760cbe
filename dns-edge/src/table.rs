//! The compiled answer table: built once per applied snapshot so that a
//! query costs a hash lookup of its lower-cased wire name, the per-query
//! part of selection, and encoding.
//!
//! Names are keyed by their canonical (lower-case) wire form. Every owner
//! name and every empty non-terminal is an entry, so a miss means the name
//! does not exist and the closest encloser is found by looking up suffixes.
//! CNAME chains are resolved here (with [`lookup`]), not per query.

pub mod decide;
mod extra;
pub mod lookup;
pub mod refresh;
pub mod signing;

use std::net::IpAddr;
use std::sync::Arc;

use domain::base::{Serial, Ttl};
use domain::rdata::{A, Aaaa, Ns, Soa, ZoneRecordData};
use gslb_shared::selection::Family;
use gslb_shared::{DnsName, DynamicRecord, Rdata, RecordData, RecordType, Snapshot, Zone};
use rustc_hash::FxHashMap;

use decide::Decider;
mod chain;

pub use decide::Decision;
use lookup::{Found, QueryType, Resolution};
use signing::{Signatures, Sigs, ZoneSigner};

pub use gslb_shared::wire::{Data, WireName};

/// A static record set or a pool-backed one, ready to encode.
#[derive(Debug, Clone)]
pub struct Set {
    /// Its type.
    pub rtype: RecordType,
    /// TTL of every record in it.
    pub ttl: Ttl,
    /// What it answers.
    pub data: SetData,
    /// The addresses of in-zone names it points to (MX, SRV), for the
    /// additional section.
    pub extra: Box<[Extra]>,
    /// Its RRSIGs, made at compile time: static sets of signed zones at
    /// their own (not wildcard) names.
    pub sigs: Option<Sigs>,
}

/// An address record of the additional section: glue, or the address of
/// a name an answer points to.
#[derive(Debug, Clone)]
pub struct Extra {
    /// Owner.
    pub owner: WireName,
    /// TTL.
    pub ttl: Ttl,
    /// An A or AAAA record.
    pub data: Data,
}

/// A zone cut: the parent's NS set for a delegated name, and the
/// addresses of its in-zone targets (glue below the cut included).
#[derive(Debug, Clone)]
pub struct Delegation {
    /// Index into [`Table::entries`] of the cut (its DS set, if any).
    pub entry: u32,
    /// The delegated name.
    pub owner: WireName,
    /// TTL of the NS set.
    pub ttl: Ttl,
    /// The NS records.
    pub ns: Box<[Data]>,
    /// Glue and in-zone addresses of the name servers: first the glue of
    /// in-domain servers (at or below the cut), which a referral must
    /// carry (RFC 9471: TC when it does not fit), then the addresses of
    /// other servers in the zone, added only while they fit.
    pub glue: Box<[Extra]>,
    /// How many of [`Delegation::glue`] are in-domain (the required ones).
    pub required: usize,
}

/// The data of a [`Set`].
#[derive(Debug, Clone)]
pub enum SetData {
    /// Fixed records.
    Static(Box<[Data]>),
    /// Chosen per query: index into [`Table::dynamic`].
    Dynamic(u32),
}

/// One CNAME hop of a chain.
#[derive(Debug, Clone)]
pub struct Link {
    /// Owner; `None` for the query name itself (the first hop).
    pub owner: Option<WireName>,
    /// TTL.
    pub ttl: Ttl,
    /// The CNAME record.
    pub data: Data,
    /// Index into [`Table::zones`] of the zone that holds it.
    pub zone: u32,
    /// Its RRSIGs when its zone is signed (none for a first hop owned by
    /// a name a wildcard synthesised: signed per query).
    pub sigs: Option<Sigs>,
}

/// Where a CNAME chain ends.
#[derive(Debug, Clone)]
pub enum ChainEnd {
    /// At this entry; `owner` is the final name (it differs from the
    /// entry's own name when a wildcard matched).
    Entry {
        /// Index into [`Table::entries`].
        entry: u32,
        /// The final name.
        owner: WireName,
    },
    /// The final name does not exist in zone `zone`.
    NxDomain {
        /// Index into [`Table::zones`].
        zone: u32,
    },
    /// The chain leaves the served zones, or loops: the answer is the chain.
    Elsewhere,
    /// The final name lies below the cut at this entry: a referral.
    Referral {
        /// Index into [`Table::entries`] of the cut.
        entry: u32,
    },
}

/// A resolved CNAME chain.
#[derive(Debug, Clone)]
pub struct Chain {
    /// The hops, in order.
    pub links: Box<[Link]>,
    /// What follows the last hop.
    pub end: ChainEnd,
}

/// An existing name.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Index into [`Table::zones`].
    pub zone: u32,
    /// The zone apex (answers SOA and NS).
    pub apex: bool,
    /// Record sets other than a static CNAME, in type order (a CNAME pool
    /// is the one set of its name).
    pub sets: Box<[Set]>,
    /// The chain when the name owns a CNAME.
    pub cname: Option<Box<Chain>>,
    /// The CNAME set itself, for queries of type CNAME.
    pub cname_set: Option<Box<Link>>,
    /// Index of `*.<this name>` when that wildcard exists.
    pub wildcard: Option<u32>,
    /// Set when the name is a zone cut: queries at or below it (but DS at
    /// it) get a referral.
    pub cut: Option<Box<Delegation>>,
}

/// A served zone.
#[derive(Debug, Clone)]
pub struct ZoneInfo {
    /// Apex in wire form.
    pub apex: WireName,
    /// SOA with the serial of this table's version.
    pub soa: Data,
    /// TTL of the SOA record.
    pub soa_ttl: Ttl,
    /// TTL of the apex NS set.
    pub ns_ttl: Ttl,
    /// TTL of the SOA in negative answers: min(SOA TTL, negative TTL).
    pub negative_ttl: Ttl,
    /// NS records at the apex.
    pub ns: Box<[Data]>,
    /// Addresses of in-zone name servers, for the additional section.
    pub ns_extra: Box<[Extra]>,
    /// Set when the zone is signed.
    pub signer: Option<Arc<ZoneSigner>>,
    /// RRSIGs of the SOA and of the apex NS set.
    pub soa_sigs: Option<Sigs>,
    /// See `soa_sigs`.
    pub ns_sigs: Option<Sigs>,
}

/// A pool-backed record set.
#[derive(Debug, Clone)]
pub struct Dynamic {
    /// Steering, pools, geo branches, firstN.
    pub record: DynamicRecord,
    /// The address family (or names) its members answer with.
    pub family: Option<Family>,
    /// The [`Table::serial`] of the table that decided it: a prebuilt
    /// reply made from another decision of the set is stale.
    pub decided_in: u64,
    /// A branch matches on a region of the CIDR table, or latency steering
    /// maps regions to locations.
    pub geo_region: bool,
    /// A branch matches on what the MaxMind files say (country, ...).
    pub geo_place: bool,
    /// The default branch's decision, then each geo branch's, in order.
    pub decisions: Box<[Decision]>,
}

impl Dynamic {
    /// The answer depends on where the client is (ECS scope is not /0).
    pub fn geo(&self) -> bool {
        self.geo_region || self.geo_place
    }

    /// The index of the decision for a client region.
    pub fn decision_index(
        &self,
        region: Option<&gslb_shared::Region>,
        place: &gslb_shared::Place,
    ) -> usize {
        let (branch, _) = self.record.branch_for(region, place);
        branch.map_or(0, |i| i + 1)
    }
}

/// Everything a query needs, for one snapshot version.
#[derive(Debug)]
pub struct Table {
    /// Unique per compiled table in this process: what per-worker state
    /// derived from a table is keyed by (a version can repeat after a
    /// deliberate reset of the edges).
    pub serial: u64,
    /// Snapshot version (the SOA serial).
    pub version: u64,
    /// When the snapshot was published (ms since the Unix epoch).
    pub published_at_ms: u64,
    /// The serial of the full compile this table descends from through
    /// health-only refreshes ([`Table::refresh`]): tables of one lineage
    /// share names and static data, so prebuilt replies carry over.
    pub lineage: u64,
    /// Zones.
    pub zones: Vec<ZoneInfo>,
    /// Existing names (shared along a lineage).
    pub entries: Arc<Vec<Entry>>,
    /// Canonical wire name -> index into `entries`.
    pub names: Arc<FxHashMap<Box<[u8]>, u32>>,
    /// Pool-backed record sets; a refresh replaces only those it decides anew.
    pub dynamic: Vec<Arc<Dynamic>>,
    /// Which pool-backed sets name each pool, and each pool's members.
    pub pools: Arc<refresh::PoolIndex>,
    /// Record sets that could not be compiled: left out, everything else
    /// is served, and status reports them.
    pub skipped: Vec<Skipped>,
    /// The snapshot it was compiled from (persistent maps: shared with the
    /// feed's copy, not duplicated), for `/status/pools`.
    pub snapshot: Arc<Snapshot>,
    /// DNSSEC signatures (empty when no zone is signed).
    pub signatures: Signatures,
}

/// A snapshot that cannot be compiled (the aggregator validated it, so
/// this means a bug or a corrupt cache).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("cannot compile {what} {name:?}: {rule}")]
pub struct CompileError {
    /// The kind of object.
    pub what: &'static str,
    /// Its name.
    pub name: String,
    /// What is wrong.
    pub rule: String,
}

fn error(what: &'static str, name: impl ToString, rule: impl ToString) -> CompileError {
    CompileError {
        what,
        name: name.to_string(),
        rule: rule.to_string(),
    }
}

/// The canonical wire form of a model name (labels, then the root).
pub use gslb_shared::wire::wire_key;

/// A model name as a wire name.
pub fn wire_name(name: &DnsName) -> Result<WireName, CompileError> {
    gslb_shared::wire::wire_name(name).map_err(|e| error("name", name, e))
}

fn ttl(secs: u32) -> Ttl {
    Ttl::from_secs(secs)
}

/// A static set's records, refused (with the reason) when one has no wire
/// form or the set does not fit one DNS message. The aggregator validates
/// the same, so this guards against snapshots from an older aggregator or
/// a damaged cache.
fn static_set(record: &gslb_shared::RecordSet, rdata: &[Rdata]) -> Result<Box<[Data]>, String> {
    let data = rdata
        .iter()
        .map(gslb_shared::wire::data)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| e.to_string())?;
    gslb_shared::wire::answer_size(&record.name, record.rtype, &data).map_err(|e| e.to_string())?;
    Ok(data.into_boxed_slice())
}

/// A record set left out of a table, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// Its id.
    pub record: gslb_shared::RecordSetId,
    /// Owner name.
    pub name: DnsName,
    /// Type.
    pub rtype: RecordType,
    /// Why it cannot be served.
    pub reason: String,
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "record set {} ({} {}) skipped: {}",
            self.record, self.name, self.rtype, self.reason
        )
    }
}

fn zone_info(zone: &Zone, version: u64) -> Result<ZoneInfo, CompileError> {
    let s = &zone.soa;
    let soa_ttl = zone.default_ttl;
    Ok(ZoneInfo {
        apex: wire_name(&zone.apex)?,
        // Serial arithmetic (RFC 1982) wraps at 2^32: the low bits of the version.
        soa: ZoneRecordData::Soa(Soa::new(
            wire_name(&s.mname)?,
            wire_name(&s.rname)?,
            Serial(version as u32),
            ttl(s.refresh),
            ttl(s.retry),
            ttl(s.expire),
            ttl(s.negative_ttl),
        )),
        soa_ttl: ttl(soa_ttl),
        ns_ttl: ttl(zone.apex_ns_ttl()),
        negative_ttl: ttl(soa_ttl.min(s.negative_ttl)),
        ns: zone
            .ns
            .iter()
            .map(|n| Ok(ZoneRecordData::Ns(Ns::new(wire_name(n)?))))
            .collect::<Result<_, CompileError>>()?,
        ns_extra: Box::new([]),
        signer: None,
        soa_sigs: None,
        ns_sigs: None,
    })
}

/// The next [`Table::serial`].
static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Builds a table.
struct Builder<'a> {
    snapshot: &'a Snapshot,
    /// Members by pool, for deciding dynamic sets.
    decider: Decider<'a>,
    zone_slot: FxHashMap<gslb_shared::ZoneId, u32>,
    /// Every served apex.
    apexes: std::collections::HashSet<DnsName>,
    /// Zone cuts by zone.
    cuts: FxHashMap<gslb_shared::ZoneId, std::collections::HashSet<DnsName>>,
    /// Address records at and below cuts (occluded, but glue), by
    /// canonical wire name.
    glue: FxHashMap<(u32, Box<[u8]>), Vec<Extra>>,
    /// Where additional addresses are wanted, and for which names.
    wanted: Vec<(extra::Slot, Vec<DnsName>)>,
    table: Table,
}

impl Table {
    /// Compile a snapshot, signing what signed zones hold now.
    pub fn compile(snapshot: &Snapshot) -> Result<Table, CompileError> {
        Self::compile_after(snapshot, None, gslb_shared::clock::now_secs())
    }

    /// Compile a snapshot at `now` (seconds since the Unix epoch), taking
    /// the fresh signatures of `previous` instead of making them again.
    pub fn compile_after(
        snapshot: &Snapshot,
        previous: Option<&Table>,
        now: u64,
    ) -> Result<Table, CompileError> {
        // Owners and apexes; empty non-terminals come on top (rarely many).
        let names = snapshot.catalog.records.len() + snapshot.catalog.zones.len();
        let dynamic = snapshot
            .catalog
            .records
            .values()
            .filter(|r| matches!(r.data, RecordData::Dynamic(_)))
            .count();
        let serial = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut b = Builder {
            snapshot,
            decider: Decider::new(snapshot),
            zone_slot: FxHashMap::default(),
            apexes: Default::default(),
            cuts: FxHashMap::default(),
            glue: FxHashMap::default(),
            wanted: Vec::new(),
            table: Table {
                serial,
                lineage: serial,
                version: snapshot.version,
                published_at_ms: snapshot.published_at_ms,
                zones: Vec::with_capacity(snapshot.catalog.zones.len()),
                entries: Arc::new(Vec::with_capacity(names)),
                names: Arc::new(FxHashMap::with_capacity_and_hasher(
                    names,
                    Default::default(),
                )),
                dynamic: Vec::with_capacity(dynamic),
                pools: Arc::default(),
                skipped: Vec::new(),
                snapshot: Arc::new(snapshot.clone()),
                signatures: Signatures::new(previous.map(|p| &p.signatures), now),
            },
        };
        b.zones()?;
        b.names()?;
        b.chains()?;
        b.wildcards();
        b.extras()?;
        b.sign(previous.map(|p| &p.signatures))?;
        b.table.pools = Arc::new(refresh::PoolIndex::new(&b.decider, &b.table.dynamic));
        Ok(b.table)
    }

    /// The entry of a canonical wire name.
    pub fn entry(&self, key: &[u8]) -> Option<&Entry> {
        self.names.get(key).map(|&i| &self.entries[i as usize])
    }
}

impl Builder<'_> {
    /// The entries, while the table is built (not yet shared: no copy).
    fn entries(&mut self) -> &mut Vec<Entry> {
        Arc::make_mut(&mut self.table.entries)
    }

    fn zones(&mut self) -> Result<(), CompileError> {
        for zone in self.snapshot.catalog.zones.values() {
            let slot = self.table.zones.len() as u32;
            self.table
                .zones
                .push(zone_info(zone, self.snapshot.version)?);
            self.zone_slot.insert(zone.id, slot);
            self.entry_for(&zone.apex, slot).apex = true;
        }
        Ok(())
    }

    /// The entry of `name`, created empty (as an empty non-terminal) if new.
    fn entry_for(&mut self, name: &DnsName, zone: u32) -> &mut Entry {
        let index = self.index_of(name, zone);
        &mut self.entries()[index as usize]
    }

    /// The index of `name`'s entry, created empty if new.
    fn index_of(&mut self, name: &DnsName, zone: u32) -> u32 {
        let key = wire_key(name).into_boxed_slice();
        let next = self.table.entries.len() as u32;
        let index = *Arc::make_mut(&mut self.table.names)
            .entry(key)
            .or_insert(next);
        if index == next {
            self.entries().push(Entry {
                zone,
                apex: false,
                sets: Box::new([]),
                cname: None,
                cname_set: None,
                wildcard: None,
                cut: None,
            });
        }
        index
    }

    fn names(&mut self) -> Result<(), CompileError> {
        let snapshot = self.snapshot;
        self.find_cuts();
        for record in snapshot.catalog.records.values() {
            let Some(&zone) = self.zone_slot.get(&record.zone) else {
                continue;
            };
            let apex = &snapshot.catalog.zones[&record.zone].apex;
            if !record.name.is_in_zone(apex) {
                continue;
            }
            let at_cut = match self.placement(record, apex) {
                extra::Place::Data => false,
                extra::Place::Cut => true,
                extra::Place::Occluded => {
                    self.keep_glue(record)?;
                    continue;
                }
            };
            // One record set that cannot be sent is left out (its name
            // still exists: NODATA), never the whole snapshot, which froze
            // every edge on its old version.
            let set = match self.set(record) {
                Ok(set) => Some(set),
                Err(reason) => {
                    tracing::warn!(record = %record.id, name = %record.name, %reason, "record set skipped");
                    self.table.skipped.push(Skipped {
                        record: record.id,
                        name: record.name.clone(),
                        rtype: record.rtype,
                        reason,
                    });
                    None
                }
            };
            // Every name between the owner and the apex exists.
            let mut up = record.name.parent();
            while let Some(p) = up {
                if !p.is_in_zone(apex) || &p == apex {
                    break;
                }
                self.entry_for(&p, zone);
                up = p.parent();
            }
            let Some(set) = set else {
                self.entry_for(&record.name, zone);
                continue;
            };
            if let Some(targets) = extra::targets(record) {
                let slot = if at_cut {
                    extra::Slot::Cut(self.index_of(&record.name, zone))
                } else {
                    extra::Slot::Set(self.index_of(&record.name, zone), record.rtype)
                };
                self.wanted.push((slot, targets));
            }
            if at_cut && record.rtype == RecordType::Ns {
                let owner = wire_name(&record.name)?;
                if let SetData::Static(ns) = set.data {
                    let at = self.index_of(&record.name, zone);
                    let entry = &mut self.entries()[at as usize];
                    entry.cut = Some(Box::new(Delegation {
                        entry: at,
                        owner,
                        ttl: set.ttl,
                        ns,
                        glue: Box::new([]),
                        required: 0,
                    }));
                }
                continue;
            }
            let entry = self.entry_for(&record.name, zone);
            // A static CNAME is a chain link; a CNAME pool is a set like
            // any other (the only one at its name), steered per query.
            if record.rtype == RecordType::Cname
                && let SetData::Static(rdata) = &set.data
            {
                if let Some(first) = rdata.first() {
                    entry.cname_set = Some(Box::new(Link {
                        owner: None,
                        ttl: set.ttl,
                        data: first.clone(),
                        zone,
                        sigs: None,
                    }));
                }
                continue;
            }
            let mut sets = std::mem::take(&mut entry.sets).into_vec();
            sets.push(set);
            sets.sort_by_key(|s| s.rtype);
            entry.sets = sets.into_boxed_slice();
        }
        Ok(())
    }

    fn set(&mut self, record: &gslb_shared::RecordSet) -> Result<Set, String> {
        let data = match &record.data {
            RecordData::Static(rdata) => SetData::Static(static_set(record, rdata)?),
            RecordData::Dynamic(d) => {
                let slot = self.table.dynamic.len() as u32;
                let family = Family::of(record.rtype);
                let decisions = self.decider.decide(d, family);
                self.table.dynamic.push(Arc::new(Dynamic {
                    record: d.clone(),
                    family,
                    decided_in: self.table.serial,
                    geo_region: d.needs_region(),
                    geo_place: d.needs_place(),
                    decisions,
                }));
                SetData::Dynamic(slot)
            }
        };
        Ok(Set {
            rtype: record.rtype,
            ttl: ttl(record.ttl),
            data,
            extra: Box::new([]),
            sigs: None,
        })
    }
}

/// Record data for one selected address.
pub fn address_data(addr: IpAddr) -> Data {
    match addr {
        IpAddr::V4(a) => ZoneRecordData::A(A::new(a)),
        IpAddr::V6(a) => ZoneRecordData::Aaaa(Aaaa::new(a)),
    }
}
