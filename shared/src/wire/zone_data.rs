//! A zone's whole data at one snapshot, in wire form: the SOA (its serial
//! the snapshot version's low 32 bits, as the edges answer it), the apex
//! NS set, then every record set of the zone in name order. A pool-backed
//! set is the whole answer it gives now to a client in no region: every
//! address selection would hand out, in address order (neither steering
//! nor `firstN` applied), or a CNAME pool's first member. A zone transfer sends this and a master file
//! holds it; a server loading either serves it without steering.

use std::collections::HashMap;
use std::net::IpAddr;

use domain::base::Serial;
use domain::rdata::{A, Aaaa, Cname, Ns, Soa, ZoneRecordData};
use rand::SeedableRng;

use super::{Data, WireError, WireName, data, wire_name};
use crate::model::{DynamicRecord, RecordData, RecordSet, RecordType, Snapshot, Steering, Zone};
use crate::selection::{CatalogIndex, Family, Outcome, Query, SelectionInput, Selector};

/// One record set of a zone's data.
#[derive(Debug, Clone)]
pub struct DataSet<'a> {
    /// The catalog's set; `None` for the SOA and the apex NS set, which
    /// come from the zone.
    pub set: Option<&'a RecordSet>,
    /// Owner.
    pub owner: WireName,
    /// TTL of every record.
    pub ttl: u32,
    /// The records (empty for a pool-backed set that answers nothing now).
    pub records: Vec<Data>,
}

/// The SOA record data of `zone` at snapshot `version`.
pub fn soa(zone: &Zone, version: u64) -> Result<Data, WireError> {
    let s = &zone.soa;
    Ok(ZoneRecordData::Soa(Soa::new(
        wire_name(&s.mname)?,
        wire_name(&s.rname)?,
        // RFC 1982 arithmetic wraps at 2^32: the low bits of the version.
        Serial(version as u32),
        domain::base::Ttl::from_secs(s.refresh),
        domain::base::Ttl::from_secs(s.retry),
        domain::base::Ttl::from_secs(s.expire),
        domain::base::Ttl::from_secs(s.negative_ttl),
    )))
}

/// The index every pool-backed set of `snapshot` is answered from.
pub fn index(snapshot: &Snapshot) -> CatalogIndex {
    let facts: HashMap<_, _> = snapshot.facts.iter().map(|(k, v)| (*k, *v)).collect();
    CatalogIndex::new(&snapshot.catalog, &facts).with_resolved(snapshot.resolved.clone())
}

/// What a pool-backed set hands out now to a client in no region: every
/// address (a flattened record's hostnames as resolved), in address
/// order; for a CNAME pool, the CNAME to its first member in steering
/// order (round robin at its start).
pub fn current_answer(
    index: &CatalogIndex,
    rtype: RecordType,
    d: &DynamicRecord,
) -> Result<Vec<Data>, WireError> {
    let whole = DynamicRecord {
        steering: Steering::RoundRobin,
        first_n: 0,
        ..d.clone()
    };
    let Some(family) = Family::of(rtype) else {
        return Ok(Vec::new());
    };
    let query = Query {
        family,
        region: None,
        place: crate::Place::UNKNOWN,
        rotation: 0,
        affinity: None,
    };
    // Round robin without firstN hands out every address: the seed only
    // orders them, and they are sorted below.
    let mut rng = rand::rngs::StdRng::seed_from_u64(0);
    let mut selector = Selector::new();
    let (outcome, answers) = selector.select(index, &whole, query, &mut rng, None);
    if family == Family::Name {
        let pool = match outcome {
            Outcome::Pool { pool, .. } | Outcome::FailOpen { pool } => pool,
            Outcome::FailStatic { .. } | Outcome::NoData => return Ok(Vec::new()),
        };
        let host = answers.first().and_then(|a| {
            let members = index.pool(pool)?.members;
            members
                .iter()
                .find(|m| Some(m.id) == a.member)?
                .address
                .host()
        });
        return host
            .map(|h| Ok(vec![ZoneRecordData::Cname(Cname::new(wire_name(h)?))]))
            .unwrap_or(Ok(Vec::new()));
    }
    // A flattened record's hostname members answer what they resolved to.
    let v6 = family == Family::V6;
    let mut addrs: Vec<IpAddr> = (answers.iter())
        .flat_map(|a| match (a.address, a.member) {
            (Some(ip), _) => vec![ip],
            (None, Some(m)) => (index.resolved(m).into_iter())
                .flat_map(|r| r.of_family(v6))
                .collect(),
            (None, None) => Vec::new(),
        })
        .collect();
    addrs.sort();
    addrs.dedup();
    Ok(addrs
        .into_iter()
        .map(|addr| match addr {
            IpAddr::V4(a) => ZoneRecordData::A(A::new(a)),
            IpAddr::V6(a) => ZoneRecordData::Aaaa(Aaaa::new(a)),
        })
        .collect())
}

