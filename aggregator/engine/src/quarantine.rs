//! Location quarantine (DESIGN.md "Health engine" 7): a vantage point that
//! fails its control checks, or fails at least half of its checks while the
//! other fresh locations fail at most 10% of the same ones, is set aside
//! until it has had `cleanRounds` clean rounds.

use super::config::QuarantineConfig;
use super::locset::LocationSet;

/// Per-location tallies for the current round.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Tally {
    samples: u32,
    fails: u32,
    others_reports: u64,
    others_fails: u64,
    control_failed: bool,
}

/// Per-location quarantine state.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LocationQuarantine {
    tally: Tally,
    quarantined: bool,
    clean: u32,
}

/// A change of quarantine state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuarantineChange {
    /// The location is now set aside.
    Entered,
    /// The location counts again.
    Released,
}

impl LocationQuarantine {
    /// End the round: decide, reset the tally when a verdict was reached.
    pub fn end_round(&mut self, cfg: &QuarantineConfig) -> Option<QuarantineChange> {
        let t = self.tally;
        let enough = t.samples >= cfg.min_samples;
        if !enough && !t.control_failed {
            return None; // carry the tally into the next round
        }
        let own = f64::from(t.fails) / f64::from(t.samples.max(1));
        let others = if t.others_reports == 0 {
            1.0
        } else {
            t.others_fails as f64 / t.others_reports as f64
        };
        let bad = t.control_failed
            || (enough && own >= cfg.location_fail && others <= cfg.others_fail_max);
        self.tally = Tally::default();
        match (self.quarantined, bad) {
            (false, true) => {
                self.quarantined = true;
                self.clean = 0;
                Some(QuarantineChange::Entered)
            }
            (true, true) => {
                self.clean = 0;
                None
            }
            (true, false) => {
                self.clean += 1;
                if self.clean >= cfg.clean_rounds {
                    self.quarantined = false;
                    self.clean = 0;
                    Some(QuarantineChange::Released)
                } else {
                    None
                }
            }
            (false, false) => None,
        }
    }
}

/// Add one closed member-cycle to the tallies of the locations that reported.
/// `others` are the reporters that count (not quarantined).
pub fn record_cycle(
    states: &mut [LocationQuarantine],
    reported: &LocationSet,
    passed: &LocationSet,
    counting: &LocationSet,
    control: bool,
) {
    let counting_reports = counting.len() as u64;
    let counting_fails = counting.minus(passed).len() as u64;
    for slot in reported.iter() {
        let Some(state) = states.get_mut(slot) else {
            continue;
        };
        let failed = !passed.contains(slot);
        let (others_reports, others_fails) = if counting.contains(slot) {
            (counting_reports - 1, counting_fails - u64::from(failed))
        } else {
            (counting_reports, counting_fails)
        };
        let t = &mut state.tally;
        t.samples += 1;
        t.fails += u32::from(failed);
        t.others_reports += others_reports;
        t.others_fails += others_fails;
        t.control_failed |= control && failed;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(slots: &[usize]) -> LocationSet {
        let mut s = LocationSet::EMPTY;
        for &x in slots {
            s.insert(x);
        }
        s
    }

    #[test]
    fn a_location_failing_alone_is_quarantined_and_released_after_clean_rounds() {
        let cfg = QuarantineConfig::default();
        let mut states = vec![LocationQuarantine::default(); 5];
        let all = set(&[0, 1, 2, 3, 4]);
        for _ in 0..5 {
            record_cycle(&mut states, &all, &set(&[1, 2, 3, 4]), &all, false);
        }
        assert_eq!(states[0].end_round(&cfg), Some(QuarantineChange::Entered));
        assert_eq!(states[1].end_round(&cfg), None);
        for round in 1..=3 {
            for _ in 0..5 {
                record_cycle(&mut states, &all, &all, &set(&[1, 2, 3, 4]), false);
            }
            let change = states[0].end_round(&cfg);
            assert_eq!(
                change,
                (round == 3).then_some(QuarantineChange::Released),
                "round {round}"
            );
        }
    }

    #[test]
    fn a_real_outage_seen_by_everyone_is_not_a_broken_location() {
        let cfg = QuarantineConfig::default();
        let mut states = vec![LocationQuarantine::default(); 3];
        let all = set(&[0, 1, 2]);
        for _ in 0..10 {
            record_cycle(&mut states, &all, &LocationSet::EMPTY, &all, false);
        }
        assert!(states.iter_mut().all(|s| s.end_round(&cfg).is_none()));
    }

    #[test]
    fn too_few_samples_carry_over() {
        let cfg = QuarantineConfig::default();
        let mut states = vec![LocationQuarantine::default(); 2];
        let all = set(&[0, 1]);
        for _ in 0..3 {
            record_cycle(&mut states, &all, &set(&[1]), &all, false);
        }
        assert_eq!(states[0].end_round(&cfg), None);
        for _ in 0..2 {
            record_cycle(&mut states, &all, &set(&[1]), &all, false);
        }
        assert_eq!(states[0].end_round(&cfg), Some(QuarantineChange::Entered));
    }

    #[test]
    fn a_failed_control_check_quarantines_at_once() {
        let cfg = QuarantineConfig::default();
        let mut states = vec![LocationQuarantine::default(); 2];
        record_cycle(&mut states, &set(&[0, 1]), &set(&[1]), &set(&[0, 1]), true);
        assert_eq!(states[0].end_round(&cfg), Some(QuarantineChange::Entered));
    }
}
