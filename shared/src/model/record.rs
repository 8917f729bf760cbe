//! Record sets: static data, or dynamic answers backed by pools.

use std::net::{Ipv4Addr, Ipv6Addr};

use serde::{Deserialize, Serialize};

use super::{DnsName, GeoCode, LocationId, Place, PoolId, RecordSetId, Region, ZoneId};

/// Default TTL of dynamic records (DESIGN.md).
pub const DEFAULT_DYNAMIC_TTL: u32 = 30;

/// The record types we serve: the common ones by name, any other in
/// RFC 3597's generic form (`TYPE65534`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RecordType {
    /// IPv4 address.
    A,
    /// IPv6 address.
    Aaaa,
    /// Canonical name.
    Cname,
    /// Text (SPF policies are TXT records: RFC 7208 3.1).
    Txt,
    /// Mail exchanger.
    Mx,
    /// Service locator.
    Srv,
    /// Certification authority authorization.
    Caa,
    /// Delegation / name server.
    Ns,
    /// Pointer (reverse zones).
    Ptr,
    /// Naming authority pointer (RFC 3403).
    Naptr,
    /// DANE TLS association (RFC 6698).
    Tlsa,
    /// SSH key fingerprint (RFC 4255).
    Sshfp,
    /// Delegation signer (RFC 4034).
    Ds,
    /// Service binding (RFC 9460).
    Svcb,
    /// Service binding for HTTPS (RFC 9460).
    Https,
    /// Any other type, by number, with opaque data (RFC 3597).
    Generic(u16),
}

/// The named types with their type codes and names.
const NAMED: [(RecordType, u16, &str); 15] = [
    (RecordType::A, 1, "A"),
    (RecordType::Aaaa, 28, "AAAA"),
    (RecordType::Cname, 5, "CNAME"),
    (RecordType::Txt, 16, "TXT"),
    (RecordType::Mx, 15, "MX"),
    (RecordType::Srv, 33, "SRV"),
    (RecordType::Caa, 257, "CAA"),
    (RecordType::Ns, 2, "NS"),
    (RecordType::Ptr, 12, "PTR"),
    (RecordType::Naptr, 35, "NAPTR"),
    (RecordType::Tlsa, 52, "TLSA"),
    (RecordType::Sshfp, 44, "SSHFP"),
    (RecordType::Ds, 43, "DS"),
    (RecordType::Svcb, 64, "SVCB"),
    (RecordType::Https, 65, "HTTPS"),
];

/// Type codes a record set may not have in generic form: the zone's SOA,
/// OPT, the query and meta types (RFC 6895: 128–255, and 0), and the
/// DNSSEC records the edges make themselves (RRSIG, NSEC, NSEC3, DNSKEY,
/// their parameters, and a signed zone's CDS and CDNSKEY).
fn reserved(code: u16) -> bool {
    matches!(code, 0 | 6 | 41 | 46 | 47 | 48 | 50 | 51 | 59 | 60) || (128..=255).contains(&code)
}

impl RecordType {
    /// The type code (RFC 1035 TYPE).
    pub fn code(self) -> u16 {
        match self {
            RecordType::Generic(code) => code,
            named => NAMED
                .iter()
                .find(|(t, _, _)| *t == named)
                .map_or(0, |(_, code, _)| *code),
        }
    }

    /// The type of a code: a named type, or the generic form for any code
    /// a record set may have; `None` for SOA, OPT, the query and meta types
    /// and the DNSSEC records.
    pub fn from_code(code: u16) -> Option<RecordType> {
        if let Some((t, _, _)) = NAMED.iter().find(|(_, c, _)| *c == code) {
            return Some(*t);
        }
        (!reserved(code)).then_some(RecordType::Generic(code))
    }

    /// Whether `Generic(code)` is allowed: a code with a name must use it.
    pub fn generic_allowed(code: u16) -> bool {
        !reserved(code) && !NAMED.iter().any(|(_, c, _)| *c == code)
    }
}

impl std::fmt::Display for RecordType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RecordType::Generic(code) => write!(f, "TYPE{code}"),
            named => f.write_str(
                NAMED
                    .iter()
                    .find(|(t, _, _)| t == named)
                    .map_or("?", |(_, _, name)| name),
            ),
        }
    }
}

impl std::str::FromStr for RecordType {
    type Err = String;

    /// A type's name (any case) or `TYPEnnn`; a generic code with a name
    /// of its own is read as that type.
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let upper = text.to_ascii_uppercase();
        if let Some((t, _, _)) = NAMED.iter().find(|(_, _, name)| *name == upper) {
            return Ok(*t);
        }
        let code = upper
            .strip_prefix("TYPE")
            .and_then(|n| n.parse::<u16>().ok())
            .ok_or_else(|| {
                format!(
                    "{text:?} is not a record type: one of {} or TYPEnnn (RFC 3597)",
                    NAMED
                        .iter()
                        .map(|(_, _, n)| *n)
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            })?;
        RecordType::from_code(code).ok_or_else(|| {
            format!(
                "TYPE{code} cannot be a record set's type (SOA, OPT, DNSSEC, query or meta type)"
            )
        })
    }
}

