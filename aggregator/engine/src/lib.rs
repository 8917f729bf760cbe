//! The health engine (DESIGN.md "Health engine"): a pure state machine.
//!
//! Inputs (probe results, heartbeats, configuration, location connects,
//! manual health, clock ticks) go in through [`Engine::step`] with the
//! current time; decisions come out as [`Output`]s. No sockets, no clock
//! reads, no randomness: the same inputs at the same times give the same
//! outputs, which is what lets a Raft leader run it and followers trust it.

mod catalog_input;
mod config;
mod damping;
mod deadlines;
mod hold;
mod hysteresis;
mod ingest;
mod locset;
mod operator_input;
mod output;
mod quarantine;
pub mod rtt;
pub mod score;
mod slots;
pub mod slow_start;
mod state;
mod status;
mod tick;
mod time;
mod warmup;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use gslb_shared::{
    Check, CheckId, Health, LocationId, Member, MemberId, MemberKind, PoolId, ProbeResult,
};
use rustc_hash::FxHashMap;

pub use config::{EngineConfig, EngineConfigError, QuarantineConfig};
pub use hysteresis::decide;
pub use locset::MAX_LOCATIONS;
pub use output::{Evidence, EvidenceOutcome, Output, Reason, Transition, WarmupEvent};
pub use status::{MemberBrief, MemberStatus, StatusView};
pub use time::Timestamp;

use slots::Slots;
use state::{CheckState, LocationState, MemberState};

