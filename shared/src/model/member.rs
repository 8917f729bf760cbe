//! Pool members: one answered address or hostname each.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{MemberAddress, MemberId, PoolId, Region};

/// Default member weight.
pub const DEFAULT_WEIGHT: u32 = 100;
/// Default heartbeat timeout of ephemeral members (seed 004).
pub const DEFAULT_HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(15);
/// Default delete timeout of ephemeral members (seed 004).
pub const DEFAULT_DELETE_TIMEOUT: Duration = Duration::from_secs(30);

/// A pool member.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Member {
    /// Member id.
    pub id: MemberId,
    /// The pool it belongs to.
    pub pool: PoolId,
    /// Human name.
    pub name: String,
    /// The answered address, or a hostname (probed at each address it
    /// resolves to; answered as a CNAME or flattened).
    pub address: MemberAddress,
    /// Service port (the default check port).
    pub port: u16,
    /// Relative weight; 0 is never answered.
    pub weight: u32,
    /// Lower values are ordered first in an answer.
    pub priority: u32,
    /// Where the member runs.
    pub region: Option<Region>,
    /// Disabled members are never answered.
    pub enabled: bool,
    /// Backups are answered only when no primary is healthy.
    pub backup: bool,
    /// Passing cycles needed before the member is answered; 0 = no gate.
    pub warmup_threshold: u32,
    /// Close the warm-up gate again when the member goes down.
    pub rewarm_after_down: bool,
    /// Who keeps its health: agents' checks or its own heartbeats.
    pub kind: MemberKind,
}

/// Who owns a member's health.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum MemberKind {
    /// Checked by agents (or manual when the pool check is `none`).
    Persistent,
    /// Healthy while heartbeats arrive.
    Ephemeral(EphemeralPolicy),
}

/// Heartbeat timing of an ephemeral member.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields, from = "PolicyInput")]
pub struct EphemeralPolicy {
    /// How often the member's client means to send a heartbeat (seed 004's
    /// `heartbeatInterval`); `heartbeatTimeout` must exceed it. Unset, it is
    /// a third of the timeout (Nacos's 5 s / 15 s).
    #[serde(with = "crate::duration")]
    #[schema(value_type = String)]
    pub heartbeat_interval: Duration,
    /// Down when no heartbeat arrived for this long.
    #[serde(with = "crate::duration")]
    #[schema(value_type = String)]
    pub heartbeat_timeout: Duration,
    /// Removed when no heartbeat arrived for this long (if `expire`).
    #[serde(with = "crate::duration")]
    #[schema(value_type = String)]
    pub delete_timeout: Duration,
    /// Whether the member is removed after `deleteTimeout`.
    pub expire: bool,
}

/// An ephemeral policy as written: any field may be left out (`{}` is
/// seed 004's defaults: 15 s, 30 s, expiring; the interval a third of the
/// timeout).
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct PolicyInput {
    #[serde(default, with = "crate::duration::optional")]
    #[schema(value_type = Option<String>)]
    heartbeat_interval: Option<Duration>,
    #[serde(default = "default_heartbeat_timeout", with = "crate::duration")]
    #[schema(value_type = String)]
    heartbeat_timeout: Duration,
    #[serde(default = "default_delete_timeout", with = "crate::duration")]
    #[schema(value_type = String)]
    delete_timeout: Duration,
    #[serde(default = "expire_by_default")]
    expire: bool,
}

fn default_heartbeat_timeout() -> Duration {
    DEFAULT_HEARTBEAT_TIMEOUT
}

fn default_delete_timeout() -> Duration {
    DEFAULT_DELETE_TIMEOUT
}

fn expire_by_default() -> bool {
    true
}

impl From<PolicyInput> for EphemeralPolicy {
    fn from(p: PolicyInput) -> Self {
        EphemeralPolicy {
            heartbeat_interval: p
                .heartbeat_interval
                .unwrap_or_else(|| EphemeralPolicy::interval_for(p.heartbeat_timeout)),
            heartbeat_timeout: p.heartbeat_timeout,
            delete_timeout: p.delete_timeout,
            expire: p.expire,
        }
    }
}

impl EphemeralPolicy {
    /// The interval assumed when none is given: a third of the timeout.
    pub fn interval_for(timeout: Duration) -> Duration {
        timeout / 3
    }
}

impl Default for EphemeralPolicy {
    fn default() -> Self {
        Self {
            heartbeat_interval: EphemeralPolicy::interval_for(DEFAULT_HEARTBEAT_TIMEOUT),
            heartbeat_timeout: DEFAULT_HEARTBEAT_TIMEOUT,
            delete_timeout: DEFAULT_DELETE_TIMEOUT,
            expire: true,
        }
    }
}

impl Member {
    /// A persistent member with the documented defaults.
    pub fn new(
        id: MemberId,
        pool: PoolId,
        name: impl Into<String>,
        address: MemberAddress,
        port: u16,
    ) -> Self {
        Self {
            id,
            pool,
            name: name.into(),
            address,
            port,
            weight: DEFAULT_WEIGHT,
            priority: 0,
            region: None,
            enabled: true,
            backup: false,
            warmup_threshold: 0,
            rewarm_after_down: false,
            kind: MemberKind::Persistent,
        }
    }

    /// True for heartbeat-kept members.
    pub fn is_ephemeral(&self) -> bool {
        matches!(self.kind, MemberKind::Ephemeral(_))
    }
}