impl Serialize for RecordType {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for RecordType {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// A record set `(name, type)` in a zone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
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
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum RecordData {
    /// Fixed resource records.
    Static(Vec<Rdata>),
    /// Addresses chosen per query from healthy pool members.
    Dynamic(DynamicRecord),
}

/// One static resource record's data.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub enum Rdata {
    /// IPv4 address.
    #[schema(value_type = String, format = Ipv4)]
    A(Ipv4Addr),
    /// IPv6 address.
    #[schema(value_type = String, format = Ipv6)]
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
    /// Pointer to a name (reverse zones).
    Ptr(DnsName),
    /// Naming authority pointer (RFC 3403).
    #[serde(rename_all = "camelCase")]
    Naptr {
        /// Lower is processed first.
        order: u16,
        /// Lower is preferred among equal order.
        preference: u16,
        /// Flags, e.g. `S`, `A`, `U`, `P`.
        flags: String,
        /// Service, e.g. `SIP+D2U`.
        services: String,
        /// Substitution expression (empty when `replacement` is used).
        regexp: String,
        /// Replacement name; none (the root) when `regexp` is used.
        #[serde(default)]
        replacement: Option<DnsName>,
    },
    /// DANE TLS association (RFC 6698).
    #[serde(rename_all = "camelCase")]
    Tlsa {
        /// Certificate usage (0–3).
        usage: u8,
        /// Selector (0 full certificate, 1 public key).
        selector: u8,
        /// Matching type (0 exact, 1 SHA-256, 2 SHA-512).
        matching_type: u8,
        /// Association data, hex.
        data: String,
    },
    /// SSH key fingerprint (RFC 4255, 6594, 7479).
    #[serde(rename_all = "camelCase")]
    Sshfp {
        /// Key algorithm (1 RSA, 2 DSA, 3 ECDSA, 4 Ed25519, 6 Ed448).
        algorithm: u8,
        /// Fingerprint type (1 SHA-1, 2 SHA-256).
        fingerprint_type: u8,
        /// The fingerprint, hex.
        fingerprint: String,
    },
    /// Delegation signer (RFC 4034).
    #[serde(rename_all = "camelCase")]
    Ds {
        /// The key's tag.
        key_tag: u16,
        /// The key's algorithm.
        algorithm: u8,
        /// Digest type (1 SHA-1, 2 SHA-256, 4 SHA-384).
        digest_type: u8,
        /// The digest, hex.
        digest: String,
    },
    /// Service binding (RFC 9460).
    Svcb(ServiceBinding),
    /// Service binding for HTTPS (RFC 9460).
    Https(ServiceBinding),
    /// Any other type's data, opaque (RFC 3597).
    Generic {
        /// The type code.
        rtype: u16,
        /// The data, hex (empty for no data).
        data: String,
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
            Rdata::Ptr(_) => RecordType::Ptr,
            Rdata::Naptr { .. } => RecordType::Naptr,
            Rdata::Tlsa { .. } => RecordType::Tlsa,
            Rdata::Sshfp { .. } => RecordType::Sshfp,
            Rdata::Ds { .. } => RecordType::Ds,
            Rdata::Svcb(_) => RecordType::Svcb,
            Rdata::Https(_) => RecordType::Https,
            Rdata::Generic { rtype, .. } => RecordType::Generic(*rtype),
        }
    }
}

/// The data of an SVCB or HTTPS record (RFC 9460).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ServiceBinding {
    /// 0 for alias mode; otherwise lower is preferred.
    pub priority: u16,
    /// The target; none (the root, `.`) for the owner itself in service
    /// mode, or "no service" in alias mode.
    #[serde(default)]
    pub target: Option<DnsName>,
    /// Service parameters in presentation form, as in a zone file:
    /// `alpn=h2,h3 port=8443 ipv4hint=192.0.2.1` (empty in alias mode).
    #[serde(default)]
    pub params: String,
}

/// A pool-backed record: A or AAAA (addresses), or CNAME (a hostname
/// member's name).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DynamicRecord {
    /// How members of the answering pool are ordered (default round-robin).
    #[serde(default)]
    pub steering: Steering,
    /// Pools in priority order: the default branch.
    pub pools: Vec<PoolId>,
    /// Region-specific pool lists; a client in none of them uses `pools`.
    #[serde(default)]
    pub geo: Vec<GeoBranch>,
    /// At most this many addresses per answer; 0 answers all.
    #[serde(default)]
    pub first_n: u32,
    /// An A or AAAA record answered with the addresses its hostname
    /// members resolve to (Route 53's alias, Cloudflare's flattening),
    /// allowed at the apex. Without it, hostname members back CNAME
    /// records only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub flatten: bool,
    /// For `latency` steering: the probe locations nearest each client
    /// region, whose round-trip times its clients are answered by. A client
    /// in no listed region is answered by the mean over every location.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub region_locations: std::collections::BTreeMap<Region, Vec<LocationId>>,
}

