//! What the topology shows of each member and pool, derived from the
//! catalog, the published facts and the engine's brief status; and the
//! difference between two such frames, which is what the event stream
//! sends. Pure: no clock, no IO.

use std::collections::HashMap;

use gslb_engine::{MemberBrief, StatusView};
use gslb_shared::selection::{PoolRef, pool_state};
use gslb_shared::{Health, Member, MemberFacts, MemberId};
use serde::Serialize;

use crate::core::control::View;

/// A member node's state: [`MemberState`], which every view shares.
pub use gslb_shared::status::MemberState as State;

/// Its place in [`PoolLive::counts`].
fn count_slot(state: State) -> usize {
    match state {
        State::Healthy => 0,
        State::Warming => 1,
        State::Unhealthy => 2,
        State::Disabled => 3,
        State::Unknown => 4,
    }
}

/// One member node.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberLive {
    /// Member id.
    pub id: u64,
    /// Its state.
    pub state: State,
    /// The node's label: `warming X/N`, `healthy`, `unhealthy`,
    /// `disabled` or `unknown`.
    pub label: String,
    /// Beside `unhealthy`: the closed warm-up gate's `warming X/N`.
    pub gate: Option<String>,
    /// Score over the window, in hundredths (a whole number keeps the
    /// frame comparable and the stream short).
    pub score: Option<u32>,
    /// Held down by flap damping.
    pub suppressed: bool,
    /// An operator set its health by hand.
    pub manual: bool,
}

/// One pool's badges.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PoolLive {
    /// Pool id.
    pub id: u64,
    /// Selection may answer from it.
    pub eligible: bool,
    /// The protection threshold is in force.
    pub protected: bool,
    /// Not eligible: its fail mode decides.
    pub fail_open: bool,
    /// Answers come from backup members.
    pub using_backups: bool,
    /// An operator paused its health decisions.
    pub paused: bool,
    /// Its members by state: healthy, warming, unhealthy, disabled and
    /// unknown (what a collapsed pool shows).
    pub counts: [u32; 5],
}

/// The state of every member and pool at one moment.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Frame {
    /// Members by id.
    pub members: HashMap<u64, MemberLive>,
    /// Pools by id.
    pub pools: HashMap<u64, PoolLive>,
}

/// What changed from one frame to the next.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Changes {
    /// Members whose node changed or that are new.
    pub members: Vec<MemberLive>,
    /// Pools whose badges changed or that are new.
    pub pools: Vec<PoolLive>,
    /// Members gone.
    pub removed_members: Vec<u64>,
    /// Pools gone.
    pub removed_pools: Vec<u64>,
}

impl Changes {
    /// Whether nothing changed.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
            && self.pools.is_empty()
            && self.removed_members.is_empty()
            && self.removed_pools.is_empty()
    }
}

/// A member's node from its catalog entry and its brief status (none
/// before the engine tracks it).
pub fn member_live(member: &Member, brief: Option<&MemberBrief>) -> MemberLive {
    let (health, warming, passes) = brief.map_or((Health::Unknown, false, 0), |b| {
        (b.health, b.warming, b.warmup_passes)
    });
    let threshold = member.warmup_threshold;
    let state = State::of(member.enabled, health, warming);
    MemberLive {
        id: member.id.0,
        state,
        label: state.label(passes, threshold),
        gate: state.gate_mark(warming, passes, threshold),
        score: brief
            .and_then(|b| b.score)
            .map(|s| (s.clamp(0.0, 1.0) * 100.0).round() as u32),
        suppressed: brief.is_some_and(|b| b.suppressed),
        manual: brief.is_some_and(|b| b.manual.is_some()),
    }
}

/// Every member's brief status, read from the engine's view in one tight
/// pass and then let go: ingest copies a member's state only while a view
/// of it is held, so the view is held no longer than this.
pub fn briefs(view: &View, status: StatusView) -> Briefs {
    let briefs = view
        .catalog()
        .members
        .keys()
        .filter_map(|id| Some((*id, status.member_brief(*id)?)))
        .collect();
    drop(status);
    briefs
}

/// Members' brief statuses by id.
pub type Briefs = HashMap<MemberId, MemberBrief>;

/// The frame of `view` with the members' brief statuses taken with it.
/// Costs the catalog's size (one pass over each pool).
pub fn frame(view: &View, briefs: &Briefs) -> Frame {
    let catalog = view.catalog();
    let facts = &view.snapshot().facts;
    let mut out = Frame {
        members: HashMap::with_capacity(catalog.members.len()),
        pools: HashMap::with_capacity(catalog.pools.len()),
    };
    for pool in catalog.pools.values() {
        let members: Vec<Member> = view
            .state()
            .pool_member_ids(pool.id)
            .filter_map(|id| catalog.members.get(&id).cloned())
            .collect();
        let member_facts: Vec<MemberFacts> = members
            .iter()
            .map(|m| facts.get(&m.id).copied().unwrap_or_default())
            .collect();
        let state = pool_state(PoolRef {
            pool,
            members: &members,
            facts: &member_facts,
            resolved: Some(&view.snapshot().resolved),
        });
        let mut counts = [0u32; 5];
        for m in &members {
            let live = member_live(m, briefs.get(&m.id));
            counts[count_slot(live.state)] += 1;
            out.members.insert(m.id.0, live);
        }
        out.pools.insert(
            pool.id.0,
            PoolLive {
                id: pool.id.0,
                eligible: state.eligible,
                protected: state.protected,
                fail_open: state.fail_open,
                using_backups: state.using_backups,
                paused: view.state().hold.holds(pool.id),
                counts,
            },
        );
    }
    out
}

