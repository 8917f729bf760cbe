//! Builders for selection tests.
#![allow(dead_code, missing_docs, clippy::unwrap_used)]

use std::collections::HashMap;

use gslb_shared::selection::{Answer, CatalogIndex, Family, Outcome, Query, Selector, Trace};
use gslb_shared::*;
use rand::SeedableRng;
use rand::rngs::StdRng;

pub struct World {
    pub catalog: Catalog,
    pub facts: HashMap<MemberId, MemberFacts>,
    pub resolved: Map<MemberId, Resolved>,
    pub rtt: Map<MemberId, Rtts>,
    next: u64,
}

impl World {
    pub fn new() -> Self {
        Self {
            catalog: Catalog::default(),
            facts: HashMap::new(),
            resolved: Map::new(),
            rtt: Map::new(),
            next: 1,
        }
    }

    pub fn pool(&mut self, configure: impl FnOnce(&mut Pool)) -> PoolId {
        let id = PoolId(self.next);
        self.next += 1;
        let mut pool = Pool::new(id, format!("pool-{}", id.0));
        configure(&mut pool);
        self.catalog.pools.insert(id, pool);
        id
    }

    /// A member that is up unless `configure` or `set` says otherwise.
    pub fn member(
        &mut self,
        pool: PoolId,
        addr: &str,
        configure: impl FnOnce(&mut Member),
    ) -> MemberId {
        let id = MemberId(self.next);
        self.next += 1;
        let address: MemberAddress = addr.parse().unwrap();
        let mut member = Member::new(id, pool, format!("m{}", id.0), address, 80);
        configure(&mut member);
        self.catalog.members.insert(id, member);
        self.facts.insert(id, MemberFacts::UP);
        id
    }

    pub fn set(&mut self, id: MemberId, health: Health, warming: bool) {
        let ramp = None;
        self.facts.insert(
            id,
            MemberFacts {
                health,
                warming,
                ramp,
            },
        );
    }

    /// Put a member in slow start at `percent` of its weight.
    pub fn ramp(&mut self, id: MemberId, percent: u8) {
        if let Some(f) = self.facts.get_mut(&id) {
            f.ramp = Some(percent);
        }
    }

    /// Set a member's round-trip times (`(location, µs)`, any order).
    pub fn rtt(&mut self, id: MemberId, times: &[(&str, u32)]) {
        let mut table: Vec<_> = (times.iter())
            .map(|(l, micros)| LocationRtt {
                location: LocationId::new(*l),
                micros: *micros,
            })
            .collect();
        table.sort_by(|a, b| a.location.cmp(&b.location));
        self.rtt.insert(id, Rtts::new(table));
    }

    pub fn index(&self) -> CatalogIndex {
        CatalogIndex::new(&self.catalog, &self.facts)
            .with_resolved(self.resolved.clone())
            .with_rtt(self.rtt.clone())
    }
}

pub fn record(pools: &[PoolId]) -> DynamicRecord {
    DynamicRecord {
        steering: Steering::RoundRobin,
        pools: pools.to_vec(),
        geo: Vec::new(),
        first_n: 0,
        flatten: false,
        region_locations: Default::default(),
    }
}

pub fn run(
    world: &World,
    record: &DynamicRecord,
    region: Option<&str>,
) -> (Outcome, Vec<Answer>, Trace) {
    run_at(world, record, region, Place::UNKNOWN)
}

/// [`run`] for a client a geo database places at `place`.
pub fn run_at(
    world: &World,
    record: &DynamicRecord,
    region: Option<&str>,
    place: Place,
) -> (Outcome, Vec<Answer>, Trace) {
    let region = region.map(Region::new);
    let mut trace = Trace::new();
    let mut rng = StdRng::seed_from_u64(7);
    let mut selector = Selector::new();
    let query = Query {
        family: Family::V4,
        region: region.as_ref(),
        place,
        rotation: 0,
        affinity: None,
    };
    let (outcome, answers) =
        selector.select(&world.index(), record, query, &mut rng, Some(&mut trace));
    (outcome, answers.to_vec(), trace)
}

pub fn ids(answers: &[Answer]) -> Vec<MemberId> {
    let mut ids: Vec<_> = answers.iter().filter_map(|a| a.member).collect();
    ids.sort();
    ids
}
