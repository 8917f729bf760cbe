//! A harness that drives the engine cycle by cycle with an explicit clock.
#![allow(dead_code, missing_docs, clippy::unwrap_used)]

use std::time::Duration;

use gslb_engine::*;
use gslb_shared::*;

pub const INTERVAL_MS: u64 = 10_000;

pub struct Harness {
    pub engine: Engine,
    pub now: Timestamp,
    pub out: Vec<Output>,
    pub locations: Vec<LocationId>,
    pub check: Check,
    pub next_cycle: u64,
    /// The pool's slow start, given to members added with [`Harness::add`].
    pub slow_start: Option<Duration>,
}

pub fn check_with(configure: impl FnOnce(&mut Check)) -> Check {
    let mut check = Check::new(CheckId(1), "http", Probe::Http(HttpProbe::default()));
    check.interval = Duration::from_millis(INTERVAL_MS);
    check.timeout = Duration::from_secs(5);
    configure(&mut check);
    check
}

pub fn member(id: u64, configure: impl FnOnce(&mut Member)) -> Member {
    let mut m = Member::new(
        MemberId(id),
        PoolId(1),
        format!("m{id}"),
        std::net::Ipv4Addr::from(0x0a00_0000 + id as u32).into(),
        80,
    );
    configure(&mut m);
    m
}

impl Harness {
    /// `n` connected locations, one check, first start (gate open).
    pub fn new(n: usize, check: Check) -> Self {
        Self::with_config(n, check, EngineConfig::default(), true)
    }

    pub fn with_config(n: usize, check: Check, config: EngineConfig, first_start: bool) -> Self {
        let mut h = Self {
            engine: Engine::new(config.validate().unwrap()),
            now: Timestamp(1_000 * INTERVAL_MS),
            out: Vec::new(),
            locations: (0..n).map(|i| LocationId::new(format!("loc{i}"))).collect(),
            check: check.clone(),
            next_cycle: 1_000,
            slow_start: None,
        };
        h.step(Input::UpsertCheck(&check)).unwrap();
        for l in h.locations.clone() {
            h.step(Input::LocationConnected(&l)).unwrap();
        }
        if first_start {
            h.step(Input::Restore {
                members: &[],
                first_start: true,
            })
            .unwrap();
        }
        h
    }

    pub fn step(&mut self, input: Input<'_>) -> Result<(), EngineError> {
        self.engine.step(self.now, input, &mut self.out)
    }

    pub fn add(&mut self, m: &Member) {
        let check = Some(self.check.id);
        self.step(Input::UpsertMember {
            member: m,
            check,
            slow_start: self.slow_start,
        })
        .unwrap();
    }

    pub fn advance(&mut self, d: Duration) {
        self.now = self.now.plus(d);
        self.step(Input::Tick).unwrap();
    }

    /// Run one cycle for `member`: location i reports `pattern[i]` (None =
    /// no report), then time moves to the cycle's deadline and ticks.
    pub fn cycle(&mut self, member: u64, pattern: &[Option<bool>]) {
        let reports: Vec<_> = (pattern.iter().enumerate())
            .map(|(i, outcome)| {
                let failure = |pass: bool| (!pass).then_some(FailReason::Timeout);
                outcome.map(|pass| (failure(pass), 1_000 + i as u32))
            })
            .collect();
        self.run_cycle(member, &reports);
    }

    /// One cycle where location i passes in `latencies[i]` µs (None = no
    /// report), then time moves to the cycle's deadline and ticks.
    pub fn timed_cycle(&mut self, member: u64, latencies: &[Option<u32>]) {
        let reports: Vec<_> = latencies.iter().map(|l| l.map(|us| (None, us))).collect();
        self.run_cycle(member, &reports);
    }

    /// Location i reports `reports[i]` (failure, latency) in the next cycle.
    fn run_cycle(&mut self, member: u64, reports: &[Option<(Option<FailReason>, u32)>]) {
        let k = self.next_cycle;
        self.next_cycle += 1;
        self.now = self.now.max(Timestamp(k * INTERVAL_MS + 2_000));
        for (i, report) in reports.iter().enumerate() {
            let Some((failure, latency_us)) = report else {
                continue;
            };
            let result = ProbeResult {
                member: MemberId(member),
                check: self.check.id,
                cycle: k,
                failure: *failure,
                latency_us: *latency_us,
            };
            let location = self.locations[i].clone();
            self.step(Input::Results {
                location: &location,
                results: &[result],
            })
            .unwrap();
        }
        let deadline = Timestamp((k + 1) * INTERVAL_MS + 5_000 + 500);
        self.now = self.now.max(deadline);
        self.step(Input::Tick).unwrap();
    }

    /// The round-trip tables published for `member`, in order.
    pub fn rtt_published(&self, member: u64) -> Vec<Rtts> {
        self.out
            .iter()
            .filter_map(|o| match o {
                Output::Rtt { member: m, rtt } if *m == MemberId(member) => Some(rtt.clone()),
                _ => None,
            })
            .collect()
    }

    /// Location `i` reports cycle `cycle` for `member` now.
    pub fn report(&mut self, i: usize, member: u64, cycle: u64, failure: Option<FailReason>) {
        let result = ProbeResult {
            member: MemberId(member),
            check: self.check.id,
            cycle,
            failure,
            latency_us: 5,
        };
        let location = self.locations[i].clone();
        self.step(Input::Results {
            location: &location,
            results: &[result],
        })
        .unwrap();
    }

    /// A cycle where the first `passing` of all locations pass, the rest fail.
    pub fn fraction(&mut self, member: u64, passing: usize) {
        let pattern: Vec<_> = (0..self.locations.len())
            .map(|i| Some(i < passing))
            .collect();
        self.cycle(member, &pattern);
    }

    pub fn all(&mut self, member: u64, pass: bool) {
        let n = self.locations.len();
        self.fraction(member, if pass { n } else { 0 });
    }

    pub fn status(&self, member: u64) -> MemberStatus {
        self.engine
            .member_status(MemberId(member), self.now)
            .unwrap()
    }

    pub fn health(&self, member: u64) -> Health {
        self.status(member).health
    }

    pub fn transitions(&self) -> Vec<&Transition> {
        self.out
            .iter()
            .filter_map(|o| {
                if let Output::Transition(t) = o {
                    Some(t)
                } else {
                    None
                }
            })
            .collect()
    }

    pub fn clear(&mut self) {
        self.out.clear();
    }
}
