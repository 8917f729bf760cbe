//! Name resolution over a snapshot: which zone serves a name (REFUSED if
//! none), whether the name exists (NXDOMAIN) or only lacks the type
//! (NODATA, empty non-terminals included), referrals at and below zone
//! cuts, in-zone CNAME chains, wildcards at the closest encloser (RFC
//! 4592), the apex SOA and NS, and minimal ANY (RFC 8482). Pure: the answer builder encodes what this decides, and
//! runs selection for dynamic record sets.

use std::collections::{BTreeMap, HashMap, HashSet};

use gslb_shared::{DnsName, RecordData, RecordSet, RecordType, Snapshot, Zone, ZoneId};

/// Most CNAMEs followed for one query.
pub const MAX_CHAIN: usize = 8;

/// The type a query asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueryType {
    /// A type we serve.
    Record(RecordType),
    /// SOA.
    Soa,
    /// ANY (answered minimally).
    Any,
    /// Any other type number: NODATA where the name exists.
    Other(u16),
}

/// What the final name of a chain yields.
#[derive(Debug, Clone, PartialEq)]
pub enum Found<'a> {
    /// This record set (static, or dynamic: selection decides the addresses).
    Records(&'a RecordSet),
    /// The zone's SOA (at the apex).
    Soa,
    /// The zone's NS set (at the apex).
    Ns,
    /// The name exists without data of the type.
    NoData,
    /// The name does not exist.
    NxDomain,
    /// A CNAME pointed outside the served zones: the resolver follows it.
    Elsewhere,
    /// The name is at or below this zone cut: a referral (DS at the cut
    /// itself is the parent's data, and answered).
    Referral(&'a DnsName),
}

/// The resolution of one query.
#[derive(Debug, Clone, PartialEq)]
pub enum Resolution<'a> {
    /// No served zone contains the name.
    Refused,
    /// Served: the CNAMEs followed (in order), then what the last name yields,
    /// in `zone` (the zone of the last name, for the SOA of a negative answer).
    Answer {
        /// Zone of the final name.
        zone: &'a Zone,
        /// CNAME record sets followed, in order.
        cnames: Vec<&'a RecordSet>,
        /// The outcome at the end of the chain.
        found: Found<'a>,
        /// True when the final name matched a wildcard (owner is the query name).
        wildcard: bool,
    },
}

/// One zone's names.
#[derive(Debug, Default)]
struct ZoneNames {
    /// Names that own record sets, with their sets by type.
    owners: HashMap<DnsName, BTreeMap<RecordType, usize>>,
    /// Names that exist only because something lies below them.
    empty_non_terminals: HashSet<DnsName>,
    /// Delegation points: NS sets below the apex.
    cuts: HashSet<DnsName>,
}

/// The lookup index of a snapshot.
#[derive(Debug)]
pub struct Index<'a> {
    zones: HashMap<&'a DnsName, (&'a Zone, ZoneNames)>,
    records: Vec<&'a RecordSet>,
}

/// True when `r` makes a zone cut: an NS set below its zone's apex that
/// is not the apex of another served zone (then that zone answers).
/// `served` tells whether a name is a served apex (a lookup, not a scan:
/// a catalog may hold many zones and many delegations).
pub(crate) fn is_cut(r: &RecordSet, zone: &Zone, served: impl Fn(&DnsName) -> bool) -> bool {
    r.rtype == RecordType::Ns
        && r.name != zone.apex
        && r.name.is_in_zone(&zone.apex)
        && !served(&r.name)
}

/// The cut in `cuts` at or above `name`, below `apex` (the highest:
/// everything below it is the child's).
pub(crate) fn cut_above<'c>(
    cuts: &'c HashSet<DnsName>,
    name: &DnsName,
    apex: &DnsName,
) -> Option<&'c DnsName> {
    if cuts.is_empty() {
        return None;
    }
    let cut = gslb_shared::validate::highest_cut(name, apex, |n| cuts.contains(n))?;
    cuts.get(&cut)
}

