//! Which targets each probe location runs: every persistent member of a pool
//! whose check actively probes and is assigned to that location (a check
//! with no location list runs everywhere). Disabled members are still probed
//! so their health is known when they come back. Ephemeral members are kept
//! by heartbeats and never probed.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

pub use gslb_shared::assignment::Assignment;
use gslb_shared::{Catalog, Check, CheckId, LocationId, MemberId, MemberKind};

/// A location's assignment set, keyed by (member, check).
pub type AssignmentSet = BTreeMap<(MemberId, CheckId), Assignment>;

/// The assignment set of `location`.
pub fn assignments_for(catalog: &Catalog, location: &LocationId) -> AssignmentSet {
    let mut set = AssignmentSet::new();
    let mut shared: BTreeMap<CheckId, Arc<Check>> = BTreeMap::new();
    for member in catalog.members.values() {
        if !matches!(member.kind, MemberKind::Persistent) {
            continue;
        }
        let Some(check) = catalog.member_check(member) else {
            continue;
        };
        if !check.is_active() || !(check.locations.is_empty() || check.locations.contains(location))
        {
            continue;
        }
        set.insert(
            (member.id, check.id),
            Assignment {
                member: member.id,
                address: member.address.clone(),
                port: member.port,
                check: shared
                    .entry(check.id)
                    .or_insert_with(|| Arc::new(check.clone()))
                    .clone(),
            },
        );
    }
    set
}

/// The active checks `location` runs, in id order: a location's assignment
/// set depends on nothing else of it.
pub fn checks_run_by(catalog: &Catalog, location: &LocationId) -> Vec<CheckId> {
    catalog
        .checks
        .values()
        .filter(|c| c.is_active() && (c.locations.is_empty() || c.locations.contains(location)))
        .map(|c| c.id)
        .collect()
}

/// Assignment sets built once per catalog generation for each distinct
/// list of checks run, and shared by every location that runs that list
/// (twenty locations running the same checks hold one set, not twenty).
#[derive(Debug, Default)]
pub struct SharedSets {
    generation: u64,
    sets: HashMap<Vec<CheckId>, Arc<AssignmentSet>>,
}

impl SharedSets {
    /// The set of `location` in `catalog` (of catalog generation
    /// `generation`), built only if no location running the same checks
    /// asked for it at this generation.
    pub fn get(
        &mut self,
        generation: u64,
        catalog: &Catalog,
        location: &LocationId,
    ) -> Arc<AssignmentSet> {
        if generation < self.generation {
            // A reader of an older view: build its set, keep the newer ones.
            return Arc::new(assignments_for(catalog, location));
        }
        if generation > self.generation {
            self.sets.clear();
            self.generation = generation;
        }
        self.sets
            .entry(checks_run_by(catalog, location))
            .or_insert_with(|| Arc::new(assignments_for(catalog, location)))
            .clone()
    }
}

/// What changed from `old` to `new`: targets to add or replace, and targets to stop.
pub fn diff<'a>(
    old: &AssignmentSet,
    new: &'a AssignmentSet,
) -> (Vec<&'a Assignment>, Vec<(MemberId, CheckId)>) {
    let upserts = new
        .iter()
        .filter(|(k, a)| old.get(k) != Some(a))
        .map(|(_, a)| a)
        .collect();
    let removals = old
        .keys()
        .filter(|k| !new.contains_key(k))
        .copied()
        .collect();
    (upserts, removals)
}

#[cfg(test)]
mod tests {
    use super::*;
    use gslb_shared::{EphemeralPolicy, HttpProbe, Member, Pool, PoolId, Probe};

