//! DNSSEC settings rules.

use super::error::{Findings, in_range};
use crate::dnssec::ZoneKey;
use crate::model::ZoneSigning;

/// Shortest signature validity, seconds (accelerated tests use minutes).
pub const MIN_SIGNATURE_VALIDITY: u32 = 300;
/// Longest signature validity, seconds: 90 days.
pub const MAX_SIGNATURE_VALIDITY: u32 = 90 * 86_400;
/// Largest backdating of an inception, seconds: one day.
pub const MAX_INCEPTION_OFFSET: u32 = 86_400;

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
    // A write leaves them out: the server makes them (the catalog refuses
    // a signed zone stored without them).
    if s.keys.is_empty() {
        return;
    }
    let mut roles: Vec<_> = s.keys.iter().map(|k| k.role).collect();
    roles.sort_by_key(|r| r.flags());
    let mut want = s.roles().to_vec();
    want.sort_by_key(|r| r.flags());
    f.require(
        roles == want,
        "dnssec.keys",
        format!(
            "must hold one key per role of its scheme ({})",
            want.iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
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
