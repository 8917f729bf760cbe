//! Declarative configuration: a document naming objects by their natural
//! keys (zone apex, check and pool names, member name within its pool,
//! record name and type) becomes the create, update and delete operations
//! that make the catalog match it, plus a plan a person can read. Applied
//! through [`crate::core::catalog::CatalogState::apply_all`], so it is
//! all-or-nothing. Ephemeral members are never touched: heartbeats own them.

use gslb_shared::validate::ValidationError;
use gslb_shared::*;
use serde::Deserialize;

use crate::core::catalog::Op;

pub mod export;
mod plan;

use plan::bad;
pub use plan::{plan, plan_zone};

/// The document.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Desired {
    /// Zones.
    #[serde(default, rename = "zone")]
    pub zones: Vec<DesiredZone>,
    /// Health checks.
    #[serde(default, rename = "check")]
    pub checks: Vec<DesiredCheck>,
    /// Pools with their members.
    #[serde(default, rename = "pool")]
    pub pools: Vec<DesiredPool>,
    /// Record sets.
    #[serde(default, rename = "record")]
    pub records: Vec<DesiredRecord>,
}

/// A zone (all fields of the model but the id).
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DesiredZone {
    /// Apex (the key).
    pub apex: DnsName,
    /// SOA.
    pub soa: Soa,
    /// Name servers.
    pub ns: Vec<DnsName>,
    /// Default TTL.
    #[serde(default = "default_ttl")]
    pub default_ttl: u32,
    /// The apex NS set's TTL (`defaultTtl` when left out).
    #[serde(default)]
    pub ns_ttl: Option<u32>,
    /// Transfer settings; left out, the zone keeps the ones it has (a zone
    /// file cannot say them; `transfer = {}` clears them).
    #[serde(default)]
    pub transfer: Option<gslb_shared::Transfer>,
    /// DNSSEC settings; left out, the zone keeps the ones it has (a zone
    /// file cannot say them either). The keys are always the zone's own.
    #[serde(default)]
    pub dnssec: Option<ZoneSigning>,
}

fn default_ttl() -> u32 {
    300
}

/// A check: the model's fields, `name` as the key.
#[derive(Debug, Clone, Deserialize)]
#[serde(transparent)]
pub struct DesiredCheck(pub serde_json::Value);

/// A pool: the model's fields with `check` by name, and its members.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DesiredPool {
    /// Name (the key).
    pub name: String,
    /// Check name.
    #[serde(default)]
    pub check: Option<String>,
    /// Members.
    #[serde(default, rename = "member")]
    pub members: Vec<serde_json::Value>,
    /// Other pool fields (minHealthy, protectThreshold, failMode, fallback).
    #[serde(flatten)]
    pub rest: serde_json::Map<String, serde_json::Value>,
}

/// A record set with `zone` by apex and pools by name.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DesiredRecord {
    /// Zone apex.
    pub zone: DnsName,
    /// Owner name.
    pub name: DnsName,
    /// Type.
    #[serde(rename = "type")]
    pub rtype: RecordType,
    /// TTL.
    #[serde(default)]
    pub ttl: Option<u32>,
    /// Static data.
    #[serde(default, rename = "static")]
    pub static_data: Option<Vec<Rdata>>,
    /// Dynamic data with pools by name.
    #[serde(default)]
    pub dynamic: Option<DesiredDynamic>,
}

/// Dynamic data with pools named.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DesiredDynamic {
    /// Steering (default round-robin).
    #[serde(default)]
    pub steering: Steering,
    /// Default pools by name.
    pub pools: Vec<String>,
    /// Geo branches, pools by name.
    #[serde(default)]
    pub geo: Vec<DesiredBranch>,
    /// firstN.
    #[serde(default)]
    pub first_n: u32,
    /// Answer the addresses hostname members resolve to.
    #[serde(default)]
    pub flatten: bool,
    /// Latency steering: the probe locations nearest each client region.
    #[serde(default)]
    pub region_locations: std::collections::BTreeMap<Region, Vec<gslb_shared::LocationId>>,
}

/// A geo branch with pools named.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DesiredBranch {
    /// Regions.
    #[serde(default)]
    pub regions: Vec<Region>,
    /// Countries (ISO 3166-1 alpha-2).
    #[serde(default)]
    pub countries: Vec<String>,
    /// Continent codes.
    #[serde(default)]
    pub continents: Vec<String>,
    /// Subdivisions (ISO 3166-2).
    #[serde(default)]
    pub subdivisions: Vec<String>,
    /// AS numbers.
    #[serde(default)]
    pub asns: Vec<u32>,
    /// Pools by name.
    pub pools: Vec<String>,
}

/// The operations and a readable plan (`+` create, `~` update, `-` delete).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Plan {
    /// Operations in dependency order.
    pub ops: Vec<Op>,
    /// One line per operation.
    pub lines: Vec<String>,
    /// What was left alone on purpose, and why (`= ...`).
    pub notes: Vec<String>,
}

/// Parse a document: TOML, or JSON when it starts with `{`.
pub fn parse(text: &str) -> Result<Desired, ValidationError> {
    let value = if text.trim_start().starts_with('{') {
        crate::core::strict_json::parse(text.as_bytes())
    } else {
        crate::core::strict_json::from_toml(text)
    }
    .map_err(|e| bad("document".into(), e))?;
    serde_path_to_error::deserialize(value)
        .map_err(|e| bad(e.path().to_string(), e.inner().to_string()))
}
