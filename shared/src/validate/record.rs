//! Record set rules: inside the zone, data matching the type, dynamic answers
//! only for address types.

use std::collections::HashSet;

use super::error::{Findings, ValidationError, in_range};
use super::{MAX_FIRST_N, MAX_TTL, region};
use crate::model::{Rdata, RecordData, RecordSet, RecordType, Zone};
use crate::wire;

/// Most pools one branch may list.
pub const MAX_POOLS: usize = 16;
/// Most rdata in one static set.
pub const MAX_RDATA: usize = 64;

/// Validate a record set against the zone it is written into.
pub fn record(record: &RecordSet, zone: &Zone) -> Result<(), ValidationError> {
    let mut f = Findings::new("");
    f.require(
        record.zone == zone.id,
        "zone",
        format!("must be the zone written into ({})", zone.id),
    );
    f.require(
        record.name.is_in_zone(&zone.apex),
        "name",
        format!("must be inside zone {}", zone.apex),
    );
    in_range(&mut f, "ttl", record.ttl, 0, MAX_TTL);
    match &record.data {
        RecordData::Static(rdata) => static_data(&mut f, record, zone, rdata),
        RecordData::Dynamic(dynamic) => {
            f.require(
                matches!(
                    record.rtype,
                    RecordType::A | RecordType::Aaaa | RecordType::Cname
                ),
                "type",
                "must be A, AAAA or CNAME for a dynamic (pool-backed) record",
            );
            f.require(
                !dynamic.flatten || matches!(record.rtype, RecordType::A | RecordType::Aaaa),
                "data.dynamic.flatten",
                "only an A or AAAA record is flattened (a CNAME pool answers the name itself)",
            );
            f.require(
                record.rtype != RecordType::Cname || record.name != zone.apex,
                "name",
                "a CNAME pool cannot be at the zone apex (the apex has SOA and NS): \
                 use an A or AAAA record with flatten: true",
            );
            f.require(
                record.rtype != RecordType::Cname || dynamic.first_n <= 1,
                "data.dynamic.firstN",
                "must be 0 or 1 for a CNAME pool: a name has one CNAME",
            );
            in_range(
                &mut f,
                "data.dynamic.firstN",
                dynamic.first_n,
                0,
                MAX_FIRST_N,
            );
            pool_list(&mut f, "data.dynamic.pools", &dynamic.pools);
            super::geo::region_locations(&mut f, dynamic);
            let mut seen_regions = HashSet::new();
            let mut seen_keys = HashSet::new();
            for (i, branch) in dynamic.geo.iter().enumerate() {
                let at = format!("data.dynamic.geo[{i}]");
                f.require(
                    !branch.regions.is_empty() || branch.needs_place(),
                    &at,
                    "must list at least one region, country, continent, subdivision or asn",
                );
                super::geo::branch_keys(&mut f, &at, branch);
                super::geo::keys_once(&mut f, &at, branch, &mut seen_keys);
                for (j, r) in branch.regions.iter().enumerate() {
                    if let Err(rule) = region(r) {
                        f.add(&format!("{at}.regions[{j}]"), rule);
                    }
                    f.require(
                        seen_regions.insert(r.clone()),
                        &format!("{at}.regions[{j}]"),
                        format!("region {r} appears in more than one branch"),
                    );
                }
                pool_list(&mut f, &format!("{at}.pools"), &branch.pools);
            }
        }
    }
    f.finish()
}

fn pool_list(f: &mut Findings, field: &str, pools: &[crate::model::PoolId]) {
    f.require(!pools.is_empty(), field, "must list at least one pool");
    f.require(
        pools.len() <= MAX_POOLS,
        field,
        format!("must list at most {MAX_POOLS} pools"),
    );
    let unique: HashSet<_> = pools.iter().collect();
    f.require(
        unique.len() == pools.len(),
        field,
        "must not list a pool twice",
    );
}

