//! MaxMind files as the edge reads them: files written by MaxMind's own
//! writer, looked up for country, continent, subdivision and AS, merged
//! across files, with the matched network's prefix as the scope.
#![allow(clippy::unwrap_used)]

use std::net::IpAddr;
use std::path::PathBuf;

use gslb_e2e::mmdb::{self, Network};
use gslb_e2e::wait::temp_dir;
use gslb_shared::geo_db::{GeoDbs, Located, fingerprint};
use gslb_shared::{GeoCode, Place};

/// A City and an ASN file in a directory of the test's own.
fn files(test: &str) -> (PathBuf, PathBuf) {
    let dir = temp_dir(&format!("edge-geo-mmdb-{test}"));
    let city = dir.join("city.mmdb");
    let mut berlin = Network::country("198.51.100.0/24", "DE", "EU");
    berlin.subdivision = Some("BE".into());
    mmdb::write(
        &city,
        "GeoLite2-City",
        &[berlin, Network::country("2001:db8::/32", "JP", "AS")],
    );
    let asn = dir.join("asn.mmdb");
    mmdb::write(
        &asn,
        "GeoLite2-ASN",
        &[Network {
            cidr: "198.51.100.0/25".into(),
            asn: Some(64500),
            ..Network::default()
        }],
    );
    (city, asn)
}

fn at(dbs: &GeoDbs, ip: &str) -> Located {
    dbs.locate(ip.parse::<IpAddr>().unwrap())
}

#[test]
fn a_city_and_an_asn_file_answer_together_with_the_narrower_scope() {
    let (city, asn) = files("both");
    let dbs = GeoDbs::open(&[city, asn]).unwrap();
    let kinds: Vec<String> = dbs.describe().into_iter().map(|d| d.1).collect();
    assert_eq!(kinds, ["GeoLite2-City", "GeoLite2-ASN"]);
    let berlin = Place {
        country: GeoCode::new("DE"),
        continent: GeoCode::new("EU"),
        subdivision: GeoCode::new("BE"),
        asn: Some(64500),
    };
    assert_eq!(
        at(&dbs, "198.51.100.7"),
        Located {
            place: berlin,
            prefix_len: 25
        }
    );
    assert!(berlin.in_subdivision("DE-BE"));
    // The upper half of the /24 is in the City file only.
    let upper = at(&dbs, "198.51.100.200");
    assert_eq!((upper.place.asn, upper.prefix_len), (None, 25));
    assert_eq!(upper.place.country, GeoCode::new("DE"));
    // IPv4-mapped IPv6 is looked up as IPv4; IPv6 has its own networks.
    assert_eq!(at(&dbs, "::ffff:198.51.100.7").place, berlin);
    assert_eq!(at(&dbs, "2001:db8:5::1").place.country, GeoCode::new("JP"));
    assert_eq!(at(&dbs, "2001:db8:5::1").prefix_len, 32);
}

#[test]
fn an_address_no_file_knows_is_nowhere_within_its_empty_network() {
    let (city, asn) = files("nowhere");
    let dbs = GeoDbs::open(&[city, asn]).unwrap();
    let nowhere = at(&dbs, "100.64.0.1");
    assert!(nowhere.place.is_unknown());
    assert!(nowhere.prefix_len <= 32);
}

#[test]
fn bad_files_are_named_and_a_rewrite_changes_the_fingerprint() {
    let (city, asn) = files("bad");
    let missing = city.with_file_name("missing.mmdb");
    let e = GeoDbs::open(&[city.clone(), missing.clone()]).unwrap_err();
    assert_eq!(e.path, missing);
    let junk = city.with_file_name("junk.mmdb");
    std::fs::write(&junk, b"no metadata marker here").unwrap();
    let e = GeoDbs::open(std::slice::from_ref(&junk)).unwrap_err();
    assert!(
        e.to_string().contains("junk.mmdb") && e.reason.contains("not a MaxMind DB file"),
        "{e}"
    );
    let too_many = vec![city.clone(); 9];
    assert!(
        GeoDbs::open(&too_many)
            .unwrap_err()
            .reason
            .contains("at most 8")
    );

    let paths = [city.clone(), asn];
    let before = fingerprint(&paths);
    assert_eq!(before, fingerprint(&paths));
    let old = GeoDbs::open(&paths).unwrap();
    assert_eq!(at(&old, "198.51.100.7").place.country, GeoCode::new("DE"));
    mmdb::write(
        &city,
        "GeoLite2-City",
        &[Network::country("198.51.100.0/24", "FR", "EU")],
    );
    assert_ne!(before, fingerprint(&paths));
    // The new file's records are its own, whatever this thread decoded
    // from the old one at the same offsets.
    let new = GeoDbs::open(&paths).unwrap();
    assert_eq!(at(&new, "198.51.100.7").place.country, GeoCode::new("FR"));
    assert_eq!(at(&old, "198.51.100.7").place.country, GeoCode::new("DE"));
}
