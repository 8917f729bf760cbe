//! Hostname members across the catalog: which members a pool-backed record
//! can answer with, and loops through our own names (a CNAME pool whose
//! member is, through static CNAMEs and other pools, the record itself).

use crate::model::{Catalog, DnsName, Member, MemberAddress, RecordData, RecordSet, RecordType};

/// Longest chain of our own names a loop search follows; a deeper one is
/// refused as a loop would be (no resolver follows it that far).
pub const MAX_CHAIN: usize = 64;

/// Why `member` cannot back a pool-backed record of `rtype` (flattened or
/// not), if it cannot.
pub fn member_fits(rtype: RecordType, flatten: bool, member: &Member) -> Option<String> {
    match (&member.address, rtype, flatten) {
        (MemberAddress::Ip(ip), RecordType::Cname, _) => Some(format!(
            "member {} ({}) has an IP address ({ip}): a CNAME pool answers a hostname, so its members must be hostnames",
            member.id, member.name
        )),
        (MemberAddress::Host(h), RecordType::A | RecordType::Aaaa, false) => Some(format!(
            "member {} ({}) is a hostname ({h}): it backs a CNAME record, or an A/AAAA record with flatten: true",
            member.id, member.name
        )),
        _ => None,
    }
}

/// The names an answer at `set` leads to among names we might serve: a
/// static CNAME's target, or the hostnames of a CNAME or flattened pool's
/// members (`members` gives a pool's members).
pub fn next_names<'a, F, I>(set: &RecordSet, members: F) -> Vec<DnsName>
where
    F: Fn(crate::model::PoolId) -> I,
    I: Iterator<Item = &'a Member>,
{
    match &set.data {
        RecordData::Static(rdata) if set.rtype == RecordType::Cname => rdata
            .iter()
            .filter_map(|r| match r {
                crate::model::Rdata::Cname(t) => Some(t.clone()),
                _ => None,
            })
            .collect(),
        RecordData::Dynamic(d) if set.rtype == RecordType::Cname || d.flatten => {
            let mut out: Vec<DnsName> = (d.all_pools())
                .flat_map(|p| members(*p).filter_map(|m| m.address.host().cloned()))
                .collect();
            out.sort();
            out.dedup();
            out
        }
        _ => Vec::new(),
    }
}

/// The wildcard that answers for `name` when `name` owns nothing
/// (`exists` says whether a name owns record sets): `*.P` for the nearest
/// ancestor P whose wildcard exists, unless an ancestor below it exists
/// first (the closest encloser, RFC 4592). A loop search steps from `name`
/// to that wildcard, so `*.wc CNAME x.wc` is the loop it is.
pub fn wildcard_for(name: &DnsName, exists: impl Fn(&DnsName) -> bool) -> Option<DnsName> {
    let mut up = name.parent();
    while let Some(p) = up {
        if let Ok(w) = DnsName::parse(&format!("*.{p}"))
            && exists(&w)
        {
            return Some(w);
        }
        if exists(&p) {
            return None;
        }
        up = p.parent();
    }
    None
}

/// A loop from `start` back to itself: `next` gives the names one name
/// leads to (see [`next_names`]). Returns the path, `start` first and
/// last, or a path cut at [`MAX_CHAIN`] names.
pub fn loop_from(start: &DnsName, next: impl Fn(&DnsName) -> Vec<DnsName>) -> Option<Vec<DnsName>> {
    // Depth first, keeping the path; every name is expanded once.
    let mut seen = std::collections::HashSet::new();
    let mut stack: Vec<(DnsName, usize)> = vec![(start.clone(), 0)];
    let mut path: Vec<DnsName> = Vec::new();
    while let Some((name, depth)) = stack.pop() {
        path.truncate(depth);
        if depth > 0 && &name == start {
            path.push(name);
            return Some(path);
        }
        if !seen.insert(name.clone()) {
            continue;
        }
        path.push(name.clone());
        if depth >= MAX_CHAIN {
            return Some(path);
        }
        for n in next(&name) {
            stack.push((n, depth + 1));
        }
    }
    None
}

