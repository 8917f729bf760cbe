//! Declarative configuration: a document naming objects by their natural
//! keys (zone apex, check and pool names, member name within its pool,
//! record name and type) becomes the create, update and delete operations
//! that make the catalog match it, plus a plan a person can read. Applied
//! through [`crate::core::catalog::CatalogState::apply_all`], so it is
//! all-or-nothing. Ephemeral members are never touched: heartbeats own them.

use std::collections::BTreeMap;

use gslb_shared::validate::ValidationError;
use gslb_shared::*;
use serde::Deserialize;

use crate::core::catalog::{CatalogState, Object, ObjectRef, Op};

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
    /// Steering.
    pub steering: Steering,
    /// Default pools by name.
    pub pools: Vec<String>,
    /// Geo branches, pools by name.
    #[serde(default)]
    pub geo: Vec<DesiredBranch>,
    /// firstN.
    #[serde(default)]
    pub first_n: u32,
}

/// A geo branch with pools named.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DesiredBranch {
    /// Regions.
    pub regions: Vec<Region>,
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
}

struct Planner<'a> {
    current: &'a Catalog,
    next_id: u64,
    plan: Plan,
}

fn bad(field: String, rule: impl Into<String>) -> ValidationError {
    ValidationError::single(field, rule)
}

/// Decode a model object from JSON with `id` set, naming `at` on failure.
fn object<T: serde::de::DeserializeOwned>(
    at: &str,
    value: serde_json::Value,
    id: u64,
) -> Result<T, ValidationError> {
    let map = match value {
        serde_json::Value::Object(map) => map,
        _ => serde_json::Map::new(),
    };
    gslb_shared::defaults::decode(
        at,
        gslb_shared::defaults::overlay(serde_json::Value::Null, map, id),
    )
}

impl Planner<'_> {
    fn upsert(
        &mut self,
        existing: Option<Object>,
        desired: impl FnOnce(u64) -> Result<Object, ValidationError>,
        label: String,
    ) -> Result<u64, ValidationError> {
        match existing {
            Some(old) => {
                let id = object_id(&old.reference());
                let new = desired(id)?;
                if new != old {
                    self.plan.lines.push(format!("~ {label}"));
                    self.plan.ops.push(Op::Update(new));
                }
                Ok(id)
            }
            None => {
                self.next_id += 1;
                let id = self.next_id;
                let new = desired(id)?;
                self.plan.lines.push(format!("+ {label}"));
                self.plan.ops.push(Op::Create(new));
                Ok(id)
            }
        }
    }
}

fn object_id(r: &ObjectRef) -> u64 {
    match *r {
        ObjectRef::Zone(i) => i.0,
        ObjectRef::Record(i) => i.0,
        ObjectRef::Pool(i) => i.0,
        ObjectRef::Member(i) => i.0,
        ObjectRef::Check(i) => i.0,
    }
}

