//! TSIG secrets at the API's edge: the server generates the secret of a
//! key created without one (before the write is validated and replicated,
//! so every replica stores the same bytes), and a reply shows a secret
//! only to the client whose write created the key. Zones that turn DNSSEC
//! on get their signing keys here too, for the same reason.

use ring::rand::{SecureRandom, SystemRandom};

use gslb_shared::dnssec::ZoneKey;
use gslb_shared::{KeyRole, Secret, SigningAlgorithm, SigningKey};

use crate::core::catalog::{
    Change, GENERATED_SECRET_BYTES, Object, Op, Written, fill_keys, fill_secrets,
};

/// Give every key created without a secret a random one.
pub fn fill(ops: &mut [Op]) {
    let rng = SystemRandom::new();
    fill_secrets(ops, || {
        let mut secret = vec![0u8; GENERATED_SECRET_BYTES];
        // The system's CSPRNG does not fail on Linux once booted; were it
        // to, an all-zero secret must not be stored: the write is refused
        // by validation below instead (an empty secret).
        match rng.fill(&mut secret) {
            Ok(()) => secret,
            Err(_) => Vec::new(),
        }
    });
    fill_keys(ops, new_key);
}

/// A new signing key; `None` (and the write is refused as short of keys)
/// if the system's random source fails.
pub fn new_key(algorithm: SigningAlgorithm, role: KeyRole) -> Option<SigningKey> {
    let key = ZoneKey::generate(algorithm, role.flags()).ok()?;
    let created = gslb_shared::clock::now_secs();
    Some(SigningKey::new(
        role,
        Secret(key.dnskey.public_key().clone()),
        key.secret,
        created,
    ))
}

/// Which ops create (their change may show the secret).
pub fn creates(ops: &[Op]) -> Vec<bool> {
    ops.iter().map(|op| matches!(op, Op::Create(_))).collect()
}

/// `changes` (one per op, in op order) as the client sees them: a key's
/// secret left out unless that op created it.
pub fn shown(mut changes: Vec<Change>, creates: &[bool]) -> Vec<Change> {
    for (i, change) in changes.iter_mut().enumerate() {
        if let Written::Upserted(object) = &mut change.what
            && matches!(object.as_ref(), Object::TsigKey(_) | Object::Notifier(_))
            && !creates.get(i).copied().unwrap_or(false)
        {
            **object = object.redacted();
        }
    }
    changes
}
