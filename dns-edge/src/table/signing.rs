//! DNSSEC at the edge (issue 20): each signed zone's signers and key
//! records, the signatures of its static record sets (made when a table
//! compiles, carried to the next table while fresh), and the bounded cache
//! of signatures made while answering (pool-backed sets, synthesised names,
//! denial records), shared by every table of the process.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex};

use domain::base::iana::Rtype;
use domain::base::rdata::ComposeRecordData;
use domain::base::{Name, Ttl};
use domain::rdata::dnssec::Timestamp;
use domain::rdata::{Cdnskey, Cds, ZoneRecordData};
use gslb_shared::dnssec::{Signer, ZoneKey};
use gslb_shared::{KeyState, ZoneSigning};
use lru::LruCache;
use rustc_hash::FxHashMap;

use super::{Builder, CompileError, Data, RecordType, Set, SetData, WireName, error};

/// Signatures made while answering that the cache keeps (about 100 MiB at
/// most with ECDSA: a key of under 300 bytes, a signature of about 150).
pub const SIGNATURE_CACHE_ENTRIES: usize = 100_000;

/// The RRSIGs over one record set, and when they are due to be made again.
#[derive(Debug, Clone)]
pub struct Sigs {
    /// One RRSIG per signing key.
    pub records: Arc<[Data]>,
    /// Seconds since the Unix epoch after which they are made anew (a
    /// quarter of their validity after they were made, so every signature
    /// served has at least three quarters of its validity left).
    pub refresh_at: u64,
}

/// One signed zone's signing state.
#[derive(Debug)]
pub struct ZoneSigner {
    /// Sign every set but the key sets (ZSK or CSK).
    zone_keys: Vec<Arc<Signer>>,
    /// Sign DNSKEY, CDS and CDNSKEY (KSK or CSK).
    key_keys: Vec<Arc<Signer>>,
    validity: u32,
    offset: u32,
    /// Identifies the key set, so a cached signature of another key set
    /// (before a rollover, or of another zone) is never taken for this one.
    pub id: u64,
    /// The DNSKEY set.
    pub dnskey: Box<[Data]>,
    /// The CDS set (RFC 7344), or its delete form while unsigning.
    pub cds: Box<[Data]>,
    /// The CDNSKEY set, likewise.
    pub cdnskey: Box<[Data]>,
}

fn key_error(apex: &WireName, e: impl std::fmt::Display) -> CompileError {
    error("zone", format!("{apex}."), format!("dnssec: {e}"))
}

