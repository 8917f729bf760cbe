//! The cost of one RRSIG (what a signature cache miss will cost an edge,
//! issue 20): an A set of four signed with ECDSA P-256 and with Ed25519.
#![allow(missing_docs, clippy::unwrap_used)]

use std::hint::black_box;
use std::str::FromStr;

use criterion::{Criterion, criterion_group, criterion_main};
use domain::base::{Name, Ttl};
use domain::rdata::dnssec::Timestamp;
use domain::rdata::{A, ZoneRecordData};
use gslb_shared::dnssec::{Algorithm, SECURE_ENTRY_POINT, ZoneKey};
use gslb_shared::wire::{Data, WireName};

fn bench(c: &mut Criterion) {
    let apex: WireName = Name::from_str("example.test.").unwrap();
    let owner: WireName = Name::from_str("www.example.test.").unwrap();
    let set: Vec<Data> = (1..=4)
        .map(|i| ZoneRecordData::A(A::from_str(&format!("192.0.2.{i}")).unwrap()))
        .collect();
    let now = Timestamp::now().into_int();
    let (inception, expiration) = (
        Timestamp::from(now - 3600),
        Timestamp::from(now + 14 * 86_400),
    );
    for (label, algorithm) in [
        ("rrsig_a4_ecdsa_p256", Algorithm::EcdsaP256Sha256),
        ("rrsig_a4_ed25519", Algorithm::Ed25519),
    ] {
        let signer = ZoneKey::generate(algorithm, SECURE_ENTRY_POINT)
            .unwrap()
            .signer(apex.clone())
            .unwrap();
        c.bench_function(label, |b| {
            b.iter(|| {
                signer
                    .sign(
                        black_box(&owner),
                        Ttl::from_secs(300),
                        black_box(&set),
                        inception,
                        expiration,
                    )
                    .unwrap()
            })
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
