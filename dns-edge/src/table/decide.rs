//! Selection steps 1–7 for every branch of every pool-backed set, run when
//! a snapshot is compiled: they depend on health, not on the query, so a
//! query only steers the members decided here. Runs the shared selection
//! code over a small per-record view of the pools, so compiling never
//! copies the whole membership at once.

use std::net::IpAddr;

use domain::rdata::{Cname, ZoneRecordData};
use gslb_shared::selection::{
    Candidate, Family, Outcome, PoolRef, SelectionInput, Selector, fallback, latency,
};
use gslb_shared::{
    DynamicRecord, Member, MemberAddress, MemberFacts, MemberId, Pool, PoolId, Region, Resolved,
    Snapshot, Steering,
};

use super::{Data, address_data, wire_name};
use rustc_hash::FxHashMap;

/// Each chosen member's records (see [`Decision::expanded`]).
pub type Expanded = Box<[Box<[Data]>]>;

/// Selection steps 1–7 for one branch of a pool-backed set.
#[derive(Debug, Clone)]
pub struct Decision {
    /// Which pool answers, or which fail mode.
    pub outcome: Outcome,
    /// The members steering orders per query (`Pool`, `FailOpen`).
    pub chosen: Box<[Candidate]>,
    /// The fixed addresses of `FailStatic`, already trimmed to `firstN`.
    pub fixed: Box<[IpAddr]>,
    /// For a CNAME pool or a flattened record, index for index with
    /// `chosen`: the records each member answers with (the CNAME to its
    /// hostname; its address, or the addresses its hostname resolved to).
    /// Empty for other sets, whose members answer their own address.
    pub expanded: Expanded,
    /// The shortest TTL of the resolutions in `expanded`: a flattened
    /// answer is never kept longer.
    pub ttl_cap: Option<u32>,
    /// Index into `chosen` (and `expanded`) by member, for `expanded`
    /// decisions: a query finds each steered member's records in O(1).
    pub positions: FxHashMap<gslb_shared::MemberId, u32>,
    /// Latency steering's fastest members per client region, decided with
    /// the rest (round-trip times arrive in the snapshot like health).
    pub latency: Option<LatencyPlan>,
}

/// The members latency steering answers, per client region.
#[derive(Debug, Clone, Default)]
pub struct LatencyPlan {
    /// For each region the record maps to locations: its fastest members.
    pub regions: FxHashMap<Region, Box<[Candidate]>>,
    /// For any other client: the fastest by the mean over every location.
    pub other: Box<[Candidate]>,
}

impl Decision {
    /// The members steering orders for a client in `region`: the fastest
    /// for latency steering, else all chosen.
    pub fn steered(&self, region: Option<&Region>) -> &[Candidate] {
        match &self.latency {
            Some(plan) => region
                .and_then(|r| plan.regions.get(r))
                .unwrap_or(&plan.other),
            None => &self.chosen,
        }
    }
}

/// Latency steering's plan over `chosen` (see [`LatencyPlan`]).
fn latency_plan(
    record: &DynamicRecord,
    chosen: &[Candidate],
    rtt: &gslb_shared::Map<MemberId, gslb_shared::Rtts>,
) -> LatencyPlan {
    let fastest = |locations: Option<&[gslb_shared::LocationId]>| {
        let mut set = chosen.to_vec();
        latency::keep_fastest(&mut set, locations, rtt, None);
        set.into_boxed_slice()
    };
    LatencyPlan {
        regions: (record.region_locations.iter())
            .map(|(region, locations)| (region.clone(), fastest(Some(locations))))
            .collect(),
        other: fastest(None),
    }
}

/// The pools one record names, with copies of their members and facts.
#[derive(Debug, Default)]
struct View<'s> {
    pools: Vec<(&'s Pool, Vec<Member>, Vec<MemberFacts>)>,
    resolved: Option<&'s gslb_shared::Map<gslb_shared::MemberId, Resolved>>,
}

impl SelectionInput for View<'_> {
    fn pool(&self, id: PoolId) -> Option<PoolRef<'_>> {
        self.pools
            .iter()
            .find(|(p, _, _)| p.id == id)
            .map(|(pool, members, facts)| PoolRef {
                pool,
                members,
                facts,
                resolved: self.resolved,
            })
    }
}

