//! The snapshot feed's core: the current [`Snapshot`] and a bounded window
//! of [`Delta`]s, so an edge holding version `v` receives only what changed
//! after `v`, or the full snapshot when `v` has left the window (or is ahead
//! of ours, which means this aggregator lost state and the edge must resync).
//!
//! Pure: the service decides when to publish and how to send.

use std::collections::VecDeque;
use std::sync::Arc;

use gslb_shared::{Catalog, Delta, MemberFacts, MemberId, Snapshot};

use crate::core::catalog::{Change, Object, ObjectRef, Written};

/// What a subscriber holding some version should receive.
#[derive(Debug, Clone, PartialEq)]
pub enum Catchup {
    /// Nothing new.
    UpToDate,
    /// These deltas, in order.
    Deltas(Vec<Arc<Delta>>),
    /// The whole snapshot.
    Full(Arc<Snapshot>),
}

/// The current snapshot and the retained deltas. Deltas are applied to the
/// snapshot in place (cost of the delta, not of the catalog); the shared
/// full snapshot a resyncing edge needs is built only when one asks.
#[derive(Debug)]
pub struct Feed {
    current: Snapshot,
    /// The last full snapshot handed out, until the next publish.
    full: std::sync::Mutex<Option<Arc<Snapshot>>>,
    window: VecDeque<Arc<Delta>>,
    /// Rows the window holds ([`Delta::rows`]).
    window_rows: usize,
    retain: usize,
}

/// The window may always hold this many rows, however small the snapshot.
pub const WINDOW_MIN_ROWS: usize = 4_096;

/// Build the delta for catalog changes and facts (checks are left out:
/// edges do not need them). Base and version are set by [`Feed::publish`].
pub fn delta_of(
    changes: &[Change],
    facts: &[(MemberId, MemberFacts)],
    published_at_ms: u64,
) -> Delta {
    let mut d = Delta {
        published_at_ms,
        facts: facts.to_vec(),
        ..Delta::default()
    };
    for change in changes {
        match &change.what {
            Written::Upserted(object) => match object.as_ref() {
                Object::Zone(z) => d.zones.push(z.clone()),
                Object::Record(r) => d.records.push(r.clone()),
                Object::Pool(p) => d.pools.push(p.clone()),
                Object::Member(m) => d.members.push(m.clone()),
                Object::TsigKey(k) => d.tsig_keys.push(k.clone()),
                Object::Check(_) | Object::Notifier(_) => {}
            },
            Written::Deleted(r) => match *r {
                ObjectRef::Zone(id) => d.removed_zones.push(id),
                ObjectRef::Record(id) => d.removed_records.push(id),
                ObjectRef::Pool(id) => d.removed_pools.push(id),
                ObjectRef::Member(id) => d.removed_members.push(id),
                ObjectRef::TsigKey(id) => d.removed_tsig_keys.push(id),
                ObjectRef::Check(_) | ObjectRef::Notifier(_) => {}
            },
        }
    }
    d
}

impl Feed {
    /// A feed starting at `snapshot`, keeping at most `retain` deltas, and
    /// no more rows than the snapshot holds (or [`WINDOW_MIN_ROWS`]): an
    /// edge further behind costs less to send the whole snapshot, and old
    /// facts and round-trip tables kept for catching up never cost more
    /// than one generation of every member's.
    pub fn new(snapshot: Snapshot, retain: usize) -> Self {
        Self {
            current: snapshot,
            full: std::sync::Mutex::new(None),
            window: VecDeque::new(),
            window_rows: 0,
            retain: retain.max(1),
        }
    }

    /// The current snapshot, borrowed.
    pub fn snapshot(&self) -> &Snapshot {
        &self.current
    }

    /// The current snapshot, shared (built once per version, on demand).
    pub fn current(&self) -> Arc<Snapshot> {
        let mut full = self.full.lock().unwrap_or_else(|p| p.into_inner());
        full.get_or_insert_with(|| Arc::new(self.current.clone()))
            .clone()
    }

    /// The current version.
    pub fn version(&self) -> u64 {
        self.current.version
    }

    /// Publish `delta` as `version` (which must be newer than the current
    /// one; an older one is ignored).
    pub fn publish(&mut self, delta: Delta, version: u64) {
        self.publish_with(delta, version, None);
    }

    /// Publish `delta` as `version`, the snapshot taking `catalog` (the
    /// control core's, after `delta`) without its checks: shared node for
    /// node, so the feed holds no second copy of every member.
    pub fn publish_over(&mut self, delta: Delta, version: u64, catalog: &Catalog) {
        self.publish_with(delta, version, Some(catalog));
    }

    fn publish_with(&mut self, mut delta: Delta, version: u64, catalog: Option<&Catalog>) {
        if version <= self.current.version {
            return;
        }
        delta.base_version = self.current.version;
        delta.version = version;
        let advanced = match catalog {
            None => self.current.apply(&delta),
            Some(catalog) => {
                let mut shared = catalog.clone();
                shared.checks.clear();
                shared.notifiers.clear();
                #[cfg(debug_assertions)]
                {
                    let mut applied = self.current.clone();
                    let _ = applied.apply(&delta);
                    debug_assert!(
                        applied.catalog == shared,
                        "the feed's catalog is the core's without its checks and notification targets"
                    );
                }
                self.current.advance(&delta, shared)
            }
        };
        if advanced.is_err() {
            return; // unreachable: base and version were just set
        }
        *self.full.get_mut().unwrap_or_else(|p| p.into_inner()) = None;
        self.window_rows += delta.rows();
        self.window.push_back(Arc::new(delta));
        let rows = self.current.rows().max(WINDOW_MIN_ROWS);
        while self.window.len() > self.retain || (self.window_rows > rows && self.window.len() > 1)
        {
            if let Some(old) = self.window.pop_front() {
                self.window_rows -= old.rows();
            }
        }
    }