impl ZoneSigner {
    /// The signing state of a zone with `settings`, whose apex is `apex`.
    pub fn new(settings: &ZoneSigning, apex: &WireName) -> Result<Self, CompileError> {
        let mut zone_keys = Vec::new();
        let mut key_keys = Vec::new();
        let (mut dnskey, mut cds, mut cdnskey) = (Vec::new(), Vec::new(), Vec::new());
        let mut id = 0xcbf2_9ce4_8422_2325u64;
        for k in &settings.keys {
            let key = ZoneKey::from_parts(
                settings.algorithm,
                k.role.flags(),
                &k.public_key,
                &k.private_key,
            )
            .map_err(|e| key_error(apex, e))?;
            let signer = Arc::new(key.signer(apex.clone()).map_err(|e| key_error(apex, e))?);
            if k.state.in_dnskey() {
                dnskey.push(ZoneRecordData::Dnskey(key.dnskey.clone()));
            }
            // A new key-signing key's DS goes up while it is pending (the
            // parent holds both during a double-DS rollover); a retired
            // one's is gone.
            if k.role.signs_keys() && k.state != KeyState::Retired {
                let ds = key.ds(apex).map_err(|e| key_error(apex, e))?;
                let d = Cds::new(
                    ds.key_tag(),
                    ds.algorithm(),
                    ds.digest_type(),
                    ds.digest().clone(),
                )
                .map_err(|e| key_error(apex, e))?;
                cds.push(ZoneRecordData::Cds(d));
                let d = Cdnskey::new(
                    key.dnskey.flags(),
                    key.dnskey.protocol(),
                    key.dnskey.algorithm(),
                    key.dnskey.public_key().clone(),
                )
                .map_err(|e| key_error(apex, e))?;
                cdnskey.push(ZoneRecordData::Cdnskey(d));
            }
            // Data is signed by the active zone-signing key; the key sets by
            // every published or active key-signing key.
            if k.role.signs_zone() && k.state == KeyState::Active {
                id = (id ^ u64::from(key.key_tag())).wrapping_mul(0x100_0000_01b3);
                zone_keys.push(signer.clone());
            }
            if k.role.signs_keys() && matches!(k.state, KeyState::Published | KeyState::Active) {
                id = (id ^ (u64::from(key.key_tag()) << 16)).wrapping_mul(0x100_0000_01b3);
                key_keys.push(signer);
            }
        }
        if zone_keys.is_empty() || key_keys.is_empty() {
            return Err(key_error(apex, "no key to sign with"));
        }
        if settings.unsign {
            // RFC 8078 4: the parent is asked to remove the DS.
            let zero = domain::base::iana::SecurityAlgorithm::from_int(0);
            let digest = domain::base::iana::DigestAlgorithm::from_int(0);
            cds = vec![ZoneRecordData::Cds(
                Cds::new(0, zero, digest, vec![0]).map_err(|e| key_error(apex, e))?,
            )];
            cdnskey = vec![ZoneRecordData::Cdnskey(
                Cdnskey::new(0, 3, zero, vec![0]).map_err(|e| key_error(apex, e))?,
            )];
        }
        Ok(Self {
            zone_keys,
            key_keys,
            validity: settings.signature_validity,
            offset: settings.inception_offset,
            id,
            dnskey: dnskey.into_boxed_slice(),
            cds: cds.into_boxed_slice(),
            cdnskey: cdnskey.into_boxed_slice(),
        })
    }

    /// The RRSIGs over `data` (one set of type `rtype`) at `owner`, made
    /// at `now` (seconds since the Unix epoch); `None` if a key fails.
    pub fn sign(
        &self,
        owner: &WireName,
        rtype: Rtype,
        ttl: Ttl,
        data: &[Data],
        now: u64,
    ) -> Option<Sigs> {
        let keys = match rtype {
            Rtype::DNSKEY | Rtype::CDS | Rtype::CDNSKEY => &self.key_keys,
            _ => &self.zone_keys,
        };
        // Serial number arithmetic (RFC 4034 3.1.5): the low 32 bits.
        let inception = Timestamp::from((now.saturating_sub(u64::from(self.offset))) as u32);
        let expiration = Timestamp::from((now + u64::from(self.validity)) as u32);
        let records = keys
            .iter()
            .map(|k| {
                k.sign(owner, ttl, data, inception, expiration)
                    .map(ZoneRecordData::Rrsig)
            })
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| tracing::warn!(owner = %owner, error = %e, "signing failed"))
            .ok()?;
        Some(Sigs {
            records: records.into(),
            refresh_at: now + u64::from(self.validity / 4),
        })
    }
}

/// The canonical form of a record set, as a cache key: the signer's id,
/// the owner (lower case), type, TTL, then each record's canonical data in
/// canonical order. Every order of one set has one key.
pub fn rrset_key(
    signer: u64,
    owner: &[u8],
    rtype: Rtype,
    ttl: Ttl,
    data: &[Data],
    out: &mut Vec<u8>,
) {
    out.clear();
    out.extend_from_slice(&signer.to_be_bytes());
    out.extend(owner.iter().map(u8::to_ascii_lowercase));
    out.extend_from_slice(&rtype.to_int().to_be_bytes());
    out.extend_from_slice(&ttl.as_secs().to_be_bytes());
    let mut each: Vec<Vec<u8>> = data
        .iter()
        .map(|d| {
            let mut v = Vec::new();
            // Into a Vec, which cannot run out of room.
            let _ = d.compose_canonical_rdata(&mut v);
            v
        })
        .collect();
    each.sort_unstable();
    each.dedup();
    for v in each {
        out.extend_from_slice(&(v.len() as u16).to_be_bytes());
        out.extend_from_slice(&v);
    }
}

