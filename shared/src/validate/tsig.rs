//! TSIG key and zone transfer rules.

use super::address::unanswerable;
use super::error::{Findings, ValidationError};
use crate::model::{Transfer, TsigKey};

/// Shortest TSIG secret accepted, in bytes (128 bits).
pub const MIN_TSIG_SECRET: usize = 16;
/// Longest TSIG secret accepted, in bytes (HMAC-SHA256's block: a longer
/// key is hashed down first and gains nothing).
pub const MAX_TSIG_SECRET: usize = 64;
/// Most secondaries a zone may allow to transfer it.
pub const MAX_TRANSFER_PEERS: usize = 64;
/// Most NOTIFY targets of a zone.
pub const MAX_NOTIFY_TARGETS: usize = 64;

/// Validate a TSIG key on its own. An empty secret is allowed only where
/// the server fills it in (create); see [`tsig_secret`].
pub fn tsig_key(key: &TsigKey) -> Result<(), ValidationError> {
    let mut f = Findings::new("");
    f.require(
        !key.name.is_wildcard(),
        "name",
        "must not be a wildcard name",
    );
    f.require(
        key.name.parent().is_some(),
        "name",
        "must not be the root name",
    );
    if let Err(rule) = tsig_secret(&key.secret.0) {
        f.add("secret", rule);
    }
    f.finish()
}

/// The rule a secret breaks, if any.
pub fn tsig_secret(secret: &[u8]) -> Result<(), String> {
    if (MIN_TSIG_SECRET..=MAX_TSIG_SECRET).contains(&secret.len()) {
        Ok(())
    } else {
        Err(format!(
            "must be {MIN_TSIG_SECRET} to {MAX_TSIG_SECRET} bytes (base64), not {}",
            secret.len()
        ))
    }
}

/// Validate a zone's transfer settings on their own (that the keys exist
/// is the catalog's rule).
pub(crate) fn transfer(t: &Transfer, f: &mut Findings) {
    f.require(
        t.allow.len() <= MAX_TRANSFER_PEERS,
        "transfer.allow",
        format!("must list at most {MAX_TRANSFER_PEERS} secondaries"),
    );
    for (i, peer) in t.allow.iter().enumerate() {
        let field = format!("transfer.allow[{i}].address");
        if let Some(rule) = unanswerable(&peer.address) {
            f.add(&field, rule);
        }
        f.require(
            !t.allow[..i]
                .iter()
                .any(|p| p.address == peer.address && p.key == peer.key),
            &field,
            format!("{} with key {} is listed twice", peer.address, peer.key),
        );
    }
    f.require(
        t.notify.len() <= MAX_NOTIFY_TARGETS,
        "transfer.notify",
        format!("must list at most {MAX_NOTIFY_TARGETS} targets"),
    );
    for (i, target) in t.notify.iter().enumerate() {
        let field = format!("transfer.notify[{i}].address");
        if let Some(rule) = unanswerable(&target.address.ip()) {
            f.add(&field, rule);
        }
        f.require(
            target.address.port() != 0,
            &field,
            "must name a port other than 0",
        );
        f.require(
            !t.notify[..i].iter().any(|n| n.address == target.address),
            &field,
            format!("{} is listed twice", target.address),
        );
    }
}
