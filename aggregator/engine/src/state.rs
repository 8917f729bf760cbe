//! Per-check, per-member and per-location state, kept in dense slots so the
//! ingest path is index arithmetic rather than map lookups.

use std::time::Duration;

use gslb_shared::{
    Check, CheckId, FailReason, Health, LocationId, MemberFacts, MemberId, MemberKind, PoolId,
};

use super::Timestamp;
use super::damping::Damping;
use super::locset::LocationSet;
use super::output::{Output, Reason, Transition, WarmupEvent};
use super::score::{Fraction, Mean, mean_f64};
use super::slots::Slots;
use super::warmup::WarmupGate;

/// A connected (or once connected) probe location.
#[derive(Debug, Clone)]
pub(super) struct LocationState {
    pub id: LocationId,
    pub connected: bool,
}

/// A check and what the engine derives from it.
#[derive(Debug, Clone)]
pub(super) struct CheckState {
    pub spec: Check,
    /// Locations assigned to run it (known locations only).
    pub assigned: LocationSet,
    /// Per location slot: the latest cycle heard from it (report, or the
    /// cycle it connected in), for staleness.
    pub last_heard: Vec<u64>,
    /// Locations a cycle waits for: assigned, connected, fresh, not quarantined.
    pub expected: LocationSet,
    /// This check's part of the startup gate.
    pub gate: CheckGate,
}

/// A check's startup gate after a restart: its members' decisions wait
/// for one staleness window of this check after its first fresh result
/// (and after loading), so a slow check holds only its own members.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct CheckGate {
    /// When the first fresh result of this check arrived.
    pub first_fresh: Option<Timestamp>,
    /// Open: its members are decided.
    pub open: bool,
}

impl CheckState {
    pub fn interval(&self) -> Duration {
        self.spec.interval
    }

    /// When cycle `cycle` is closed at the latest.
    pub fn deadline(&self, cycle: u64, grace: Duration) -> Timestamp {
        Timestamp::cycle_start(cycle, self.spec.interval)
            .plus(self.spec.interval + self.spec.timeout + grace)
    }

    /// A location is stale when it has not been heard in the last two cycles.
    pub fn is_stale(&self, slot: usize, current_cycle: u64) -> bool {
        is_stale(&self.last_heard, slot, current_cycle)
    }
}

/// A location (slot in `last_heard`, the latest cycle heard from each) is
/// stale when it has not been heard in the last two cycles.
pub(super) fn is_stale(last_heard: &[u64], slot: usize, current_cycle: u64) -> bool {
    last_heard
        .get(slot)
        .is_none_or(|&heard| heard + 2 < current_cycle)
}

/// The tally of one open cycle.
#[derive(Debug, Clone, Copy)]
pub(super) struct OpenCycle {
    pub cycle: u64,
    /// When it closes at the latest (its bucket in `Deadlines`).
    pub deadline: super::Timestamp,
    pub reported: LocationSet,
    pub passed: LocationSet,
}

/// The latest result of one location for one member.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct LocResult {
    /// 0 = no result yet (cycle 0 is 1970).
    pub cycle: u64,
    pub latency_us: u32,
    pub failure: Option<FailReason>,
    /// When it arrived, in ms after its cycle's scheduled start (saturated):
    /// how old a result is, which the cycle alone does not say. Fits in the
    /// struct's padding.
    pub received_after_ms: u32,
    /// The location's round-trip average for latency steering.
    pub rtt: super::rtt::LocRtt,
}

/// The last `window` pass fractions, kept exact (see [`super::score`]).
#[derive(Debug, Clone, Default)]
pub(super) struct ScoreWindow {
    values: Vec<Fraction>,
    next: usize,
}

impl ScoreWindow {
    pub fn push(&mut self, p: Fraction, window: usize) {
        if self.values.len() > window {
            self.values.clear();
            self.next = 0;
        }
        if self.values.len() < window {
            self.values.push(p);
        } else {
            self.values[self.next] = p;
        }
        self.next = (self.next + 1) % window.max(1);
    }

    /// Mean of the window as a float (for display), or `None` with no data yet.
    pub fn score(&self) -> Option<f64> {
        mean_f64(&self.values)
    }

    /// The window's exact mean (compare it with each threshold: [`Mean::against`]), or `None`
    /// with no data yet.
    pub fn mean(&self) -> Option<Mean> {
        (!self.values.is_empty()).then(|| Mean::of(&self.values))
    }

    pub fn clear(&mut self) {
        self.values.clear();
        self.next = 0;
    }
}