    /// When `version` was published, if it is the current one or in the window.
    pub fn published_at(&self, version: u64) -> Option<u64> {
        if version == self.current.version {
            return Some(self.current.published_at_ms);
        }
        self.window
            .iter()
            .find(|d| d.version == version)
            .map(|d| d.published_at_ms)
    }

    /// What a subscriber holding `held` needs.
    pub fn since(&self, held: u64) -> Catchup {
        if held == self.current.version {
            return Catchup::UpToDate;
        }
        if held == 0 || held > self.current.version {
            return Catchup::Full(self.current());
        }
        match self.window.iter().position(|d| d.base_version == held) {
            Some(start) => Catchup::Deltas(self.window.iter().skip(start).cloned().collect()),
            None => Catchup::Full(self.current()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gslb_shared::{Health, Member, Pool, PoolId};

    fn upsert(version: u64, object: Object) -> Change {
        Change {
            version,
            what: Written::Upserted(Box::new(object)),
        }
    }

    fn feed() -> Feed {
        let mut f = Feed::new(Snapshot::default(), 3);
        f.publish(
            delta_of(
                &[upsert(1, Object::Pool(Pool::new(PoolId(1), "p")))],
                &[],
                10,
            ),
            1,
        );
        let m = Member::new(
            MemberId(5),
            PoolId(1),
            "m",
            "192.0.2.1".parse().unwrap(),
            80,
        );
        f.publish(
            delta_of(
                &[upsert(2, Object::Member(m))],
                &[(MemberId(5), MemberFacts::UP)],
                20,
            ),
            2,
        );
        f
    }

    #[test]
    fn publishing_updates_the_snapshot_and_chains_base_versions() {
        let f = feed();
        let s = f.current();
        assert_eq!((s.version, s.published_at_ms), (2, 20));
        assert_eq!(s.facts[&MemberId(5)].health, Health::Up);
        let Catchup::Deltas(d) = f.since(1) else {
            panic!()
        };
        assert_eq!((d.len(), d[0].base_version, d[0].version), (1, 1, 2));
    }

    #[test]
    fn an_up_to_date_subscriber_gets_nothing() {
        assert_eq!(feed().since(2), Catchup::UpToDate);
    }

    #[test]
    fn outside_the_window_ahead_or_empty_gets_the_full_snapshot() {
        let mut f = feed();
        for v in 3..=6 {
            f.publish(delta_of(&[], &[(MemberId(5), MemberFacts::DOWN)], v), v);
        }
        assert!(
            matches!(f.since(1), Catchup::Full(s) if s.version == 6),
            "left the window"
        );
        assert!(matches!(f.since(99), Catchup::Full(_)), "ahead of us");
        assert!(matches!(f.since(0), Catchup::Full(_)));
        assert!(matches!(f.since(4), Catchup::Deltas(d) if d.len() == 2));
    }

    #[test]
    fn the_window_holds_no_more_rows_than_the_snapshot() {
        let mut f = feed();
        let n = WINDOW_MIN_ROWS as u64;
        let ids = 1_000..1_000 + n;
        let members: Vec<_> = (ids.clone())
            .map(|m| {
                let address = "192.0.2.1".parse().unwrap();
                upsert(
                    3,
                    Object::Member(Member::new(MemberId(m), PoolId(1), "m", address, 80)),
                )
            })
            .collect();
        let all = |health: MemberFacts| -> Vec<_> {
            ids.clone().map(|m| (MemberId(m), health)).collect()
        };
        f.publish(delta_of(&members, &all(MemberFacts::UP), 30), 3);
        let rows = f.current().rows();
        assert!(rows > WINDOW_MIN_ROWS, "{rows}");
        f.publish(delta_of(&[], &all(MemberFacts::DOWN), 40), 4);
        assert!(
            matches!(f.since(2), Catchup::Full(s) if s.version == 4),
            "two generations of every member's facts are more than the snapshot"
        );
        assert!(matches!(f.since(3), Catchup::Deltas(d) if d.len() == 1));
        for v in 5..=7 {
            f.publish(delta_of(&[], &[(MemberId(5), MemberFacts::UP)], v), v);
        }
        assert!(
            matches!(f.since(4), Catchup::Deltas(d) if d.len() == 3),
            "small deltas stay while the count allows"
        );
    }

    #[test]
    fn checks_never_reach_edges_and_stale_versions_are_ignored() {
        let mut f = feed();
        let check = gslb_shared::Check::new(gslb_shared::CheckId(9), "c", gslb_shared::Probe::Icmp);
        let d = delta_of(&[upsert(3, Object::Check(check))], &[], 30);
        assert!(d.is_empty());
        f.publish(d.clone(), 2);
        assert_eq!(f.version(), 2, "an old version is not published");
        f.publish(d, 3);
        assert!(f.current().catalog.checks.is_empty());
    }
}
