//! Whole-catalog rules: every object valid, every reference resolves, and the
//! DNS rules that span record sets (one set per name and type, CNAME alone).

use std::collections::{HashMap, HashSet};

use super::error::{FieldError, Findings, ValidationError};
use super::{check, cuts, member, notifier, pool, record, tsig_key, zone};
use crate::model::{Catalog, RecordType};

fn nested(f: &mut Findings, prefix: String, result: Result<(), ValidationError>) {
    if let Err(err) = result {
        f.extend(Err(ValidationError {
            errors: err
                .errors
                .into_iter()
                .map(|e| FieldError {
                    field: format!("{prefix}.{}", e.field),
                    rule: e.rule,
                })
                .collect(),
        }));
    }
}

/// Validate a whole catalog, naming fields as `kind[id].field`.
pub fn catalog(catalog: &Catalog) -> Result<(), ValidationError> {
    let mut f = Findings::new("");
    let mut apexes = HashSet::new();
    for (id, z) in &catalog.zones {
        nested(&mut f, format!("zones[{id}]"), zone(z));
        f.require(
            id == &z.id,
            &format!("zones[{id}].id"),
            "must match its key",
        );
        f.require(
            apexes.insert(&z.apex),
            &format!("zones[{id}].apex"),
            format!("zone {} is defined twice", z.apex),
        );
    }
    let mut key_names = HashSet::new();
    for (id, k) in &catalog.tsig_keys {
        nested(&mut f, format!("tsigKeys[{id}]"), tsig_key(k));
        f.require(
            id == &k.id,
            &format!("tsigKeys[{id}].id"),
            "must match its key",
        );
        f.require(
            key_names.insert(&k.name),
            &format!("tsigKeys[{id}].name"),
            format!("key {} is defined twice", k.name),
        );
    }
    let mut notifier_names = HashSet::new();
    for (id, n) in &catalog.notifiers {
        nested(&mut f, format!("notifiers[{id}]"), notifier(n));
        f.require(
            id == &n.id,
            &format!("notifiers[{id}].id"),
            "must match its key",
        );
        f.require(
            notifier_names.insert(&n.name),
            &format!("notifiers[{id}].name"),
            format!("notification target {} is defined twice", n.name),
        );
    }
    for (id, z) in &catalog.zones {
        let keys = (z.transfer.allow.iter().map(|p| Some(&p.key)))
            .chain(z.transfer.notify.iter().map(|n| n.key.as_ref()));
        for key in keys.flatten() {
            f.require(
                key_names.contains(key),
                &format!("zones[{id}].transfer"),
                format!("TSIG key {key} does not exist"),
            );
        }
    }
    for (id, c) in &catalog.checks {
        nested(&mut f, format!("checks[{id}]"), check(c));
        f.require(
            id == &c.id,
            &format!("checks[{id}].id"),
            "must match its key",
        );
    }
    for (id, p) in &catalog.pools {
        nested(&mut f, format!("pools[{id}]"), pool(p));
        f.require(
            id == &p.id,
            &format!("pools[{id}].id"),
            "must match its key",
        );
        if let Some(check) = p.check {
            f.require(
                catalog.checks.contains_key(&check),
                &format!("pools[{id}].check"),
                format!("check {check} does not exist"),
            );
        }
    }
    for (id, m) in &catalog.members {
        nested(&mut f, format!("members[{id}]"), member(m));
        f.require(
            id == &m.id,
            &format!("members[{id}].id"),
            "must match its key",
        );
        f.require(
            catalog.pools.contains_key(&m.pool),
            &format!("members[{id}].pool"),
            format!("pool {} does not exist", m.pool),
        );
    }
    let mut by_name: HashMap<_, Vec<RecordType>> = HashMap::new();
    for (id, r) in &catalog.records {
        let at = format!("records[{id}]");
        f.require(id == &r.id, &format!("{at}.id"), "must match its key");
        match catalog.zones.get(&r.zone) {
            Some(z) => nested(&mut f, at.clone(), record(r, z)),
            None => f.add(
                &format!("{at}.zone"),
                format!("zone {} does not exist", r.zone),
            ),
        }
        if let crate::model::RecordData::Dynamic(d) = &r.data {
            for pool_id in d.all_pools() {
                f.require(
                    catalog.pools.contains_key(pool_id),
                    &format!("{at}.data.dynamic.pools"),
                    format!("pool {pool_id} does not exist"),
                );
            }
        }
        let types = by_name.entry(&r.name).or_default();
        f.require(
            !types.contains(&r.rtype),
            &format!("{at}.name"),
            format!("{} already has a {:?} record set", r.name, r.rtype),
        );
        let cname_clash = (r.rtype == RecordType::Cname && !types.is_empty())
            || types.contains(&RecordType::Cname);
        f.require(
            !cname_clash,
            &format!("{at}.type"),
            format!("a CNAME at {} cannot coexist with other types", r.name),
        );
        types.push(r.rtype);
    }
    for (id, field, rule) in super::hostnames::catalog_findings(catalog) {
        f.add(&format!("records[{id}].{field}"), rule);
    }
    cuts::cuts(&mut f, catalog);
    f.finish()
}
