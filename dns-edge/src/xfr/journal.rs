//! A zone's transfer history: its data now and the changes that led to it
//! over the last snapshot versions (RFC 1995's journal). Pure: snapshots
//! in, plans of what to send out.
//!
//! The SOA serial is the snapshot version's low 32 bits, so it moves with
//! every snapshot, also when nothing in a zone changed. A change is kept
//! only when the zone's data changed; a client at any serial between two
//! changes holds the data of the earlier one and is sent the later ones.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;

use gslb_shared::RecordSetId;
use gslb_shared::wire::{Data, WireName};

/// One record of a zone's data (the SOA left out), as transfers compare
/// and send it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Rr {
    /// Owner.
    pub owner: WireName,
    /// TTL.
    pub ttl: u32,
    /// Data.
    pub data: Data,
}

/// Which set of the zone a run of records is: the apex NS set, or a
/// catalog record set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SetKey {
    /// The zone's `ns` list.
    ApexNs,
    /// A record set, by id.
    Set(RecordSetId),
}

/// One set of a zone's data: shared between versions while it does not
/// change, so a new version costs only the sets that did.
#[derive(Debug, Clone)]
pub struct ZoneSet {
    /// Which set.
    pub key: SetKey,
    /// Its records.
    pub records: Arc<[Rr]>,
}

/// What one change did: the data at `to` is the data before it with
/// `removed` taken out and `added` put in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change {
    /// The snapshot version that made it.
    pub to: u64,
    /// Records gone.
    pub removed: Vec<Rr>,
    /// Records new.
    pub added: Vec<Rr>,
}

/// A zone's data now and its last changes.
#[derive(Debug, Clone)]
pub struct History {
    /// The snapshot version the data is at.
    pub version: u64,
    /// The oldest version a client may hold and be sent changes from.
    pub oldest: u64,
    /// The sets now, SOA left out, in zone order.
    pub sets: Arc<[ZoneSet]>,
    /// Changes, oldest first; at most the journal depth.
    pub changes: VecDeque<Arc<Change>>,
}

/// What an IXFR for a client at some serial sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ixfr {
    /// The client is current: the SOA alone.
    Current,
    /// The changes, each from the version before it: `(from, change)`.
    /// The last one ends at the current version.
    Changes(Vec<(u64, Arc<Change>)>),
    /// The client's serial is unknown here (older than the journal, or
    /// ahead of us): the whole zone, AXFR-style.
    Whole,
}

/// Records in `old` and not in `new`, and the reverse.
fn difference(old: &[Rr], new: &[Rr], removed: &mut Vec<Rr>, added: &mut Vec<Rr>) {
    let before: HashSet<&Rr> = old.iter().collect();
    let after: HashSet<&Rr> = new.iter().collect();
    removed.extend(old.iter().filter(|r| !after.contains(r)).cloned());
    added.extend(new.iter().filter(|r| !before.contains(r)).cloned());
}

impl History {
    /// A history that starts at `version` with `sets`.
    pub fn new(version: u64, sets: Vec<ZoneSet>) -> Self {
        Self {
            version,
            oldest: version,
            sets: sets.into(),
            changes: VecDeque::new(),
        }
    }

    /// Records in the zone now (the SOA aside).
    pub fn len(&self) -> usize {
        self.sets.iter().map(|s| s.records.len()).sum()
    }