/// How the answer set is ordered before `firstN` trims it.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Steering {
    /// Rotate the set by one position per query (the default, seed 002).
    #[default]
    RoundRobin,
    /// Weighted random order without replacement.
    Weighted,
    /// Weighted, but a client subnet gets the same members while the set is
    /// unchanged (weighted rendezvous hashing; NS1's Weighted Sticky).
    Sticky,
    /// The members with the lowest round-trip time from the locations
    /// nearest the client's region (within a tolerance band), rotated.
    Latency,
}

/// Clients in any of `regions` (the edge's CIDR table), `countries`,
/// `continents`, `subdivisions` or `asns` (its MaxMind databases) are
/// answered from `pools` (priority order).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GeoBranch {
    /// Client regions this branch serves.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub regions: Vec<Region>,
    /// ISO 3166-1 alpha-2 countries (`DE`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub countries: Vec<String>,
    /// Continent codes (`EU`, `NA`, ...).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub continents: Vec<String>,
    /// ISO 3166-2 subdivisions (`DE-BE`, `US-CA`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub subdivisions: Vec<String>,
    /// Autonomous system numbers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub asns: Vec<u32>,
    /// Pools in priority order.
    pub pools: Vec<PoolId>,
}

impl GeoBranch {
    /// A branch for `regions` only.
    pub fn for_regions(regions: Vec<Region>, pools: Vec<PoolId>) -> Self {
        Self {
            regions,
            countries: Vec::new(),
            continents: Vec::new(),
            subdivisions: Vec::new(),
            asns: Vec::new(),
            pools,
        }
    }

    /// Everything it matches on, as an operator writes it (`eu`, `DE`,
    /// `DE-BE`, `AS64500`).
    pub fn keys(&self) -> Vec<String> {
        (self.regions.iter().map(ToString::to_string))
            .chain(self.countries.iter().cloned())
            .chain(self.continents.iter().cloned())
            .chain(self.subdivisions.iter().cloned())
            .chain(self.asns.iter().map(|a| format!("AS{a}")))
            .collect()
    }

    /// True when it matches on what a geo database says (not only regions).
    pub fn needs_place(&self) -> bool {
        !(self.countries.is_empty()
            && self.continents.is_empty()
            && self.subdivisions.is_empty()
            && self.asns.is_empty())
    }

    /// Whether a client in `region` at `place` belongs to this branch.
    pub fn matches(&self, region: Option<&Region>, place: &Place) -> bool {
        let code = |list: &[String], code: Option<GeoCode>| {
            code.is_some_and(|c| list.iter().any(|x| x.eq_ignore_ascii_case(c.as_str())))
        };
        region.is_some_and(|r| self.regions.contains(r))
            || code(&self.countries, place.country)
            || code(&self.continents, place.continent)
            || self.subdivisions.iter().any(|s| place.in_subdivision(s))
            || place.asn.is_some_and(|a| self.asns.contains(&a))
    }
}

impl DynamicRecord {
    /// Every pool it names: the default branch's, then each geo branch's
    /// (a pool named twice comes twice).
    pub fn all_pools(&self) -> impl Iterator<Item = &PoolId> + '_ {
        self.pools
            .iter()
            .chain(self.geo.iter().flat_map(|b| &b.pools))
    }

    /// The pool list for a client in `region` at `place`: the first geo
    /// branch that matches, else the default branch.
    pub fn branch_for(&self, region: Option<&Region>, place: &Place) -> (Option<usize>, &[PoolId]) {
        match self.geo.iter().position(|b| b.matches(region, place)) {
            Some(index) => (Some(index), &self.geo[index].pools),
            None => (None, &self.pools),
        }
    }

    /// True when a branch matches on a geo database's answer.
    pub fn needs_place(&self) -> bool {
        self.geo.iter().any(GeoBranch::needs_place)
    }

    /// True when its answers depend on the client's region: a geo branch
    /// matches on regions, or latency steering maps regions to locations.
    pub fn needs_region(&self) -> bool {
        self.geo.iter().any(|b| !b.regions.is_empty())
            || (self.steering == Steering::Latency && !self.region_locations.is_empty())
    }

    /// The locations whose round-trip times answer a client in `region`
    /// (latency steering): its `regionLocations` entry; `None`, meaning
    /// every location, when the region is unknown or not listed.
    pub fn locations_for(&self, region: Option<&Region>) -> Option<&[LocationId]> {
        region
            .and_then(|r| self.region_locations.get(r))
            .map(Vec::as_slice)
    }
}
