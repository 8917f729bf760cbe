//! Geo branch keys: the codes a MaxMind database answers with.

use std::collections::HashSet;

use super::error::Findings;
use crate::model::GeoBranch;

/// Most keys of one kind in one branch.
pub const MAX_GEO_KEYS: usize = 256;

/// Continent codes as GeoIP2 and DB-IP write them.
pub const CONTINENTS: [&str; 7] = ["AF", "AN", "AS", "EU", "NA", "OC", "SA"];

/// Check a branch's countries, continents, subdivisions and ASNs.
pub fn branch_keys(f: &mut Findings, at: &str, branch: &GeoBranch) {
    let lists = [
        ("countries", branch.countries.len()),
        ("continents", branch.continents.len()),
        ("subdivisions", branch.subdivisions.len()),
        ("asns", branch.asns.len()),
    ];
    for (name, len) in lists {
        f.require(
            len <= MAX_GEO_KEYS,
            &format!("{at}.{name}"),
            format!("must list at most {MAX_GEO_KEYS} entries"),
        );
    }
    for (i, c) in branch.countries.iter().enumerate() {
        f.require(
            is_letters(c, 2),
            &format!("{at}.countries[{i}]"),
            "must be an ISO 3166-1 alpha-2 code such as DE",
        );
    }
    for (i, c) in branch.continents.iter().enumerate() {
        f.require(
            CONTINENTS.contains(&c.as_str()),
            &format!("{at}.continents[{i}]"),
            format!("must be one of {}", CONTINENTS.join(", ")),
        );
    }
    for (i, s) in branch.subdivisions.iter().enumerate() {
        let ok = s.split_once('-').is_some_and(|(country, sub)| {
            is_letters(country, 2)
                && (1..=3).contains(&sub.len())
                && sub
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit())
        });
        f.require(
            ok,
            &format!("{at}.subdivisions[{i}]"),
            "must be an ISO 3166-2 code such as DE-BE or US-CA",
        );
    }
    for (i, asn) in branch.asns.iter().enumerate() {
        f.require(
            *asn > 0,
            &format!("{at}.asns[{i}]"),
            "must be an AS number from 1 to 4294967295",
        );
    }
}

/// Each country, continent, subdivision and ASN in one branch only (a
/// second would never be reached: the first matching branch wins).
pub fn keys_once(
    f: &mut Findings,
    at: &str,
    branch: &GeoBranch,
    seen: &mut HashSet<(&'static str, String)>,
) {
    let keys = (branch.countries.iter().map(|c| ("countries", c.clone())))
        .chain(branch.continents.iter().map(|c| ("continents", c.clone())))
        .chain(
            branch
                .subdivisions
                .iter()
                .map(|s| ("subdivisions", s.clone())),
        )
        .chain(branch.asns.iter().map(|a| ("asns", a.to_string())));
    let mut index: std::collections::HashMap<&str, usize> = Default::default();
    for (list, key) in keys {
        let i = index.entry(list).or_default();
        f.require(
            seen.insert((list, key.clone())),
            &format!("{at}.{list}[{i}]"),
            format!("{key} appears in more than one branch"),
        );
        *i += 1;
    }
}

/// `len` upper-case ASCII letters.
fn is_letters(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| b.is_ascii_uppercase())
}

/// Most regions `regionLocations` maps.
pub const MAX_REGION_LOCATIONS: usize = 256;
/// Most locations one region maps to.
pub const MAX_LOCATIONS_PER_REGION: usize = 16;

/// Check latency steering's `regionLocations`: only with `steering:
/// latency`, valid region and location names, each region mapped to 1 to
/// [`MAX_LOCATIONS_PER_REGION`] distinct locations.
pub fn region_locations(f: &mut Findings, dynamic: &crate::model::DynamicRecord) {
    let at = "data.dynamic.regionLocations";
    let map = &dynamic.region_locations;
    if map.is_empty() {
        return;
    }
    f.require(
        dynamic.steering == crate::model::Steering::Latency,
        at,
        "is only for steering: latency",
    );
    f.require(
        map.len() <= MAX_REGION_LOCATIONS,
        at,
        format!("must map at most {MAX_REGION_LOCATIONS} regions"),
    );
    for (region, locations) in map {
        let here = format!("{at}.{region}");
        if let Err(rule) = super::region(region) {
            f.add(&here, format!("region name {rule}"));
        }
        f.require(
            (1..=MAX_LOCATIONS_PER_REGION).contains(&locations.len()),
            &here,
            format!("must list 1 to {MAX_LOCATIONS_PER_REGION} locations"),
        );
        let mut seen = HashSet::new();
        for (i, location) in locations.iter().enumerate() {
            if let Err(rule) = super::location_id(location) {
                f.add(&format!("{here}[{i}]"), rule);
            }
            f.require(
                seen.insert(location),
                &format!("{here}[{i}]"),
                format!("location {location} is listed twice"),
            );
        }
    }
}
