//! Members.

use std::time::Duration;

use gslb_shared::validate::ValidationError;
use gslb_shared::{EphemeralPolicy, Member, MemberId, MemberKind, PoolId};

use super::{member_address, millis, region, u16_field};
use crate::pb;

impl From<&Member> for pb::Member {
    fn from(m: &Member) -> Self {
        pb::Member {
            // Views set the revision; requests read the precondition and mask.
            revision: 0,
            expected_revision: 0,
            update_mask: None,
            id: m.id.0,
            pool_id: m.pool.0,
            name: m.name.clone(),
            address: m.address.to_string(),
            port: u32::from(m.port),
            weight: m.weight,
            priority: m.priority,
            region: m
                .region
                .as_ref()
                .map(ToString::to_string)
                .unwrap_or_default(),
            enabled: m.enabled,
            backup: m.backup,
            warmup_threshold: m.warmup_threshold,
            rewarm_after_down: m.rewarm_after_down,
            ephemeral: match m.kind {
                MemberKind::Persistent => None,
                MemberKind::Ephemeral(p) => Some(pb::EphemeralPolicy {
                    heartbeat_interval_ms: millis(p.heartbeat_interval),
                    heartbeat_timeout_ms: millis(p.heartbeat_timeout),
                    delete_timeout_ms: millis(p.delete_timeout),
                    expire: p.expire,
                }),
            },
        }
    }
}

impl TryFrom<pb::Member> for Member {
    type Error = ValidationError;

    fn try_from(m: pb::Member) -> Result<Self, Self::Error> {
        Ok(Member {
            id: MemberId(m.id),
            pool: PoolId(m.pool_id),
            name: m.name,
            address: member_address("address", &m.address)?,
            port: u16_field("port", m.port)?,
            weight: m.weight,
            priority: m.priority,
            region: region(&m.region),
            enabled: m.enabled,
            backup: m.backup,
            warmup_threshold: m.warmup_threshold,
            rewarm_after_down: m.rewarm_after_down,
            kind: match m.ephemeral {
                None => MemberKind::Persistent,
                Some(p) => {
                    // 0 is "not given": seed 004's defaults, as in REST.
                    let timeout = match p.heartbeat_timeout_ms {
                        0 => gslb_shared::model::DEFAULT_HEARTBEAT_TIMEOUT,
                        ms => Duration::from_millis(ms),
                    };
                    MemberKind::Ephemeral(EphemeralPolicy {
                        heartbeat_interval: match p.heartbeat_interval_ms {
                            0 => EphemeralPolicy::interval_for(timeout),
                            ms => Duration::from_millis(ms),
                        },
                        heartbeat_timeout: timeout,
                        delete_timeout: match p.delete_timeout_ms {
                            0 => gslb_shared::model::DEFAULT_DELETE_TIMEOUT,
                            ms => Duration::from_millis(ms),
                        },
                        expire: p.expire,
                    })
                }
            },
        })
    }
}
