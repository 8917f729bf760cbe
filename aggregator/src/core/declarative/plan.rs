//! Planning, one step per kind in dependency order: zones, checks, pools
//! with their members, record sets; then the deletes of what the document
//! left out, dependents first. Each step upserts by natural key and returns
//! the ids later steps refer to.

use std::collections::{BTreeMap, HashSet};

use gslb_shared::defaults::{Kind, base, decode, overlay};
use gslb_shared::validate::ValidationError;
use gslb_shared::*;
use serde_json::{Map, Value};

use super::{Desired, DesiredDynamic, DesiredPool, DesiredRecord, DesiredZone, Plan};
use crate::core::catalog::{CatalogState, Object, ObjectRef, Op};

/// Plan the operations that make `state` match `desired`.
pub fn plan(state: &CatalogState, desired: &Desired) -> Result<Plan, ValidationError> {
    let mut p = Planner {
        current: &state.catalog,
        next_id: state.last_id,
        plan: Plan::default(),
    };
    let zones = p.zones(&desired.zones)?;
    let checks = p.checks(&desired.checks)?;
    let (pools, kept_members) = p.pools(&desired.pools, &checks)?;
    // Record deletes go before record creates, so one document can turn a
    // name from CNAME into another type or back.
    let records_at = (p.plan.ops.len(), p.plan.lines.len());
    let kept_records = p.records(&desired.records, &zones, &pools)?;
    p.delete_records(records_at, &kept_records);
    p.delete_the_rest(&kept_members, &pools, &checks, &zones);
    Ok(p.plan)
}

/// Plan a zone file's import: the zone itself, its record sets, and the
/// deletes of the zone's static record sets the file leaves out. Nothing
/// outside the zone is touched. A pool-backed set stays as it is: the
/// file's records at its name and type (an export writes its current
/// answer there) are left out, with a note saying so.
pub fn plan_zone(
    state: &CatalogState,
    zone: &DesiredZone,
    records: &[DesiredRecord],
) -> Result<Plan, ValidationError> {
    let mut p = Planner {
        current: &state.catalog,
        next_id: state.last_id,
        plan: Plan::default(),
    };
    let zones = p.zones(std::slice::from_ref(zone))?;
    let id = zones[&zone.apex];
    let current = &state.catalog;
    let pool_backed: HashSet<(&DnsName, RecordType)> = current
        .records
        .values()
        .filter(|r| r.zone == id && matches!(r.data, RecordData::Dynamic(_)))
        .map(|r| (&r.name, r.rtype))
        .collect();
    let (kept_dynamic, file): (Vec<&DesiredRecord>, Vec<&DesiredRecord>) = records
        .iter()
        .partition(|r| pool_backed.contains(&(&r.name, r.rtype)));
    for r in kept_dynamic {
        p.plan.notes.push(format!(
            "= record {} {} is pool-backed: kept, the file's records for it left out",
            r.name, r.rtype
        ));
    }
    let file: Vec<DesiredRecord> = file.into_iter().cloned().collect();
    let at = (p.plan.ops.len(), p.plan.lines.len());
    let mut kept = p.records(&file, &zones, &BTreeMap::new())?;
    kept.extend(
        current
            .records
            .values()
            .filter(|r| r.zone != id || matches!(r.data, RecordData::Dynamic(_)))
            .map(|r| r.id),
    );
    p.delete_records(at, &kept);
    Ok(p.plan)
}

/// The plan so far, over the catalog it changes.
struct Planner<'a> {
    current: &'a Catalog,
    next_id: u64,
    plan: Plan,
}

pub(super) fn bad(field: String, rule: impl Into<String>) -> ValidationError {
    ValidationError::single(field, rule)
}

