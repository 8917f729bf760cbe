//! Zone and SOA.

use gslb_shared::validate::ValidationError;
use gslb_shared::{Soa, Zone, ZoneId};

use super::{bad, name};
use crate::pb;

impl From<&Zone> for pb::Zone {
    fn from(z: &Zone) -> Self {
        pb::Zone {
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
        })
    }
}
