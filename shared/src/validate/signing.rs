//! DNSSEC settings rules.

use super::error::{Findings, in_range};
use crate::dnssec::ZoneKey;
use crate::model::{KeyScheme, KeyState, ZoneSigning};

/// Shortest signature validity, seconds (accelerated tests use minutes).
pub const MIN_SIGNATURE_VALIDITY: u32 = 300;
/// Longest signature validity, seconds: 90 days.
pub const MAX_SIGNATURE_VALIDITY: u32 = 90 * 86_400;
/// Largest backdating of an inception, seconds: one day.
pub const MAX_INCEPTION_OFFSET: u32 = 86_400;

/// Most a rollover step waits for propagation, or the parent's DS TTL: a
/// week.
pub const MAX_ROLLOVER_WAIT: u32 = 7 * 86_400;
/// Shortest automatic ZSK lifetime: an hour (longer than any step waits).
pub const MIN_ZSK_LIFETIME: u32 = 3_600;

/// Check a zone's DNSSEC settings and (when present) its keys.
pub(crate) fn signing(s: &ZoneSigning, f: &mut Findings) {
    in_range(
        f,
        "dnssec.signatureValidity",
        s.signature_validity,
        MIN_SIGNATURE_VALIDITY,
        MAX_SIGNATURE_VALIDITY,
    );
    in_range(
        f,
        "dnssec.inceptionOffset",
        s.inception_offset,
        0,
        MAX_INCEPTION_OFFSET,
    );
    in_range(
        f,
        "dnssec.propagationDelay",
        s.propagation_delay,
        0,
        MAX_ROLLOVER_WAIT,
    );
    in_range(
        f,
        "dnssec.parentDsTtl",
        s.parent_ds_ttl,
        0,
        MAX_ROLLOVER_WAIT,
    );
    f.require(
        s.zsk_lifetime == 0 || s.zsk_lifetime >= MIN_ZSK_LIFETIME,
        "dnssec.zskLifetime",
        format!("must be 0 (on demand only) or at least {MIN_ZSK_LIFETIME} seconds"),
    );
    f.require(
        s.zsk_lifetime == 0 || s.scheme == KeyScheme::KskZsk,
        "dnssec.zskLifetime",
        "needs scheme ksk-zsk (a CSK rolls over on demand, with the parent)",
    );
    // A write leaves them out: the server makes them (the catalog refuses
    // a signed zone stored without them).
    if s.keys.is_empty() {
        return;
    }
    // One active key per role of the scheme, at most one other (the
    // rollover under way), and no role from another scheme.
    for role in s.roles() {
        let active = (s.keys.iter())
            .filter(|k| k.role == *role && k.state == KeyState::Active)
            .count();
        f.require(
            active == 1,
            "dnssec.keys",
            format!("must hold one active {role} key (scheme {})", s.scheme),
        );
    }
    for (i, k) in s.keys.iter().enumerate() {
        f.require(
            s.roles().contains(&k.role),
            &format!("dnssec.keys[{i}].role"),
            format!("scheme {} has no {} keys", s.scheme, k.role),
        );
    }
    f.require(
        s.keys
            .iter()
            .filter(|k| k.state != KeyState::Active)
            .count()
            <= 1,
        "dnssec.keys",
        "at most one key may be in a rollover (not active)",
    );
    for (i, k) in s.keys.iter().enumerate() {
        if k.private_key.is_empty() {
            f.add(&format!("dnssec.keys[{i}].privateKey"), "is required");
            continue;
        }
        // A signer is made only from a private key that matches.
        let usable =
            ZoneKey::from_parts(s.algorithm, k.role.flags(), &k.public_key, &k.private_key)
                .and_then(|key| key.signer(domain::base::Name::root_vec()));
        if let Err(e) = usable {
            f.add(&format!("dnssec.keys[{i}]"), e.to_string());
        }
    }
}
