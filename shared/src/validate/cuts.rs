//! Delegation rules: an NS set below its zone's apex is a zone cut. The
//! parent answers only its NS and DS sets there and keeps addresses as
//! glue; anything else at or below the cut would never be served, so it
//! is refused rather than silently hidden.

use std::collections::HashSet;

use super::error::{FieldError, Findings};
use crate::model::{Catalog, DnsName, RecordData, RecordSet, RecordType, Zone};

/// Check a record set against the highest zone cut at or above its name
/// in its zone (`cut`, `None` when there is none). The field is relative
/// to the record set.
pub fn placement(r: &RecordSet, zone: &Zone, cut: Option<&DnsName>) -> Result<(), FieldError> {
    let refuse = |field: &str, rule: String| {
        Err(FieldError {
            field: field.into(),
            rule,
        })
    };
    if r.name == zone.apex {
        return match r.rtype {
            RecordType::Ns => refuse(
                "type",
                "the apex NS set is the zone's ns list, not a record set".into(),
            ),
            RecordType::Ds => refuse(
                "type",
                "a DS set belongs at a delegation point (an NS set below the apex), in the parent zone".into(),
            ),
            _ => Ok(()),
        };
    }
    let dynamic = matches!(r.data, RecordData::Dynamic(_));
    match cut {
        None if r.rtype == RecordType::Ds => refuse(
            "type",
            "a DS set belongs at a delegation point: create the NS set at this name first".into(),
        ),
        None => Ok(()),
        Some(cut) if cut != &r.name => {
            if matches!(r.rtype, RecordType::A | RecordType::Aaaa) && !dynamic {
                return Ok(());
            }
            refuse(
                "name",
                format!(
                    "is below the delegation point {cut}: only glue (static A or AAAA) may be there"
                ),
            )
        }
        Some(cut) if dynamic => refuse(
            "data.dynamic",
            format!("a dynamic (pool-backed) record cannot be at the delegation point {cut}"),
        ),
        Some(cut) => match r.rtype {
            RecordType::Ns | RecordType::Ds | RecordType::A | RecordType::Aaaa => Ok(()),
            RecordType::Cname => refuse(
                "type",
                format!("a CNAME cannot be at the delegation point {cut}"),
            ),
            t => refuse(
                "type",
                format!(
                    "{t} data at the delegation point {cut} would never be served: only NS, DS and glue (A, AAAA) may be there"
                ),
            ),
        },
    }
}

/// The highest name at or above `name`, below `apex`, for which `is_cut`
/// holds.
pub fn highest_cut(
    name: &DnsName,
    apex: &DnsName,
    is_cut: impl Fn(&DnsName) -> bool,
) -> Option<DnsName> {
    let mut found = None;
    let mut n = Some(name.clone());
    while let Some(c) = n {
        if &c == apex || !c.is_in_zone(apex) {
            break;
        }
        if is_cut(&c) {
            found = Some(c.clone());
        }
        n = c.parent();
    }
    found
}

/// Check every record set against the cuts of its zone.
pub(super) fn cuts(f: &mut Findings, catalog: &Catalog) {
    let cuts: HashSet<(_, &DnsName)> = catalog
        .records
        .values()
        .filter(|r| r.rtype == RecordType::Ns)
        .filter(|r| catalog.zones.get(&r.zone).is_some_and(|z| z.apex != r.name))
        .map(|r| (r.zone, &r.name))
        .collect();
    for (id, r) in &catalog.records {
        let Some(zone) = catalog.zones.get(&r.zone) else {
            continue;
        };
        let cut = highest_cut(&r.name, &zone.apex, |n| cuts.contains(&(r.zone, n)));
        if let Err(e) = placement(r, zone, cut.as_ref()) {
            f.add(&format!("records[{id}].{}", e.field), e.rule);
        }
    }
}
