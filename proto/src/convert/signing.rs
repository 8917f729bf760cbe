//! A zone's DNSSEC settings and keys.

use gslb_shared::validate::ValidationError;
use gslb_shared::{KeyRole, KeyScheme, Secret, SigningAlgorithm, SigningKey, ZoneSigning};

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
            keys: (s.keys.iter())
                .map(|k| pb::SigningKey {
                    role: k.role.to_string(),
                    public_key: k.public_key.0.clone(),
                    private_key: k.private_key.0.clone(),
                    created: k.created,
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
                Ok(SigningKey {
                    role,
                    public_key: Secret(k.public_key),
                    private_key: Secret(k.private_key),
                    created: k.created,
                })
            })
            .collect::<Result<_, ValidationError>>()?;
        Ok(ZoneSigning {
            algorithm,
            scheme,
            signature_validity: s.signature_validity,
            inception_offset: s.inception_offset,
            unsign: s.unsign,
            keys,
        })
    }
}