/// One input to the engine.
#[derive(Debug, Clone, Copy)]
pub enum Input<'a> {
    /// Stored state has been loaded: start the startup gate. With no stored
    /// state at all (`first_start`), the gate opens at once.
    Restore {
        /// Latched state per member, as last persisted.
        members: &'a [RestoredMember],
        /// True when the store was empty (first start of a deployment).
        first_start: bool,
    },
    /// Decided state replicated from the Raft leader: a follower's engine
    /// takes it as is (and publishes the facts it implies), deciding nothing.
    Replicated(&'a [RestoredMember]),
    /// A check was created or changed.
    UpsertCheck(&'a Check),
    /// A check was deleted.
    RemoveCheck(CheckId),
    /// A member was created or changed, with what it takes from its pool.
    UpsertMember {
        /// The member.
        member: &'a Member,
        /// Its pool's check, if any.
        check: Option<CheckId>,
        /// Its pool's slow start, if any.
        slow_start: Option<Duration>,
    },
    /// A member was deleted.
    RemoveMember(MemberId),
    /// An agent of this location connected.
    LocationConnected(&'a LocationId),
    /// The last agent of this location disconnected.
    LocationDisconnected(&'a LocationId),
    /// A batch of results from one location.
    Results {
        /// Reporting location.
        location: &'a LocationId,
        /// Results.
        results: &'a [ProbeResult],
    },
    /// An ephemeral member's heartbeat.
    Heartbeat(MemberId),
    /// Operator health for a persistent member whose check is `none`
    /// (`None` clears the override).
    ManualHealth {
        /// Member.
        member: MemberId,
        /// The health to force, or none to clear.
        health: Option<Health>,
    },
    /// The pools whose decisions an operator holds (all of them, or these).
    Hold {
        /// Every pool is held.
        all: bool,
        /// Pools held one by one.
        pools: &'a [PoolId],
    },
    /// Time passed: close due cycles, run timers.
    Tick,
}

/// Latched state restored after a restart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestoredMember {
    /// Member.
    pub member: MemberId,
    /// Last decided health.
    pub health: Health,
    /// Whether its warm-up gate had opened.
    pub gate_open: bool,
    /// Manual override, if any.
    pub manual: Option<Health>,
    /// The slow-start step it had reached, if it was ramping.
    pub ramp: Option<u8>,
}

/// An input the engine refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EngineError {
    /// The member does not exist.
    #[error("member {0} does not exist")]
    UnknownMember(MemberId),
    /// The check does not exist.
    #[error("check {0} does not exist")]
    UnknownCheck(CheckId),
    /// Results from a location that is not connected.
    #[error("location {0} is not connected")]
    UnknownLocation(LocationId),
    /// More locations than the engine tracks.
    #[error("at most {MAX_LOCATIONS} locations are supported")]
    TooManyLocations,
    /// Manual health refused: who owns the health instead.
    #[error("manual health for member {member} is refused: {why}")]
    ManualHealthRefused {
        /// Member.
        member: MemberId,
        /// The owner of its health.
        why: &'static str,
    },
    /// A heartbeat for a member that is not ephemeral.
    #[error("member {0} is persistent; heartbeats are only for ephemeral members")]
    NotEphemeral(MemberId),
}

/// Counts of inputs set aside, for metrics.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Results ingested into a cycle.
    pub accepted: u64,
    /// Results for members the engine does not know.
    pub unknown_member: u64,
    /// Results for a check the member no longer has.
    pub stale_check: u64,
    /// Results for cycles already closed.
    pub late: u64,
    /// Results for cycles too far in the future (clock skew).
    pub future: u64,
    /// `invalid-target` results: never counted.
    pub invalid_target: u64,
    /// Member cycles closed (with data or without): what a live status
    /// view waits on, since a closed cycle moves scores, warm-up passes
    /// and the latest results even when no decision changes.
    pub closed: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Startup {
    Loading,
    /// Each check's gate opens on its own ([`state::CheckGate`]); the
    /// engine is open once every check its members use is.
    Waiting {
        loaded: Timestamp,
    },
    Open,
}

/// The health engine. See the module docs.
#[derive(Debug)]
pub struct Engine {
    config: EngineConfig,
    /// Checks and members by slot: a status read copies these in O(1).
    checks: Slots<CheckState>,
    check_slots: FxHashMap<CheckId, usize>,
    members: Slots<MemberState>,
    /// Shared with status reads; copied on a member's add or removal
    /// only while a read holds it.
    member_slots: Arc<FxHashMap<MemberId, usize>>,
    free_member_slots: Vec<usize>,
    locations: Vec<LocationState>,
    location_slots: FxHashMap<LocationId, usize>,
    /// Location lists the published round-trip tables share.
    rtt_locations: gslb_shared::LocationLists,
    /// Per location slot: quarantine tallies and state.
    quarantine: Vec<quarantine::LocationQuarantine>,
    /// The quarantined location slots, kept in step with `quarantine`.
    quarantined: locset::LocationSet,
    /// Cycle deadlines, by bucket of cycles that share one.
    deadlines: deadlines::Deadlines,
    /// Ephemeral members, checked for heartbeat timeouts on every tick.
    ephemeral: BTreeSet<MemberId>,
    /// Members held down by flap damping, checked for release on every tick.
    suppressed: BTreeSet<MemberId>,
    /// Members in slow start, stepped on every tick.
    ramping: BTreeSet<MemberId>,
    /// A Raft follower's mirror: it starts no slow start of its own (the
    /// leader's steps arrive with the replicated state).
    follower: bool,
    /// Pools whose decisions an operator holds.
    hold: hold::Hold,
    startup: Startup,
    next_round: Option<Timestamp>,
    counters: Counters,
    next_generation: u32,
}

impl Engine {
    /// A new engine in the loading state (startup gate closed).
    pub fn new(config: EngineConfig) -> Self {
        Self {
            config,
            checks: Slots::default(),
            check_slots: FxHashMap::default(),
            members: Slots::default(),
            member_slots: Arc::default(),
            free_member_slots: Vec::new(),
            locations: Vec::new(),
            location_slots: FxHashMap::default(),
            quarantine: Vec::new(),
            quarantined: locset::LocationSet::EMPTY,
            deadlines: Default::default(),
            ephemeral: BTreeSet::new(),
            suppressed: BTreeSet::new(),
            ramping: BTreeSet::new(),
            follower: false,
            hold: hold::Hold::default(),
            startup: Startup::Loading,
            next_round: None,
            counters: Counters::default(),
            rtt_locations: Default::default(),
            next_generation: 0,
        }
    }

    /// Apply one input at time `now`, appending decisions to `out`.
    pub fn step(
        &mut self,
        now: Timestamp,
        input: Input<'_>,
        out: &mut Vec<Output>,
    ) -> Result<(), EngineError> {
        match input {
            Input::Restore {
                members,
                first_start,
            } => {
                self.restore(now, members, first_start, out);
                Ok(())
            }
            Input::Replicated(members) => {
                self.replicated(now, members, out);
                Ok(())
            }
            Input::UpsertCheck(check) => {
                self.upsert_check(now, check, out);
                Ok(())
            }
            Input::RemoveCheck(id) => self.remove_check(now, id, out),
            Input::UpsertMember {
                member,
                check,
                slow_start,
            } => {
                self.upsert_member(now, member, check, slow_start, out);
                Ok(())
            }
            Input::RemoveMember(id) => self.remove_member(id),
            Input::LocationConnected(location) => self.location_connected(now, location),
            Input::LocationDisconnected(location) => self.location_disconnected(location),
            Input::Results { location, results } => self.ingest(now, location, results, out),
            Input::Heartbeat(member) => self.heartbeat(now, member, out),
            Input::ManualHealth { member, health } => self.manual_health(now, member, health, out),
            Input::Hold { all, pools } => {
                self.set_hold(now, all, pools, out);
                Ok(())
            }
            Input::Tick => {
                self.tick(now, out);
                Ok(())
            }
        }
    }

    /// Counts of results set aside, and of cycles closed.
    pub fn counters(&self) -> Counters {
        self.counters
    }

    /// True once the startup gate has opened for every member.
    pub fn decisions_enabled(&self) -> bool {
        self.startup == Startup::Open
    }

    /// True when the startup gate lets this member be decided: open for
    /// all, or (while waiting) open for its check. A member with no check
    /// or an inactive one has nothing to wait for; ephemeral members and
    /// members of a check not loaded yet wait for the whole gate.
    pub(crate) fn gate_open_for(&self, slot: usize) -> bool {
        match self.startup {
            Startup::Open => true,
            Startup::Loading => false,
            Startup::Waiting { .. } => self.members.get(slot).is_some_and(|m| {
                if !matches!(m.kind, MemberKind::Persistent) {
                    return false;
                }
                match (m.check_id, m.check.and_then(|c| self.checks.get(c))) {
                    (None, _) => true,
                    (Some(_), Some(c)) => !c.spec.is_active() || c.gate.open,
                    (Some(_), None) => false,
                }
            }),
        }
    }

    /// Mirror a leader (`true`) or decide (`false`): a follower's engine
    /// starts no slow start itself.
    pub fn set_follower(&mut self, follower: bool) {
        self.follower = follower;
    }

    /// The configuration in force.
    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    /// Publish a member's facts if they changed. A member entering
    /// rotation (answerable now, not in what was published) starts its
    /// slow start, if its pool has one and decisions are being made.
    fn publish(&mut self, slot: usize, now: Timestamp, out: &mut Vec<Output>) {
        let decides = self.gate_open_for(slot) && !self.follower;
        let checks = &self.checks;
        let Some(m) = self.members.get_mut(slot) else {
            return;
        };
        let answerable = m.answerable(m.facts(m.checked(checks)));
        if !answerable {
            m.stop_ramp();
            self.ramping.remove(&m.id);
        } else if !m.in_rotation
            && decides
            && let Some(duration) = m.slow_start
        {
            m.ramp_since = Some(now);
            m.ramp = slow_start::percent(now, now, duration);
            self.ramping.insert(m.id);
        }
        self.publish_as_is(slot, out);
    }

    /// Publish a member's facts if they changed, starting nothing: for
    /// state restored or replicated, whose ramp comes with it.
    fn publish_as_is(&mut self, slot: usize, out: &mut Vec<Output>) {
        let checks = &self.checks;
        let Some(m) = self.members.get_mut(slot) else {
            return;
        };
        let facts = m.facts(m.checked(checks));
        m.in_rotation = m.answerable(facts);
        if m.published != Some(facts) {
            m.published = Some(facts);
            out.push(Output::Facts {
                member: m.id,
                facts,
            });
        }
    }
}
