//! Timers: cycle deadlines, quarantine rounds, staleness, heartbeat
//! timeouts, damping releases and the startup gate.

use std::time::Duration;

use gslb_shared::{Health, MemberKind};

use super::output::{Output, Reason, Transition};
use super::quarantine::QuarantineChange;
use super::{Engine, Startup, Timestamp, slow_start};

impl Engine {
    pub(super) fn tick(&mut self, now: Timestamp, out: &mut Vec<Output>) {
        self.close_due_cycles(now, out);
        self.quarantine_round(now, out);
        self.heartbeat_timeouts(now, out);
        self.damping_releases(now, out);
        self.slow_start_steps(now, out);
        self.startup_gate(now, out);
    }

    /// Move ramping members to their current slow-start step.
    fn slow_start_steps(&mut self, now: Timestamp, out: &mut Vec<Output>) {
        let ids: Vec<_> = self.ramping.iter().copied().collect();
        for id in ids {
            let Some(&slot) = self.member_slots.get(&id) else {
                self.ramping.remove(&id);
                continue;
            };
            if self.held(slot) {
                continue; // the answers an operator froze stay as they are
            }
            let Some(m) = self.members.get_mut(slot) else {
                continue;
            };
            let step = match (m.ramp_since, m.slow_start) {
                (Some(since), Some(duration)) => slow_start::percent(since, now, duration),
                _ => None,
            };
            if step == m.ramp {
                continue;
            }
            m.ramp = step;
            if step.is_none() {
                m.stop_ramp();
                self.ramping.remove(&id);
            }
            self.publish_as_is(slot, out);
        }
    }

    fn close_due_cycles(&mut self, now: Timestamp, out: &mut Vec<Output>) {
        while let Some((cycle, members)) = self.deadlines.pop_due(now) {
            for (slot, generation) in members {
                let live = (self.members.get(slot)).is_some_and(|m| m.generation == generation);
                if live {
                    self.close_through(slot, cycle, now, out);
                }
            }
        }
    }

    fn quarantine_round(&mut self, now: Timestamp, out: &mut Vec<Output>) {
        let cfg = self.config.quarantine;
        if !cfg.enabled {
            return;
        }
        let due = *self.next_round.get_or_insert(now.plus(cfg.round));
        if now < due {
            return;
        }
        self.next_round = Some(now.plus(cfg.round));
        for slot in 0..self.quarantine.len() {
            let Some(change) = self.quarantine[slot].end_round(&cfg) else {
                continue;
            };
            let quarantined = change == QuarantineChange::Entered;
            if quarantined {
                self.quarantined.insert(slot);
            } else {
                self.quarantined.remove(slot);
            }
            out.push(Output::Quarantine {
                location: self.locations[slot].id.clone(),
                at: now,
                quarantined,
            });
        }
    }

    fn heartbeat_timeouts(&mut self, now: Timestamp, out: &mut Vec<Output>) {
        let ids: Vec<_> = self.ephemeral.iter().copied().collect();
        for id in ids {
            let Some(&slot) = self.member_slots.get(&id) else {
                continue;
            };
            if self.held(slot) {
                continue; // no timeout and no expiry while an operator holds it
            }
            let Some(m) = self.members.get_mut(slot) else {
                continue;
            };
            let MemberKind::Ephemeral(policy) = m.kind else {
                continue;
            };
            let silent = now.since(m.last_heartbeat);
            if policy.expire && silent >= policy.delete_timeout {
                out.push(Output::Expired {
                    member: id,
                    at: now,
                });
                let _ = self.remove_member(id);
                continue;
            }
            if silent >= policy.heartbeat_timeout && m.health != Health::Down {
                out.push(Output::Transition(Transition::without_evidence(
                    id,
                    now,
                    m.health,
                    Health::Down,
                    Reason::HeartbeatTimeout {
                        silent_ms: silent.as_millis() as u64,
                    },
                )));
                m.health = Health::Down;
                m.since = now;
                self.publish(slot, now, out);
            }
        }
    }

