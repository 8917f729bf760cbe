//! A zone's DNSSEC settings and keys.

use gslb_shared::validate::ValidationError;
use gslb_shared::{KeyScheme, KeyState, Secret, SigningAlgorithm, SigningKey, ZoneSigning};

use super::bad;
use crate::pb;

impl From<&ZoneSigning> for pb::ZoneSigning {
    fn from(s: &ZoneSigning) -> Self {
        pb::ZoneSigning {
            algorithm: s.algorithm.to_string(),
            scheme: s.scheme.to_string(),
            signature_validity: s.signature_validity,
            inception_offset: s.inception_offset,
            unsign: s.unsign,
            propagation_delay: s.propagation_delay,
            parent_ds_ttl: s.parent_ds_ttl,
            zsk_lifetime: s.zsk_lifetime,
            keys: (s.keys.iter())
                .map(|k| pb::SigningKey {
                    role: k.role.to_string(),
                    public_key: k.public_key.0.clone(),
                    private_key: k.private_key.0.clone(),
                    created: k.created,
                    state: k.state.to_string(),
                    since: k.since,
                    ds_seen: k.ds_seen.unwrap_or(0),
                })
                .collect(),
        }
    }
}

/// `text` in its text form; empty: `default`.
fn parsed<T: std::str::FromStr<Err = String>>(
    field: &str,
    text: &str,
    default: Option<T>,
) -> Result<T, ValidationError> {
    match (text, default) {
        ("", Some(d)) => Ok(d),
        _ => text.parse().map_err(|e: String| bad(field, e)),
    }
}

impl TryFrom<pb::ZoneSigning> for ZoneSigning {
    type Error = ValidationError;

    fn try_from(s: pb::ZoneSigning) -> Result<Self, Self::Error> {
        let keys = (s.keys.into_iter().enumerate())
            .map(|(i, k)| {
                Ok(SigningKey {
                    role: parsed(&format!("dnssec.keys[{i}].role"), &k.role, None)?,
                    public_key: Secret(k.public_key),
                    private_key: Secret(k.private_key),
                    created: k.created,
                    state: parsed(
                        &format!("dnssec.keys[{i}].state"),
                        &k.state,
                        Some(KeyState::Active),
                    )?,
                    since: k.since,
                    ds_seen: (k.ds_seen != 0).then_some(k.ds_seen),
                })
            })
            .collect::<Result<_, ValidationError>>()?;
        Ok(ZoneSigning {
            algorithm: parsed(
                "dnssec.algorithm",
                &s.algorithm,
                Some(SigningAlgorithm::default()),
            )?,
            scheme: parsed("dnssec.scheme", &s.scheme, Some(KeyScheme::default()))?,
            signature_validity: s.signature_validity,
            inception_offset: s.inception_offset,
            unsign: s.unsign,
            propagation_delay: s.propagation_delay,
            parent_ds_ttl: s.parent_ds_ttl,
            zsk_lifetime: s.zsk_lifetime,
            keys,
        })
    }
}
