//! DNSSEC groundwork (issue 20): zone keys, the DS a registrar needs, and
//! RRSIGs over record sets, all with NLnet Labs' `domain` on `ring` (no
//! cryptography here). Not yet used by the aggregator or the edge: keys in
//! the catalog, online signing, denial and rollovers come next.
//!
//! A key's private half is kept in BIND's private-key format (what
//! `dnssec-keygen` writes and `domain` reads), inside [`Secret`], whose
//! `Debug` shows only its length.

use domain::base::iana::{DigestAlgorithm, SecurityAlgorithm};
use domain::base::{Record, ToName, Ttl};
use domain::crypto::sign::{GenerateParams, KeyPair, SecretKeyBytes};
use domain::dnssec::sign::keys::SigningKey;
use domain::dnssec::sign::records::Rrset;
use domain::dnssec::sign::signatures::rrsigs::sign_rrset;
use domain::rdata::dnssec::Timestamp;
use domain::rdata::{Dnskey, Ds, Rrsig};

use crate::model::Secret;
use crate::wire::{Data, WireName};

/// DNSKEY flags of a zone-signing key (the Zone Key bit).
pub const ZONE_KEY: u16 = 256;
/// DNSKEY flags of a key-signing or combined key (Zone Key and Secure Entry
/// Point).
pub const SECURE_ENTRY_POINT: u16 = 257;

/// The algorithms zones are signed with (the model's name for them).
pub use crate::model::SigningAlgorithm as Algorithm;

trait Security {
    fn security(self) -> SecurityAlgorithm;
}

impl Security for Algorithm {
    fn security(self) -> SecurityAlgorithm {
        SecurityAlgorithm::from_int(self.number())
    }
}

fn params(algorithm: Algorithm) -> GenerateParams {
    match algorithm {
        Algorithm::EcdsaP256Sha256 => GenerateParams::EcdsaP256Sha256,
        Algorithm::Ed25519 => GenerateParams::Ed25519,
    }
}

/// Why a key could not be made or used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("dnssec: {0}")]
pub struct DnssecError(String);

impl DnssecError {
    /// An error saying `why`.
    pub fn new(why: impl Into<String>) -> Self {
        DnssecError(why.into())
    }
}

fn err(e: impl std::fmt::Display) -> DnssecError {
    DnssecError(e.to_string())
}

/// A zone's key: its public DNSKEY and its private half.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ZoneKey {
    /// DNSKEY flags ([`ZONE_KEY`] or [`SECURE_ENTRY_POINT`]).
    pub flags: u16,
    /// The DNSKEY record data.
    pub dnskey: Dnskey<Vec<u8>>,
    /// The private key in BIND's private-key format.
    pub secret: Secret,
}

impl ZoneKey {
    /// A new key of `algorithm` with `flags`, from the system's random
    /// source (through `ring`).
    pub fn generate(algorithm: Algorithm, flags: u16) -> Result<ZoneKey, DnssecError> {
        let (secret, dnskey) =
            domain::crypto::sign::generate(&params(algorithm), flags).map_err(err)?;
        let mut text = String::new();
        secret.format_as_bind(&mut text).map_err(err)?;
        Ok(ZoneKey {
            flags,
            dnskey,
            secret: Secret(text.into_bytes()),
        })
    }

    /// A key from its stored halves: the DNSKEY public key and the
    /// private key text.
    pub fn from_parts(
        algorithm: Algorithm,
        flags: u16,
        public_key: &Secret,
        private_key: &Secret,
    ) -> Result<ZoneKey, DnssecError> {
        let dnskey =
            Dnskey::new(flags, 3, algorithm.security(), public_key.0.clone()).map_err(err)?;
        Ok(ZoneKey {
            flags,
            dnskey,
            secret: private_key.clone(),
        })
    }

    /// Its key tag (RFC 4034 appendix B).
    pub fn key_tag(&self) -> u16 {
        self.dnskey.key_tag()
    }

    /// The DS record data of this key at `owner`, with SHA-256 (RFC 4509):
    /// the digest of the owner's canonical wire form and the DNSKEY data.
    pub fn ds(&self, owner: &WireName) -> Result<Ds<Vec<u8>>, DnssecError> {
        let mut signed = Vec::new();
        owner
            .compose_canonical(&mut signed)
            .map_err(|_| err("owner too long"))?;
        domain::base::rdata::ComposeRecordData::compose_canonical_rdata(&self.dnskey, &mut signed)
            .map_err(|_| err("DNSKEY too long"))?;
        let digest = ring::digest::digest(&ring::digest::SHA256, &signed);
        Ds::new(
            self.key_tag(),
            self.dnskey.algorithm(),
            DigestAlgorithm::SHA256,
            digest.as_ref().to_vec(),
        )
        .map_err(err)
    }

    /// A signer for the zone at `apex`.
    pub fn signer(&self, apex: WireName) -> Result<Signer, DnssecError> {
        let text = std::str::from_utf8(&self.secret.0).map_err(err)?;
        let secret = SecretKeyBytes::parse_from_bind(text).map_err(err)?;
        let pair = KeyPair::from_bytes(&secret, &self.dnskey).map_err(err)?;
        Ok(Signer {
            key: SigningKey::new(apex, self.flags, pair),
        })
    }
}

/// Signs record sets with one key.
#[derive(Debug)]
pub struct Signer {
    key: SigningKey<Vec<u8>, KeyPair>,
}

impl Signer {
    /// The RRSIG of the record set `records` (one type) at `owner` with
    /// `ttl`, valid from `inception` to `expiration`. The set is put in
    /// canonical order first, so every order of one set signs the same.
    pub fn sign(
        &self,
        owner: &WireName,
        ttl: Ttl,
        records: &[Data],
        inception: Timestamp,
        expiration: Timestamp,
    ) -> Result<Rrsig<Vec<u8>, WireName>, DnssecError> {
        let records: Vec<Record<WireName, Data>> = records
            .iter()
            .map(|d| Record::new(owner.clone(), domain::base::iana::Class::IN, ttl, d.clone()))
            .collect();
        let rrset = Rrset::new_from_owned(&records).map_err(err)?;
        let signed = sign_rrset(&self.key, &rrset, inception, expiration).map_err(err)?;
        Ok(signed.into_data())
    }
}
