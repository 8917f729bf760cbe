//! The catalog as a declarative document: what `gslbctl apply` and
//! `POST /api/v1/config` take, so applying an export plans no change.
//! Objects are named by their natural keys (zone apex, check and pool
//! names, member name within its pool, record name and type); ids stay
//! out. Ephemeral members are left out (heartbeats own them), and so are
//! the DNSSEC keys (always the zone's own) and what a document cannot
//! carry (TSIG keys, notifiers).

use std::collections::BTreeMap;

use gslb_shared::defaults::to_json;
use gslb_shared::*;
use serde_json::{Value, json};

/// The document of `catalog`, as JSON.
pub fn document(catalog: &Catalog) -> Value {
    let pool_names: BTreeMap<PoolId, &str> = (catalog.pools.values())
        .map(|p| (p.id, p.name.as_str()))
        .collect();
    let check_names: BTreeMap<CheckId, &str> = (catalog.checks.values())
        .map(|c| (c.id, c.name.as_str()))
        .collect();
    let mut members: BTreeMap<PoolId, Vec<Value>> = BTreeMap::new();
    for m in catalog.members.values().filter(|m| !m.is_ephemeral()) {
        let mut value = to_json(m);
        strip(&mut value, &["id", "pool"]);
        members.entry(m.pool).or_default().push(value);
    }
    let zones: Vec<Value> = (catalog.zones.values())
        .map(|z| {
            let mut value = to_json(z);
            strip(&mut value, &["id"]);
            if let Some(dnssec) = value.get_mut("dnssec") {
                strip(dnssec, &["keys"]);
            }
            value
        })
        .collect();
    let checks: Vec<Value> = (catalog.checks.values())
        .map(|c| {
            let mut value = to_json(c);
            strip(&mut value, &["id"]);
            value
        })
        .collect();
    let pools: Vec<Value> = (catalog.pools.values())
        .map(|p| {
            let mut value = to_json(p);
            strip(&mut value, &["id", "check"]);
            if let Value::Object(map) = &mut value {
                if let Some(name) = p.check.and_then(|c| check_names.get(&c)) {
                    map.insert("check".into(), json!(name));
                }
                let mine = members.remove(&p.id).unwrap_or_default();
                map.insert("member".into(), Value::Array(mine));
            }
            value
        })
        .collect();
    let zone_apex: BTreeMap<ZoneId, &DnsName> =
        (catalog.zones.values()).map(|z| (z.id, &z.apex)).collect();
    let named = |ids: &[PoolId]| -> Value {
        ids.iter()
            .map(|id| pool_names.get(id).map_or(Value::Null, |n| json!(n)))
            .collect()
    };
    let records: Vec<Value> = (catalog.records.values())
        .map(|r| {
            let mut value = json!({
                "zone": zone_apex.get(&r.zone),
                "name": r.name,
                "type": r.rtype,
                "ttl": r.ttl,
            });
            let (key, data) = match &r.data {
                RecordData::Static(rdata) => ("static", to_json(rdata)),
                RecordData::Dynamic(d) => {
                    let mut data = to_json(d);
                    data["pools"] = named(&d.pools);
                    if let Some(Value::Array(branches)) = data.get_mut("geo") {
                        for (branch, model) in branches.iter_mut().zip(&d.geo) {
                            branch["pools"] = named(&model.pools);
                        }
                    }
                    ("dynamic", data)
                }
            };
            value[key] = data;
            value
        })
        .collect();
    json!({"zone": zones, "check": checks, "pool": pools, "record": records})
}

/// The document as TOML (nulls, which TOML cannot write, left out: each
/// is its field's absence).
pub fn toml(document: &Value) -> Result<String, String> {
    let mut document = document.clone();
    drop_nulls(&mut document);
    toml::to_string(&document).map_err(|e| e.to_string())
}

fn strip(value: &mut Value, keys: &[&str]) {
    if let Value::Object(map) = value {
        for key in keys {
            map.remove(*key);
        }
    }
}

fn drop_nulls(value: &mut Value) {
    match value {
        Value::Object(map) => {
            map.retain(|_, v| !v.is_null());
            map.values_mut().for_each(drop_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(drop_nulls),
        _ => {}
    }
}
