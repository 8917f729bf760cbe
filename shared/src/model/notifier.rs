//! Notification targets: where the aggregator tells operators about health
//! changes (a signed JSON webhook, a Slack incoming webhook, PagerDuty
//! Events API v2), and which changes each one wants.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::{DnsName, NotifierId, Secret};

/// What a target speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum NotifierKind {
    /// Our JSON event, signed with HMAC-SHA256 over the timestamp and body.
    Webhook,
    /// A Slack incoming-webhook message.
    Slack,
    /// PagerDuty Events API v2: trigger and resolve, deduplicated per subject.
    Pagerduty,
}

impl NotifierKind {
    /// The name in documents and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            NotifierKind::Webhook => "webhook",
            NotifierKind::Slack => "slack",
            NotifierKind::Pagerduty => "pagerduty",
        }
    }
}

impl fmt::Display for NotifierKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A change worth telling someone about.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum EventKind {
    /// A member's decided health became unhealthy.
    MemberDown,
    /// A member's decided health became healthy.
    MemberUp,
    /// A pool stopped being eligible (fewer usable members than minHealthy).
    PoolNotEligible,
    /// A pool became eligible again.
    PoolEligible,
    /// A pool's fail-open started (every member answered, none healthy).
    FailOpenOn,
    /// A pool's fail-open ended.
    FailOpenOff,
    /// A pool's protection threshold started answering every candidate.
    ProtectionOn,
    /// A pool's protection ended.
    ProtectionOff,
    /// A probe location was quarantined (its results no longer count).
    LocationQuarantined,
    /// A quarantined location was released.
    LocationReleased,
    /// An edge fell behind the published version or stopped reporting.
    EdgeStale,
    /// A stale edge caught up again.
    EdgeFresh,
    /// An agent stayed disconnected past the grace period.
    AgentLost,
    /// A lost agent came back.
    AgentBack,
}

impl EventKind {
    /// Every kind, in order.
    pub const ALL: [EventKind; 14] = [
        EventKind::MemberDown,
        EventKind::MemberUp,
        EventKind::PoolNotEligible,
        EventKind::PoolEligible,
        EventKind::FailOpenOn,
        EventKind::FailOpenOff,
        EventKind::ProtectionOn,
        EventKind::ProtectionOff,
        EventKind::LocationQuarantined,
        EventKind::LocationReleased,
        EventKind::EdgeStale,
        EventKind::EdgeFresh,
        EventKind::AgentLost,
        EventKind::AgentBack,
    ];

    /// The name in documents, payloads and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::MemberDown => "member_down",
            EventKind::MemberUp => "member_up",
            EventKind::PoolNotEligible => "pool_not_eligible",
            EventKind::PoolEligible => "pool_eligible",
            EventKind::FailOpenOn => "fail_open_on",
            EventKind::FailOpenOff => "fail_open_off",
            EventKind::ProtectionOn => "protection_on",
            EventKind::ProtectionOff => "protection_off",
            EventKind::LocationQuarantined => "location_quarantined",
            EventKind::LocationReleased => "location_released",
            EventKind::EdgeStale => "edge_stale",
            EventKind::EdgeFresh => "edge_fresh",
            EventKind::AgentLost => "agent_lost",
            EventKind::AgentBack => "agent_back",
        }
    }

    /// The kind named `text`.
    pub fn parse(text: &str) -> Option<EventKind> {
        EventKind::ALL.into_iter().find(|k| k.as_str() == text)
    }

    /// True for the kinds that end a problem (PagerDuty resolves on them).
    pub fn is_recovery(self) -> bool {
        matches!(
            self,
            EventKind::MemberUp
                | EventKind::PoolEligible
                | EventKind::FailOpenOff
                | EventKind::ProtectionOff
                | EventKind::LocationReleased
                | EventKind::EdgeFresh
                | EventKind::AgentBack
        )
    }

    /// True for the kinds about a member or a pool, which the filter's
    /// zones, pools and members narrow; the others concern the whole mesh.
    pub fn is_scoped(self) -> bool {
        matches!(
            self,
            EventKind::MemberDown
                | EventKind::MemberUp
                | EventKind::PoolNotEligible
                | EventKind::PoolEligible
                | EventKind::FailOpenOn
                | EventKind::FailOpenOff
                | EventKind::ProtectionOn
                | EventKind::ProtectionOff
        )
    }
}

impl fmt::Display for EventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Which events a target gets. An empty list does not narrow: no events
/// listed means every kind, no zones, pools or members means every one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NotifyFilter {
    /// Zones: a member or pool event matches when its pool answers a
    /// record of one of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub zones: Vec<DnsName>,
    /// Pools by name.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pools: Vec<String>,
    /// Members by name (in any pool).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<String>,
    /// Event kinds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<EventKind>,
}

impl NotifyFilter {
    /// True when the filter names no zone, pool or member.
    pub fn is_unscoped(&self) -> bool {
        self.zones.is_empty() && self.pools.is_empty() && self.members.is_empty()
    }

    /// True when `kind` is among the events it wants.
    pub fn wants(&self, kind: EventKind) -> bool {
        self.events.is_empty() || self.events.contains(&kind)
    }
}

/// A notification target.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Notifier {
    /// Target id.
    #[serde(default)]
    pub id: NotifierId,
    /// Human name, unique among targets.
    pub name: String,
    /// What it speaks.
    pub kind: NotifierKind,
    /// Where events are posted (`http` or `https`).
    pub url: String,
    /// Which events it gets.
    #[serde(default)]
    pub filter: NotifyFilter,
    /// A webhook's signing key, or PagerDuty's routing (integration) key.
    /// Empty on create asks the server to generate a signing key; every
    /// view after creation shows it empty.
    #[serde(default, skip_serializing_if = "Secret::is_empty")]
    pub secret: Secret,
}

/// What views show of a URL's path and query: they may hold a token (a
/// Slack webhook's path is its credential).
pub const REDACTED_PATH: &str = "/redacted";

/// `url` as views show it: scheme, host and port, the path and query
/// replaced by [`REDACTED_PATH`] unless there are none.
pub fn shown_url(url: &str) -> String {
    match url.parse::<http::Uri>() {
        Ok(uri) => match (uri.scheme_str(), uri.authority()) {
            (Some(scheme), Some(authority)) => {
                let path = uri.path_and_query().map_or("/", |p| p.as_str());
                if path == "/" || path.is_empty() {
                    format!("{scheme}://{authority}/")
                } else {
                    format!("{scheme}://{authority}{REDACTED_PATH}")
                }
            }
            _ => REDACTED_PATH.to_owned(),
        },
        Err(_) => REDACTED_PATH.to_owned(),
    }
}

impl Notifier {
    /// The target as views show it: the secret left out, and the URL's
    /// path and query (see [`shown_url`]).
    pub fn redacted(&self) -> Self {
        Self {
            secret: Secret::default(),
            url: shown_url(&self.url),
            ..self.clone()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_show_scheme_host_and_port_but_not_path_or_query() {
        let shown = |u: &str| shown_url(u);
        assert_eq!(
            shown("https://hooks.slack.com/services/T0/B0/XXXX"),
            "https://hooks.slack.com/redacted"
        );
        assert_eq!(
            shown("http://127.0.0.1:9000/hook?token=abc"),
            "http://127.0.0.1:9000/redacted"
        );
        assert_eq!(shown("http://[::1]:8080"), "http://[::1]:8080/");
        assert_eq!(shown("not a url"), REDACTED_PATH);
    }
}
