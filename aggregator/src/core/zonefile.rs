//! Zone files in and out: an RFC 1035 master file read with `domain`'s
//! zone file parser into the zone and static record sets it describes
//! ([`read()`]), planned and applied like a declarative document scoped to
//! that zone; and a zone written back as a master file ([`write()`]),
//! pool-backed names with their current answer, marked.

mod read;
mod write;

pub use read::{MAX_ZONE_FILE_BYTES, MAX_ZONE_FILE_RECORDS, Options, ZoneFile, read};
pub use write::write;

use gslb_shared::wire::WireError;
use gslb_shared::wire::zone_data;
use gslb_shared::{DnsName, Snapshot};

/// The master file of the zone at `apex` in `snapshot` (`None`: no such
/// zone). A pool-backed set is written as the whole answer it gives now to
/// a client in no region (see [`zone_data::zone_data`]).
pub fn export(snapshot: &Snapshot, apex: &DnsName) -> Result<Option<String>, WireError> {
    let Some(zone) = snapshot.catalog.zones.values().find(|z| &z.apex == apex) else {
        return Ok(None);
    };
    let index = zone_data::index(snapshot);
    let sets = zone_data::zone_data(snapshot, &index, zone)?;
    Ok(Some(write(apex, &sets, snapshot.version)))
}
