//! Writing a zone as a master file: absolute names, the SOA with our
//! serial, the apex NS set, then every record set in name order, each
//! record presented by `domain`. A pool-backed set is written as the
//! answer it gives now, after a comment that marks it: another server
//! loading the file serves that answer without steering.

use std::fmt::Write as _;

use domain::base::iana::Class;
use domain::base::zonefile_fmt::{DisplayKind, ZonefileFmt};
use domain::base::{Record, Ttl};
use gslb_shared::RecordData;
use gslb_shared::wire::zone_data::DataSet;
use gslb_shared::wire::{self, Data};

/// One record in `domain`'s zone file presentation (names with their
/// trailing dot: plain `Display` leaves some out).
fn line(out: &mut String, owner: &wire::WireName, ttl: u32, data: &Data) {
    let record = Record::new(owner, Class::IN, Ttl::from_secs(ttl), data);
    let _ = writeln!(out, "{}", record.display_zonefile(DisplayKind::Simple));
}

/// The master file of the zone at `apex` whose data ([`zone_data`]) is
/// `sets`, at snapshot `version`.
///
/// [`zone_data`]: gslb_shared::wire::zone_data::zone_data
pub fn write(apex: &gslb_shared::DnsName, sets: &[DataSet<'_>], version: u64) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "; zone {apex} written by gslb at version {version}\n\
         ; A set marked \"dynamic\" is pool-backed: what follows the mark is its\n\
         ; answer now, which another server serves as is, without steering."
    );
    for s in sets {
        if let Some(r) = s.set
            && let RecordData::Dynamic(d) = &r.data
        {
            let _ = writeln!(
                out,
                "; dynamic: {} {} is pool-backed ({:?} over pools {:?}); {}",
                r.name,
                r.rtype,
                d.steering,
                d.pools.iter().map(|p| p.0).collect::<Vec<_>>(),
                if s.records.is_empty() {
                    "it answers no address now"
                } else {
                    "its answer now:"
                }
            );
        }
        for d in &s.records {
            line(&mut out, &s.owner, s.ttl, d);
        }
    }
    out
}
