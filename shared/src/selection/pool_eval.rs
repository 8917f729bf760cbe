//! Steps 1–5 for one pool: candidates, healthy set, backups, minHealthy and
//! the protection threshold. Query-independent apart from the family, so the
//! edge can run it once per snapshot and keep the result.

use std::net::IpAddr;

use serde::Serialize;

use super::trace::{Ramping, Step, Trace};
use super::{Family, PoolRef};
use crate::model::{Health, MemberId, Pool};

/// A member that passed step 1, with what later steps need.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Candidate {
    /// Member id.
    pub id: MemberId,
    /// Answered address; `None` for a hostname member.
    pub address: Option<IpAddr>,
    /// Steering weight (> 0).
    pub weight: u32,
    /// Ordering tier; lower first.
    pub priority: u32,
    /// A backup member.
    pub backup: bool,
    /// Its health.
    pub health: Health,
}

impl Candidate {
    /// Health is `up`.
    pub fn healthy(&self) -> bool {
        self.health == Health::Up
    }
}

/// Why a member is not a candidate.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum Exclusion {
    /// `enabled: false`.
    Disabled,
    /// Weight 0.
    ZeroWeight,
    /// Held by the warm-up gate.
    Warming,
    /// Address of the other family than the query's (or an IP member
    /// asked for a name, or a hostname asked for an address).
    OtherFamily,
}

/// The result of steps 2–5 for one pool.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum PoolVerdict {
    /// The pool may answer with the chosen set.
    Eligible {
        /// All candidates presented as healthy by the protection threshold.
        protected: bool,
    },
    /// Fewer usable members than `minHealthy`.
    Ineligible,
}

/// Step 1: enabled, weight > 0, not warming, right family (a hostname
/// member of a flattened record: resolved to an address of the family).
pub fn collect_candidates(
    pool: PoolRef<'_>,
    family: Family,
    out: &mut Vec<Candidate>,
    mut trace: Option<&mut Vec<(MemberId, Exclusion)>>,
) {
    for (m, facts) in pool.members.iter().zip(pool.facts) {
        let resolved = pool.resolved.and_then(|r| r.get(&m.id));
        let excluded = if !m.enabled {
            Some(Exclusion::Disabled)
        } else if m.weight == 0 {
            Some(Exclusion::ZeroWeight)
        } else if facts.warming {
            Some(Exclusion::Warming)
        } else if !family.admits(&m.address, resolved) {
            Some(Exclusion::OtherFamily)
        } else {
            None
        };
        match excluded {
            Some(reason) => {
                if let Some(t) = trace.as_deref_mut() {
                    t.push((m.id, reason));
                }
            }
            None => out.push(Candidate {
                id: m.id,
                address: m.address.ip(),
                weight: facts.effective_weight(m.weight),
                priority: m.priority,
                backup: m.backup,
                health: facts.health,
            }),
        }
    }
}

/// Candidates in slow start: their ramp and the weight it leaves them.
fn ramping(pool: PoolRef<'_>, candidates: &[Candidate]) -> Vec<Ramping> {
    pool.members
        .iter()
        .zip(pool.facts)
        .filter_map(|(m, facts)| {
            let percent = facts.ramp?;
            let c = candidates.iter().find(|c| c.id == m.id)?;
            Some(Ramping {
                member: m.id,
                percent,
                weight: m.weight,
                effective_weight: c.weight,
            })
        })
        .collect()
}

/// Steps 4–5 from counts: protected when at most `protectThreshold` of
/// the `candidates` are `healthy`, else eligible when `usable` (the healthy
/// primaries, or the healthy backups when no primary is) reach
/// `minHealthy`.
pub(super) fn verdict_of(
    pool: &Pool,
    candidates: usize,
    healthy: usize,
    usable: usize,
) -> PoolVerdict {
    let threshold = pool.protect_threshold;
    let protected =
        threshold > 0.0 && candidates > 0 && (healthy as f64 / candidates as f64) <= threshold;
    if protected {
        PoolVerdict::Eligible { protected: true }
    } else if usable >= pool.min_healthy as usize {
        PoolVerdict::Eligible { protected: false }
    } else {
        PoolVerdict::Ineligible
    }
}

/// Steps 1–5 for one pool. On `Eligible`, `chosen` holds the members to
/// answer (before steering); `candidates` is scratch.
pub fn evaluate_pool(
    pool: PoolRef<'_>,
    family: Family,
    candidates: &mut Vec<Candidate>,
    chosen: &mut Vec<Candidate>,
    trace: Option<&mut Trace>,
) -> PoolVerdict {
    let pool_id = pool.pool.id;
    candidates.clear();
    chosen.clear();
    let mut excluded = trace.as_ref().map(|_| Vec::new());
    collect_candidates(pool, family, candidates, excluded.as_mut());

    let healthy = candidates.iter().filter(|c| c.healthy()).count();
    let healthy_primaries = candidates
        .iter()
        .filter(|c| c.healthy() && !c.backup)
        .count();
    let use_backups = healthy_primaries == 0;
    chosen.extend(
        candidates
            .iter()
            .filter(|c| c.healthy() && c.backup == use_backups),
    );

    let usable = chosen.len();
    let threshold = pool.pool.protect_threshold;
    let verdict = verdict_of(pool.pool, candidates.len(), healthy, usable);
    let protected = verdict == PoolVerdict::Eligible { protected: true };
    if protected {
        chosen.clear();
        chosen.extend_from_slice(candidates);
    }

    if let Some(t) = trace {
        t.push(Step::Candidates {
            pool: pool_id,
            candidates: candidates.iter().map(|c| c.id).collect(),
            excluded: excluded.unwrap_or_default(),
            ramping: ramping(pool, candidates),
        });
        t.push(Step::Healthy {
            pool: pool_id,
            healthy: candidates
                .iter()
                .filter(|c| c.healthy())
                .map(|c| c.id)
                .collect(),
            unhealthy: candidates
                .iter()
                .filter(|c| !c.healthy())
                .map(|c| (c.id, c.health))
                .collect(),
        });
        t.push(Step::Backup {
            pool: pool_id,
            using_backups: use_backups && healthy > 0,
            chosen: chosen.iter().map(|c| c.id).collect(),
        });
        t.push(Step::MinHealthy {
            pool: pool_id,
            usable,
            min_healthy: pool.pool.min_healthy,
        });
        t.push(Step::Protection {
            pool: pool_id,
            healthy,
            candidates: candidates.len(),
            threshold,
            protected,
        });
        t.push(Step::PoolVerdict {
            pool: pool_id,
            verdict,
        });
    }
    verdict
}