/// What changed from `old` to `new`, members and pools in id order.
pub fn diff(old: &Frame, new: &Frame) -> Changes {
    let mut changes = Changes {
        members: changed(&old.members, &new.members),
        pools: changed(&old.pools, &new.pools),
        removed_members: gone(&old.members, &new.members),
        removed_pools: gone(&old.pools, &new.pools),
    };
    changes.members.sort_by_key(|m| m.id);
    changes.pools.sort_by_key(|p| p.id);
    changes
}

fn changed<V: Clone + PartialEq>(old: &HashMap<u64, V>, new: &HashMap<u64, V>) -> Vec<V> {
    new.iter()
        .filter(|(id, v)| old.get(id) != Some(v))
        .map(|(_, v)| v.clone())
        .collect()
}

fn gone<V>(old: &HashMap<u64, V>, new: &HashMap<u64, V>) -> Vec<u64> {
    let mut ids: Vec<u64> = old
        .keys()
        .filter(|id| !new.contains_key(id))
        .copied()
        .collect();
    ids.sort_unstable();
    ids
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use proptest::prelude::*;

    fn member(enabled: bool, threshold: u32) -> Member {
        let mut m = Member::new(
            MemberId(7),
            gslb_shared::PoolId(1),
            "web",
            std::net::Ipv4Addr::new(192, 0, 2, 1).into(),
            80,
        );
        m.enabled = enabled;
        m.warmup_threshold = threshold;
        m
    }

    fn brief(health: Health, warming: bool, passes: u32) -> MemberBrief {
        MemberBrief {
            health,
            score: Some(0.666),
            warming,
            warmup_passes: passes,
            suppressed: false,
            manual: None,
        }
    }

    #[test]
    fn labels_follow_seed_000() {
        let warming = member_live(&member(true, 3), Some(&brief(Health::Up, true, 2)));
        assert_eq!(
            (warming.state, warming.label.as_str()),
            (State::Warming, "warming 2/3")
        );
        assert_eq!(warming.score, Some(67));
        let up = member_live(&member(true, 3), Some(&brief(Health::Up, false, 3)));
        assert_eq!((up.state, up.label.as_str()), (State::Healthy, "healthy"));
        let down = member_live(&member(true, 0), Some(&brief(Health::Down, false, 0)));
        assert_eq!(
            (down.state, down.label.as_str()),
            (State::Unhealthy, "unhealthy")
        );
        let off = member_live(&member(false, 0), Some(&brief(Health::Up, false, 0)));
        assert_eq!(
            (off.state, off.label.as_str()),
            (State::Disabled, "disabled")
        );
        let new = member_live(&member(true, 0), None);
        assert_eq!((new.state, new.label.as_str()), (State::Unknown, "unknown"));
        let undecided = member_live(&member(true, 0), Some(&brief(Health::Unknown, false, 0)));
        assert_eq!(undecided.state, State::Unknown);
        // Issue 44 item 2: failing everywhere with the gate closed is red
        // `unhealthy`, the gate a secondary mark.
        let failing = member_live(&member(true, 3), Some(&brief(Health::Down, true, 0)));
        assert_eq!(
            (
                failing.state,
                failing.label.as_str(),
                failing.gate.as_deref()
            ),
            (State::Unhealthy, "unhealthy", Some("warming 0/3"))
        );
        assert_eq!(warming.gate, None);
    }

    fn live(id: u64, label: &str) -> MemberLive {
        MemberLive {
            id,
            state: State::Healthy,
            label: label.into(),
            gate: None,
            score: None,
            suppressed: false,
            manual: false,
        }
    }

    proptest! {
        /// Applying the difference to the old frame gives the new one.
        #[test]
        fn a_diff_carries_exactly_what_changed(
            old in proptest::collection::hash_map(0u64..50, 0u8..3, 0..40),
            new in proptest::collection::hash_map(0u64..50, 0u8..3, 0..40),
        ) {
            let to_frame = |m: &HashMap<u64, u8>| Frame {
                members: m.iter().map(|(id, l)| (*id, live(*id, &l.to_string()))).collect(),
                pools: HashMap::new(),
            };
            let (a, b) = (to_frame(&old), to_frame(&new));
            let changes = diff(&a, &b);
            let mut applied = a.clone();
            for id in &changes.removed_members {
                applied.members.remove(id);
            }
            for m in &changes.members {
                applied.members.insert(m.id, m.clone());
            }
            prop_assert_eq!(&applied, &b);
            let unchanged = old.iter().filter(|(id, l)| new.get(id) == Some(l)).count();
            prop_assert_eq!(changes.members.len(), new.len() - unchanged);
            prop_assert_eq!(diff(&b, &b).is_empty(), true);
        }
    }
}
