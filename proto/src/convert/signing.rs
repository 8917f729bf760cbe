//! A zone's DNSSEC settings and keys.

use gslb_shared::validate::ValidationError;
use gslb_shared::{
    KeyRole, KeyScheme, KeyState, Secret, SigningAlgorithm, SigningKey, ZoneSigning,
};

use super::bad;
use crate::pb;

impl From<&ZoneSigning> for pb::ZoneSigning {
    fn from(s: &ZoneSigning) -> Self {
        pb::ZoneSigning {
            algorithm: s.algorithm.to_string(),
            scheme: match s.scheme {
                KeyScheme::Csk => "csk",
                KeyScheme::KskZsk => "ksk-zsk",
            }
            .to_owned(),
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

impl TryFrom<pb::ZoneSigning> for ZoneSigning {
    type Error = ValidationError;

    fn try_from(s: pb::ZoneSigning) -> Result<Self, Self::Error> {
        let algorithm = match s.algorithm.as_str() {
            "" | "ecdsap256sha256" => SigningAlgorithm::EcdsaP256Sha256,
            "ed25519" => SigningAlgorithm::Ed25519,
            other => {
                return Err(bad(
                    "dnssec.algorithm",
                    format!("must be ecdsap256sha256 or ed25519, not {other:?}"),
                ));
            }
        };
        let scheme = match s.scheme.as_str() {
            "" | "csk" => KeyScheme::Csk,
            "ksk-zsk" => KeyScheme::KskZsk,
            other => {
                return Err(bad(
                    "dnssec.scheme",
                    format!("must be csk or ksk-zsk, not {other:?}"),
                ));
            }
        };
        let keys = (s.keys.into_iter().enumerate())
            .map(|(i, k)| {
                let role = match k.role.as_str() {
                    "csk" => KeyRole::Csk,
                    "ksk" => KeyRole::Ksk,
                    "zsk" => KeyRole::Zsk,
                    other => {
                        return Err(bad(
                            &format!("dnssec.keys[{i}].role"),
                            format!("must be csk, ksk or zsk, not {other:?}"),
                        ));
                    }
                };
                let state = match k.state.as_str() {
                    "pending" => KeyState::Pending,
                    "published" => KeyState::Published,
                    "" | "active" => KeyState::Active,
                    "retired" => KeyState::Retired,
                    other => {
                        return Err(bad(
                            &format!("dnssec.keys[{i}].state"),
                            format!("must be pending, published, active or retired, not {other:?}"),
                        ));
                    }
                };
                Ok(SigningKey {
                    role,
                    public_key: Secret(k.public_key),
                    private_key: Secret(k.private_key),
                    created: k.created,
                    state,
                    since: k.since,
                    ds_seen: (k.ds_seen != 0).then_some(k.ds_seen),
                })
            })
            .collect::<Result<_, ValidationError>>()?;
        Ok(ZoneSigning {
            algorithm,
            scheme,
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
