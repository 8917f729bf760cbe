//! A signed zone's public side as operators need it: each key with its
//! public half (for its tag), and the DS records of its key-signing keys
//! for the parent. Read from the public halves only: private keys never
//! leave the aggregators and edges. gslbctl and the web UI show the same.

use crate::dnssec::{DnssecError, ZoneKey};
use crate::model::{KeyState, Secret, SigningKey, Zone};

/// The zone's keys with their public halves; an error if it is not signed
/// or a key does not read.
pub fn public_keys(z: &Zone) -> Result<Vec<(&SigningKey, ZoneKey)>, DnssecError> {
    let Some(s) = &z.dnssec else {
        return Err(DnssecError::new(format!("zone {} is not signed", z.apex)));
    };
    s.keys
        .iter()
        .map(|k| {
            ZoneKey::from_parts(
                s.algorithm,
                k.role.flags(),
                &k.public_key,
                &Secret::default(),
            )
            .map(|key| (k, key))
        })
        .collect()
}

/// The DS records of the zone's key-signing keys not retired, as zone
/// file lines (`apex. IN DS tag algorithm digest-type DIGEST`).
pub fn ds_lines(z: &Zone) -> Result<Vec<String>, DnssecError> {
    let owner = crate::wire::wire_name(&z.apex).map_err(|e| DnssecError::new(e.to_string()))?;
    let mut lines = Vec::new();
    for (k, key) in public_keys(z)? {
        if !k.role.signs_keys() || k.state == KeyState::Retired {
            continue;
        }
        let ds = key.ds(&owner)?;
        lines.push(format!(
            "{}. IN DS {} {} {} {}",
            z.apex,
            ds.key_tag(),
            ds.algorithm().to_int(),
            ds.digest_type().to_int(),
            hex::encode_upper(ds.digest())
        ));
    }
    Ok(lines)
}