/// Signatures made while answering, bounded and evicted least recently
/// used; shared by the workers and carried from table to table. Its map is
/// made at the first signature (an edge without signed zones holds none).
#[derive(Debug)]
pub struct SignatureCache {
    entries: NonZeroUsize,
    map: Mutex<Option<LruCache<Box<[u8]>, Sigs>>>,
}

impl SignatureCache {
    /// A cache of at most `entries` signature sets.
    pub fn new(entries: usize) -> Self {
        Self {
            entries: NonZeroUsize::new(entries).unwrap_or(NonZeroUsize::MIN),
            map: Mutex::new(None),
        }
    }

    /// The signatures under `key`, if fresh at `now`.
    pub fn get(&self, key: &[u8], now: u64) -> Option<Sigs> {
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        map.as_mut()?
            .get(key)
            .filter(|s| s.refresh_at > now)
            .cloned()
    }

    /// Keep `sigs` under `key`.
    pub fn put(&self, key: &[u8], sigs: Sigs) {
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        map.get_or_insert_with(|| LruCache::new(self.entries))
            .put(key.into(), sigs);
    }

    /// How many signature sets it holds.
    pub fn len(&self) -> usize {
        let map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        map.as_ref().map_or(0, LruCache::len)
    }

    /// Whether it holds none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A table's signatures: of its static sets by canonical form, and the
/// process's cache of those made while answering.
#[derive(Debug)]
pub struct Signatures {
    /// Static sets' signatures (carried to the next table while fresh;
    /// shared by the tables of a lineage).
    pub fixed: Arc<FxHashMap<Box<[u8]>, Sigs>>,
    /// Made while answering.
    pub cache: Arc<SignatureCache>,
    /// When the table compiled (seconds since the Unix epoch).
    pub now: u64,
    /// The earliest time a fixed signature is due to be made again: the
    /// edge compiles the table anew by then.
    pub refresh_at: Option<u64>,
}

impl Signatures {
    /// No signatures yet; `previous` lends its fresh ones and its cache.
    pub fn new(previous: Option<&Signatures>, now: u64) -> Self {
        Self {
            fixed: Arc::default(),
            cache: previous.map_or_else(
                || Arc::new(SignatureCache::new(SIGNATURE_CACHE_ENTRIES)),
                |p| p.cache.clone(),
            ),
            now,
            refresh_at: None,
        }
    }