impl<'a> Index<'a> {
    /// Index every record set of every zone in a snapshot.
    pub fn new(snapshot: &'a Snapshot) -> Self {
        let by_id: HashMap<ZoneId, &Zone> =
            snapshot.catalog.zones.values().map(|z| (z.id, z)).collect();
        let mut zones: HashMap<&DnsName, (&Zone, ZoneNames)> = snapshot
            .catalog
            .zones
            .values()
            .map(|z| (&z.apex, (z, ZoneNames::default())))
            .collect();
        let served: HashSet<&DnsName> = zones.keys().copied().collect();
        for r in snapshot.catalog.records.values() {
            if let Some(zone) = by_id.get(&r.zone)
                && is_cut(r, zone, |n| served.contains(n))
                && let Some((_, names)) = zones.get_mut(&zone.apex)
            {
                names.cuts.insert(r.name.clone());
            }
        }
        let mut records = Vec::new();
        for r in snapshot.catalog.records.values() {
            let Some(zone) = by_id.get(&r.zone) else {
                continue;
            };
            let Some((_, names)) = zones.get_mut(&zone.apex) else {
                continue;
            };
            // Below a cut only glue lives; at it, only the NS and DS sets
            // are the parent's to answer.
            match cut_above(&names.cuts, &r.name, &zone.apex) {
                Some(cut) if cut != &r.name => continue,
                Some(_) if !matches!(r.rtype, RecordType::Ns | RecordType::Ds) => continue,
                _ => {}
            }
            records.push(r);
            names
                .owners
                .entry(r.name.clone())
                .or_default()
                .insert(r.rtype, records.len() - 1);
            let mut up = r.name.parent();
            while let Some(p) = up {
                if !p.is_in_zone(&zone.apex) || p == zone.apex {
                    break;
                }
                names.empty_non_terminals.insert(p.clone());
                up = p.parent();
            }
        }
        Self { zones, records }
    }

    /// The zone serving `name`: the longest apex it lies in.
    fn zone_of(&self, name: &DnsName) -> Option<&(&'a Zone, ZoneNames)> {
        let mut candidate = Some(name.clone());
        while let Some(n) = candidate {
            if let Some(z) = self.zones.get(&n) {
                return Some(z);
            }
            candidate = n.parent();
        }
        None
    }

    /// The zone cut at or above `name` in `zone`, if any.
    fn cut_of(&self, zone: &(&'a Zone, ZoneNames), name: &DnsName) -> Option<&'a DnsName> {
        let (z, names) = zone;
        let cut = cut_above(&names.cuts, name, &z.apex)?;
        // The same name, borrowed from the snapshot rather than the index.
        let i = *names.owners.get(cut)?.get(&RecordType::Ns)?;
        Some(&self.records[i].name)
    }

    fn exists(names: &ZoneNames, name: &DnsName, apex: &DnsName) -> bool {
        name == apex || names.owners.contains_key(name) || names.empty_non_terminals.contains(name)
    }

    /// Resolve a query.
    pub fn resolve(&self, qname: &DnsName, qtype: QueryType) -> Resolution<'a> {
        let Some(&(first_zone, _)) = self.zone_of(qname) else {
            return Resolution::Refused;
        };
        let mut zone = first_zone;
        let mut name = qname.clone();
        let mut cnames: Vec<&'a RecordSet> = Vec::new();
        let mut seen = HashSet::new();
        loop {
            let Some(served) = self.zone_of(&name) else {
                // The chain left our zones: the resolver follows it.
                return Resolution::Answer {
                    zone,
                    cnames,
                    found: Found::Elsewhere,
                    wildcard: false,
                };
            };
            let (z, names) = served;
            zone = z;
            if let Some(cut) = self.cut_of(served, &name)
                && !(cut == &name && qtype == QueryType::Record(RecordType::Ds))
            {
                return self.end(zone, cnames, Found::Referral(cut), false);
            }
            let (owner, wildcard) = match names.owners.get(&name) {
                Some(sets) => (Some(sets), false),
                None if Self::exists(names, &name, &z.apex) => (None, false),
                None => match self.wildcard(names, &name, &z.apex) {
                    Some(sets) => (Some(sets), true),
                    None => {
                        return Resolution::Answer {
                            zone,
                            cnames,
                            found: Found::NxDomain,
                            wildcard: false,
                        };
                    }
                },
            };
            let at_apex = name == z.apex;
            let sets = owner.cloned().unwrap_or_default();
            if let Some(&i) = sets.get(&RecordType::Cname)
                && qtype != QueryType::Record(RecordType::Cname)
            {
                let set = self.records[i];
                // A CNAME pool is where the chain ends: its one CNAME is
                // chosen per query, and its target left to the resolver.
                let RecordData::Static(rdata) = &set.data else {
                    return self.end(zone, cnames, Found::Records(set), wildcard);
                };
                let Some(gslb_shared::Rdata::Cname(target)) = rdata.first() else {
                    return self.end(zone, cnames, Found::NoData, wildcard);
                };
                cnames.push(set);
                if cnames.len() > MAX_CHAIN || !seen.insert(name.clone()) {
                    return self.end(zone, cnames, Found::NoData, wildcard);
                }
                name = target.clone();
                continue;
            }
            let found = match qtype {
                QueryType::Soa if at_apex => Found::Soa,
                QueryType::Record(RecordType::Ns) if at_apex => Found::Ns,
                QueryType::Record(t) => sets
                    .get(&t)
                    .map_or(Found::NoData, |&i| Found::Records(self.records[i])),
                // RFC 8482: answer ANY with one record set (or the SOA at the apex).
                QueryType::Any => match sets.values().next() {
                    Some(&i) => Found::Records(self.records[i]),
                    None if at_apex => Found::Soa,
                    None => Found::NoData,
                },
                QueryType::Soa | QueryType::Other(_) => Found::NoData,
            };
            return self.end(zone, cnames, found, wildcard);
        }
    }

    fn end(
        &self,
        zone: &'a Zone,
        cnames: Vec<&'a RecordSet>,
        found: Found<'a>,
        wildcard: bool,
    ) -> Resolution<'a> {
        Resolution::Answer {
            zone,
            cnames,
            found,
            wildcard,
        }
    }