    fn catalog() -> Catalog {
        let mut c = Catalog::default();
        let mut everywhere = Check::new(CheckId(1), "http", Probe::Http(HttpProbe::default()));
        everywhere.port = Some(8080);
        let mut eu_only = Check::new(CheckId(2), "icmp", Probe::Icmp);
        eu_only.locations = vec![LocationId::new("fra1")];
        let none = Check::new(CheckId(3), "none", Probe::None);
        for check in [everywhere, eu_only, none] {
            c.checks.insert(check.id, check);
        }
        for (pool, check) in [(1, Some(1)), (2, Some(2)), (3, Some(3)), (4, None)] {
            let mut p = Pool::new(PoolId(pool), format!("p{pool}"));
            p.check = check.map(CheckId);
            c.pools.insert(p.id, p);
        }
        for (id, pool) in [(10, 1), (11, 1), (20, 2), (30, 3), (40, 4)] {
            let m = Member::new(
                MemberId(id),
                PoolId(pool),
                "m",
                format!("192.0.2.{id}").parse().unwrap(),
                80,
            );
            c.members.insert(m.id, m);
        }
        let mut eph = Member::new(
            MemberId(12),
            PoolId(1),
            "eph",
            "192.0.2.12".parse().unwrap(),
            80,
        );
        eph.kind = MemberKind::Ephemeral(EphemeralPolicy::default());
        c.members.insert(eph.id, eph);
        let mut off = Member::new(
            MemberId(13),
            PoolId(1),
            "off",
            "192.0.2.13".parse().unwrap(),
            80,
        );
        off.enabled = false;
        c.members.insert(off.id, off);
        c
    }

    fn keys(set: &AssignmentSet) -> Vec<(u64, u64)> {
        set.keys().map(|(m, c)| (m.0, c.0)).collect()
    }

    #[test]
    fn locations_get_active_checks_of_persistent_members_they_are_assigned() {
        let c = catalog();
        assert_eq!(
            keys(&assignments_for(&c, &LocationId::new("fra1"))),
            vec![(10, 1), (11, 1), (13, 1), (20, 2)]
        );
        assert_eq!(
            keys(&assignments_for(&c, &LocationId::new("iad1"))),
            vec![(10, 1), (11, 1), (13, 1)]
        );
        let a = &assignments_for(&c, &LocationId::new("iad1"))[&(MemberId(10), CheckId(1))];
        assert_eq!(
            (a.port, a.check.port),
            (80, Some(8080)),
            "the member port travels; the check may override it"
        );
    }

    #[test]
    fn diff_lists_added_changed_and_removed_targets() {
        let mut c = catalog();
        let before = assignments_for(&c, &LocationId::new("fra1"));
        c.members.remove(&MemberId(11));
        c.members.get_mut(&MemberId(10)).unwrap().address = "192.0.2.99".parse().unwrap();
        let m = Member::new(
            MemberId(14),
            PoolId(1),
            "new",
            "192.0.2.14".parse().unwrap(),
            80,
        );
        c.members.insert(m.id, m);
        let after = assignments_for(&c, &LocationId::new("fra1"));
        let (upserts, removals) = diff(&before, &after);
        let up: Vec<_> = upserts.iter().map(|a| a.member.0).collect();
        assert_eq!(up, vec![10, 14]);
        assert_eq!(removals, vec![(MemberId(11), CheckId(1))]);
        assert_eq!(diff(&after, &after), (vec![], vec![]));
    }

    #[test]
    fn locations_running_the_same_checks_share_one_set_per_generation() {
        let mut c = catalog();
        let mut sets = SharedSets::default();
        let (fra, iad, sfo) = (
            LocationId::new("fra1"),
            LocationId::new("iad1"),
            LocationId::new("sfo1"),
        );
        let iad_set = sets.get(1, &c, &iad);
        assert!(Arc::ptr_eq(&iad_set, &sets.get(1, &c, &sfo)), "same checks");
        let fra_set = sets.get(1, &c, &fra);
        assert!(!Arc::ptr_eq(&iad_set, &fra_set), "fra1 runs one more check");
        assert_eq!(*fra_set, assignments_for(&c, &fra));
        assert_eq!(*iad_set, assignments_for(&c, &iad));

        c.members.remove(&MemberId(10));
        let newer = sets.get(2, &c, &iad);
        assert_eq!(
            *newer,
            assignments_for(&c, &iad),
            "a new generation is rebuilt"
        );
        let older = sets.get(1, &catalog(), &iad);
        assert_eq!(*older, *iad_set, "an older view gets its own set");
        assert!(
            Arc::ptr_eq(&newer, &sets.get(2, &c, &sfo)),
            "and leaves the newer ones"
        );
    }
}