/// Everything the engine knows about a member.
#[derive(Debug, Clone)]
pub(super) struct MemberState {
    pub id: MemberId,
    /// Its pool (operator holds are per pool).
    pub pool: PoolId,
    /// Bumped when the slot is reused so stale deadlines are ignored.
    pub generation: u32,
    /// The pool's check as configured, even before that check is known.
    pub check_id: Option<CheckId>,
    /// The check's slot, once the check is known.
    pub check: Option<usize>,
    pub enabled: bool,
    pub kind: MemberKind,
    pub warmup_threshold: u32,
    pub rewarm_after_down: bool,
    /// Health decided from results or heartbeats.
    pub health: Health,
    pub manual: Option<Health>,
    pub gate: WarmupGate,
    pub scores: ScoreWindow,
    pub last_pass_fraction: Option<f64>,
    pub open: Vec<OpenCycle>,
    pub last_closed: u64,
    pub locs: Vec<LocResult>,
    pub damping: Damping,
    pub last_heartbeat: Timestamp,
    pub since: Timestamp,
    /// The facts last published.
    pub published: Option<MemberFacts>,
    /// Answerable (enabled, up, past its gate) as last published.
    pub in_rotation: bool,
    /// Its pool's slow start.
    pub slow_start: Option<Duration>,
    /// When it entered rotation, while it ramps (the node deciding steps).
    pub ramp_since: Option<Timestamp>,
    /// The slow-start step it is on (published in its facts).
    pub ramp: Option<u8>,
}

impl MemberState {
    /// True when agents' results decide this member's health. A check that
    /// is configured but not loaded yet counts as active: missing config is
    /// never read as "no check".
    pub fn checked(&self, checks: &Slots<CheckState>) -> bool {
        self.checked_with(
            self.check
                .and_then(|c| checks.get(c))
                .map(|c| c.spec.is_active()),
        )
    }

    /// [`MemberState::checked`], given whether its check (when loaded) is active.
    pub fn checked_with(&self, check_active: Option<bool>) -> bool {
        matches!(self.kind, MemberKind::Persistent)
            && self.check_id.is_some()
            && check_active.is_none_or(|active| active)
    }

    /// The health selection sees.
    pub fn effective_health(&self, checked: bool) -> Health {
        match self.kind {
            MemberKind::Ephemeral(_) => self.health,
            MemberKind::Persistent if checked => self.health,
            MemberKind::Persistent => self.manual.unwrap_or(Health::Up),
        }
    }

    /// The facts selection sees.
    pub fn facts(&self, checked: bool) -> MemberFacts {
        MemberFacts {
            health: self.effective_health(checked),
            warming: self.gate.warming(self.warmup_threshold, checked),
            ramp: self.ramp,
        }
    }

    /// In rotation: enabled, up and past its warm-up gate.
    pub fn answerable(&self, facts: MemberFacts) -> bool {
        self.enabled && facts.health == Health::Up && !facts.warming
    }

    /// Leave slow start (full weight, or out of rotation).
    pub fn stop_ramp(&mut self) {
        self.ramp_since = None;
        self.ramp = None;
    }

    /// Take a ramp step restored or replicated, continuing it on this
    /// node's clock.
    pub fn resume_ramp(&mut self, ramp: Option<u8>, now: Timestamp) -> bool {
        match (ramp, self.slow_start) {
            (Some(percent), Some(duration)) => {
                self.ramp = Some(percent);
                self.ramp_since = Some(super::slow_start::since_for(percent, now, duration));
                true
            }
            _ => {
                self.stop_ramp();
                false
            }
        }
    }

    /// Open the warm-up latch when the counter has reached the threshold,
    /// returning the log event.
    pub fn open_gate_if_due(&mut self, now: Timestamp) -> Option<Output> {
        let threshold = self.warmup_threshold;
        if threshold == 0 || self.gate.is_open() || self.gate.passes() < threshold {
            return None;
        }
        self.gate.open();
        Some(self.gate_event(now, WarmupEvent::Opened))
    }

    /// A heartbeat brings an ephemeral member that is not up back up; the
    /// transition to log, if any.
    pub fn revive(&mut self, now: Timestamp) -> Option<Output> {
        if self.health == Health::Up {
            return None;
        }
        let from = std::mem::replace(&mut self.health, Health::Up);
        self.since = now;
        Some(Output::Transition(Transition::without_evidence(
            self.id,
            now,
            from,
            Health::Up,
            Reason::Heartbeat,
        )))
    }

    /// A warm-up log event for this member.
    pub fn gate_event(&self, now: Timestamp, event: WarmupEvent) -> Output {
        Output::Warmup {
            member: self.id,
            at: now,
            event,
            passes: self.gate.passes(),
            threshold: self.warmup_threshold,
        }
    }
}
