//! The warm-up gate (seed 000, DESIGN.md "Health engine" 5): a latch that
//! opens after `threshold` consecutive cycles whose raw pass fraction is at
//! least `rise`, and closes only on creation and on disabled→enabled (or on
//! going down, with `rewarmAfterDown`).

/// One member's gate.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WarmupGate {
    passes: u32,
    open: bool,
}

impl WarmupGate {
    /// A closed gate with no passes (a new or re-enabled member).
    pub const CLOSED: WarmupGate = WarmupGate {
        passes: 0,
        open: false,
    };
    /// An open gate (members that skip the gate, or that passed it).
    pub const OPEN: WarmupGate = WarmupGate {
        passes: 0,
        open: true,
    };

    /// Consecutive passing cycles so far.
    pub fn passes(&self) -> u32 {
        self.passes
    }

    /// Whether the latch has opened.
    pub fn is_open(&self) -> bool {
        self.open
    }

    /// True while the gate holds the member back.
    pub fn warming(&self, threshold: u32, gated: bool) -> bool {
        gated && threshold > 0 && !self.open
    }

    /// Count one closed cycle with data: a raw pass fraction at least `rise`
    /// increments, anything else resets. Returns true when the threshold is
    /// reached (the caller opens the latch, unless the startup gate holds it).
    pub fn record(&mut self, passed: bool, threshold: u32) -> bool {
        if self.open {
            return false;
        }
        self.passes = if passed {
            self.passes.saturating_add(1)
        } else {
            0
        };
        threshold > 0 && self.passes >= threshold
    }

    /// Open the latch.
    pub fn open(&mut self) {
        self.open = true;
    }

    /// Restart the gate (re-enable, or down with `rewarmAfterDown`).
    pub fn restart(&mut self) {
        *self = WarmupGate::CLOSED;
    }

    /// A gate restored from storage.
    pub fn restored(open: bool, passes: u32) -> Self {
        Self { passes, open }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_after_threshold_consecutive_passes() {
        let mut g = WarmupGate::CLOSED;
        assert!(!g.record(true, 3));
        assert!(!g.record(true, 3));
        assert!(g.record(true, 3));
        g.open();
        assert!(!g.warming(3, true));
    }

    #[test]
    fn a_single_failed_cycle_resets_the_counter() {
        let mut g = WarmupGate::CLOSED;
        g.record(true, 3);
        g.record(true, 3);
        g.record(false, 3);
        assert_eq!(g.passes(), 0);
        assert!(g.warming(3, true));
    }

    #[test]
    fn latch_ignores_later_failures() {
        let mut g = WarmupGate::CLOSED;
        g.record(true, 1);
        g.open();
        assert!(!g.record(false, 1));
        assert!(g.is_open());
    }

    #[test]
    fn ungated_members_never_warm() {
        assert!(!WarmupGate::CLOSED.warming(3, false));
        assert!(!WarmupGate::CLOSED.warming(0, true));
    }
}
