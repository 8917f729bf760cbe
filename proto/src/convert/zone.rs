//! Zone, SOA and TSIG keys.

use gslb_shared::validate::ValidationError;
use gslb_shared::{
    NotifyTarget, Secret, Soa, Transfer, TransferPeer, TsigAlgorithm, TsigKey, TsigKeyId, Zone,
    ZoneId,
};

use super::{bad, name};
use crate::pb;

impl From<&Zone> for pb::Zone {
    fn from(z: &Zone) -> Self {
        pb::Zone {
            // Views set the revision; requests read the precondition and mask.
            revision: 0,
            expected_revision: 0,
            update_mask: None,
            id: z.id.0,
            apex: z.apex.to_string(),
            soa: Some(pb::Soa {
                mname: z.soa.mname.to_string(),
                rname: z.soa.rname.to_string(),
                refresh: z.soa.refresh,
                retry: z.soa.retry,
                expire: z.soa.expire,
                negative_ttl: z.soa.negative_ttl,
            }),
            ns: z.ns.iter().map(ToString::to_string).collect(),
            default_ttl: z.default_ttl,
            ns_ttl: z.ns_ttl,
            transfer_allow: (z.transfer.allow.iter())
                .map(|p| pb::TransferPeer {
                    address: p.address.to_string(),
                    key: p.key.to_string(),
                })
                .collect(),
            transfer_notify: (z.transfer.notify.iter())
                .map(|n| pb::NotifyTarget {
                    address: n.address.to_string(),
                    key: n.key.as_ref().map(ToString::to_string).unwrap_or_default(),
                })
                .collect(),
            dnssec: z.dnssec.as_ref().map(Into::into),
        }
    }
}

impl TryFrom<pb::Zone> for Zone {
    type Error = ValidationError;

    fn try_from(z: pb::Zone) -> Result<Self, Self::Error> {
        let soa = z.soa.ok_or_else(|| bad("soa", "is required"))?;
        Ok(Zone {
            id: ZoneId(z.id),
            apex: name("apex", &z.apex)?,
            soa: Soa {
                mname: name("soa.mname", &soa.mname)?,
                rname: name("soa.rname", &soa.rname)?,
                refresh: soa.refresh,
                retry: soa.retry,
                expire: soa.expire,
                negative_ttl: soa.negative_ttl,
            },
            ns: z
                .ns
                .iter()
                .enumerate()
                .map(|(i, n)| name(&format!("ns[{i}]"), n))
                .collect::<Result<_, _>>()?,
            default_ttl: z.default_ttl,
            ns_ttl: z.ns_ttl,
            transfer: Transfer {
                allow: (z.transfer_allow.iter().enumerate())
                    .map(|(i, p)| {
                        Ok(TransferPeer {
                            address: p.address.parse().map_err(|_| {
                                bad(
                                    &format!("transfer.allow[{i}].address"),
                                    "must be an IP address",
                                )
                            })?,
                            key: name(&format!("transfer.allow[{i}].key"), &p.key)?,
                        })
                    })
                    .collect::<Result<_, ValidationError>>()?,
                notify: (z.transfer_notify.iter().enumerate())
                    .map(|(i, n)| {
                        Ok(NotifyTarget {
                            address: n.address.parse().map_err(|_| {
                                bad(
                                    &format!("transfer.notify[{i}].address"),
                                    "must be an address and port (192.0.2.1:53, [2001:db8::1]:53)",
                                )
                            })?,
                            key: match n.key.as_str() {
                                "" => None,
                                k => Some(name(&format!("transfer.notify[{i}].key"), k)?),
                            },
                        })
                    })
                    .collect::<Result<_, ValidationError>>()?,
            },
            dnssec: z.dnssec.map(TryInto::try_into).transpose()?,
        })
    }
}

impl From<&TsigKey> for pb::TsigKey {
    fn from(k: &TsigKey) -> Self {
        pb::TsigKey {
            // Views set the revision; requests read the precondition and mask.
            revision: 0,
            expected_revision: 0,
            update_mask: None,
            id: k.id.0,
            name: k.name.to_string(),
            algorithm: k.algorithm.to_string(),
            secret: k.secret.0.clone(),
        }
    }
}

impl TryFrom<pb::TsigKey> for TsigKey {
    type Error = ValidationError;

    fn try_from(k: pb::TsigKey) -> Result<Self, Self::Error> {
        let algorithm = match k.algorithm.as_str() {
            "" | "hmac-sha256" => TsigAlgorithm::HmacSha256,
            other => {
                return Err(bad(
                    "algorithm",
                    format!("must be hmac-sha256, not {other:?}"),
                ));
            }
        };
        Ok(TsigKey {
            id: TsigKeyId(k.id),
            name: name("name", &k.name)?,
            algorithm,
            secret: Secret(k.secret),
        })
    }
}
