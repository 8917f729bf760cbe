//! TSIG secrets at the API's edge: the server generates the secret of a
//! key created without one (before the write is validated and replicated,
//! so every replica stores the same bytes), and a reply shows a secret
//! only to the client whose write created the key.

use ring::rand::{SecureRandom, SystemRandom};

use crate::core::catalog::{Change, GENERATED_SECRET_BYTES, Object, Op, Written, fill_secrets};

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
            && matches!(object.as_ref(), Object::TsigKey(_))
            && !creates.get(i).copied().unwrap_or(false)
        {
            **object = object.redacted();
        }
    }
    changes
}
