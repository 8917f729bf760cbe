//! Results in, cycles closed: DESIGN.md "Health engine" 1–5.
//!
//! A cycle closes when every expected location has reported, or at its
//! deadline (`interval + timeout + grace` after it opened, see `tick`).
//! Closing computes the raw pass fraction over the reporting, unquarantined
//! locations, feeds the score window and the warm-up gate, and applies the
//! hysteresis.

use gslb_shared::{FailReason, Health, LocationId, MemberKind, ProbeResult, Rtts};

use super::hysteresis::decide;
use super::output::{Evidence, EvidenceOutcome, Output, Reason, Transition, WarmupEvent};
use super::quarantine::record_cycle;
use super::score::Fraction;
use super::state::{LocResult, OpenCycle};
use super::{Engine, EngineError, Startup, Timestamp};

impl Engine {
    pub(super) fn ingest(
        &mut self,
        now: Timestamp,
        location: &LocationId,
        results: &[ProbeResult],
        out: &mut Vec<Output>,
    ) -> Result<(), EngineError> {
        let loc = match self.location_slots.get(location) {
            Some(&slot) if self.locations[slot].connected => slot,
            _ => return Err(EngineError::UnknownLocation(location.clone())),
        };
        for result in results {
            self.ingest_one(now, loc, result, out);
        }
        Ok(())
    }

    fn ingest_one(&mut self, now: Timestamp, loc: usize, r: &ProbeResult, out: &mut Vec<Output>) {
        let Some(&slot) = self.member_slots.get(&r.member) else {
            self.counters.unknown_member += 1;
            return;
        };
        let Some(m) = self.members.get_mut(slot) else {
            return;
        };
        let check_slot = match m.check {
            Some(c)
                if matches!(m.kind, MemberKind::Persistent)
                    && self
                        .checks
                        .get(c)
                        .is_some_and(|c| c.spec.id == r.check && c.spec.is_active()) =>
            {
                c
            }
            _ => {
                self.counters.stale_check += 1;
                return;
            }
        };
        let Some(check) = self.checks.get(check_slot) else {
            return;
        };
        if !check.assigned.contains(loc) {
            // Not this location's assignment (an old one, or a misbehaving agent).
            self.counters.stale_check += 1;
            return;
        }
        if r.cycle > now.cycle(check.interval()) + 1 {
            self.counters.future += 1;
            return;
        }
        // Heard now: no longer stale, from this very result on. Changed
        // once per location and cycle, so the check is taken to change
        // only then (a reader's copy makes taking it cost a copy).
        if check
            .last_heard
            .get(loc)
            .is_some_and(|&heard| heard < r.cycle)
            && let Some(check) = self.checks.get_mut(check_slot)
        {
            check.last_heard[loc] = r.cycle;
        }
        let Some(check) = self.checks.get(check_slot) else {
            return;
        };
        if m.locs.len() <= loc {
            // Sized for every known location at once: growing one location
            // at a time left up to half of each member's vector unused.
            let len = (loc + 1).max(self.locations.len());
            m.locs.reserve_exact(len - m.locs.len());
            m.locs.resize(len, LocResult::default());
        }
        if r.cycle >= m.locs[loc].cycle {
            let l = &mut m.locs[loc];
            l.cycle = r.cycle;
            l.latency_us = r.latency_us;
            l.failure = r.failure;
            let start = gslb_shared::cycle::start(r.cycle, check.interval());
            l.received_after_ms = u32::try_from(now.0.saturating_sub(start)).unwrap_or(u32::MAX);
        }
        if r.failure == Some(FailReason::InvalidTarget) {
            // Never probed: not evidence either way (seed 004).
            self.counters.invalid_target += 1;
            return;
        }
        if r.cycle <= m.last_closed {
            self.counters.late += 1;
            return;
        }
        let index = match m.open.iter().position(|c| c.cycle == r.cycle) {
            Some(index) => index,
            None => {
                let deadline = check.deadline(r.cycle, self.config.cycle_grace);
                (self.deadlines).opened(deadline, r.cycle, (slot, m.generation));
                let at = m.open.partition_point(|c| c.cycle < r.cycle);
                m.open.insert(
                    at,
                    OpenCycle {
                        cycle: r.cycle,
                        deadline,
                        reported: Default::default(),
                        passed: Default::default(),
                    },
                );
                at
            }
        };
        let open = &mut m.open[index];
        open.reported.insert(loc);
        if r.passed() {
            open.passed.insert(loc);
            // A quarantined location is a broken vantage point: its times
            // are not evidence of the path either.
            if r.latency_us > 0 && !self.quarantined.contains(loc) {
                m.locs[loc].rtt.sample(r.cycle, r.latency_us);
            }
        }
        self.counters.accepted += 1;
        let complete = open
            .reported
            .is_superset(&check.expected)
            .then_some(open.cycle);
        // The first fresh result of this check starts its startup window.
        if matches!(self.startup, Startup::Waiting { .. })
            && check.gate.first_fresh.is_none()
            && let Some(check) = self.checks.get_mut(check_slot)
        {
            check.gate.first_fresh = Some(now);
        }
        if let Some(cycle) = complete {
            self.close_through(slot, cycle, now, out);
        }
    }

