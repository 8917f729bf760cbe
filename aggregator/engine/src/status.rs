//! Read-only views of engine state for status APIs.

use std::sync::Arc;

use gslb_shared::status::LocationStatusView;
use gslb_shared::{Health, LocationId, MemberId};
use rustc_hash::FxHashMap;
use serde::Serialize;

use super::locset::LocationSet;
use super::slots::Slots;
use super::state::{CheckState, MemberState};
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
    /// In slow start: the percent of its weight it takes now.
    pub ramp: Option<u8>,
    /// When the health last changed.
    pub since: Timestamp,
    /// Latest result per location.
    pub locations: Vec<LocationStatusView>,
}

/// What status reads need from the engine, taken on the core in O(1) of
/// the members (an `Arc` per 256 slots; see [`super::slots`]) and read
/// after it is let go: ingest then copies a member only if it changes
/// while the view is still held.
#[derive(Debug, Clone, Default)]
pub struct StatusView {
    members: Slots<MemberState>,
    member_slots: Arc<FxHashMap<MemberId, usize>>,
    checks: Slots<CheckState>,
    locations: Vec<LocationId>,
    quarantined: LocationSet,
}

/// The part of a member's status a live view shows on its node: no
/// per-location results, so a whole catalog of them is cheap to take.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemberBrief {
    /// Effective health.
    pub health: Health,
    /// Mean pass fraction over the score window.
    pub score: Option<f64>,
    /// Held back by the warm-up gate.
    pub warming: bool,
    /// Consecutive passing cycles.
    pub warmup_passes: u32,
    /// Held down by flap damping.
    pub suppressed: bool,
    /// Manual override, if any.
    pub manual: Option<Health>,
}

impl StatusView {
    /// The brief status of one member of the view.
    pub fn member_brief(&self, id: MemberId) -> Option<MemberBrief> {
        let m = self.members.get(*self.member_slots.get(&id)?)?;
        let check = m.check.and_then(|c| self.checks.get(c));
        let facts = m.facts(m.checked_with(check.map(|c| c.spec.is_active())));
        Some(MemberBrief {
            health: facts.health,
            score: m.scores.score(),
            warming: facts.warming,
            warmup_passes: m.gate.passes(),
            suppressed: m.damping.is_suppressed(),
            manual: m.manual,
        })
    }

    /// Status of one member of the view at `now`.
    pub fn member_status(&self, id: MemberId, now: Timestamp) -> Option<MemberStatus> {
        let m = self.members.get(*self.member_slots.get(&id)?)?;
        let check = m.check.and_then(|c| self.checks.get(c));
        Some(status_of(
            m,
            check,
            |slot| &self.locations[slot],
            self.quarantined,
            now,
        ))
    }
}

/// A member's status from its state and its check's; `location` names a
/// location slot.
fn status_of<'a>(
    m: &MemberState,
    check: Option<&CheckState>,
    location: impl Fn(usize) -> &'a LocationId,
    quarantined: LocationSet,
    now: Timestamp,
) -> MemberStatus {
    let checked = m.checked_with(check.map(|c| c.spec.is_active()));
    let facts = m.facts(checked);
    let locations = m
        .locs
        .iter()
        .enumerate()
        .filter(|(_, r)| r.cycle != 0)
        .map(|(slot, r)| LocationStatusView {
            location: location(slot).to_string(),
            cycle: r.cycle,
            passed: r.failure.is_none(),
            failure: r.failure,
            latency_us: r.latency_us,
            received_ms: check.map(|c| {
                gslb_shared::cycle::start(r.cycle, c.interval()) + u64::from(r.received_after_ms)
            }),
            rtt_us: r.rtt.published(),
            stale: check.is_some_and(|c| c.is_stale(slot, now.cycle(c.interval()))),
            quarantined: quarantined.contains(slot),
        })
        .collect();
    MemberStatus {
        member: m.id,
        health: facts.health,
        manual: m.manual,
        score: m.scores.score(),
        last_pass_fraction: m.last_pass_fraction,
        warming: facts.warming,
        warmup_passes: m.gate.passes(),
        warmup_threshold: m.warmup_threshold,
        suppressed: m.damping.is_suppressed(),
        ramp: facts.ramp,
        since: m.since,
        locations,
    }
}

impl Engine {
    /// What status reads need, as of now: O(1) of the members.
    pub fn status_view(&self) -> StatusView {
        StatusView {
            members: self.members.clone(),
            member_slots: Arc::clone(&self.member_slots),
            checks: self.checks.clone(),
            locations: self.locations.iter().map(|l| l.id.clone()).collect(),
            quarantined: self.quarantined,
        }
    }

    /// Status of one member at `now`.
    pub fn member_status(&self, id: MemberId, now: Timestamp) -> Option<MemberStatus> {
        let m = self.members.get(*self.member_slots.get(&id)?)?;
        let check = m.check.and_then(|c| self.checks.get(c));
        Some(status_of(
            m,
            check,
            |slot| &self.locations[slot].id,
            self.quarantined,
            now,
        ))
    }

    /// Locations currently set aside.
    pub fn quarantined_locations(&self) -> Vec<LocationId> {
        self.quarantined
            .iter()
            .map(|slot| self.locations[slot].id.clone())
            .collect()
    }

    /// Every location known, and whether it is set aside.
    pub fn location_quarantine(&self) -> Vec<(LocationId, bool)> {
        (self.locations.iter().enumerate())
            .map(|(slot, l)| (l.id.clone(), self.quarantined.contains(slot)))
            .collect()
    }

    /// Number of members tracked.
    pub fn member_count(&self) -> usize {
        self.member_slots.len()
    }
}
