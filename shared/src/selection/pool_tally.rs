//! A pool's state from counts alone: what [`pool_state`](super::pool_state)
//! decides (steps 1–5 per family), kept as a handful of counters per
//! family so a watcher can move it member by member instead of reading the
//! whole pool after every decision.

use super::pool_eval::verdict_of;
use super::{Family, PoolRef, PoolState, PoolVerdict};
use crate::model::{Health, Member, MemberFacts, Pool, Resolved};

/// One family's counts over a pool's members.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct FamilyTally {
    /// Members of the family, candidates or not (a family no member has
    /// is not evaluated).
    admitted: u32,
    /// Step 1: enabled, weight > 0, not warming.
    candidates: u32,
    /// Candidates whose health is up.
    healthy: u32,
    /// Healthy candidates that are backups.
    healthy_backups: u32,
}

/// Counts per family ([`Family::V4`], [`Family::V6`], [`Family::Name`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PoolTally {
    families: [FamilyTally; 3],
}

const FAMILIES: [Family; 3] = [Family::V4, Family::V6, Family::Name];

impl PoolTally {
    /// Count every member of `pool`.
    pub fn of(pool: PoolRef<'_>) -> Self {
        let mut tally = Self::default();
        for (member, facts) in pool.members.iter().zip(pool.facts) {
            let resolved = pool.resolved.and_then(|r| r.get(&member.id));
            tally.add(member, facts, resolved);
        }
        tally
    }

    /// Count one member with `facts`.
    pub fn add(&mut self, member: &Member, facts: &MemberFacts, resolved: Option<&Resolved>) {
        self.count(member, facts, resolved, |n| *n += 1);
    }

    /// Take back what [`PoolTally::add`] counted for the same arguments.
    pub fn remove(&mut self, member: &Member, facts: &MemberFacts, resolved: Option<&Resolved>) {
        self.count(member, facts, resolved, |n| *n = n.saturating_sub(1));
    }

    fn count(
        &mut self,
        member: &Member,
        facts: &MemberFacts,
        resolved: Option<&Resolved>,
        step: impl Fn(&mut u32),
    ) {
        for (family, tally) in FAMILIES.iter().zip(&mut self.families) {
            if !family.admits(&member.address, resolved) {
                continue;
            }
            step(&mut tally.admitted);
            // As `collect_candidates` excludes: disabled, weight 0, warming.
            if !member.enabled || member.weight == 0 || facts.warming {
                continue;
            }
            step(&mut tally.candidates);
            if facts.health == Health::Up {
                step(&mut tally.healthy);
                if member.backup {
                    step(&mut tally.healthy_backups);
                }
            }
        }
    }

    /// The pool's state under `pool`'s settings: the same as
    /// [`pool_state`](super::pool_state) over the members counted.
    pub fn state(&self, pool: &Pool) -> PoolState {
        let (mut eligible, mut protected, mut using_backups) = (false, false, false);
        for t in self.families.iter().filter(|t| t.admitted > 0) {
            let healthy_primaries = t.healthy - t.healthy_backups;
            let use_backups = healthy_primaries == 0;
            let usable = if use_backups {
                t.healthy_backups
            } else {
                healthy_primaries
            };
            let count = |n: u32| n as usize;
            let verdict = verdict_of(pool, count(t.candidates), count(t.healthy), count(usable));
            if let PoolVerdict::Eligible { protected: p } = verdict {
                eligible = true;
                protected |= p;
                using_backups |= !p && use_backups && t.healthy_backups > 0;
            }
        }
        PoolState {
            eligible,
            protected,
            fail_open: !eligible,
            using_backups,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::model::{MemberAddress, MemberId, PoolId};
    use crate::selection::pool_state;
    use proptest::prelude::*;

    fn member_strategy() -> impl Strategy<Value = (Member, MemberFacts, Option<Resolved>)> {
        (
            0u8..4,
            any::<bool>(),
            0u32..3,
            any::<bool>(),
            0u8..3,
            any::<bool>(),
            0u8..3,
        )
            .prop_map(
                |(kind, enabled, weight, backup, health, warming, resolves)| {
                    let address: MemberAddress =
                        ["192.0.2.1", "2001:db8::1", "backend.example.test"]
                            [usize::from(kind.min(2))]
                        .parse()
                        .unwrap();
                    let mut member = Member::new(MemberId(0), PoolId(1), "m", address, 80);
                    member.enabled = enabled;
                    member.weight = weight;
                    member.backup = backup;
                    let facts = MemberFacts {
                        health: [Health::Up, Health::Down, Health::Unknown][usize::from(health)],
                        warming,
                        ramp: None,
                    };
                    let addresses = match resolves {
                        0 => None,
                        1 => Some(vec!["192.0.2.7".parse().unwrap()]),
                        _ => Some(vec![
                            "192.0.2.7".parse().unwrap(),
                            "2001:db8::7".parse().unwrap(),
                        ]),
                    };
                    let resolved = addresses.map(|addresses| Resolved { addresses, ttl: 60 });
                    (member, facts, resolved)
                },
            )
    }

    proptest! {
        /// Counting gives exactly what evaluating the whole pool gives,
        /// and taking a member back leaves the tally of the others.
        #[test]
        fn tally_is_pool_state(
            members in proptest::collection::vec(member_strategy(), 0..24),
            min_healthy in 0u32..4,
            threshold in prop_oneof![Just(0.0), 0.0f64..1.0],
            drop in any::<proptest::sample::Index>(),
        ) {
            let mut pool = Pool::new(PoolId(1), "p");
            pool.min_healthy = min_healthy;
            pool.protect_threshold = threshold;
            let mut ms = Vec::new();
            let mut facts = Vec::new();
            let mut resolved = crate::model::Map::new();
            for (i, (mut m, f, r)) in members.into_iter().enumerate() {
                m.id = MemberId(i as u64 + 1);
                if let Some(r) = r {
                    resolved.insert(m.id, r);
                }
                ms.push(m);
                facts.push(f);
            }
            fn whole<'a>(
                pool: &'a Pool,
                members: &'a [Member],
                facts: &'a [MemberFacts],
                resolved: &'a crate::model::Map<MemberId, Resolved>,
            ) -> PoolRef<'a> {
                PoolRef { pool, members, facts, resolved: Some(resolved) }
            }
            let mut tally = PoolTally::of(whole(&pool, &ms, &facts, &resolved));
            prop_assert_eq!(tally.state(&pool), pool_state(whole(&pool, &ms, &facts, &resolved)));
            if !ms.is_empty() {
                let i = drop.index(ms.len());
                tally.remove(&ms[i], &facts[i], resolved.get(&ms[i].id));
                ms.remove(i);
                facts.remove(i);
                prop_assert_eq!(tally, PoolTally::of(whole(&pool, &ms, &facts, &resolved)));
                prop_assert_eq!(tally.state(&pool), pool_state(whole(&pool, &ms, &facts, &resolved)));
            }
        }
    }
}
