//! Selection (DESIGN.md "Selection"): given health facts, a dynamic record
//! and the client's region, decide which addresses a DNS answer contains.
//!
//! Pure: the caller supplies the RNG and the round-robin rotation, so the
//! same inputs always give the same answer. [`Selector`] owns scratch
//! buffers so that a query allocates nothing when no trace is asked for.

mod index;
pub mod latency;
mod pool_eval;
mod pool_state;
mod pool_tally;
mod steer;
mod trace;

use std::net::IpAddr;

use serde::Serialize;

pub use index::{CatalogIndex, PoolRef, SelectionInput};
pub use pool_eval::{Candidate, Exclusion, PoolVerdict, evaluate_pool};
pub use pool_state::{PoolState, pool_state};
pub use pool_tally::PoolTally;
pub use steer::{STICKY_V4_PREFIX, STICKY_V6_PREFIX, affinity, steer};
pub use trace::{Ramping, Step, Trace};

use crate::model::{
    DynamicRecord, FailMode, MemberAddress, MemberId, Place, PoolId, RecordType, Region, Resolved,
    Steering,
};

/// What a query asks a pool for: addresses of one family, or a name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Family {
    /// A records.
    V4,
    /// AAAA records.
    V6,
    /// A CNAME to a hostname member.
    Name,
}

impl Family {
    /// What a pool-backed set of type `rtype` asks for (A, AAAA, CNAME).
    pub fn of(rtype: RecordType) -> Option<Family> {
        match rtype {
            RecordType::A => Some(Family::V4),
            RecordType::Aaaa => Some(Family::V6),
            RecordType::Cname => Some(Family::Name),
            _ => None,
        }
    }

    /// True when `addr` belongs to this family (never for `Name`).
    pub fn matches(self, addr: &IpAddr) -> bool {
        matches!(
            (self, addr),
            (Family::V4, IpAddr::V4(_)) | (Family::V6, IpAddr::V6(_))
        )
    }

    /// True when a member at `address` can answer this family: an IP
    /// address of it; a hostname for `Name`, or for an address family when
    /// it resolved (`resolved`, flattened records) to an address of it.
    pub fn admits(self, address: &MemberAddress, resolved: Option<&Resolved>) -> bool {
        match (address, self) {
            (MemberAddress::Ip(ip), _) => self.matches(ip),
            (MemberAddress::Host(_), Family::Name) => true,
            (MemberAddress::Host(_), Family::V4 | Family::V6) => {
                resolved.is_some_and(|r| r.of_family(self == Family::V6).next().is_some())
            }
        }
    }
}

/// One answered address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Answer {
    /// The member it came from (`None` for a static fallback address).
    pub member: Option<MemberId>,
    /// The address; `None` for a hostname member (its name is the answer).
    pub address: Option<IpAddr>,
}

/// How the answer set was arrived at.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(
    rename_all = "camelCase",
    rename_all_fields = "camelCase",
    tag = "kind"
)]
pub enum Outcome {
    /// An eligible pool answered.
    Pool {
        /// The pool.
        pool: PoolId,
        /// The protection threshold applied: all candidates presented healthy.
        protected: bool,
    },
    /// No pool was eligible; fail mode `open` answered the candidates of `pool`.
    FailOpen {
        /// The pool whose candidates were answered.
        pool: PoolId,
    },
    /// No pool was eligible; fail mode `static` answered fixed addresses.
    FailStatic {
        /// The pool whose fallback addresses were answered.
        pool: PoolId,
    },
    /// No pool was eligible and there is nothing to answer (fail mode
    /// `closed`, or fail-open with no candidates at all): NODATA.
    NoData,
}

impl Outcome {
    /// True when a fail mode decided the answer.
    pub fn failed(&self) -> bool {
        !matches!(self, Outcome::Pool { .. })
    }
}

/// The query-specific inputs.
#[derive(Debug, Clone, Copy)]
pub struct Query<'a> {
    /// Address family asked for.
    pub family: Family,
    /// The client's region (from ECS or the resolver address), if known.
    pub region: Option<&'a Region>,
    /// What a geo database says of the client ([`Place::UNKNOWN`] without one).
    pub place: Place,
    /// Round-robin position (the caller's per-record query counter).
    pub rotation: u64,
    /// The client subnet's key for sticky steering ([`affinity`]), when
    /// the client's address is known.
    pub affinity: Option<u64>,
}

/// Reusable selection state: scratch buffers only, no decisions.
#[derive(Debug, Default)]
pub struct Selector {
    candidates: Vec<Candidate>,
    chosen: Vec<Candidate>,
    answers: Vec<Answer>,
}

impl Selector {
    /// A selector with empty buffers.
    pub fn new() -> Self {
        Self::default()
    }

