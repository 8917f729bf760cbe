//! Record sets: static data, or dynamic answers backed by pools.

use std::net::{Ipv4Addr, Ipv6Addr};

use serde::{Deserialize, Serialize};

use super::{DnsName, PoolId, RecordSetId, Region, ZoneId};

/// Default TTL of dynamic records (DESIGN.md).
pub const DEFAULT_DYNAMIC_TTL: u32 = 30;

/// The record types we serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum RecordType {
    /// IPv4 address.
    A,
    /// IPv6 address.
    Aaaa,
    /// Canonical name.
    Cname,
    /// Text.
    Txt,
    /// Mail exchanger.
    Mx,
    /// Service locator.
    Srv,
    /// Certification authority authorization.
    Caa,
    /// Delegation / name server.
    Ns,
}

impl std::fmt::Display for RecordType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            RecordType::A => "A",
            RecordType::Aaaa => "AAAA",
            RecordType::Cname => "CNAME",
            RecordType::Txt => "TXT",
            RecordType::Mx => "MX",
            RecordType::Srv => "SRV",
            RecordType::Caa => "CAA",
            RecordType::Ns => "NS",
        })
    }
}

/// A record set `(name, type)` in a zone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RecordSet {
    /// Record set id.
    pub id: RecordSetId,
    /// The zone it belongs to.
    pub zone: ZoneId,
    /// Owner name (inside the zone).
    pub name: DnsName,
    /// Record type.
    #[serde(rename = "type")]
    pub rtype: RecordType,
    /// TTL in seconds.
    pub ttl: u32,
    /// Static data or a dynamic, pool-backed answer.
    pub data: RecordData,
}

/// What a record set answers with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum RecordData {
    /// Fixed resource records.
    Static(Vec<Rdata>),
    /// Addresses chosen per query from healthy pool members.
    Dynamic(DynamicRecord),
}

/// One static resource record's data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Rdata {
    /// IPv4 address.
    A(Ipv4Addr),
    /// IPv6 address.
    Aaaa(Ipv6Addr),
    /// Canonical name target.
    Cname(DnsName),
    /// Name server.
    Ns(DnsName),
    /// Mail exchanger.
    Mx {
        /// Lower is preferred.
        preference: u16,
        /// Mail host.
        exchange: DnsName,
    },
    /// Text: one or more character strings of at most 255 bytes each.
    Txt(Vec<String>),
    /// Service locator (RFC 2782).
    Srv {
        /// Lower is preferred.
        priority: u16,
        /// Relative weight among equal priority.
        weight: u16,
        /// Service port.
        port: u16,
        /// Target host.
        target: DnsName,
    },
    /// Certification authority authorization (RFC 8659).
    Caa {
        /// Flags (128 = critical).
        flags: u8,
        /// Property tag, e.g. `issue`.
        tag: String,
        /// Property value.
        value: String,
    },
}

impl Rdata {
    /// The record type this data belongs to.
    pub fn record_type(&self) -> RecordType {
        match self {
            Rdata::A(_) => RecordType::A,
            Rdata::Aaaa(_) => RecordType::Aaaa,
            Rdata::Cname(_) => RecordType::Cname,
            Rdata::Ns(_) => RecordType::Ns,
            Rdata::Mx { .. } => RecordType::Mx,
            Rdata::Txt(_) => RecordType::Txt,
            Rdata::Srv { .. } => RecordType::Srv,
            Rdata::Caa { .. } => RecordType::Caa,
        }
    }
}

/// A pool-backed record (type A or AAAA).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DynamicRecord {
    /// How members of the answering pool are ordered.
    pub steering: Steering,
    /// Pools in priority order: the default branch.
    pub pools: Vec<PoolId>,
    /// Region-specific pool lists; a client in none of them uses `pools`.
    #[serde(default)]
    pub geo: Vec<GeoBranch>,
    /// At most this many addresses per answer; 0 answers all.
    #[serde(default)]
    pub first_n: u32,
}

/// How the answer set is ordered before `firstN` trims it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Steering {
    /// Rotate the set by one position per query.
    RoundRobin,
    /// Weighted random order without replacement.
    Weighted,
}

/// Clients in `regions` are answered from `pools` (priority order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GeoBranch {
    /// Client regions this branch serves.
    pub regions: Vec<Region>,
    /// Pools in priority order.
    pub pools: Vec<PoolId>,
}

impl DynamicRecord {
    /// The pool list for a client region (the default branch when the region
    /// is unknown or has no branch of its own).
    pub fn branch_for(&self, region: Option<&Region>) -> (Option<usize>, &[PoolId]) {
        if let Some(region) = region {
            for (index, branch) in self.geo.iter().enumerate() {
                if branch.regions.iter().any(|r| r == region) {
                    return (Some(index), &branch.pools);
                }
            }
        }
        (None, &self.pools)
    }
}
