//! One probe's outcome as an agent reports it.

use serde::{Deserialize, Serialize};

use super::{CheckId, MemberId};

/// Why a probe failed, short and machine-readable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FailReason {
    /// The probe did not finish within the check timeout.
    Timeout,
    /// Connection refused (or ICMP port unreachable).
    Refused,
    /// Connection reset by the peer.
    Reset,
    /// No route, host unreachable, network down.
    Unreachable,
    /// TLS handshake or certificate failure.
    Tls,
    /// Unexpected HTTP status.
    Status,
    /// Reply did not match the expected regular expression.
    BodyMismatch,
    /// The reply broke the protocol (e.g. not a MySQL greeting).
    Protocol,
    /// The target failed runtime validation; nothing was sent. Never counts.
    InvalidTarget,
    /// The connected address is on the deny-list; nothing was sent.
    DeniedDestination,
    /// A hostname target did not resolve (no address, or no answer).
    Resolve,
    /// The probe passed, but slower than the check's latency threshold.
    Slow,
    /// The probe passed on an inverted check (it expects failure).
    Inverted,
    /// Anything else.
    Other,
}

impl FailReason {
    /// The kebab-case name used in the API and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            FailReason::Timeout => "timeout",
            FailReason::Refused => "refused",
            FailReason::Reset => "reset",
            FailReason::Unreachable => "unreachable",
            FailReason::Tls => "tls",
            FailReason::Status => "status",
            FailReason::BodyMismatch => "body-mismatch",
            FailReason::Protocol => "protocol",
            FailReason::InvalidTarget => "invalid-target",
            FailReason::DeniedDestination => "denied-destination",
            FailReason::Resolve => "resolve",
            FailReason::Slow => "slow",
            FailReason::Inverted => "inverted",
            FailReason::Other => "other",
        }
    }
}

/// A probe result for one (member, check) target and cycle.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct ProbeResult {
    /// The probed member.
    pub member: MemberId,
    /// The check it ran for.
    pub check: CheckId,
    /// Cycle number: the probe's scheduled start (ms since the Unix epoch)
    /// divided by the check interval in ms.
    pub cycle: u64,
    /// `None` when the probe passed, else why it failed.
    pub failure: Option<FailReason>,
    /// How long the probe took, in microseconds.
    pub latency_us: u32,
}

impl ProbeResult {
    /// True when the probe passed.
    pub fn passed(&self) -> bool {
        self.failure.is_none()
    }
}