/// What each candidate answers with: for `Name`, the CNAME to its
/// hostname; for an address family (a flattened record), its address or
/// its hostname's addresses of the family. Should a hostname have no wire
/// form (the aggregator validated them, so never), the list is empty and
/// the responder answers NODATA rather than another member's name. With
/// the shortest TTL of the resolutions used.
fn expand(view: &View<'_>, chosen: &[Candidate], family: Family) -> (Expanded, Option<u32>) {
    let mut out = Vec::with_capacity(chosen.len());
    let mut ttl_cap: Option<u32> = None;
    // By id once, so a large pool costs its size, not its size squared.
    let by_id: FxHashMap<gslb_shared::MemberId, &Member> = (view.pools.iter())
        .flat_map(|(_, members, _)| members.iter())
        .map(|m| (m.id, m))
        .collect();
    for c in chosen {
        let Some(member) = by_id.get(&c.id) else {
            return (Box::new([]), None);
        };
        let records: Box<[Data]> = match (&member.address, family) {
            (MemberAddress::Host(h), Family::Name) => match wire_name(h) {
                Ok(name) => Box::new([ZoneRecordData::Cname(Cname::new(name))]),
                Err(_) => return (Box::new([]), None),
            },
            (MemberAddress::Host(_), Family::V4 | Family::V6) => {
                let resolved = view.resolved.and_then(|r| r.get(&member.id));
                if let Some(r) = resolved {
                    ttl_cap = Some(ttl_cap.map_or(r.ttl, |t| t.min(r.ttl)));
                }
                resolved
                    .into_iter()
                    .flat_map(|r| r.of_family(family == Family::V6))
                    .map(address_data)
                    .collect()
            }
            (MemberAddress::Ip(ip), _) => Box::new([address_data(*ip)]),
        };
        out.push(records);
    }
    (out.into_boxed_slice(), ttl_cap)
}

/// Decides pool-backed sets over one snapshot.
#[derive(Debug)]
pub struct Decider<'s> {
    snapshot: &'s Snapshot,
    /// Members of each pool, by reference.
    members: FxHashMap<PoolId, Vec<&'s Member>>,
    selector: Selector,
    view: View<'s>,
}

impl<'s> Decider<'s> {
    /// Index a snapshot's members by pool.
    pub fn new(snapshot: &'s Snapshot) -> Self {
        let mut members: FxHashMap<PoolId, Vec<&Member>> = FxHashMap::default();
        for m in snapshot.catalog.members.values() {
            members.entry(m.pool).or_default().push(m);
        }
        Self::with_members(snapshot, members)
    }

    /// Decide over `snapshot` with the members of the pools that will be
    /// asked for already found (in id order), as a refresh does.
    pub fn with_members(
        snapshot: &'s Snapshot,
        members: FxHashMap<PoolId, Vec<&'s Member>>,
    ) -> Self {
        Self {
            snapshot,
            members,
            selector: Selector::new(),
            view: View::default(),
        }
    }

    /// Each pool's members, by id.
    pub fn members(&self) -> impl Iterator<Item = (PoolId, impl Iterator<Item = MemberId>)> {
        (self.members.iter()).map(|(pool, members)| (*pool, members.iter().map(|m| m.id)))
    }

    /// Decide every branch of `record` (the default one first, then each
    /// geo branch) for `family`; none for a record of another type.
    pub fn decide(&mut self, record: &DynamicRecord, family: Option<Family>) -> Box<[Decision]> {
        let Some(family) = family else {
            return Box::new([]);
        };
        self.load(record);
        let view = &self.view;
        let selector = &mut self.selector;
        let rtt = &self.snapshot.rtt;
        std::iter::once(record.pools.as_slice())
            .chain(record.geo.iter().map(|b| b.pools.as_slice()))
            .map(|branch| {
                let outcome = selector.decide_pools(view, branch, family, None);
                let fixed = match outcome {
                    Outcome::FailStatic { pool } => view
                        .pool(pool)
                        .map(|p| fallback(p, family, record.first_n).collect())
                        .unwrap_or_default(),
                    _ => Box::new([]) as Box<[IpAddr]>,
                };
                let chosen: Box<[Candidate]> = match outcome {
                    Outcome::Pool { .. } | Outcome::FailOpen { .. } => selector.chosen().into(),
                    _ => Box::new([]),
                };
                let (expanded, ttl_cap) = if family == Family::Name || record.flatten {
                    expand(view, &chosen, family)
                } else {
                    (Expanded::default(), None)
                };
                let positions = if expanded.is_empty() {
                    FxHashMap::default()
                } else {
                    (chosen.iter().enumerate())
                        .map(|(i, c)| (c.id, i as u32))
                        .collect()
                };
                let latency = (record.steering == Steering::Latency && !chosen.is_empty())
                    .then(|| latency_plan(record, &chosen, rtt));
                Decision {
                    outcome,
                    chosen,
                    fixed,
                    expanded,
                    ttl_cap,
                    positions,
                    latency,
                }
            })
            .collect()
    }

    /// Put the pools `record` names into the view.
    fn load(&mut self, record: &DynamicRecord) {
        self.view.pools.clear();
        self.view.resolved = Some(&self.snapshot.resolved);
        let catalog = &self.snapshot.catalog;
        let named = record.all_pools();
        for id in named {
            if self.view.pools.iter().any(|(p, _, _)| p.id == *id) {
                continue;
            }
            let Some(pool) = catalog.pools.get(id) else {
                continue;
            };
            let members = self.members.get(id).map_or(&[][..], Vec::as_slice);
            let facts = members
                .iter()
                .map(|m| self.snapshot.facts.get(&m.id).copied().unwrap_or_default())
                .collect();
            let members = members.iter().map(|m| (*m).clone()).collect();
            self.view.pools.push((pool, members, facts));
        }
    }
}
