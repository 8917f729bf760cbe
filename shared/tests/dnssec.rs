//! DNSSEC groundwork against BIND's own tools: the DS we compute equals
//! `dnssec-dsfromkey`'s, and a small zone signed with our keys (RRSIGs by
//! `domain` on `ring`, an NSEC chain built here) passes `dnssec-verify`;
//! a tampered signature does not, so the check can fail.
#![allow(clippy::unwrap_used)]

use std::process::Command;
use std::str::FromStr;

use domain::base::iana::Rtype;
use domain::base::{Name, Ttl};
use domain::rdata::dnssec::{RtypeBitmap, Timestamp};
use domain::rdata::{A, Ns, Nsec, Soa, ZoneRecordData};
use gslb_shared::dnssec::{Algorithm, SECURE_ENTRY_POINT, ZoneKey};
use gslb_shared::wire::{Data, WireName};

fn name(s: &str) -> WireName {
    Name::from_str(s).unwrap()
}

fn tmp(file: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("gslb-dnssec-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(file)
}

fn run(cmd: &mut Command) -> (bool, String) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("{cmd:?} not runnable ({e}): apt-get install bind9-utils"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.success(), text)
}

#[test]
fn our_ds_is_bind_s_for_both_algorithms() {
    for algorithm in [Algorithm::EcdsaP256Sha256, Algorithm::Ed25519] {
        let key = ZoneKey::generate(algorithm, SECURE_ENTRY_POINT).unwrap();
        assert_eq!(key.dnskey.algorithm().to_int(), algorithm.number());
        let file = tmp(&format!("dnskey-{}", key.key_tag()));
        std::fs::write(
            &file,
            format!("example.test. 300 IN DNSKEY {}\n", key.dnskey),
        )
        .unwrap();
        let (ok, out) = run(Command::new("dnssec-dsfromkey")
            .args(["-2", "-f"])
            .arg(&file)
            .arg("example.test"));
        assert!(ok, "{out}");
        let ours = key.ds(&name("example.test.")).unwrap();
        // BIND prints the digest in upper case.
        assert_eq!(
            out.trim().to_ascii_lowercase(),
            format!("example.test. in ds {ours}").to_ascii_lowercase(),
            "{algorithm:?}"
        );
        // The secret never shows in Debug.
        assert!(!format!("{key:?}").contains("PrivateKey"));
    }
}

/// The types at a name, for its NSEC.
fn bitmap(types: &[Rtype]) -> RtypeBitmap<Vec<u8>> {
    let mut b = RtypeBitmap::<Vec<u8>>::builder();
    for t in types {
        b.add(*t).unwrap();
    }
    b.finalize()
}

/// `example.test` with SOA, NS, DNSKEY, `ns` and `www` A records, an NSEC
/// chain, and every set signed by `key`; in zone file form.
fn signed_zone(key: &ZoneKey) -> String {
    let apex = name("example.test.");
    let ns = name("ns.example.test.");
    let www = name("www.example.test.");
    let ttl = Ttl::from_secs(300);
    let soa = ZoneRecordData::Soa(Soa::new(
        ns.clone(),
        name("hostmaster.example.test."),
        domain::base::Serial(1),
        Ttl::from_secs(3600),
        Ttl::from_secs(600),
        Ttl::from_secs(86_400),
        Ttl::from_secs(300),
    ));
    let nsec = |next: &WireName, types: &[Rtype]| -> Data {
        ZoneRecordData::Nsec(Nsec::new(next.clone(), bitmap(types)))
    };
    let sets: Vec<(WireName, Vec<Data>)> = vec![
        (apex.clone(), vec![soa]),
        (apex.clone(), vec![ZoneRecordData::Ns(Ns::new(ns.clone()))]),
        (
            apex.clone(),
            vec![ZoneRecordData::Dnskey(key.dnskey.clone())],
        ),
        (
            apex.clone(),
            vec![nsec(
                &ns,
                &[
                    Rtype::SOA,
                    Rtype::NS,
                    Rtype::DNSKEY,
                    Rtype::NSEC,
                    Rtype::RRSIG,
                ],
            )],
        ),
        (
            ns.clone(),
            vec![ZoneRecordData::A(A::from_str("192.0.2.53").unwrap())],
        ),
        (
            ns.clone(),
            vec![nsec(&www, &[Rtype::A, Rtype::NSEC, Rtype::RRSIG])],
        ),
        (
            www.clone(),
            vec![
                ZoneRecordData::A(A::from_str("192.0.2.2").unwrap()),
                ZoneRecordData::A(A::from_str("192.0.2.1").unwrap()),
            ],
        ),
        (
            www.clone(),
            vec![nsec(&apex, &[Rtype::A, Rtype::NSEC, Rtype::RRSIG])],
        ),
    ];
    let signer = key.signer(apex.clone()).unwrap();
    let now = Timestamp::now().into_int();
    let (inception, expiration) = (
        Timestamp::from(now - 3600),
        Timestamp::from(now + 14 * 86_400),
    );
    let mut text = String::new();
    for (owner, records) in &sets {
        for r in records {
            let rtype = domain::base::RecordData::rtype(r);
            text.push_str(&format!("{owner}. 300 IN {rtype} {r}\n"));
        }
        let sig = signer
            .sign(owner, ttl, records, inception, expiration)
            .unwrap();
        text.push_str(&format!("{owner}. 300 IN RRSIG {sig}\n"));
    }
    text
}

#[test]
fn a_zone_signed_with_our_keys_passes_dnssec_verify_and_a_tampered_one_fails() {
    for algorithm in [Algorithm::EcdsaP256Sha256, Algorithm::Ed25519] {
        let key = ZoneKey::generate(algorithm, SECURE_ENTRY_POINT).unwrap();
        let zone = signed_zone(&key);
        let file = tmp(&format!("zone-{}", key.key_tag()));
        std::fs::write(&file, &zone).unwrap();
        // -z: one combined key (a CSK, flags 257) signs every set.
        let (ok, out) = run(Command::new("dnssec-verify")
            .args(["-z", "-o", "example.test"])
            .arg(&file));
        assert!(
            ok && out.contains("Zone fully signed"),
            "{algorithm:?}: {out}\n{zone}"
        );
        // One signature's last characters changed: BIND refuses the zone.
        let tampered: String = zone
            .lines()
            .map(|l| {
                if l.starts_with("www.example.test. 300 IN RRSIG A") {
                    let mut s = l.to_owned();
                    let tail = s.split_off(s.len() - 4);
                    s.push_str(if tail == "AAAA" { "BBBB" } else { "AAAA" });
                    s
                } else {
                    l.to_owned()
                }
            })
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(&file, &tampered).unwrap();
        let (ok, out) = run(Command::new("dnssec-verify")
            .args(["-z", "-o", "example.test"])
            .arg(&file));
        assert!(
            !ok,
            "{algorithm:?}: a tampered signature was accepted: {out}"
        );
    }
}
