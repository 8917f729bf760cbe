//! Versioned snapshots and the deltas between them: what a DNS edge holds
//! and how it moves from one version to the next.

use super::{
    Catalog, Map, Member, MemberFacts, MemberId, Pool, PoolId, RecordSet, RecordSetId, Resolved,
    Rtts, TsigKey, TsigKeyId, Zone, ZoneId,
};

/// Zones, records, pools and members (no checks) with member facts.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Snapshot {
    /// Version; only ever increases.
    pub version: u64,
    /// When it was published, ms since the Unix epoch.
    pub published_at_ms: u64,
    /// Raised by each deliberate reset of the edges: an edge accepts a
    /// lower version or an empty catalog only from a higher epoch.
    pub epoch: u64,
    /// The catalog an edge needs (checks left out).
    pub catalog: Catalog,
    /// Facts per member.
    pub facts: Map<MemberId, MemberFacts>,
    /// Addresses of hostname members that flattened records answer with.
    pub resolved: Map<MemberId, Resolved>,
    /// Round-trip times per member and location (latency steering).
    pub rtt: Map<MemberId, Rtts>,
}

/// The changes from `base_version` to `version`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Delta {
    /// The version this delta applies to.
    pub base_version: u64,
    /// The version it produces.
    pub version: u64,
    /// When it was published, ms since the Unix epoch.
    pub published_at_ms: u64,
    /// The epoch of `version`.
    pub epoch: u64,
    /// Zones created or replaced.
    pub zones: Vec<Zone>,
    /// Zones removed.
    pub removed_zones: Vec<ZoneId>,
    /// Record sets created or replaced.
    pub records: Vec<RecordSet>,
    /// Record sets removed.
    pub removed_records: Vec<RecordSetId>,
    /// Pools created or replaced.
    pub pools: Vec<Pool>,
    /// Pools removed.
    pub removed_pools: Vec<PoolId>,
    /// Members created or replaced.
    pub members: Vec<Member>,
    /// Members removed (their facts go with them).
    pub removed_members: Vec<MemberId>,
    /// TSIG keys created or replaced.
    pub tsig_keys: Vec<TsigKey>,
    /// TSIG keys removed.
    pub removed_tsig_keys: Vec<TsigKeyId>,
    /// Facts set.
    pub facts: Vec<(MemberId, MemberFacts)>,
    /// Hostname members' addresses set.
    pub resolved: Vec<(MemberId, Resolved)>,
    /// Hostname members whose addresses are no longer known.
    pub unresolved: Vec<MemberId>,
    /// Round-trip tables set.
    pub rtt: Vec<(MemberId, Rtts)>,
    /// Members no location measures any more.
    pub unmeasured: Vec<MemberId>,
}

/// One step of an edge's feed: a whole snapshot, or the changes to the
/// next version.
#[derive(Debug, Clone, PartialEq)]
pub enum FeedUpdate {
    /// Replaces what the edge holds (subject to its regression rules).
    Full(Snapshot),
    /// Applies to the held version only.
    Delta(Delta),
}

/// A delta that does not follow the held version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("delta {base}->{version} does not apply to held version {held}: resync")]
pub struct VersionGap {
    /// Held version.
    pub held: u64,
    /// The delta's base.
    pub base: u64,
    /// The delta's target.
    pub version: u64,
}

impl Delta {
    /// True when it changes nothing.
    pub fn is_empty(&self) -> bool {
        !self.changes_catalog()
            && self.facts.is_empty()
            && self.resolved.is_empty()
            && self.unresolved.is_empty()
            && self.rtt.is_empty()
            && self.unmeasured.is_empty()
    }

    /// Rows it carries: each object, removal, fact, address set and
    /// round-trip table counts one (what holding it costs, in the unit of
    /// [`Snapshot::rows`]).
    pub fn rows(&self) -> usize {
        self.zones.len()
            + self.removed_zones.len()
            + self.records.len()
            + self.removed_records.len()
            + self.pools.len()
            + self.removed_pools.len()
            + self.members.len()
            + self.removed_members.len()
            + self.tsig_keys.len()
            + self.removed_tsig_keys.len()
            + self.facts.len()
            + self.resolved.len()
            + self.unresolved.len()
            + self.rtt.len()
            + self.unmeasured.len()
    }

    /// True when it creates, replaces or removes a catalog object.
    fn changes_catalog(&self) -> bool {
        !(self.zones.is_empty()
            && self.removed_zones.is_empty()
            && self.records.is_empty()
            && self.removed_records.is_empty()
            && self.pools.is_empty()
            && self.removed_pools.is_empty()
            && self.members.is_empty()
            && self.removed_members.is_empty()
            && self.tsig_keys.is_empty()
            && self.removed_tsig_keys.is_empty())
    }
}

impl Delta {
    /// The members whose facts, resolved addresses or round-trip times it
    /// sets or drops, when that is all it changes: a holder can then re-decide only what
    /// names their pools. `None` when it changes the catalog.
    pub fn health_only(&self) -> Option<Vec<MemberId>> {
        if self.changes_catalog() {
            return None;
        }
        let facts = self.facts.iter().map(|(id, _)| *id);
        let resolved = self.resolved.iter().map(|(id, _)| *id);
        let rtt = self.rtt.iter().map(|(id, _)| *id);
        Some(
            facts
                .chain(resolved)
                .chain(self.unresolved.iter().copied())
                .chain(rtt)
                .chain(self.unmeasured.iter().copied())
                .collect(),
        )
    }
}

impl Snapshot {
    /// Rows it holds, counted as [`Delta::rows`] counts them (checks and
    /// notification targets are not sent to edges).
    pub fn rows(&self) -> usize {
        let c = &self.catalog;
        c.zones.len()
            + c.records.len()
            + c.pools.len()
            + c.members.len()
            + c.tsig_keys.len()
            + self.facts.len()
            + self.resolved.len()
            + self.rtt.len()
    }