/// Loops and misfits anywhere in `catalog`: `(record id, field, rule)`.
pub fn catalog_findings(catalog: &Catalog) -> Vec<(String, &'static str, String)> {
    let mut by_pool: std::collections::HashMap<_, Vec<&Member>> = Default::default();
    for m in catalog.members.values() {
        by_pool.entry(m.pool).or_default().push(m);
    }
    let mut by_name: std::collections::HashMap<&DnsName, Vec<&RecordSet>> = Default::default();
    for r in catalog.records.values() {
        by_name.entry(&r.name).or_default().push(r);
    }
    let members_of = |p| by_pool.get(&p).into_iter().flatten().copied();
    let next = |name: &DnsName| -> Vec<DnsName> {
        match by_name.get(name) {
            Some(sets) => sets
                .iter()
                .flat_map(|s| next_names(s, members_of))
                .collect(),
            None => wildcard_for(name, |n| by_name.contains_key(n))
                .into_iter()
                .collect(),
        }
    };
    let mut out = Vec::new();
    for r in catalog.records.values() {
        let RecordData::Dynamic(d) = &r.data else {
            if r.rtype == RecordType::Cname
                && let Some(path) = loop_from(&r.name, next)
            {
                out.push((r.id.to_string(), "data", loop_rule(&path)));
            }
            continue;
        };
        for m in d.all_pools().flat_map(|p| members_of(*p)) {
            if let Some(rule) = member_fits(r.rtype, d.flatten, m) {
                out.push((r.id.to_string(), "data.dynamic.pools", rule));
            }
        }
        if (r.rtype == RecordType::Cname || d.flatten)
            && let Some(path) = loop_from(&r.name, next)
        {
            out.push((r.id.to_string(), "data.dynamic.pools", loop_rule(&path)));
        }
    }
    out
}

/// The rule a loop breaks, with its path.
pub fn loop_rule(path: &[DnsName]) -> String {
    let names: Vec<&str> = path.iter().map(DnsName::as_str).collect();
    if path.len() > MAX_CHAIN {
        format!(
            "the chain of our own names from {} is longer than {MAX_CHAIN}: {} ...",
            names[0],
            names[..8.min(names.len())].join(" -> ")
        )
    } else {
        format!("makes a loop through our own names: {}", names.join(" -> "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(s: &str) -> DnsName {
        DnsName::parse(s).unwrap()
    }

    #[test]
    fn loops_are_found_with_their_path_and_chains_are_not_loops() {
        let graph = |name: &DnsName| -> Vec<DnsName> {
            match name.as_str() {
                "a.test" => vec![n("b.test"), n("x.test")],
                "b.test" => vec![n("c.test")],
                "c.test" => vec![n("a.test")],
                "x.test" => vec![n("y.test")],
                _ => vec![],
            }
        };
        let path = loop_from(&n("a.test"), graph).unwrap();
        assert_eq!(
            loop_rule(&path),
            "makes a loop through our own names: a.test -> b.test -> c.test -> a.test"
        );
        assert_eq!(loop_from(&n("x.test"), graph), None);
        // A loop that does not pass through the start is not this name's.
        assert_eq!(
            loop_from(&n("z.test"), |name: &DnsName| match name.as_str() {
                "z.test" => vec![n("b.test")],
                "b.test" => vec![n("c.test")],
                "c.test" => vec![n("b.test")],
                _ => vec![],
            }),
            None
        );
    }

    #[test]
    fn endless_chains_are_cut() {
        let chain = |name: &DnsName| vec![n(&format!("x.{}", name.as_str()))];
        let path = loop_from(&n("a.test"), chain).unwrap();
        assert!(path.len() > MAX_CHAIN);
        assert!(loop_rule(&path).contains("longer than 64"));
    }
}