    /// The signatures of a static set: from `previous` when fresh, else
    /// made now.
    #[allow(clippy::too_many_arguments)]
    pub fn fixed(
        &mut self,
        previous: Option<&Signatures>,
        signer: &ZoneSigner,
        owner: &WireName,
        rtype: Rtype,
        ttl: Ttl,
        data: &[Data],
        key: &mut Vec<u8>,
    ) -> Option<Sigs> {
        rrset_key(signer.id, owner.as_slice(), rtype, ttl, data, key);
        if let Some(s) = self.fixed.get(key.as_slice()) {
            return Some(s.clone());
        }
        let sigs = previous
            .and_then(|p| p.fixed.get(key.as_slice()))
            .filter(|s| s.refresh_at > self.now)
            .cloned()
            .or_else(|| signer.sign(owner, rtype, ttl, data, self.now))?;
        self.refresh_at = Some(
            self.refresh_at
                .map_or(sigs.refresh_at, |r| r.min(sigs.refresh_at)),
        );
        Arc::make_mut(&mut self.fixed).insert(key.as_slice().into(), sigs.clone());
        Some(sigs)
    }
}

/// `\000.<name>`: the next name of a compact-denial NSEC (RFC 9824 3), or
/// the name itself when one more label does not fit.
pub fn next_name(owner: &[u8]) -> WireName {
    let mut v = Vec::with_capacity(owner.len() + 2);
    v.extend_from_slice(&[1, 0]);
    v.extend(owner.iter().map(u8::to_ascii_lowercase));
    Name::from_octets(v)
        .or_else(|_| Name::from_octets(owner.to_ascii_lowercase()))
        .unwrap_or_else(|_| Name::root_vec())
}

impl Builder<'_> {
    /// Sign the static sets of signed zones (after every other step: the
    /// apex gains its key sets here).
    pub(super) fn sign(&mut self, previous: Option<&Signatures>) -> Result<(), CompileError> {
        let snapshot = self.snapshot;
        let mut any = false;
        for zone in snapshot.catalog.zones.values() {
            let (Some(settings), Some(&slot)) = (&zone.dnssec, self.zone_slot.get(&zone.id)) else {
                continue;
            };
            let info = &self.table.zones[slot as usize];
            let signer = ZoneSigner::new(settings, &info.apex)?;
            let ttl = Ttl::from_secs(zone.default_ttl);
            let keys = [
                (48, &signer.dnskey),
                (59, &signer.cds),
                (60, &signer.cdnskey),
            ]
            .map(|(code, data)| Set {
                rtype: RecordType::Generic(code),
                ttl,
                data: SetData::Static(data.clone()),
                extra: Box::new([]),
                sigs: None,
            });
            let apex = self.entry_for(&zone.apex, slot);
            let mut sets = std::mem::take(&mut apex.sets).into_vec();
            sets.extend(keys);
            sets.sort_by_key(|s| s.rtype);
            apex.sets = sets.into_boxed_slice();
            self.table.zones[slot as usize].signer = Some(Arc::new(signer));
            any = true;
        }
        if !any {
            return Ok(());
        }
        let mut key = Vec::new();
        let sigs = &mut self.table.signatures;
        for info in &mut self.table.zones {
            let Some(signer) = info.signer.clone() else {
                continue;
            };
            info.soa_sigs = sigs.fixed(
                previous,
                &signer,
                &info.apex,
                Rtype::SOA,
                info.soa_ttl,
                std::slice::from_ref(&info.soa),
                &mut key,
            );
            info.ns_sigs = sigs.fixed(
                previous,
                &signer,
                &info.apex,
                Rtype::NS,
                info.ns_ttl,
                &info.ns,
                &mut key,
            );
        }
        let zones = &self.table.zones;
        let entries = Arc::make_mut(&mut self.table.entries);
        for (name, &index) in self.table.names.iter() {
            let entry = &mut entries[index as usize];
            let wildcard = name.len() > 1 && name[0] == 1 && name[1] == b'*';
            let Ok(owner) = Name::from_octets(name.to_vec()) else {
                continue;
            };
            if let Some(signer) = &zones[entry.zone as usize].signer
                && !wildcard
            {
                for set in entry.sets.iter_mut() {
                    if let SetData::Static(data) = &set.data {
                        let rtype = gslb_shared::wire::rtype(set.rtype);
                        set.sigs =
                            sigs.fixed(previous, signer, &owner, rtype, set.ttl, data, &mut key);
                    }
                }
                if let Some(link) = &mut entry.cname_set {
                    let data = std::slice::from_ref(&link.data);
                    link.sigs = sigs.fixed(
                        previous,
                        signer,
                        &owner,
                        Rtype::CNAME,
                        link.ttl,
                        data,
                        &mut key,
                    );
                }
            }
            // Each hop of a chain under its own owner and zone; the first
            // is the query name's, known here unless a wildcard made it.
            if let Some(chain) = &mut entry.cname {
                for link in chain.links.iter_mut() {
                    let Some(signer) = &zones[link.zone as usize].signer else {
                        continue;
                    };
                    let owner = match &link.owner {
                        Some(o) => o,
                        None if !wildcard => &owner,
                        None => continue,
                    };
                    let data = std::slice::from_ref(&link.data);
                    link.sigs = sigs.fixed(
                        previous,
                        signer,
                        owner,
                        Rtype::CNAME,
                        link.ttl,
                        data,
                        &mut key,
                    );
                }
            }
        }
        Ok(())
    }
}
