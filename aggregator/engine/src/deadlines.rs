//! Cycle deadlines: when a member's open cycle closes even though not every
//! expected location reported. Cycles that share a deadline share a bucket,
//! and a bucket counts its cycles still open. In a healthy mesh every cycle
//! closes early (each location reported), so a deadline passes at the cost
//! of one bucket, not of a visit to every member the cycle opened for: at
//! 100,000 members that visit held the core for 25 ms once a second, and
//! every agent's batch waited behind it.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rustc_hash::FxHashMap;

use super::Timestamp;

/// A member slot and the generation it had when its cycle opened.
pub(super) type Opened = (usize, u32);

/// The deadlines of open cycles, by (deadline, cycle).
#[derive(Debug, Default)]
pub(super) struct Deadlines {
    due: BinaryHeap<Reverse<(Timestamp, u64)>>,
    buckets: FxHashMap<(Timestamp, u64), Bucket>,
}

#[derive(Debug, Default)]
struct Bucket {
    /// Every cycle opened here, closed since or not.
    members: Vec<Opened>,
    /// Of those, how many have not closed.
    open: usize,
}

impl Deadlines {
    /// `cycle` opened for `member` and closes at `deadline` at the latest.
    pub fn opened(&mut self, deadline: Timestamp, cycle: u64, member: Opened) {
        let due = &mut self.due;
        let bucket = self.buckets.entry((deadline, cycle)).or_insert_with(|| {
            due.push(Reverse((deadline, cycle)));
            Bucket::default()
        });
        bucket.members.push(member);
        bucket.open += 1;
    }

    /// A cycle opened with [`Deadlines::opened`] closed before its deadline.
    pub fn closed(&mut self, deadline: Timestamp, cycle: u64) {
        if let Some(bucket) = self.buckets.get_mut(&(deadline, cycle)) {
            bucket.open = bucket.open.saturating_sub(1);
        }
    }

    /// The next bucket due at `now`: its cycle and the members whose cycle
    /// may still be open (none when all closed early). `None`: nothing due.
    pub fn pop_due(&mut self, now: Timestamp) -> Option<(u64, Vec<Opened>)> {
        let &Reverse((deadline, cycle)) = self.due.peek()?;
        if deadline > now {
            return None;
        }
        self.due.pop();
        let bucket = self.buckets.remove(&(deadline, cycle)).unwrap_or_default();
        let mut members = bucket.members;
        if bucket.open == 0 {
            members.clear();
        }
        // In member order, as decisions were always made.
        members.sort_unstable();
        Some((cycle, members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_whose_cycles_all_closed_visits_no_member() {
        let mut d = Deadlines::default();
        let (at, later) = (Timestamp(1_000), Timestamp(2_000));
        d.opened(at, 7, (1, 0));
        d.opened(at, 7, (2, 0));
        d.opened(later, 8, (1, 0));
        d.closed(at, 7);
        assert_eq!(d.pop_due(Timestamp(999)), None, "not due yet");
        assert_eq!(
            d.pop_due(at),
            Some((7, vec![(1, 0), (2, 0)])),
            "one still open"
        );
        assert_eq!(d.pop_due(at), None);
        d.closed(later, 8);
        d.closed(later, 8); // a second close never goes below zero
        assert_eq!(d.pop_due(Timestamp(5_000)), Some((8, vec![])));
        assert_eq!(d.pop_due(Timestamp(5_000)), None);
        d.closed(later, 8); // gone: nothing to count
    }

    #[test]
    fn buckets_come_due_in_deadline_order() {
        let mut d = Deadlines::default();
        d.opened(Timestamp(30), 3, (3, 0));
        d.opened(Timestamp(10), 1, (1, 0));
        d.opened(Timestamp(20), 9, (2, 1));
        let order: Vec<_> = std::iter::from_fn(|| d.pop_due(Timestamp(100))).collect();
        assert_eq!(
            order,
            vec![(1, vec![(1, 0)]), (9, vec![(2, 1)]), (3, vec![(3, 0)])]
        );
    }
}