    /// The wildcard below the closest encloser of a name that does not exist.
    fn wildcard<'n>(
        &self,
        names: &'n ZoneNames,
        name: &DnsName,
        apex: &DnsName,
    ) -> Option<&'n BTreeMap<RecordType, usize>> {
        let mut encloser = name.parent();
        while let Some(e) = encloser {
            if Self::exists(names, &e, apex) {
                let star = DnsName::parse(&format!("*.{e}")).ok()?;
                return names.owners.get(&star);
            }
            if e == *apex {
                return None;
            }
            encloser = e.parent();
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gslb_shared::*;

    fn name(s: &str) -> DnsName {
        DnsName::parse(s).unwrap()
    }

    fn snapshot() -> Snapshot {
        let mut s = Snapshot::default();
        for (id, apex) in [
            (1, "example.test"),
            (2, "sub.example.test"),
            (3, "other.test"),
        ] {
            let z = Zone {
                id: ZoneId(id),
                apex: name(apex),
                soa: Soa {
                    mname: name("ns1.example.test"),
                    rname: name("h.example.test"),
                    refresh: 1,
                    retry: 1,
                    expire: 1,
                    negative_ttl: 1,
                },
                ns: vec![name("ns1.example.test")],
                default_ttl: 300,
                ns_ttl: None,
                transfer: Default::default(),
                dnssec: None,
            };
            s.catalog.zones.insert(z.id, z);
        }
        let records = [
            (
                1,
                "www.example.test",
                RecordType::A,
                RecordData::Dynamic(DynamicRecord {
                    steering: Steering::RoundRobin,
                    pools: vec![PoolId(1)],
                    geo: vec![],
                    first_n: 0,
                    flatten: false,
                    region_locations: Default::default(),
                }),
            ),
            (
                1,
                "mail.example.test",
                RecordType::A,
                RecordData::Static(vec![Rdata::A("192.0.2.25".parse().unwrap())]),
            ),
            (
                1,
                "mail.example.test",
                RecordType::Txt,
                RecordData::Static(vec![Rdata::Txt(vec!["t".into()])]),
            ),
            (
                1,
                "a.b.c.example.test",
                RecordType::A,
                RecordData::Static(vec![Rdata::A("192.0.2.9".parse().unwrap())]),
            ),
            (
                1,
                "alias.example.test",
                RecordType::Cname,
                RecordData::Static(vec![Rdata::Cname(name("www.example.test"))]),
            ),
            (
                1,
                "alias2.example.test",
                RecordType::Cname,
                RecordData::Static(vec![Rdata::Cname(name("alias.example.test"))]),
            ),
            (
                1,
                "out.example.test",
                RecordType::Cname,
                RecordData::Static(vec![Rdata::Cname(name("cdn.elsewhere.test"))]),
            ),
            (
                1,
                "to-other.example.test",
                RecordType::Cname,
                RecordData::Static(vec![Rdata::Cname(name("host.other.test"))]),
            ),
            (
                1,
                "loop1.example.test",
                RecordType::Cname,
                RecordData::Static(vec![Rdata::Cname(name("loop2.example.test"))]),
            ),
            (
                1,
                "loop2.example.test",
                RecordType::Cname,
                RecordData::Static(vec![Rdata::Cname(name("loop1.example.test"))]),
            ),
            (
                1,
                "*.wild.example.test",
                RecordType::A,
                RecordData::Static(vec![Rdata::A("192.0.2.77".parse().unwrap())]),
            ),
            (
                1,
                "exact.wild.example.test",
                RecordType::Txt,
                RecordData::Static(vec![Rdata::Txt(vec!["x".into()])]),
            ),
            (
                1,
                "deleg.example.test",
                RecordType::Ns,
                RecordData::Static(vec![Rdata::Ns(name("ns.deleg.example.test"))]),
            ),
            (
                1,
                "ns.deleg.example.test",
                RecordType::A,
                RecordData::Static(vec![Rdata::A("192.0.2.10".parse().unwrap())]),
            ),
            (
                1,
                "into.example.test",
                RecordType::Cname,
                RecordData::Static(vec![Rdata::Cname(name("www.deleg.example.test"))]),
            ),
            (
                2,
                "api.sub.example.test",
                RecordType::A,
                RecordData::Static(vec![Rdata::A("192.0.2.50".parse().unwrap())]),
            ),
            (
                3,
                "host.other.test",
                RecordType::A,
                RecordData::Static(vec![Rdata::A("192.0.2.60".parse().unwrap())]),
            ),
        ];
        for (i, (zone, owner, rtype, data)) in records.into_iter().enumerate() {
            let r = RecordSet {
                id: RecordSetId(i as u64 + 10),
                zone: ZoneId(zone),
                name: name(owner),
                rtype,
                ttl: 30,
                data,
            };
            s.catalog.records.insert(r.id, r);
        }
        s
    }

    fn resolve(s: &Snapshot, q: &str, t: QueryType) -> (Option<String>, Vec<String>, String, bool) {
        match Index::new(s).resolve(&name(q), t) {
            Resolution::Refused => (None, vec![], "refused".into(), false),
            Resolution::Answer {
                zone,
                cnames,
                found,
                wildcard,
            } => {
                let found = match found {
                    Found::Records(r) => format!("{} {}", r.name, r.rtype),
                    Found::Referral(cut) => format!("referral {cut}"),
                    other => format!("{other:?}").to_lowercase(),
                };
                (
                    Some(zone.apex.to_string()),
                    cnames.iter().map(|c| c.name.to_string()).collect(),
                    found,
                    wildcard,
                )
            }
        }
    }

    const A: QueryType = QueryType::Record(RecordType::A);

    #[test]
    fn names_outside_served_zones_are_refused() {
        let s = snapshot();
        assert_eq!(resolve(&s, "example.org", A).2, "refused");
        assert_eq!(resolve(&s, "test", A).2, "refused");
    }

    #[test]
    fn existing_types_answer_and_missing_types_are_nodata() {
        let s = snapshot();
        assert_eq!(
            resolve(&s, "www.example.test", A),
            (
                Some("example.test".into()),
                vec![],
                "www.example.test A".into(),
                false
            )
        );
        assert_eq!(
            resolve(&s, "mail.example.test", QueryType::Record(RecordType::Aaaa)).2,
            "nodata"
        );
        assert_eq!(
            resolve(&s, "mail.example.test", QueryType::Other(99)).2,
            "nodata"
        );
    }

    #[test]
    fn missing_names_are_nxdomain_but_empty_non_terminals_are_nodata() {
        let s = snapshot();
        assert_eq!(resolve(&s, "nope.example.test", A).2, "nxdomain");
        assert_eq!(
            resolve(&s, "b.c.example.test", A).2,
            "nodata",
            "an empty non-terminal exists"
        );
        assert_eq!(resolve(&s, "c.example.test", A).2, "nodata");
        assert_eq!(resolve(&s, "x.a.b.c.example.test", A).2, "nxdomain");
    }

    #[test]
    fn the_longest_apex_serves_a_name() {
        let s = snapshot();
        assert_eq!(
            resolve(&s, "api.sub.example.test", A).0.as_deref(),
            Some("sub.example.test")
        );
        assert_eq!(
            resolve(&s, "nope.sub.example.test", A),
            (
                Some("sub.example.test".into()),
                vec![],
                "nxdomain".into(),
                false
            )
        );
    }

    #[test]
    fn apex_answers_soa_and_ns_and_any_is_minimal() {
        let s = snapshot();
        assert_eq!(resolve(&s, "example.test", QueryType::Soa).2, "soa");
        assert_eq!(
            resolve(&s, "example.test", QueryType::Record(RecordType::Ns)).2,
            "ns"
        );
        assert_eq!(resolve(&s, "www.example.test", QueryType::Soa).2, "nodata");
        assert_eq!(
            resolve(&s, "mail.example.test", QueryType::Any).2,
            "mail.example.test A",
            "one set only (RFC 8482)"
        );
        assert_eq!(resolve(&s, "example.test", QueryType::Any).2, "soa");
    }

    #[test]
    fn cname_chains_are_followed_within_served_zones() {
        let s = snapshot();
        assert_eq!(
            resolve(&s, "alias2.example.test", A),
            (
                Some("example.test".into()),
                vec!["alias2.example.test".into(), "alias.example.test".into()],
                "www.example.test A".into(),
                false
            )
        );
        assert_eq!(
            resolve(
                &s,
                "alias.example.test",
                QueryType::Record(RecordType::Cname)
            )
            .2,
            "alias.example.test CNAME",
            "asking for the CNAME itself"
        );
        let (zone, chain, found, _) = resolve(&s, "to-other.example.test", A);
        assert_eq!(
            (zone.as_deref(), chain.len(), found.as_str()),
            (Some("other.test"), 1, "host.other.test A"),
            "across served zones"
        );
        assert_eq!(
            resolve(&s, "out.example.test", A).2,
            "elsewhere",
            "the resolver follows it"
        );
        let (_, chain, found, _) = resolve(&s, "loop1.example.test", A);
        assert!(
            chain.len() <= MAX_CHAIN + 1 && found == "nodata",
            "a loop ends: {chain:?}"
        );
    }

    #[test]
    fn wildcards_match_below_the_closest_encloser_only() {
        let s = snapshot();
        assert_eq!(
            resolve(&s, "anything.wild.example.test", A).2,
            "*.wild.example.test A"
        );
        assert!(resolve(&s, "anything.wild.example.test", A).3);
        assert_eq!(
            resolve(&s, "exact.wild.example.test", A).2,
            "nodata",
            "an existing name never uses the wildcard"
        );
        assert_eq!(
            resolve(&s, "a.b.wild.example.test", A).2,
            "*.wild.example.test A"
        );
        assert_eq!(
            resolve(
                &s,
                "anything.wild.example.test",
                QueryType::Record(RecordType::Mx)
            )
            .2,
            "nodata"
        );
    }

    #[test]
    fn names_at_and_below_a_cut_are_referred_but_ds_at_it_is_answered() {
        let s = snapshot();
        for q in [
            "deleg.example.test",
            "ns.deleg.example.test",
            "a.b.deleg.example.test",
        ] {
            assert_eq!(resolve(&s, q, A).2, "referral deleg.example.test", "{q}");
        }
        let ds = QueryType::Record(RecordType::Ds);
        assert_eq!(resolve(&s, "deleg.example.test", ds).2, "nodata");
        assert_eq!(
            resolve(&s, "x.deleg.example.test", ds).2,
            "referral deleg.example.test"
        );
        let (_, chain, found, _) = resolve(&s, "into.example.test", A);
        assert_eq!(
            (chain.len(), found.as_str()),
            (1, "referral deleg.example.test")
        );
    }
}
