//! Record sets: static rdata and dynamic pool-backed data.

use std::net::IpAddr;

use gslb_shared::validate::ValidationError;
use gslb_shared::{
    DynamicRecord, GeoBranch, PoolId, Rdata, RecordData, RecordSet, RecordSetId, RecordType,
    Region, ServiceBinding, Steering, ZoneId,
};

use super::{bad, ip, name, u16_field};
use crate::pb;

fn rtype_to_pb(t: RecordType) -> pb::RecordType {
    match t {
        RecordType::A => pb::RecordType::A,
        RecordType::Aaaa => pb::RecordType::Aaaa,
        RecordType::Cname => pb::RecordType::Cname,
        RecordType::Txt => pb::RecordType::Txt,
        RecordType::Mx => pb::RecordType::Mx,
        RecordType::Srv => pb::RecordType::Srv,
        RecordType::Caa => pb::RecordType::Caa,
        RecordType::Ns => pb::RecordType::Ns,
        // By code only (`type_code`).
        RecordType::Ptr
        | RecordType::Naptr
        | RecordType::Tlsa
        | RecordType::Sshfp
        | RecordType::Ds
        | RecordType::Svcb
        | RecordType::Https
        | RecordType::Generic(_) => pb::RecordType::Unspecified,
    }
}

/// A proto record type as a domain one.
pub fn rtype_from_pb(value: i32) -> Result<RecordType, ValidationError> {
    Ok(match pb::RecordType::try_from(value) {
        Ok(pb::RecordType::A) => RecordType::A,
        Ok(pb::RecordType::Aaaa) => RecordType::Aaaa,
        Ok(pb::RecordType::Cname) => RecordType::Cname,
        Ok(pb::RecordType::Txt) => RecordType::Txt,
        Ok(pb::RecordType::Mx) => RecordType::Mx,
        Ok(pb::RecordType::Srv) => RecordType::Srv,
        Ok(pb::RecordType::Caa) => RecordType::Caa,
        Ok(pb::RecordType::Ns) => RecordType::Ns,
        Ok(pb::RecordType::Unspecified) | Err(_) => {
            return Err(bad(
                "type",
                "must be one of A, AAAA, CNAME, TXT, MX, SRV, CAA, NS (others go by type_code)",
            ));
        }
    })
}