/// Decode a model object from JSON with `id` set, naming `at` on failure.
fn object<T: serde::de::DeserializeOwned>(
    at: &str,
    value: Value,
    id: u64,
) -> Result<T, ValidationError> {
    let map = match value {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    decode(at, overlay(Value::Null, map, id))
}

/// The documented defaults of `kind` with `given` laid over them.
fn over_defaults(kind: Kind, given: &Value) -> Value {
    let mut value = base(kind);
    if let (Value::Object(map), Value::Object(given)) = (&mut value, given) {
        map.extend(given.clone());
    }
    value
}

/// The required `name` of a document object at `at`.
fn name_of(value: &Value, at: &str) -> Result<String, ValidationError> {
    value
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| bad(format!("{at}.name"), "is required"))
}

fn object_id(r: &ObjectRef) -> u64 {
    match *r {
        ObjectRef::Zone(i) => i.0,
        ObjectRef::Record(i) => i.0,
        ObjectRef::Pool(i) => i.0,
        ObjectRef::Member(i) => i.0,
        ObjectRef::Check(i) => i.0,
        ObjectRef::TsigKey(i) => i.0,
        ObjectRef::Notifier(i) => i.0,
    }
}

/// Longest value a plan line shows of a changed field, in characters.
const SHOWN_VALUE: usize = 60;

/// `weight 200 → 150, region "eu" → -`: the fields an update changes, as
/// the plan line shows them (the revision, which every write moves, left
/// out; secrets redacted as the audit log redacts them, so a plan line
/// never carries a key).
fn changed_fields(old: &Object, new: &Object) -> String {
    let shown = |v: Option<Value>| match v {
        None => "-".to_owned(),
        Some(v) => {
            let text = v.to_string();
            match text.char_indices().nth(SHOWN_VALUE) {
                Some((cut, _)) => format!("{}…", &text[..cut]),
                None => text,
            }
        }
    };
    crate::core::audit::diff(Some(&old.redacted()), Some(&new.redacted()))
        .into_iter()
        .filter(|f| f.field != "revision")
        .map(|f| format!("{} {} → {}", f.field, shown(f.before), shown(f.after)))
        .collect::<Vec<_>>()
        .join(", ")
}

impl<'a> Planner<'a> {
    /// Create `desired` under a new id, or update `existing` if it differs;
    /// the object's id either way.
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
                    let fields = changed_fields(&old, &new);
                    self.plan.lines.push(if fields.is_empty() {
                        format!("~ {label}")
                    } else {
                        format!("~ {label}: {fields}")
                    });
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

    fn delete(&mut self, line: String, what: ObjectRef) {
        self.plan.lines.push(line);
        self.plan.ops.push(Op::Delete(what));
    }