fn static_data(f: &mut Findings, record: &RecordSet, zone: &Zone, rdata: &[Rdata]) {
    f.require(
        !rdata.is_empty(),
        "data.static",
        "must hold at least one record",
    );
    f.require(
        rdata.len() <= MAX_RDATA,
        "data.static",
        format!("must hold at most {MAX_RDATA} records"),
    );
    if record.rtype == RecordType::Cname {
        f.require(
            rdata.len() <= 1,
            "data.static",
            "a CNAME set holds exactly one record",
        );
        f.require(
            record.name != zone.apex,
            "name",
            "a CNAME cannot be at the zone apex",
        );
    }
    for (i, data) in rdata.iter().enumerate() {
        let at = format!("data.static[{i}]");
        if data.record_type() != record.rtype {
            f.add(
                &at,
                format!(
                    "is {:?} data in a {:?} set",
                    data.record_type(),
                    record.rtype
                ),
            );
            continue;
        }
        match data {
            Rdata::Txt(strings) => {
                f.require(
                    !strings.is_empty(),
                    &at,
                    "a TXT record holds at least one string",
                );
                for (j, s) in strings.iter().enumerate() {
                    f.require(
                        s.len() <= 255,
                        &format!("{at}[{j}]"),
                        "a TXT string is at most 255 bytes",
                    );
                }
            }
            Rdata::Caa { flags, tag, value } => {
                f.require(
                    *flags == 0 || *flags == 128,
                    &format!("{at}.flags"),
                    "must be 0 or 128",
                );
                f.require(
                    !tag.is_empty()
                        && tag.len() <= 15
                        && tag.bytes().all(|b| b.is_ascii_alphanumeric()),
                    &format!("{at}.tag"),
                    "must be 1 to 15 letters or digits",
                );
                f.require(
                    value.len() <= 1024,
                    &format!("{at}.value"),
                    "must be at most 1024 bytes",
                );
            }
            Rdata::Cname(target) => {
                f.require(
                    *target != record.name,
                    &at,
                    "a CNAME must not point at itself",
                );
            }
            Rdata::Naptr {
                flags,
                services,
                regexp,
                replacement,
                ..
            } => {
                f.require(
                    flags.bytes().all(|b| b.is_ascii_alphanumeric()),
                    &format!("{at}.flags"),
                    "must be letters and digits (RFC 3403 4.1)",
                );
                for (field, text) in [("flags", flags), ("services", services), ("regexp", regexp)]
                {
                    f.require(
                        text.len() <= 255,
                        &format!("{at}.{field}"),
                        "must be at most 255 bytes",
                    );
                }
                f.require(
                    regexp.is_empty() != replacement.is_none(),
                    &format!("{at}.replacement"),
                    "give regexp or replacement, exactly one (RFC 3403 4.1)",
                );
            }
            Rdata::Tlsa {
                usage,
                selector,
                matching_type,
                data,
            } => {
                in_range_u8(f, &format!("{at}.usage"), *usage, 3);
                in_range_u8(f, &format!("{at}.selector"), *selector, 1);
                in_range_u8(f, &format!("{at}.matchingType"), *matching_type, 2);
                let need = match matching_type {
                    1 => Some(32),
                    2 => Some(64),
                    _ => None,
                };
                hex_field(f, &format!("{at}.data"), data, need);
            }
            Rdata::Sshfp {
                algorithm,
                fingerprint_type,
                fingerprint,
            } => {
                f.require(
                    matches!(algorithm, 1 | 2 | 3 | 4 | 6),
                    &format!("{at}.algorithm"),
                    "must be 1 (RSA), 2 (DSA), 3 (ECDSA), 4 (Ed25519) or 6 (Ed448)",
                );
                let need = match fingerprint_type {
                    1 => Some(20),
                    2 => Some(32),
                    _ => {
                        f.add(
                            &format!("{at}.fingerprintType"),
                            "must be 1 (SHA-1) or 2 (SHA-256)",
                        );
                        None
                    }
                };
                hex_field(f, &format!("{at}.fingerprint"), fingerprint, need);
            }
            Rdata::Ds {
                algorithm,
                digest_type,
                digest,
                ..
            } => {
                f.require(
                    *algorithm != 0,
                    &format!("{at}.algorithm"),
                    "must be a DNSSEC algorithm number (1 to 255)",
                );
                let need = match digest_type {
                    1 => Some(20),
                    2 => Some(32),
                    4 => Some(48),
                    _ => {
                        f.add(
                            &format!("{at}.digestType"),
                            "must be 1 (SHA-1), 2 (SHA-256) or 4 (SHA-384)",
                        );
                        None
                    }
                };
                hex_field(f, &format!("{at}.digest"), digest, need);
            }
            Rdata::Generic { rtype, data } => {
                f.require(
                    RecordType::generic_allowed(*rtype),
                    &format!("{at}.rtype"),
                    format!(
                        "TYPE{rtype} has a form of its own, or cannot be served (SOA, OPT, DNSSEC, query and meta types)"
                    ),
                );
                if let Err(e) = wire::hex_bytes(data) {
                    f.add(&format!("{at}.data"), format!("must be hex: {e}"));
                }
            }
            Rdata::Svcb(b) | Rdata::Https(b) => {
                // RFC 9460 2.4.2: alias mode carries no parameters.
                f.require(
                    b.priority != 0 || b.params.trim().is_empty(),
                    &format!("{at}.params"),
                    "must be empty in alias mode (priority 0)",
                );
            }
            Rdata::A(_)
            | Rdata::Aaaa(_)
            | Rdata::Ns(_)
            | Rdata::Mx { .. }
            | Rdata::Srv { .. }
            | Rdata::Ptr(_) => {}
        }
    }
    wire_size(f, record, rdata);
}

fn in_range_u8(f: &mut Findings, field: &str, value: u8, max: u8) {
    f.require(value <= max, field, format!("must be 0 to {max}"));
}

/// `text` must be hex, non-empty, and `need` bytes long when given.
fn hex_field(f: &mut Findings, field: &str, text: &str, need: Option<usize>) {
    match wire::hex_bytes(text) {
        Err(e) => f.add(field, format!("must be hex: {e}")),
        Ok(bytes) if bytes.is_empty() => f.add(field, "must not be empty"),
        Ok(bytes) => {
            if let Some(n) = need {
                f.require(
                    bytes.len() == n,
                    field,
                    format!(
                        "must be {n} bytes ({} hex digits) for this digest, not {}",
                        n * 2,
                        bytes.len()
                    ),
                );
            }
        }
    }
}

/// Measure the set as the edge will send it: each record must have a wire
/// form, and the whole set must fit one DNS message (a larger one used to
/// be accepted, and every edge then failed to compile the snapshot).
fn wire_size(f: &mut Findings, record: &RecordSet, rdata: &[Rdata]) {
    let mut data = Vec::with_capacity(rdata.len());
    for (i, r) in rdata.iter().enumerate() {
        match wire::data(r) {
            Ok(d) => data.push(d),
            // The parameter list is read by `domain`: its error names them.
            Err(e) => match (r, e.0.strip_prefix("params: ")) {
                (Rdata::Svcb(_) | Rdata::Https(_), Some(rule)) => {
                    f.add(&format!("data.static[{i}].params"), rule)
                }
                _ => f.add(&format!("data.static[{i}]"), e.to_string()),
            },
        }
    }
    if data.len() == rdata.len()
        && let Err(e) = wire::answer_size(&record.name, record.rtype, &data)
    {
        f.add("data.static", e.to_string());
    }
}