    /// True when the zone holds nothing but its SOA.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Move to `version` with `sets`, keeping at most `depth` changes.
    /// Returns true when the data changed (the SOA aside). Sets whose
    /// records are the same `Arc` as before cost nothing.
    pub fn advance(&mut self, version: u64, sets: Vec<ZoneSet>, depth: usize) -> bool {
        let same_data = || {
            self.sets.len() == sets.len()
                && self.sets.iter().zip(&sets).all(|(o, n)| {
                    o.key == n.key
                        && (Arc::ptr_eq(&o.records, &n.records) || o.records == n.records)
                })
        };
        if version == self.version && same_data() {
            // The same snapshot again (a resubscription): nothing moved.
            return false;
        }
        if version <= self.version {
            // A reset to a lower version (a new epoch): no history holds.
            let mut removed = Vec::new();
            let mut added = Vec::new();
            let old: Vec<Rr> = self
                .sets
                .iter()
                .flat_map(|s| s.records.iter().cloned())
                .collect();
            let new: Vec<Rr> = sets
                .iter()
                .flat_map(|s| s.records.iter().cloned())
                .collect();
            difference(&old, &new, &mut removed, &mut added);
            *self = Self::new(version, sets);
            return !(removed.is_empty() && added.is_empty());
        }
        self.version = version;
        let mut removed = Vec::new();
        let mut added = Vec::new();
        let same = |o: &Arc<[Rr]>, n: &Arc<[Rr]>| Arc::ptr_eq(o, n) || **o == **n;
        let aligned = self.sets.len() == sets.len()
            && self.sets.iter().zip(&sets).all(|(o, n)| o.key == n.key);
        if aligned {
            // The same sets in the same order (a health change): compare
            // in place.
            for (o, n) in self.sets.iter().zip(&sets) {
                if !same(&o.records, &n.records) {
                    difference(&o.records, &n.records, &mut removed, &mut added);
                }
            }
        } else {
            let old: HashMap<SetKey, &Arc<[Rr]>> =
                self.sets.iter().map(|s| (s.key, &s.records)).collect();
            for s in &sets {
                match old.get(&s.key) {
                    Some(o) if same(o, &s.records) => {}
                    Some(o) => difference(o, &s.records, &mut removed, &mut added),
                    None => added.extend(s.records.iter().cloned()),
                }
            }
            let kept: HashSet<SetKey> = sets.iter().map(|s| s.key).collect();
            for s in self.sets.iter().filter(|s| !kept.contains(&s.key)) {
                removed.extend(s.records.iter().cloned());
            }
        }
        self.sets = sets.into();
        if removed.is_empty() && added.is_empty() {
            return false;
        }
        self.changes.push_back(Arc::new(Change {
            to: version,
            removed,
            added,
        }));
        while self.changes.len() > depth {
            if let Some(dropped) = self.changes.pop_front() {
                self.oldest = dropped.to;
            }
        }
        if depth == 0 {
            self.oldest = version;
        }
        true
    }

    /// The version a client's 32-bit serial stands for (RFC 1982: within
    /// 2^31 below the current one), or `None` when it is ahead of us.
    pub fn version_of(&self, serial: u32) -> Option<u64> {
        let behind = (self.version as u32).wrapping_sub(serial);
        if behind > i32::MAX as u32 {
            return None;
        }
        self.version.checked_sub(u64::from(behind))
    }