    /// Zones by apex.
    fn zones(
        &mut self,
        desired: &[DesiredZone],
    ) -> Result<BTreeMap<DnsName, ZoneId>, ValidationError> {
        let mut zones = BTreeMap::new();
        for (i, z) in desired.iter().enumerate() {
            let existing = self.current.zones.values().find(|x| x.apex == z.apex);
            let id = self.upsert(
                existing.cloned().map(Object::Zone),
                |id| {
                    Ok(Object::Zone(Zone {
                        id: ZoneId(id),
                        apex: z.apex.clone(),
                        soa: z.soa.clone(),
                        ns: z.ns.clone(),
                        default_ttl: z.default_ttl,
                        ns_ttl: z.ns_ttl,
                        transfer: (z.transfer.clone())
                            .or_else(|| existing.map(|x| x.transfer.clone()))
                            .unwrap_or_default(),
                        dnssec: match (z.dnssec.clone(), existing.and_then(|x| x.dnssec.as_ref())) {
                            // The stored keys, so an unchanged document
                            // plans no update.
                            (Some(mut d), Some(old)) => {
                                d.keys = old.keys.clone();
                                Some(d)
                            }
                            (Some(d), None) => Some(d),
                            (None, old) => old.cloned(),
                        },
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
        Ok(zones)
    }

    /// Checks by name.
    fn checks(
        &mut self,
        desired: &[super::DesiredCheck],
    ) -> Result<BTreeMap<String, CheckId>, ValidationError> {
        let mut checks = BTreeMap::new();
        for (i, k) in desired.iter().enumerate() {
            let at = format!("check[{i}]");
            let name = name_of(&k.0, &at)?;
            let existing = self.current.checks.values().find(|x| x.name == name);
            // The documented defaults under what the document gives; the
            // probe has none.
            let value = over_defaults(Kind::Check, &k.0);
            let id = self.upsert(
                existing.cloned().map(Object::Check),
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
        Ok(checks)
    }

    /// Pools by name, with the members the document keeps.
    fn pools(
        &mut self,
        desired: &[DesiredPool],
        checks: &BTreeMap<String, CheckId>,
    ) -> Result<(BTreeMap<String, PoolId>, HashSet<MemberId>), ValidationError> {
        let mut pools = BTreeMap::new();
        let mut kept_members = HashSet::new();
        for (i, d) in desired.iter().enumerate() {
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
            let mut value = base(Kind::Pool);
            if let Value::Object(map) = &mut value {
                map.insert("name".into(), d.name.clone().into());
                map.extend(d.rest.clone());
                map.insert(
                    "check".into(),
                    serde_json::to_value(check).unwrap_or_default(),
                );
            }
            let existing = self.current.pools.values().find(|x| x.name == d.name);
            let pool = PoolId(self.upsert(
                existing.cloned().map(Object::Pool),
                |id| object::<Pool>(&at, value, id).map(Object::Pool),
                format!("pool {}", d.name),
            )?);
            if pools.insert(d.name.clone(), pool).is_some() {
                return Err(bad(
                    format!("{at}.name"),
                    format!("pool {} is listed twice", d.name),
                ));
            }
            for (j, m) in d.members.iter().enumerate() {
                kept_members.insert(self.member(&format!("{at}.member[{j}]"), &d.name, pool, m)?);
            }
        }
        Ok((pools, kept_members))
    }

    /// One persistent member of `pool` (named `pool_name`), by its name.
    fn member(
        &mut self,
        at: &str,
        pool_name: &str,
        pool: PoolId,
        given: &Value,
    ) -> Result<MemberId, ValidationError> {
        let name = name_of(given, at)?;
        let mut value = over_defaults(Kind::Member, given);
        if let Value::Object(map) = &mut value {
            map.insert("pool".into(), pool.0.into());
        }
        let existing = self
            .current
            .members
            .values()
            .find(|x| x.pool == pool && x.name == name && !x.is_ephemeral());
        let id = self.upsert(
            existing.cloned().map(Object::Member),
            |id| object::<Member>(at, value, id).map(Object::Member),
            format!("member {pool_name}/{name}"),
        )?;
        Ok(MemberId(id))
    }

    /// Record sets by name and type; the ids the document keeps.
    fn records(
        &mut self,
        desired: &[DesiredRecord],
        zones: &BTreeMap<DnsName, ZoneId>,
        pools: &BTreeMap<String, PoolId>,
    ) -> Result<HashSet<RecordSetId>, ValidationError> {
        let mut kept = HashSet::new();
        let current: &'a Catalog = self.current;
        // One pass, so a large document (a zone import) plans in linear time.
        let by_key: std::collections::HashMap<(&DnsName, RecordType), &RecordSet> = current
            .records
            .values()
            .map(|x| ((&x.name, x.rtype), x))
            .collect();
        // NS sets first: a DS set or glue may need the delegation they make.
        let mut order: Vec<usize> = (0..desired.len()).collect();
        order.sort_by_key(|&i| desired[i].rtype != RecordType::Ns);
        for i in order {
            let r = &desired[i];
            let at = format!("record[{i}]");
            let zone = *zones.get(&r.zone).ok_or_else(|| {
                bad(
                    format!("{at}.zone"),
                    format!("no zone {} in this document", r.zone),
                )
            })?;
            let data = match (&r.static_data, &r.dynamic) {
                (Some(rdata), None) => RecordData::Static(rdata.clone()),
                (None, Some(d)) => RecordData::Dynamic(dynamic(&at, d, pools)?),
                _ => return Err(bad(at, "needs exactly one of static or dynamic")),
            };
            let ttl = r.ttl.unwrap_or(if matches!(data, RecordData::Dynamic(_)) {
                DEFAULT_DYNAMIC_TTL
            } else {
                300
            });
            let existing = by_key.get(&(&r.name, r.rtype)).copied();
            let id = self.upsert(
                existing.cloned().map(Object::Record),
                |id| {
                    Ok(Object::Record(RecordSet {
                        id: RecordSetId(id),
                        zone,
                        name: r.name.clone(),
                        rtype: r.rtype,
                        ttl,
                        data,
                    }))
                },
                format!("record {} {}", r.name, r.rtype),
            )?;
            kept.insert(RecordSetId(id));
        }
        Ok(kept)
    }

    /// The deletes of record sets the document left out, spliced in at
    /// `at` (before the record creates).
    fn delete_records(&mut self, at: (usize, usize), kept: &HashSet<RecordSetId>) {
        let mut gone: Vec<&RecordSet> = self
            .current
            .records
            .values()
            .filter(|r| !kept.contains(&r.id))
            .collect();
        // A DS set goes before the NS set of its delegation, which it needs.
        gone.sort_by_key(|r| r.rtype != RecordType::Ds);
        let (ops, lines): (Vec<Op>, Vec<String>) = gone
            .into_iter()
            .map(|r| {
                (
                    Op::Delete(ObjectRef::Record(r.id)),
                    format!("- record {} {}", r.name, r.rtype),
                )
            })
            .unzip();
        self.plan.ops.splice(at.0..at.0, ops);
        self.plan.lines.splice(at.1..at.1, lines);
    }

    /// The deletes of every other object the document left out, dependents
    /// first: members, pools, checks, zones. Ephemeral members stay.
    fn delete_the_rest(
        &mut self,
        kept_members: &HashSet<MemberId>,
        pools: &BTreeMap<String, PoolId>,
        checks: &BTreeMap<String, CheckId>,
        zones: &BTreeMap<DnsName, ZoneId>,
    ) {
        let c = self.current;
        for m in c
            .members
            .values()
            .filter(|m| !m.is_ephemeral() && !kept_members.contains(&m.id))
        {
            self.delete(format!("- member {}", m.name), ObjectRef::Member(m.id));
        }
        for pool in c
            .pools
            .values()
            .filter(|x| !pools.values().any(|id| *id == x.id))
        {
            self.delete(format!("- pool {}", pool.name), ObjectRef::Pool(pool.id));
        }
        for k in c
            .checks
            .values()
            .filter(|x| !checks.values().any(|id| *id == x.id))
        {
            self.delete(format!("- check {}", k.name), ObjectRef::Check(k.id));
        }
        for z in c
            .zones
            .values()
            .filter(|x| !zones.values().any(|id| *id == x.id))
        {
            self.delete(format!("- zone {}", z.apex), ObjectRef::Zone(z.id));
        }
    }
}

/// A dynamic record's pools and geo branches, named pools resolved.
fn dynamic(
    at: &str,
    d: &DesiredDynamic,
    pools: &BTreeMap<String, PoolId>,
) -> Result<DynamicRecord, ValidationError> {
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
    Ok(DynamicRecord {
        steering: d.steering,
        pools: named(&d.pools, "dynamic.pools")?,
        geo: d
            .geo
            .iter()
            .map(|b| {
                Ok(GeoBranch {
                    regions: b.regions.clone(),
                    countries: b.countries.clone(),
                    continents: b.continents.clone(),
                    subdivisions: b.subdivisions.clone(),
                    asns: b.asns.clone(),
                    pools: named(&b.pools, "dynamic.geo")?,
                })
            })
            .collect::<Result<_, ValidationError>>()?,
        first_n: d.first_n,
        flatten: d.flatten,
        region_locations: d.region_locations.clone(),
    })
}