/// Sort key: labels from the top down, then the type code.
fn order(r: &RecordSet) -> (Vec<&str>, u16) {
    let mut labels: Vec<&str> = r.name.as_str().split('.').collect();
    labels.reverse();
    (labels, r.rtype.code())
}

/// The record sets of `zone` in `snapshot`, in name order.
pub fn sorted_sets<'a>(snapshot: &'a Snapshot, zone: &Zone) -> Vec<&'a RecordSet> {
    let mut sets: Vec<&RecordSet> = (snapshot.catalog.records.values())
        .filter(|r| r.zone == zone.id)
        .collect();
    sets.sort_by_cached_key(|r| order(r));
    sets
}

/// The records of one set: its static data, or a pool-backed set's
/// addresses now.
pub fn set_records(index: &CatalogIndex, r: &RecordSet) -> Result<Vec<Data>, WireError> {
    Ok(match &r.data {
        RecordData::Static(rdata) => rdata.iter().map(data).collect::<Result<_, _>>()?,
        RecordData::Dynamic(d) => current_answer(index, r.rtype, d)?,
    })
}

/// The TTL a set is sent with: its own, or for a flattened record at most
/// the shortest TTL its hostname members resolved with.
pub fn set_ttl(index: &CatalogIndex, r: &RecordSet) -> u32 {
    let RecordData::Dynamic(d) = &r.data else {
        return r.ttl;
    };
    if !d.flatten {
        return r.ttl;
    }
    (d.all_pools())
        .filter_map(|p| index.pool(*p))
        .flat_map(|p| p.members.iter())
        .filter_map(|m| index.resolved(m.id))
        .map(|res| res.ttl)
        .fold(r.ttl, u32::min)
}

/// The apex NS records of `zone`.
pub fn apex_ns(zone: &Zone) -> Result<Vec<Data>, WireError> {
    (zone.ns.iter())
        .map(|n| Ok(ZoneRecordData::Ns(Ns::new(wire_name(n)?))))
        .collect()
}

/// The data of `zone` in `snapshot`: SOA first, then the apex NS set, then
/// the zone's record sets in name order. `index` is [`index`] of the
/// snapshot (built once for many zones).
pub fn zone_data<'a>(
    snapshot: &'a Snapshot,
    index: &CatalogIndex,
    zone: &'a Zone,
) -> Result<Vec<DataSet<'a>>, WireError> {
    let apex = wire_name(&zone.apex)?;
    let mut out = vec![
        DataSet {
            set: None,
            owner: apex.clone(),
            ttl: zone.default_ttl,
            records: vec![soa(zone, snapshot.version)?],
        },
        DataSet {
            set: None,
            owner: apex,
            ttl: zone.apex_ns_ttl(),
            records: apex_ns(zone)?,
        },
    ];
    for r in sorted_sets(snapshot, zone) {
        out.push(DataSet {
            set: Some(r),
            owner: wire_name(&r.name)?,
            ttl: set_ttl(index, r),
            records: set_records(index, r)?,
        });
    }
    Ok(out)
}
