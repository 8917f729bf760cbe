//! Read-only views of engine state for status APIs.

use std::sync::Arc;
use std::time::Duration;

use gslb_shared::{FailReason, Health, LocationId, MemberId};
use rustc_hash::FxHashMap;
use serde::Serialize;

use super::locset::LocationSet;
use super::state::{MemberState, is_stale};
use super::{Engine, Timestamp};

/// A member's health as the status endpoints show it (seed 000 fields).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct MemberStatus {
    /// Member.
    pub member: MemberId,
    /// Effective health (what selection sees).
    pub health: Health,
    /// Manual override, if any.
    pub manual: Option<Health>,
    /// Mean pass fraction over the score window.
    pub score: Option<f64>,
    /// Pass fraction of the last closed cycle.
    pub last_pass_fraction: Option<f64>,
    /// Held back by the warm-up gate.
    pub warming: bool,
    /// Consecutive passing cycles.
    pub warmup_passes: u32,
    /// Configured threshold.
    pub warmup_threshold: u32,
    /// Held down by flap damping.
    pub suppressed: bool,
    /// When the health last changed.
    pub since: Timestamp,
    /// Latest result per location.
    pub locations: Vec<LocationStatus>,
}

/// One location's latest result for a member.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct LocationStatus {
    /// Location.
    pub location: LocationId,
    /// Cycle of the result.
    pub cycle: u64,
    /// Passed.
    pub passed: bool,
    /// Failure reason.
    pub failure: Option<FailReason>,
    /// Latency.
    pub latency_us: u32,
    /// Not heard for two cycles.
    pub stale: bool,
    /// Location quarantined.
    pub quarantined: bool,
}

/// What the status of some members needs from the engine, taken while the
/// core is held (a pointer per member, a copy of each check's staleness
/// clock) and rendered after it is let go: ingest then copies a member only
/// if it changes while the view is still held.
#[derive(Debug, Clone, Default)]
pub struct StatusView {
    /// In id order (a pool's members arrive in it; others are sorted).
    members: Vec<(MemberId, Arc<MemberState>)>,
    /// Per check slot the view's members use: (interval, active, last heard per location).
    checks: FxHashMap<usize, (Duration, bool, Vec<u64>)>,
    locations: Vec<LocationId>,
    quarantined: LocationSet,
}

impl StatusView {
    /// Status of one member of the view at `now`.
    pub fn member_status(&self, id: MemberId, now: Timestamp) -> Option<MemberStatus> {
        let at = self.members.binary_search_by_key(&id, |(id, _)| *id).ok()?;
        let m = &self.members[at].1;
        let check = m.check.and_then(|c| self.checks.get(&c));
        let checked = m.checked_with(check.map(|(_, active, _)| *active));
        let facts = m.facts(checked);
        let locations = m
            .locs
            .iter()
            .enumerate()
            .filter(|(_, r)| r.cycle != 0)
            .map(|(slot, r)| LocationStatus {
                location: self.locations[slot].clone(),
                cycle: r.cycle,
                passed: r.failure.is_none(),
                failure: r.failure,
                latency_us: r.latency_us,
                stale: check.is_some_and(|(interval, _, heard)| {
                    is_stale(heard, slot, now.cycle(*interval))
                }),
                quarantined: self.quarantined.contains(slot),
            })
            .collect();
        Some(MemberStatus {
            member: id,
            health: facts.health,
            manual: m.manual,
            score: m.scores.score(),
            last_pass_fraction: m.last_pass_fraction,
            warming: facts.warming,
            warmup_passes: m.gate.passes(),
            warmup_threshold: m.warmup_threshold,
            suppressed: m.damping.is_suppressed(),
            since: m.since,
            locations,
        })
    }
}

impl Engine {
    /// The state the status of `ids` needs (unknown ids are left out):
    /// costs a pointer per member and a copy per distinct check.
    pub fn status_view(&self, ids: impl IntoIterator<Item = MemberId>) -> StatusView {
        let mut view = StatusView {
            locations: self.locations.iter().map(|l| l.id.clone()).collect(),
            quarantined: self.quarantined,
            ..StatusView::default()
        };
        for id in ids {
            let Some(m) = self
                .member_slots
                .get(&id)
                .and_then(|s| self.members[*s].as_ref())
            else {
                continue;
            };
            if let Some(slot) = m.check
                && let Some(c) = self.checks[slot].as_ref()
            {
                view.checks
                    .entry(slot)
                    .or_insert_with(|| (c.interval(), c.spec.is_active(), c.last_heard.clone()));
            }
            view.members.push((id, m.clone()));
        }
        if !view.members.is_sorted_by_key(|(id, _)| *id) {
            view.members.sort_unstable_by_key(|(id, _)| *id);
        }
        view
    }

    /// Status of one member at `now`.
    pub fn member_status(&self, id: MemberId, now: Timestamp) -> Option<MemberStatus> {
        self.status_view([id]).member_status(id, now)
    }

    /// Locations currently set aside.
    pub fn quarantined_locations(&self) -> Vec<LocationId> {
        self.quarantined
            .iter()
            .map(|slot| self.locations[slot].id.clone())
            .collect()
    }

    /// Number of members tracked.
    pub fn member_count(&self) -> usize {
        self.member_slots.len()
    }
}
