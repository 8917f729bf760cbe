//! Zones: the apex we are authoritative for, its SOA and NS set.

use serde::{Deserialize, Serialize};

use super::{DnsName, Transfer, ZoneId, ZoneSigning};

/// An authoritative zone. The SOA serial is not stored: it follows the
/// snapshot version.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Zone {
    /// Zone id.
    pub id: ZoneId,
    /// The apex, e.g. `example.com`.
    pub apex: DnsName,
    /// SOA timers and names.
    pub soa: Soa,
    /// Name servers published at the apex.
    pub ns: Vec<DnsName>,
    /// TTL for static records that do not set their own.
    pub default_ttl: u32,
    /// TTL of the apex NS set (a zone file's own, such as the root's
    /// 518,400); `defaultTtl` when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ns_ttl: Option<u32>,
    /// Outbound zone transfers: none unless configured.
    #[serde(default, skip_serializing_if = "Transfer::is_empty")]
    pub transfer: Transfer,
    /// DNSSEC: the zone is signed when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dnssec: Option<ZoneSigning>,
}

/// SOA fields other than the serial.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Soa {
    /// Primary name server.
    pub mname: DnsName,
    /// Responsible mailbox in name form (`hostmaster.example.com`).
    pub rname: DnsName,
    /// Secondary refresh interval, seconds.
    pub refresh: u32,
    /// Secondary retry interval, seconds.
    pub retry: u32,
    /// Secondary expiry, seconds.
    pub expire: u32,
    /// Negative-caching TTL (RFC 2308), seconds.
    pub negative_ttl: u32,
}

impl Zone {
    /// The TTL the apex NS set is served with.
    pub fn apex_ns_ttl(&self) -> u32 {
        self.ns_ttl.unwrap_or(self.default_ttl)
    }

    /// The zone as views show it: private keys left out.
    pub fn redacted(&self) -> Zone {
        Zone {
            dnssec: self.dnssec.as_ref().map(ZoneSigning::redacted),
            ..self.clone()
        }
    }
}