/// A record set's type: its code when set, else the named enum.
fn set_type(r: &pb::RecordSet) -> Result<RecordType, ValidationError> {
    if r.type_code == 0 {
        return rtype_from_pb(r.r#type);
    }
    u16::try_from(r.type_code)
        .ok()
        .and_then(RecordType::from_code)
        .ok_or_else(|| {
            bad(
                "type",
                format!("TYPE{} cannot be a record set's type", r.type_code),
            )
        })
}

fn u8_field(at: &str, value: u32) -> Result<u8, ValidationError> {
    u8::try_from(value).map_err(|_| bad(at, "must be 0 to 255"))
}

fn rdata_to_pb(r: &Rdata) -> pb::Rdata {
    use pb::rdata::Data;
    let data = match r {
        Rdata::A(a) => Data::A(a.to_string()),
        Rdata::Aaaa(a) => Data::Aaaa(a.to_string()),
        Rdata::Cname(n) => Data::Cname(n.to_string()),
        Rdata::Ns(n) => Data::Ns(n.to_string()),
        Rdata::Mx {
            preference,
            exchange,
        } => Data::Mx(pb::Mx {
            preference: u32::from(*preference),
            exchange: exchange.to_string(),
        }),
        Rdata::Txt(strings) => Data::Txt(pb::Txt {
            strings: strings.clone(),
        }),
        Rdata::Srv {
            priority,
            weight,
            port,
            target,
        } => Data::Srv(pb::Srv {
            priority: u32::from(*priority),
            weight: u32::from(*weight),
            port: u32::from(*port),
            target: target.to_string(),
        }),
        Rdata::Caa { flags, tag, value } => Data::Caa(pb::Caa {
            flags: u32::from(*flags),
            tag: tag.clone(),
            value: value.clone(),
        }),
        Rdata::Ptr(n) => Data::Ptr(n.to_string()),
        Rdata::Naptr {
            order,
            preference,
            flags,
            services,
            regexp,
            replacement,
        } => Data::Naptr(pb::Naptr {
            order: u32::from(*order),
            preference: u32::from(*preference),
            flags: flags.clone(),
            services: services.clone(),
            regexp: regexp.clone(),
            replacement: replacement
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default(),
        }),
        Rdata::Tlsa {
            usage,
            selector,
            matching_type,
            data,
        } => Data::Tlsa(pb::Tlsa {
            usage: u32::from(*usage),
            selector: u32::from(*selector),
            matching_type: u32::from(*matching_type),
            data: data.clone(),
        }),
        Rdata::Sshfp {
            algorithm,
            fingerprint_type,
            fingerprint,
        } => Data::Sshfp(pb::Sshfp {
            algorithm: u32::from(*algorithm),
            fingerprint_type: u32::from(*fingerprint_type),
            fingerprint: fingerprint.clone(),
        }),
        Rdata::Ds {
            key_tag,
            algorithm,
            digest_type,
            digest,
        } => Data::Ds(pb::Ds {
            key_tag: u32::from(*key_tag),
            algorithm: u32::from(*algorithm),
            digest_type: u32::from(*digest_type),
            digest: digest.clone(),
        }),
        Rdata::Svcb(b) => Data::Svcb(binding_to_pb(b)),
        Rdata::Https(b) => Data::Https(binding_to_pb(b)),
        Rdata::Generic { rtype, data } => Data::Generic(pb::GenericRdata {
            rtype: u32::from(*rtype),
            data: data.clone(),
        }),
    };
    pb::Rdata { data: Some(data) }
}

fn binding_to_pb(b: &ServiceBinding) -> pb::ServiceBinding {
    pb::ServiceBinding {
        priority: u32::from(b.priority),
        target: b
            .target
            .as_ref()
            .map_or_else(String::new, |n| n.to_string()),
        params: b.params.clone(),
    }
}

fn binding_from_pb(at: &str, b: pb::ServiceBinding) -> Result<ServiceBinding, ValidationError> {
    Ok(ServiceBinding {
        priority: u16_field(&format!("{at}.priority"), b.priority)?,
        target: if b.target.is_empty() || b.target == "." {
            None
        } else {
            Some(name(&format!("{at}.target"), &b.target)?)
        },
        params: b.params,
    })
}

fn rdata_from_pb(at: &str, r: pb::Rdata) -> Result<Rdata, ValidationError> {
    use pb::rdata::Data;
    Ok(
        match r.data.ok_or_else(|| bad(at, "must hold record data"))? {
            Data::A(text) => match ip(at, &text)? {
                IpAddr::V4(a) => Rdata::A(a),
                IpAddr::V6(_) => return Err(bad(at, "an A record needs an IPv4 address")),
            },
            Data::Aaaa(text) => match ip(at, &text)? {
                IpAddr::V6(a) => Rdata::Aaaa(a),
                IpAddr::V4(_) => return Err(bad(at, "an AAAA record needs an IPv6 address")),
            },
            Data::Cname(n) => Rdata::Cname(name(at, &n)?),
            Data::Ns(n) => Rdata::Ns(name(at, &n)?),
            Data::Mx(mx) => Rdata::Mx {
                preference: u16_field(&format!("{at}.preference"), mx.preference)?,
                exchange: name(&format!("{at}.exchange"), &mx.exchange)?,
            },
            Data::Txt(txt) => Rdata::Txt(txt.strings),
            Data::Srv(srv) => Rdata::Srv {
                priority: u16_field(&format!("{at}.priority"), srv.priority)?,
                weight: u16_field(&format!("{at}.weight"), srv.weight)?,
                port: u16_field(&format!("{at}.port"), srv.port)?,
                target: name(&format!("{at}.target"), &srv.target)?,
            },
            Data::Caa(caa) => Rdata::Caa {
                flags: u8::try_from(caa.flags)
                    .map_err(|_| bad(&format!("{at}.flags"), "must be 0 or 128"))?,
                tag: caa.tag,
                value: caa.value,
            },
            Data::Ptr(n) => Rdata::Ptr(name(at, &n)?),
            Data::Naptr(n) => Rdata::Naptr {
                order: u16_field(&format!("{at}.order"), n.order)?,
                preference: u16_field(&format!("{at}.preference"), n.preference)?,
                flags: n.flags,
                services: n.services,
                regexp: n.regexp,
                replacement: if n.replacement.is_empty() || n.replacement == "." {
                    None
                } else {
                    Some(name(&format!("{at}.replacement"), &n.replacement)?)
                },
            },
            Data::Tlsa(t) => Rdata::Tlsa {
                usage: u8_field(&format!("{at}.usage"), t.usage)?,
                selector: u8_field(&format!("{at}.selector"), t.selector)?,
                matching_type: u8_field(&format!("{at}.matchingType"), t.matching_type)?,
                data: t.data,
            },
            Data::Sshfp(s) => Rdata::Sshfp {
                algorithm: u8_field(&format!("{at}.algorithm"), s.algorithm)?,
                fingerprint_type: u8_field(&format!("{at}.fingerprintType"), s.fingerprint_type)?,
                fingerprint: s.fingerprint,
            },
            Data::Ds(d) => Rdata::Ds {
                key_tag: u16_field(&format!("{at}.keyTag"), d.key_tag)?,
                algorithm: u8_field(&format!("{at}.algorithm"), d.algorithm)?,
                digest_type: u8_field(&format!("{at}.digestType"), d.digest_type)?,
                digest: d.digest,
            },
            Data::Svcb(b) => Rdata::Svcb(binding_from_pb(at, b)?),
            Data::Https(b) => Rdata::Https(binding_from_pb(at, b)?),
            Data::Generic(g) => Rdata::Generic {
                rtype: u16_field(&format!("{at}.rtype"), g.rtype)?,
                data: g.data,
            },
        },
    )
}

impl From<&RecordSet> for pb::RecordSet {
    fn from(r: &RecordSet) -> Self {
        let data = match &r.data {
            RecordData::Static(rdata) => pb::record_set::Data::StaticData(pb::StaticData {
                rdata: rdata.iter().map(rdata_to_pb).collect(),
            }),
            RecordData::Dynamic(d) => pb::record_set::Data::Dynamic(pb::DynamicData {
                steering: match d.steering {
                    Steering::RoundRobin => pb::Steering::RoundRobin,
                    Steering::Weighted => pb::Steering::Weighted,
                    Steering::Sticky => pb::Steering::Sticky,
                    Steering::Latency => pb::Steering::Latency,
                } as i32,
                pools: d.pools.iter().map(|p| p.0).collect(),
                geo: d
                    .geo
                    .iter()
                    .map(|b| pb::GeoBranch {
                        regions: b.regions.iter().map(ToString::to_string).collect(),
                        pools: b.pools.iter().map(|p| p.0).collect(),
                        countries: b.countries.clone(),
                        continents: b.continents.clone(),
                        subdivisions: b.subdivisions.clone(),
                        asns: b.asns.clone(),
                    })
                    .collect(),
                first_n: d.first_n,
                flatten: d.flatten,
                region_locations: (d.region_locations.iter())
                    .map(|(region, locations)| pb::RegionLocations {
                        region: region.to_string(),
                        locations: locations.iter().map(ToString::to_string).collect(),
                    })
                    .collect(),
            }),
        };
        pb::RecordSet {
            // Views set the revision; requests read the precondition and mask.
            revision: 0,
            expected_revision: 0,
            update_mask: None,
            id: r.id.0,
            zone_id: r.zone.0,
            name: r.name.to_string(),
            r#type: rtype_to_pb(r.rtype) as i32,
            ttl: r.ttl,
            data: Some(data),
            type_code: u32::from(r.rtype.code()),
        }
    }
}

impl TryFrom<pb::RecordSet> for RecordSet {
    type Error = ValidationError;

    fn try_from(r: pb::RecordSet) -> Result<Self, Self::Error> {
        let rtype = set_type(&r)?;
        let data = match r
            .data
            .ok_or_else(|| bad("data", "must be static or dynamic"))?
        {
            pb::record_set::Data::StaticData(s) => RecordData::Static(
                s.rdata
                    .into_iter()
                    .enumerate()
                    .map(|(i, rd)| rdata_from_pb(&format!("data.static[{i}]"), rd))
                    .collect::<Result<_, _>>()?,
            ),
            pb::record_set::Data::Dynamic(d) => RecordData::Dynamic(DynamicRecord {
                steering: match pb::Steering::try_from(d.steering) {
                    Ok(pb::Steering::RoundRobin) => Steering::RoundRobin,
                    Ok(pb::Steering::Weighted) => Steering::Weighted,
                    Ok(pb::Steering::Sticky) => Steering::Sticky,
                    Ok(pb::Steering::Latency) => Steering::Latency,
                    _ => {
                        return Err(bad(
                            "data.dynamic.steering",
                            "must be roundrobin, weighted, sticky or latency",
                        ));
                    }
                },
                pools: d.pools.into_iter().map(PoolId).collect(),
                geo: d
                    .geo
                    .into_iter()
                    .map(|b| GeoBranch {
                        regions: b.regions.into_iter().map(Region::new).collect(),
                        pools: b.pools.into_iter().map(PoolId).collect(),
                        countries: b.countries,
                        continents: b.continents,
                        subdivisions: b.subdivisions,
                        asns: b.asns,
                    })
                    .collect(),
                first_n: d.first_n,
                flatten: d.flatten,
                region_locations: region_locations_from_pb(d.region_locations)?,
            }),
        };
        Ok(RecordSet {
            id: RecordSetId(r.id),
            zone: ZoneId(r.zone_id),
            name: name("name", &r.name)?,
            rtype,
            ttl: r.ttl,
            data,
        })
    }
}

/// `regionLocations` from the wire, within the validation limits (the
/// record rules check names and repeats).
fn region_locations_from_pb(
    entries: Vec<pb::RegionLocations>,
) -> Result<std::collections::BTreeMap<Region, Vec<gslb_shared::LocationId>>, ValidationError> {
    use gslb_shared::validate::{MAX_LOCATIONS_PER_REGION, MAX_REGION_LOCATIONS};
    let field = "data.dynamic.regionLocations";
    if entries.len() > MAX_REGION_LOCATIONS {
        return Err(bad(
            field,
            format!("must map at most {MAX_REGION_LOCATIONS} regions"),
        ));
    }
    let mut out = std::collections::BTreeMap::new();
    for e in entries {
        if e.locations.len() > MAX_LOCATIONS_PER_REGION {
            return Err(bad(
                &format!("{field}.{}", e.region),
                format!("must list 1 to {MAX_LOCATIONS_PER_REGION} locations"),
            ));
        }
        let locations = e.locations.into_iter().map(gslb_shared::LocationId::new);
        if out
            .insert(Region::new(e.region.clone()), locations.collect())
            .is_some()
        {
            return Err(bad(&format!("{field}.{}", e.region), "region mapped twice"));
        }
    }
    Ok(out)
}