    /// Run DESIGN.md steps 1–8 for one query. Returns the outcome and the
    /// ordered, trimmed answers; fills `trace` with each step when given.
    pub fn select<I, R>(
        &mut self,
        input: &I,
        record: &DynamicRecord,
        query: Query<'_>,
        rng: &mut R,
        mut trace: Option<&mut Trace>,
    ) -> (Outcome, &[Answer])
    where
        I: SelectionInput + ?Sized,
        R: rand::Rng + ?Sized,
    {
        let outcome = self.decide(
            input,
            record,
            query.region,
            &query.place,
            query.family,
            trace.as_deref_mut(),
        );
        self.answers.clear();
        match outcome {
            Outcome::Pool { .. } | Outcome::FailOpen { .. } => {
                if record.steering == Steering::Latency {
                    let locations = record.locations_for(query.region);
                    let mut compared = Vec::new();
                    let fastest = latency::keep_fastest(
                        &mut self.chosen,
                        locations,
                        input.rtts(),
                        trace.is_some().then_some(&mut compared),
                    );
                    if let Some(t) = trace.as_deref_mut() {
                        t.push(Step::Latency {
                            region: query.region.cloned(),
                            locations: locations.map(<[_]>::to_vec),
                            fastest_micros: fastest,
                            limit_micros: fastest.map(latency::band_limit),
                            compared,
                        });
                    }
                }
                steer(
                    &mut self.chosen,
                    record.steering,
                    record.first_n,
                    query.rotation,
                    query.affinity,
                    rng,
                );
                self.answers.extend(self.chosen.iter().map(|c| Answer {
                    member: Some(c.id),
                    address: c.address,
                }));
            }
            Outcome::FailStatic { pool } => {
                if let Some(p) = input.pool(pool) {
                    self.answers
                        .extend(
                            fallback(p, query.family, record.first_n).map(|address| Answer {
                                member: None,
                                address: Some(address),
                            }),
                        );
                }
            }
            Outcome::NoData => {}
        }
        if let Some(t) = trace {
            t.push(Step::Answer {
                outcome,
                steering: record.steering,
                first_n: record.first_n,
                answers: self.answers.clone(),
            });
        }
        (outcome, &self.answers)
    }

    /// Steps 1–7, which do not depend on the query beyond its region and
    /// family: the outcome, with the members steering orders left in
    /// [`Selector::chosen`] (for `Pool` and `FailOpen`). An edge runs this
    /// once per snapshot and branch, and only steers per query.
    pub fn decide<I>(
        &mut self,
        input: &I,
        record: &DynamicRecord,
        region: Option<&Region>,
        place: &Place,
        family: Family,
        mut trace: Option<&mut Trace>,
    ) -> Outcome
    where
        I: SelectionInput + ?Sized,
    {
        let (branch, pools) = record.branch_for(region, place);
        if let Some(t) = trace.as_deref_mut() {
            t.push(Step::Branch {
                geo_branch: branch,
                region: region.cloned(),
                place: (!place.is_unknown()).then_some(*place),
                pools: pools.to_vec(),
            });
        }
        self.decide_pools(input, pools, family, trace)
    }

    /// Steps 1–7 over one branch's pool list (see [`Selector::decide`]).
    pub fn decide_pools<I>(
        &mut self,
        input: &I,
        pools: &[PoolId],
        family: Family,
        mut trace: Option<&mut Trace>,
    ) -> Outcome
    where
        I: SelectionInput + ?Sized,
    {
        for &pool_id in pools {
            let Some(pool) = input.pool(pool_id) else {
                if let Some(t) = trace.as_deref_mut() {
                    t.push(Step::MissingPool { pool: pool_id });
                }
                continue;
            };
            let verdict = evaluate_pool(
                pool,
                family,
                &mut self.candidates,
                &mut self.chosen,
                trace.as_deref_mut(),
            );
            if let PoolVerdict::Eligible { protected } = verdict {
                distinct_addresses(&mut self.chosen);
                return Outcome::Pool {
                    pool: pool_id,
                    protected,
                };
            }
        }
        self.all_failed(input, pools, family, trace)
    }

    /// The members the last [`Selector::decide`] chose, before steering.
    pub fn chosen(&self) -> &[Candidate] {
        &self.chosen
    }

    /// Step 7: no pool of the branch is eligible; the branch's first pool's
    /// fail mode decides. Leaves fail-open candidates in `self.chosen`.
    fn all_failed<I: SelectionInput + ?Sized>(
        &mut self,
        input: &I,
        pools: &[PoolId],
        family: Family,
        trace: Option<&mut Trace>,
    ) -> Outcome {
        let first = pools.iter().find_map(|&id| input.pool(id));
        let mode = first.map_or(FailMode::Closed, |p| p.pool.fail_mode);
        let outcome = match (mode, first) {
            (FailMode::Open, _) => {
                let mut found = Outcome::NoData;
                for &pool_id in pools {
                    let Some(pool) = input.pool(pool_id) else {
                        continue;
                    };
                    self.candidates.clear();
                    pool_eval::collect_candidates(pool, family, &mut self.candidates, None);
                    if !self.candidates.is_empty() {
                        self.chosen.clear();
                        self.chosen.extend_from_slice(&self.candidates);
                        distinct_addresses(&mut self.chosen);
                        found = Outcome::FailOpen { pool: pool_id };
                        break;
                    }
                }
                found
            }
            (FailMode::Static, Some(p)) => Outcome::FailStatic { pool: p.pool.id },
            (FailMode::Closed, _) | (FailMode::Static, None) => Outcome::NoData,
        };
        if let Some(t) = trace {
            t.push(Step::AllFailed { mode, outcome });
        }
        outcome
    }
}

/// Keep the first candidate of each address: two members at one IP (on
/// different ports, or written before the catalog refused a repeated
/// endpoint) must never put one record twice in an answer. Hostname
/// members are distinct members; whoever expands them keeps records apart.
fn distinct_addresses(chosen: &mut Vec<Candidate>) {
    if chosen.len() < 2 {
        return;
    }
    let mut seen = rustc_hash::FxHashSet::default();
    chosen.retain(|c| c.address.is_none_or(|a| seen.insert(a)));
}

/// Step 7's `static` answer: the pool's fixed addresses of `family`,
/// trimmed to `first_n` (0 keeps all).
pub fn fallback(
    pool: PoolRef<'_>,
    family: Family,
    first_n: u32,
) -> impl Iterator<Item = IpAddr> + '_ {
    let keep = if first_n == 0 {
        usize::MAX
    } else {
        first_n as usize
    };
    pool.pool
        .fallback
        .iter()
        .copied()
        .filter(move |a| family.matches(a))
        .take(keep)
}