    fn damping_releases(&mut self, now: Timestamp, out: &mut Vec<Output>) {
        let ids: Vec<_> = self.suppressed.iter().copied().collect();
        for id in ids {
            let Some(&slot) = self.member_slots.get(&id) else {
                continue;
            };
            let decisions = self.gate_open_for(slot);
            if self.held(slot) {
                continue; // still suppressed; released once the hold is lifted
            }
            let Some(m) = self.members.get_mut(slot) else {
                continue;
            };
            let Some(check) = m.check.and_then(|c| self.checks.get(c)) else {
                continue;
            };
            let Some(params) = check.spec.damping else {
                continue;
            };
            if m.damping.suppressed(&params, now) {
                continue;
            }
            self.suppressed.remove(&id);
            let rise = check.spec.rise;
            if decisions
                && m.health == Health::Down
                && m.scores
                    .mean()
                    .is_some_and(|x| x.against(rise) != std::cmp::Ordering::Less)
                && let Some(score) = m.scores.score()
            {
                out.push(Output::Transition(Transition::without_evidence(
                    id,
                    now,
                    Health::Down,
                    Health::Up,
                    Reason::DampingReleased { score },
                )));
                m.health = Health::Up;
                m.since = now;
                self.publish(slot, now, out);
            }
        }
    }

    /// The startup window: explicit, or two intervals plus timeout and grace
    /// of the slowest active check (each check's own gate uses its own:
    /// [`Engine::check_window`]).
    pub fn startup_window(&self) -> Duration {
        self.config.startup_window.unwrap_or_else(|| {
            self.checks
                .iter()
                .filter(|c| c.spec.is_active())
                .map(|c| c.spec.interval * 2 + c.spec.timeout + self.config.cycle_grace)
                .max()
                .unwrap_or_default()
        })
    }

    /// One check's startup window: explicit, or two of its intervals plus
    /// its timeout and the grace.
    fn check_window(&self, spec: &gslb_shared::Check) -> Duration {
        self.config
            .startup_window
            .unwrap_or(spec.interval * 2 + spec.timeout + self.config.cycle_grace)
    }

    /// Open each check's gate once one window has passed since loading and
    /// since its first fresh result, deciding its members; the engine's
    /// gate opens when every check its persistent members use is open.
    fn startup_gate(&mut self, now: Timestamp, out: &mut Vec<Output>) {
        let Startup::Waiting { loaded } = self.startup else {
            return;
        };
        let mut opened = Vec::new();
        for c in 0..self.checks.len() {
            let Some(check) = self.checks.get(c) else {
                continue;
            };
            if !check.spec.is_active() || check.gate.open {
                continue;
            }
            let Some(first) = check.gate.first_fresh else {
                continue;
            };
            let window = self.check_window(&check.spec);
            if now >= first.plus(window) && now >= loaded.plus(window) {
                opened.push(c);
            }
        }
        // Who could be decided before: only the newly let through are
        // decided now (an O(members) pass, only while the gate waits).
        let before: Vec<bool> = (0..self.members.len())
            .map(|slot| self.gate_open_for(slot))
            .collect();
        for &c in &opened {
            if let Some(check) = self.checks.get_mut(c) {
                check.gate.open = true;
            }
        }
        // Every check a persistent member waits on is open (an unused or
        // inactive check waits on nothing): the whole gate opens.
        let all_open = (0..self.members.len()).all(|slot| {
            self.members.get(slot).is_none_or(|m| {
                !matches!(m.kind, gslb_shared::MemberKind::Persistent) || self.gate_open_for(slot)
            })
        });
        if all_open {
            self.startup = Startup::Open;
            out.push(Output::StartupGateOpened { at: now });
        } else if opened.is_empty() {
            return;
        }
        let decide: Vec<usize> = (0..self.members.len())
            .filter(|&slot| !before[slot] && self.gate_open_for(slot))
            .collect();
        for slot in decide {
            if self.held(slot) {
                continue; // decided when its hold is lifted
            }
            let Some(m) = self.members.get_mut(slot) else {
                continue;
            };
            out.extend(m.open_gate_if_due(now));
            if let Some(p) = m.last_pass_fraction {
                self.apply_score(slot, None, p, now, out);
            }
            self.publish(slot, now, out);
        }
    }
}