    /// What to send a client at `serial`.
    pub fn ixfr(&self, serial: u32) -> Ixfr {
        let Some(at) = self.version_of(serial) else {
            return Ixfr::Whole;
        };
        if at == self.version {
            return Ixfr::Current;
        }
        if at < self.oldest {
            return Ixfr::Whole;
        }
        let mut from = at;
        let mut out = Vec::new();
        for change in self.changes.iter().filter(|c| c.to > at) {
            out.push((from, Arc::clone(change)));
            from = change.to;
        }
        Ixfr::Changes(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use domain::rdata::{A, ZoneRecordData};
    use std::str::FromStr;

    fn rr(last: u8) -> Rr {
        Rr {
            owner: WireName::from_str("www.example.test.").unwrap(),
            ttl: 60,
            data: ZoneRecordData::A(A::new([192, 0, 2, last].into())),
        }
    }

    /// One set holding `records`.
    fn one(records: Vec<Rr>) -> Vec<ZoneSet> {
        vec![ZoneSet {
            key: SetKey::Set(RecordSetId(1)),
            records: records.into(),
        }]
    }

    /// Apply `changes` from `from` to `records`, as a secondary would.
    fn replay(mut records: Vec<Rr>, plan: &[(u64, Arc<Change>)]) -> Vec<Rr> {
        for (_, c) in plan {
            records.retain(|r| !c.removed.contains(r));
            records.extend(c.added.iter().cloned());
        }
        records.sort_by_key(|r| format!("{r:?}"));
        records
    }

    #[test]
    fn changes_replay_to_the_current_data_from_every_serial_in_the_journal() {
        let mut h = History::new(10, one(vec![rr(1)]));
        let mut at: Vec<(u64, Vec<Rr>)> = vec![(10, vec![rr(1)])];
        let steps: [(u64, Vec<Rr>); 5] = [
            (11, vec![rr(1)]),
            (12, vec![rr(1), rr(2)]),
            (15, vec![rr(2)]),
            (16, vec![rr(2)]),
            (20, vec![rr(3), rr(2)]),
        ];
        for (v, records) in steps {
            h.advance(v, one(records.clone()), 8);
            at.push((v, records));
        }
        let mut now: Vec<Rr> = h
            .sets
            .iter()
            .flat_map(|s| s.records.iter().cloned())
            .collect();
        now.sort_by_key(|r| format!("{r:?}"));
        for (v, records) in &at {
            match h.ixfr(*v as u32) {
                Ixfr::Current => assert_eq!(*v, 20),
                Ixfr::Changes(plan) => {
                    assert_eq!(
                        plan[0].0, *v,
                        "the first change starts at the client's serial"
                    );
                    assert_eq!(plan.last().unwrap().1.to, 20);
                    assert_eq!(replay(records.clone(), &plan), now, "from {v}");
                }
                Ixfr::Whole => panic!("{v} is in the journal"),
            }
        }
    }

    #[test]
    fn an_unchanged_zone_keeps_no_change_but_its_serial_moves() {
        let mut h = History::new(1, one(vec![rr(1)]));
        assert!(!h.advance(2, one(vec![rr(1)]), 4));
        assert!(h.changes.is_empty());
        assert_eq!(h.ixfr(1), Ixfr::Changes(vec![]));
        assert_eq!(h.ixfr(2), Ixfr::Current);
    }

    #[test]
    fn serials_older_than_the_journal_or_ahead_get_the_whole_zone() {
        let mut h = History::new(1, one(vec![rr(1)]));
        for v in 2..10u8 {
            h.advance(u64::from(v), one(vec![rr(v)]), 3);
        }
        assert_eq!(h.changes.len(), 3);
        assert_eq!(h.oldest, 6);
        assert_eq!(h.ixfr(5), Ixfr::Whole);
        assert!(matches!(h.ixfr(6), Ixfr::Changes(c) if c.len() == 3));
        assert_eq!(h.ixfr(10), Ixfr::Whole, "ahead of us");
        assert_eq!(h.ixfr(u32::MAX), Ixfr::Whole, "before version 0");
    }

    #[test]
    fn serials_wrap_at_two_to_the_32() {
        let base = (1u64 << 32) - 2;
        let mut h = History::new(base, one(vec![rr(1)]));
        h.advance(base + 3, one(vec![rr(2)]), 4);
        assert_eq!(h.version_of(base as u32), Some(base));
        assert!(matches!(h.ixfr(base as u32), Ixfr::Changes(c) if c.len() == 1));
        assert_eq!(h.ixfr((base + 3) as u32), Ixfr::Current);
    }

    #[test]
    fn the_same_snapshot_again_keeps_the_journal() {
        let mut h = History::new(1, one(vec![rr(1)]));
        h.advance(2, one(vec![rr(2)]), 4);
        assert!(!h.advance(2, one(vec![rr(2)]), 4));
        assert_eq!((h.oldest, h.changes.len()), (1, 1));
    }

    #[test]
    fn a_lower_version_starts_over() {
        let mut h = History::new(50, one(vec![rr(1)]));
        h.advance(51, one(vec![rr(2)]), 4);
        assert!(h.advance(3, one(vec![rr(3)]), 4));
        assert_eq!((h.version, h.oldest, h.changes.len()), (3, 3, 0));
    }
}

#[cfg(test)]
mod sets {
    use super::*;
    use domain::rdata::{A, ZoneRecordData};
    use std::str::FromStr;

    fn set(id: u64, last: &[u8]) -> ZoneSet {
        ZoneSet {
            key: SetKey::Set(RecordSetId(id)),
            records: (last.iter())
                .map(|l| Rr {
                    owner: WireName::from_str(&format!("h{id}.example.test.")).unwrap(),
                    ttl: 60,
                    data: ZoneRecordData::A(A::new([192, 0, 2, *l].into())),
                })
                .collect::<Vec<_>>()
                .into(),
        }
    }

    #[test]
    fn a_change_holds_only_what_changed_in_sets_added_removed_or_edited() {
        let (a, b, c) = (set(1, &[1, 2]), set(2, &[3]), set(3, &[4]));
        let mut h = History::new(1, vec![a.clone(), b, c]);
        assert!(h.advance(2, vec![a, set(2, &[3, 5]), set(4, &[6])], 4));
        let change = h.changes.back().unwrap();
        let last = |rs: &[Rr]| -> Vec<String> { rs.iter().map(|r| r.data.to_string()).collect() };
        assert_eq!(last(&change.removed), ["192.0.2.4"]);
        assert_eq!(last(&change.added), ["192.0.2.5", "192.0.2.6"]);
        assert_eq!(h.len(), 5);
    }
}