    /// Close every open cycle of a member up to and including `cycle`, oldest
    /// first (a newer complete cycle makes older missing reports late).
    pub(super) fn close_through(
        &mut self,
        slot: usize,
        cycle: u64,
        now: Timestamp,
        out: &mut Vec<Output>,
    ) {
        loop {
            let Some(m) = self.members.get_mut(slot) else {
                return;
            };
            let Some(first) = m.open.first().copied() else {
                return;
            };
            if first.cycle > cycle {
                return;
            }
            m.open.remove(0);
            m.last_closed = m.last_closed.max(first.cycle);
            self.deadlines.closed(first.deadline, first.cycle);
            self.close_cycle(slot, first, now, out);
        }
    }

    fn close_cycle(&mut self, slot: usize, oc: OpenCycle, now: Timestamp, out: &mut Vec<Output>) {
        self.counters.closed += 1;
        let decisions = self.decides_for(slot);
        let counting = oc.reported.minus(&self.quarantined);
        let Some(m) = self.members.get_mut(slot) else {
            return;
        };
        let Some(check) = m.check.and_then(|c| self.checks.get(c)) else {
            return;
        };
        if self.config.quarantine.enabled {
            record_cycle(
                &mut self.quarantine,
                &oc.reported,
                &oc.passed,
                &counting,
                check.spec.control,
            );
        }
        if counting.is_empty() {
            return; // no data: changes nothing
        }
        // At most MAX_LOCATIONS (256) each: exact in u16.
        let p = Fraction {
            passed: oc.passed.and(&counting).len() as u16,
            of: counting.len() as u16,
        };
        let (rise, window) = (check.spec.rise, check.spec.window as usize);
        m.last_pass_fraction = Some(p.as_f64());
        m.scores.push(p, window);
        m.gate.record(
            p.cmp_threshold(rise) != std::cmp::Ordering::Less,
            m.warmup_threshold,
        );
        if decisions {
            out.extend(m.open_gate_if_due(now));
        }
        if decisions {
            self.apply_score(slot, Some(oc), p.as_f64(), now, out);
        }
        self.publish(slot, now, out);
        if decisions && !self.follower {
            self.publish_rtt(slot, oc.cycle, out);
        }
    }

