//! Writing a zone as a master file: absolute names, the SOA with our
//! serial, the apex NS set, then every record set in name order, each
//! record presented by `domain`. A pool-backed set is written as the
//! answer it gives now, after a comment that marks it: another server
//! loading the file serves that answer without steering.

use std::fmt::Write as _;
use std::net::IpAddr;

use domain::base::iana::Class;
use domain::base::zonefile_fmt::{DisplayKind, ZonefileFmt};
use domain::base::{Record, Ttl};
use domain::rdata::{A, Aaaa, Ns, Soa, ZoneRecordData};
use gslb_shared::wire::{self, Data, WireError};
use gslb_shared::{RecordData, RecordSet, Zone};

/// Sort key: labels from the top down, then the type code.
fn order(r: &RecordSet) -> (Vec<String>, u16) {
    let mut labels: Vec<String> = r.name.as_str().split('.').map(str::to_owned).collect();
    labels.reverse();
    (labels, r.rtype.code())
}

/// One record in `domain`'s zone file presentation (names with their
/// trailing dot: plain `Display` leaves some out).
fn line(out: &mut String, owner: &wire::WireName, ttl: u32, data: &Data) {
    let record = Record::new(owner, Class::IN, Ttl::from_secs(ttl), data);
    let _ = writeln!(out, "{}", record.display_zonefile(DisplayKind::Simple));
}

/// The master file of `zone` (its record sets in `records`) at snapshot
/// `version`. `answer` gives a pool-backed set's current addresses.
pub fn write(
    zone: &Zone,
    records: &[&RecordSet],
    version: u64,
    answer: impl Fn(&RecordSet) -> Vec<IpAddr>,
) -> Result<String, WireError> {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "; zone {} written by gslb at version {version}\n\
         ; A set marked \"dynamic\" is pool-backed: what follows the mark is its\n\
         ; answer now, which another server serves as is, without steering.",
        zone.apex
    );
    let apex = wire::wire_name(&zone.apex)?;
    let s = &zone.soa;
    let soa: Data = ZoneRecordData::Soa(Soa::new(
        wire::wire_name(&s.mname)?,
        wire::wire_name(&s.rname)?,
        // The same serial the edges serve (RFC 1982 arithmetic: low bits).
        domain::base::Serial(version as u32),
        Ttl::from_secs(s.refresh),
        Ttl::from_secs(s.retry),
        Ttl::from_secs(s.expire),
        Ttl::from_secs(s.negative_ttl),
    ));
    line(&mut out, &apex, zone.default_ttl, &soa);
    for n in &zone.ns {
        let ns: Data = ZoneRecordData::Ns(Ns::new(wire::wire_name(n)?));
        line(&mut out, &apex, zone.default_ttl, &ns);
    }
    let mut sorted: Vec<&RecordSet> = records.to_vec();
    sorted.sort_by_key(|r| order(r));
    for r in sorted {
        let owner = wire::wire_name(&r.name)?;
        match &r.data {
            RecordData::Static(rdata) => {
                for d in rdata {
                    line(&mut out, &owner, r.ttl, &wire::data(d)?);
                }
            }
            RecordData::Dynamic(d) => {
                let now = answer(r);
                let _ = writeln!(
                    out,
                    "; dynamic: {} {} is pool-backed ({:?} over pools {:?}); {}",
                    r.name,
                    r.rtype,
                    d.steering,
                    d.pools.iter().map(|p| p.0).collect::<Vec<_>>(),
                    if now.is_empty() {
                        "it answers no address now"
                    } else {
                        "its answer now:"
                    }
                );
                for addr in now {
                    let data: Data = match addr {
                        IpAddr::V4(a) => ZoneRecordData::A(A::new(a)),
                        IpAddr::V6(a) => ZoneRecordData::Aaaa(Aaaa::new(a)),
                    };
                    line(&mut out, &owner, r.ttl, &data);
                }
            }
        }
    }
    Ok(out)
}
