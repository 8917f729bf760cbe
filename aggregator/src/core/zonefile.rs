//! Zone files in and out: an RFC 1035 master file read with `domain`'s
//! zone file parser into the zone and static record sets it describes
//! ([`read()`]), planned and applied like a declarative document scoped to
//! that zone; and a zone written back as a master file ([`write()`]),
//! pool-backed names with their current answer, marked.

mod read;
mod write;

pub use read::{MAX_ZONE_FILE_BYTES, MAX_ZONE_FILE_RECORDS, ZoneFile, read};
pub use write::write;

use std::collections::HashMap;
use std::net::IpAddr;

use gslb_shared::selection::{CatalogIndex, Family, Query, Selector};
use gslb_shared::wire::WireError;
use gslb_shared::{DnsName, RecordData, RecordSet, RecordType, Snapshot, Steering};
use rand::SeedableRng;

/// The master file of the zone at `apex` in `snapshot` (`None`: no such
/// zone). A pool-backed set is written as the whole answer it gives now to
/// a client in no region: every address selection would hand out, in
/// address order (neither steering nor `firstN` applied).
pub fn export(snapshot: &Snapshot, apex: &DnsName) -> Result<Option<String>, WireError> {
    let Some(zone) = snapshot.catalog.zones.values().find(|z| &z.apex == apex) else {
        return Ok(None);
    };
    let records: Vec<&RecordSet> = snapshot
        .catalog
        .records
        .values()
        .filter(|r| r.zone == zone.id)
        .collect();
    let facts: HashMap<_, _> = snapshot.facts.iter().map(|(k, v)| (*k, *v)).collect();
    let index = CatalogIndex::new(&snapshot.catalog, &facts);
    let answer = |r: &RecordSet| -> Vec<IpAddr> {
        let RecordData::Dynamic(d) = &r.data else {
            return Vec::new();
        };
        let whole = gslb_shared::DynamicRecord {
            steering: Steering::RoundRobin,
            first_n: 0,
            ..d.clone()
        };
        let family = if r.rtype == RecordType::Aaaa {
            Family::V6
        } else {
            Family::V4
        };
        let query = Query {
            family,
            region: None,
            rotation: 0,
        };
        let mut rng = rand::rngs::StdRng::seed_from_u64(0);
        let mut selector = Selector::new();
        let (_, answers) = selector.select(&index, &whole, query, &mut rng, None);
        let mut addrs: Vec<IpAddr> = answers.iter().map(|a| a.address).collect();
        addrs.sort();
        addrs.dedup();
        addrs
    };
    write(zone, &records, snapshot.version, answer).map(Some)
}