/// Plan the operations that make `state` match `desired`.
pub fn plan(state: &CatalogState, desired: &Desired) -> Result<Plan, ValidationError> {
    let c = &state.catalog;
    let mut p = Planner {
        current: c,
        next_id: state.last_id,
        plan: Plan::default(),
    };
    let mut zones = BTreeMap::new();
    for (i, z) in desired.zones.iter().enumerate() {
        let existing = p
            .current
            .zones
            .values()
            .find(|x| x.apex == z.apex)
            .cloned()
            .map(Object::Zone);
        let z = z.clone();
        let id = p.upsert(
            existing,
            |id| {
                Ok(Object::Zone(Zone {
                    id: ZoneId(id),
                    apex: z.apex.clone(),
                    soa: z.soa.clone(),
                    ns: z.ns.clone(),
                    default_ttl: z.default_ttl,
                }))
            },
            format!("zone {}", z.apex),
        )?;
        if zones.insert(z.apex.clone(), ZoneId(id)).is_some() {
            return Err(bad(
                format!("zone[{i}].apex"),
                format!("zone {} is listed twice", z.apex),
            ));
        }
    }
    let mut checks = BTreeMap::new();
    for (i, k) in desired.checks.iter().enumerate() {
        let at = format!("check[{i}]");
        let name =
            k.0.get("name")
                .and_then(|v| v.as_str())
                .ok_or_else(|| bad(format!("{at}.name"), "is required"))?
                .to_owned();
        let existing = p
            .current
            .checks
            .values()
            .find(|x| x.name == name)
            .cloned()
            .map(Object::Check);
        // The documented defaults under what the document gives; the probe has none.
        let mut value = gslb_shared::defaults::base(gslb_shared::defaults::Kind::Check);
        if let (serde_json::Value::Object(map), serde_json::Value::Object(given)) =
            (&mut value, &k.0)
        {
            map.extend(given.clone());
        }
        let id = p.upsert(
            existing,
            |id| object::<Check>(&at, value, id).map(Object::Check),
            format!("check {name}"),
        )?;
        if checks.insert(name.clone(), CheckId(id)).is_some() {
            return Err(bad(
                format!("{at}.name"),
                format!("check {name} is listed twice"),
            ));
        }
    }
    let mut pools = BTreeMap::new();
    let mut kept_members = std::collections::HashSet::new();
    for (i, d) in desired.pools.iter().enumerate() {
        let at = format!("pool[{i}]");
        let check = match &d.check {
            Some(name) => Some(*checks.get(name).ok_or_else(|| {
                bad(
                    format!("{at}.check"),
                    format!("no check named {name} in this document"),
                )
            })?),
            None => None,
        };
        let mut value = gslb_shared::defaults::base(gslb_shared::defaults::Kind::Pool);
        if let serde_json::Value::Object(map) = &mut value {
            map.insert("name".into(), d.name.clone().into());
            map.extend(d.rest.clone());
            map.insert(
                "check".into(),
                serde_json::to_value(check).unwrap_or_default(),
            );
        }
        let existing = p
            .current
            .pools
            .values()
            .find(|x| x.name == d.name)
            .cloned()
            .map(Object::Pool);
        let pool_id = PoolId(p.upsert(
            existing,
            |id| object::<Pool>(&at, value, id).map(Object::Pool),
            format!("pool {}", d.name),
        )?);
        if pools.insert(d.name.clone(), pool_id).is_some() {
            return Err(bad(
                format!("{at}.name"),
                format!("pool {} is listed twice", d.name),
            ));
        }
        for (j, m) in d.members.iter().enumerate() {
            let at = format!("{at}.member[{j}]");
            let name = m
                .get("name")
                .and_then(|v| v.as_str())
                .ok_or_else(|| bad(format!("{at}.name"), "is required"))?
                .to_owned();
            let mut value = gslb_shared::defaults::base(gslb_shared::defaults::Kind::Member);
            if let (serde_json::Value::Object(map), serde_json::Value::Object(given)) =
                (&mut value, m)
            {
                map.extend(given.clone());
                map.insert("pool".into(), pool_id.0.into());
            }
            let existing = p
                .current
                .members
                .values()
                .find(|x| x.pool == pool_id && x.name == name && !x.is_ephemeral())
                .cloned();
            let id = p.upsert(
                existing.map(Object::Member),
                |id| object::<Member>(&at, value, id).map(Object::Member),
                format!("member {}/{name}", d.name),
            )?;
            kept_members.insert(MemberId(id));
        }
    }
    let mut kept_records = std::collections::HashSet::new();
    // Record deletes go before record creates (spliced in below), so one
    // document can turn a name from CNAME into another type or back.
    let records_at = (p.plan.ops.len(), p.plan.lines.len());
    for (i, r) in desired.records.iter().enumerate() {
        let at = format!("record[{i}]");
        let zone = *zones.get(&r.zone).ok_or_else(|| {
            bad(
                format!("{at}.zone"),
                format!("no zone {} in this document", r.zone),
            )
        })?;
        let named = |names: &[String], field: &str| -> Result<Vec<PoolId>, ValidationError> {
            names
                .iter()
                .map(|n| {
                    pools.get(n).copied().ok_or_else(|| {
                        bad(
                            format!("{at}.{field}"),
                            format!("no pool named {n} in this document"),
                        )
                    })
                })
                .collect()
        };
        let data = match (&r.static_data, &r.dynamic) {
            (Some(rdata), None) => RecordData::Static(rdata.clone()),
            (None, Some(d)) => RecordData::Dynamic(DynamicRecord {
                steering: d.steering,
                pools: named(&d.pools, "dynamic.pools")?,
                geo: d
                    .geo
                    .iter()
                    .map(|b| {
                        Ok(GeoBranch {
                            regions: b.regions.clone(),
                            pools: named(&b.pools, "dynamic.geo")?,
                        })
                    })
                    .collect::<Result<_, ValidationError>>()?,
                first_n: d.first_n,
            }),
            _ => return Err(bad(at, "needs exactly one of static or dynamic")),
        };
        let ttl = r.ttl.unwrap_or(if matches!(data, RecordData::Dynamic(_)) {
            DEFAULT_DYNAMIC_TTL
        } else {
            300
        });
        let existing = p
            .current
            .records
            .values()
            .find(|x| x.name == r.name && x.rtype == r.rtype)
            .cloned()
            .map(Object::Record);
        let (name, rtype) = (r.name.clone(), r.rtype);
        let id = p.upsert(
            existing,
            |id| {
                Ok(Object::Record(RecordSet {
                    id: RecordSetId(id),
                    zone,
                    name: name.clone(),
                    rtype,
                    ttl,
                    data,
                }))
            },
            format!("record {} {}", r.name, r.rtype),
        )?;
        kept_records.insert(RecordSetId(id));
    }
    let (ops, lines): (Vec<Op>, Vec<String>) = c
        .records
        .values()
        .filter(|r| !kept_records.contains(&r.id))
        .map(|r| {
            (
                Op::Delete(ObjectRef::Record(r.id)),
                format!("- record {} {}", r.name, r.rtype),
            )
        })
        .unzip();
    p.plan.ops.splice(records_at.0..records_at.0, ops);
    p.plan.lines.splice(records_at.1..records_at.1, lines);
    // Other deletes, dependents first.
    for m in c
        .members
        .values()
        .filter(|m| !m.is_ephemeral() && !kept_members.contains(&m.id))
    {
        p.plan.lines.push(format!("- member {}", m.name));
        p.plan.ops.push(Op::Delete(ObjectRef::Member(m.id)));
    }
    for pool in c
        .pools
        .values()
        .filter(|x| !pools.values().any(|id| *id == x.id))
    {
        p.plan.lines.push(format!("- pool {}", pool.name));
        p.plan.ops.push(Op::Delete(ObjectRef::Pool(pool.id)));
    }
    for k in c
        .checks
        .values()
        .filter(|x| !checks.values().any(|id| *id == x.id))
    {
        p.plan.lines.push(format!("- check {}", k.name));
        p.plan.ops.push(Op::Delete(ObjectRef::Check(k.id)));
    }
    for z in c
        .zones
        .values()
        .filter(|x| !zones.values().any(|id| *id == x.id))
    {
        p.plan.lines.push(format!("- zone {}", z.apex));
        p.plan.ops.push(Op::Delete(ObjectRef::Zone(z.id)));
    }
    Ok(p.plan)
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