    /// Publish the member's round-trip times if the close of `cycle`
    /// moved them (see [`crate::rtt`]).
    fn publish_rtt(&mut self, slot: usize, cycle: u64, out: &mut Vec<Output>) {
        let Some(m) = self.members.get_mut(slot) else {
            return;
        };
        let mut changed = false;
        for l in &mut m.locs {
            changed |= l.rtt.settle(cycle);
        }
        if !changed {
            return;
        }
        let mut table: Vec<(&LocationId, u32)> = (m.locs.iter().enumerate())
            .filter_map(|(loc, l)| Some((&self.locations.get(loc)?.id, l.rtt.published()?)))
            .collect();
        table.sort_by(|a, b| a.0.cmp(b.0));
        let locations: Vec<LocationId> = table.iter().map(|(l, _)| (*l).clone()).collect();
        let micros = table.iter().map(|(_, t)| *t).collect();
        let locations = self.rtt_locations.get(&locations);
        // Equal lengths by construction.
        let rtt = Rtts::with_locations(locations, micros).unwrap_or_default();
        out.push(Output::Rtt { member: m.id, rtt });
    }

    /// Run the hysteresis (and damping) on the member's window; log a
    /// transition (`pass_fraction`: the last cycle's, for the log).
    pub(super) fn apply_score(
        &mut self,
        slot: usize,
        oc: Option<OpenCycle>,
        pass_fraction: f64,
        now: Timestamp,
        out: &mut Vec<Output>,
    ) {
        let Some(m) = self.members.get_mut(slot) else {
            return;
        };
        let Some(check) = m.check.and_then(|c| self.checks.get(c)) else {
            return;
        };
        let (rise, fall) = (check.spec.rise, check.spec.fall);
        let (Some(mean), Some(score)) = (m.scores.mean(), m.scores.score()) else {
            return;
        };
        let next = decide(m.health, mean.against(rise), mean.against(fall));
        if next == m.health {
            return;
        }
        if let Some(params) = &check.spec.damping {
            if next == Health::Up && m.damping.suppressed(params, now) {
                self.suppressed.insert(m.id);
                return; // held down until the penalty decays below reuse
            }
            if m.health != Health::Unknown && m.damping.charge(params, now) {
                self.suppressed.insert(m.id);
            }
        }
        let from = m.health;
        m.health = next;
        m.since = now;
        if next == Health::Down && m.rewarm_after_down && m.warmup_threshold > 0 && m.gate.is_open()
        {
            m.gate.restart();
            out.push(m.gate_event(now, WarmupEvent::Restarted));
        }
        let evidence = oc.map(|oc| self.evidence(slot, &oc)).unwrap_or_default();
        let Some(m) = self.members.get(slot) else {
            return;
        };
        out.push(Output::Transition(Transition {
            member: m.id,
            at: now,
            from,
            to: next,
            reason: Reason::Quorum {
                score,
                pass_fraction,
                rise,
                fall,
            },
            cycle: oc.map(|oc| oc.cycle),
            evidence,
        }));
    }

    /// Per-location evidence of one cycle.
    fn evidence(&self, slot: usize, oc: &OpenCycle) -> Vec<Evidence> {
        let Some(m) = self.members.get(slot) else {
            return Vec::new();
        };
        let Some(check) = m.check.and_then(|c| self.checks.get(c)) else {
            return Vec::new();
        };
        check
            .assigned
            .or(&oc.reported)
            .iter()
            .map(|loc| {
                let result = m.locs.get(loc).filter(|r| r.cycle == oc.cycle).copied();
                let passed = oc.passed.contains(loc);
                let outcome = if !oc.reported.contains(loc) {
                    if check.is_stale(loc, oc.cycle) {
                        EvidenceOutcome::Stale
                    } else {
                        EvidenceOutcome::Missing
                    }
                } else if self.quarantined.contains(loc) {
                    EvidenceOutcome::Quarantined { passed }
                } else if passed {
                    EvidenceOutcome::Pass
                } else {
                    EvidenceOutcome::Fail {
                        reason: result.and_then(|r| r.failure).unwrap_or(FailReason::Other),
                    }
                };
                Evidence {
                    location: self.locations[loc].id.clone(),
                    outcome,
                    latency_us: result.map_or(0, |r| r.latency_us),
                }
            })
            .collect()
    }
}