    /// Apply a delta whose base is this snapshot's version.
    pub fn apply(&mut self, d: &Delta) -> Result<(), VersionGap> {
        self.check_base(d)?;
        let c = &mut self.catalog;
        for z in &d.zones {
            c.zones.insert(z.id, z.clone());
        }
        for r in &d.records {
            c.records.insert(r.id, r.clone());
        }
        for p in &d.pools {
            c.pools.insert(p.id, p.clone());
        }
        for m in &d.members {
            c.members.insert(m.id, m.clone());
        }
        for id in &d.removed_zones {
            c.zones.remove(id);
        }
        for id in &d.removed_records {
            c.records.remove(id);
        }
        for id in &d.removed_pools {
            c.pools.remove(id);
        }
        for id in &d.removed_members {
            c.members.remove(id);
        }
        for k in &d.tsig_keys {
            c.tsig_keys.insert(k.id, k.clone());
        }
        for id in &d.removed_tsig_keys {
            c.tsig_keys.remove(id);
        }
        self.advance_facts(d);
        Ok(())
    }

    /// Move to `d`'s version taking `catalog`, which must be this
    /// snapshot's catalog with `d` applied, instead of applying `d`'s
    /// objects: the holder of that catalog shares its nodes (imbl) rather
    /// than this snapshot keeping a copy of every object.
    pub fn advance(&mut self, d: &Delta, catalog: Catalog) -> Result<(), VersionGap> {
        self.check_base(d)?;
        self.catalog = catalog;
        self.advance_facts(d);
        Ok(())
    }

    fn check_base(&self, d: &Delta) -> Result<(), VersionGap> {
        if d.base_version != self.version || d.version <= self.version {
            return Err(VersionGap {
                held: self.version,
                base: d.base_version,
                version: d.version,
            });
        }
        Ok(())
    }

    /// The facts, version, time and epoch of `d`, over the catalog as it
    /// is after `d`.
    fn advance_facts(&mut self, d: &Delta) {
        for id in d.removed_members.iter().chain(&d.unresolved) {
            self.resolved.remove(id);
        }
        for id in d.removed_members.iter().chain(&d.unmeasured) {
            self.rtt.remove(id);
        }
        for id in &d.removed_members {
            self.facts.remove(id);
        }
        for (id, rtt) in &d.rtt {
            if self.catalog.members.contains_key(id) {
                self.rtt.insert(*id, rtt.clone());
            }
        }
        for (id, facts) in &d.facts {
            if self.catalog.members.contains_key(id) {
                self.facts.insert(*id, *facts);
            }
        }
        for (id, resolved) in &d.resolved {
            if self.catalog.members.contains_key(id) {
                self.resolved.insert(*id, resolved.clone());
            }
        }
        self.version = d.version;
        self.published_at_ms = d.published_at_ms;
        self.epoch = self.epoch.max(d.epoch);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_delta_must_follow_the_held_version() {
        let mut s = Snapshot {
            version: 5,
            ..Snapshot::default()
        };
        let gap = Delta {
            base_version: 4,
            version: 6,
            ..Delta::default()
        };
        assert_eq!(
            s.apply(&gap),
            Err(VersionGap {
                held: 5,
                base: 4,
                version: 6
            })
        );
        let backwards = Delta {
            base_version: 5,
            version: 5,
            ..Delta::default()
        };
        assert!(s.apply(&backwards).is_err());
        s.apply(&Delta {
            base_version: 5,
            version: 7,
            ..Delta::default()
        })
        .unwrap();
        assert_eq!(s.version, 7);
    }

    #[test]
    fn advancing_over_the_applied_catalog_equals_applying() {
        let m = |id: u64| {
            Member::new(
                MemberId(id),
                PoolId(1),
                "a",
                "192.0.2.1".parse().unwrap(),
                80,
            )
        };
        let first = Delta {
            version: 1,
            members: vec![m(1), m(2)],
            facts: vec![(MemberId(1), MemberFacts::UP)],
            ..Delta::default()
        };
        let second = Delta {
            base_version: 1,
            version: 4,
            epoch: 2,
            published_at_ms: 9,
            members: vec![m(3)],
            removed_members: vec![MemberId(1)],
            facts: vec![
                (MemberId(3), MemberFacts::DOWN),
                (MemberId(8), MemberFacts::UP),
            ],
            ..Delta::default()
        };
        let mut applied = Snapshot::default();
        applied.apply(&first).unwrap();
        let mut advanced = applied.clone();
        applied.apply(&second).unwrap();
        advanced.advance(&second, applied.catalog.clone()).unwrap();
        assert_eq!(advanced, applied);
        assert!(
            advanced.advance(&second, Catalog::default()).is_err(),
            "the base is checked"
        );
    }

    #[test]
    fn removing_a_member_removes_its_facts_and_facts_of_unknown_members_are_ignored() {
        let mut s = Snapshot::default();
        let m = Member::new(
            MemberId(1),
            PoolId(1),
            "a",
            "192.0.2.1".parse().unwrap(),
            80,
        );
        s.apply(&Delta {
            version: 1,
            members: vec![m],
            facts: vec![
                (MemberId(1), MemberFacts::UP),
                (MemberId(9), MemberFacts::UP),
            ],
            ..Delta::default()
        })
        .unwrap();
        assert_eq!(s.facts.len(), 1);
        s.apply(&Delta {
            base_version: 1,
            version: 2,
            removed_members: vec![MemberId(1)],
            ..Delta::default()
        })
        .unwrap();
        assert!(s.facts.is_empty() && s.catalog.members.is_empty());
    }
}
