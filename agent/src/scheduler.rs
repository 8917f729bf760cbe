//! Runs every assigned target on its schedule: one lightweight task per
//! target sleeping until its next slot, a global semaphore bounding probes in
//! flight, the check timeout enforced on the whole probe, and results pushed
//! to the uplink's buffer. Assignment changes replace or stop tasks at once.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use gslb_proto::link::resolve::Resolver;
use gslb_shared::assignment::{Offered, TargetKey};
use gslb_shared::cycle::{next_slot, phase_offset, slot_start};
use gslb_shared::{FailReason, ProbeResult};

use crate::verdict::{judge, retryable};
use tokio::sync::Semaphore;
use tokio::task::AbortHandle;
use tokio::time::Instant;

use crate::buffer::ResultBuffer;
use crate::checker::{Checker, Failure, Registry};
use crate::clock::Clock;
use crate::metrics::{Metrics, ProbeLabels, ProtocolLabels};
use crate::target::{InvalidTarget, Target};

/// What every target task shares.
#[derive(Debug)]
pub struct ProbeContext {
    /// Protocol → checker.
    pub registry: Registry,
    /// Bounds probes in flight across all targets.
    pub limit: Semaphore,
    /// Where results go.
    pub buffer: Arc<ResultBuffer>,
    /// Wall-clock ↔ tokio time.
    pub clock: Clock,
    /// Metrics.
    pub metrics: Arc<Metrics>,
    /// Looks up hostname targets before they are probed.
    pub resolver: Resolver,
}

/// An assignment the agent refused, to report to the aggregator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// The target.
    pub key: TargetKey,
    /// Why.
    pub error: InvalidTarget,
}

struct Running {
    offered: Offered,
    task: AbortHandle,
    valid: bool,
}

/// The set of running targets.
pub struct Scheduler {
    ctx: Arc<ProbeContext>,
    running: HashMap<TargetKey, Running>,
}

impl std::fmt::Debug for Scheduler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scheduler")
            .field("targets", &self.running.len())
            .finish()
    }
}

impl Drop for Scheduler {
    fn drop(&mut self) {
        for r in self.running.values() {
            r.task.abort();
        }
    }
}

impl Scheduler {
    /// Never probe the listeners the aggregator reports for itself.
    pub fn deny_listeners(&self, listeners: &[String]) {
        self.ctx.registry.deny().deny_listeners(listeners);
    }

    /// A scheduler with nothing assigned.
    pub fn new(ctx: Arc<ProbeContext>) -> Self {
        Self {
            ctx,
            running: HashMap::new(),
        }
    }

    /// Number of assigned targets.
    pub fn len(&self) -> usize {
        self.running.len()
    }

    /// True when nothing is assigned.
    pub fn is_empty(&self) -> bool {
        self.running.is_empty()
    }

    /// Replace the whole assignment set.
    pub fn apply_full(&mut self, assignments: &[Offered]) -> Vec<Rejection> {
        let keep: std::collections::HashSet<_> = assignments.iter().map(|o| o.key).collect();
        let stale: Vec<_> = self
            .running
            .keys()
            .filter(|k| !keep.contains(k))
            .copied()
            .collect();
        self.remove(&stale);
        let rejections = self.upsert(assignments);
        self.ctx.metrics.set_ready();
        rejections
    }

    /// Apply changes: upserts then removals.
    pub fn apply_delta(&mut self, upserts: &[Offered], removals: &[TargetKey]) -> Vec<Rejection> {
        let rejections = self.upsert(upserts);
        self.remove(removals);
        rejections
    }

    fn remove(&mut self, keys: &[TargetKey]) {
        for key in keys {
            if let Some(r) = self.running.remove(key) {
                // Stops the next probe and any probe in flight.
                r.task.abort();
                self.ctx.metrics.cert_expiry.forget(*key);
            }
        }
        self.update_gauges();
    }

    fn upsert(&mut self, assignments: &[Offered]) -> Vec<Rejection> {
        let mut rejections = Vec::new();
        for a in assignments {
            let key = a.key;
            if self.running.get(&key).is_some_and(|r| &r.offered == a) {
                continue;
            }
            if let Some(old) = self.running.remove(&key) {
                old.task.abort();
            }
            let parsed = Target::from_offered(a);
            if let Err(error) = &parsed {
                tracing::warn!(member = %key.member, check = %key.check, %error, "invalid target: reported, never probed");
                rejections.push(Rejection {
                    key,
                    error: error.clone(),
                });
            }
            let valid = parsed.is_ok();
            let task =
                tokio::spawn(run_target(key, a.interval, parsed, self.ctx.clone())).abort_handle();
            self.running.insert(
                key,
                Running {
                    offered: a.clone(),
                    task,
                    valid,
                },
            );
        }
        self.update_gauges();
        rejections
    }

    fn update_gauges(&self) {
        self.ctx.metrics.assignments.set(self.running.len() as i64);
        self.ctx
            .metrics
            .invalid_targets
            .set(self.running.values().filter(|r| !r.valid).count() as i64);
    }
}

/// Probe one target forever, at `cycle·interval + phase` for every cycle.
async fn run_target(
    key: TargetKey,
    interval: Duration,
    target: Result<Target, InvalidTarget>,
    ctx: Arc<ProbeContext>,
) {
    // An invalid interval still needs a sane cadence for its invalid-target reports.
    let interval = interval.clamp(
        gslb_shared::validate::MIN_INTERVAL,
        gslb_shared::validate::MAX_INTERVAL,
    );
    let offset = phase_offset(key, interval);
    let (mut cycle, _) = next_slot(ctx.clock.now_ms(), interval, offset);
    loop {
        let start_ms = slot_start(cycle, interval, offset);
        tokio::time::sleep_until(ctx.clock.instant_at(start_ms)).await;
        let (outcome, latency, protocol) = match &target {
            Err(_) => (
                Err(Failure::new(
                    FailReason::InvalidTarget,
                    "target failed validation",
                )),
                Duration::ZERO,
                "invalid",
            ),
            Ok(t) => probe_once(t, &ctx).await,
        };
        record(&ctx, key, cycle, protocol, &outcome, latency);
        // Skip any slot already missed; never schedule relative to "now + interval".
        let (next, _) = next_slot(ctx.clock.now_ms(), interval, offset);
        cycle = next.max(cycle + 1);
    }
}

/// Run one probe of a target: revalidate, take a concurrency permit, run
/// its checker under the check timeout. Returns the outcome, the latency
/// and the protocol name.
pub async fn probe_once(
    target: &Target,
    ctx: &ProbeContext,
) -> (Result<(), Failure>, Duration, &'static str) {
    let protocol = target.check.probe.protocol();
    if let Err(err) = target.revalidate() {
        return (
            Err(Failure::new(FailReason::InvalidTarget, err.to_string())),
            Duration::ZERO,
            protocol,
        );
    }
    // Every protocol, ICMP included, is refused a denied target before
    // anything is sent; socket checkers check the connected peer again. A
    // hostname target's addresses are checked once resolved.
    if target.resolve.is_none()
        && let Err(denied) = crate::checker::destination::check(
            ctx.registry.deny(),
            std::net::SocketAddr::new(target.address, target.port),
        )
    {
        return (Err(denied), Duration::ZERO, protocol);
    }
    let Some(checker) = ctx.registry.get(protocol) else {
        return (
            Err(Failure::new(
                FailReason::Other,
                format!("no checker for {protocol}"),
            )),
            Duration::ZERO,
            protocol,
        );
    };
    // The semaphore is never closed; a closed one would mean shutdown.
    let Ok(_permit) = ctx.limit.acquire().await else {
        return (
            Err(Failure::new(FailReason::Other, "shutting down")),
            Duration::ZERO,
            protocol,
        );
    };
    let mut attempts_left = target.check.retries;
    loop {
        let started = Instant::now();
        let run = async {
            match &target.resolve {
                None => checker.probe(target).await,
                // Boxed: the resolver's futures are large, and inline they
                // would make every target's task as large, used or not.
                Some(name) => Box::pin(probe_each_address(target, name, checker, ctx)).await,
            }
        };
        let outcome = match tokio::time::timeout(target.check.timeout, run).await {
            Ok(outcome) => outcome,
            Err(_) => Err(Failure::new(
                FailReason::Timeout,
                format!("no answer within {:?}", target.check.timeout),
            )),
        };
        let latency = started.elapsed();
        let outcome = judge(&target.check, outcome, latency);
        match &outcome {
            Err(f) if attempts_left > 0 && retryable(f.reason) => {
                attempts_left -= 1;
                tracing::debug!(member = %target.key.member, check = %target.key.check, reason = f.reason.as_str(), detail = %f.detail, attempts_left, "attempt failed; retrying within the cycle");
            }
            _ => return (outcome, latency, protocol),
        }
    }
}

/// A hostname target: resolve it, then probe every address it has (at
/// most [`MAX_ADDRESSES`]) at once. It passes when every address passes;
/// every address goes through the runtime checks and the deny-list first,
/// so a name can never lead a probe where an address could not.
async fn probe_each_address(
    target: &Target,
    name: &gslb_shared::DnsName,
    checker: &Arc<dyn Checker>,
    ctx: &ProbeContext,
) -> Result<(), Failure> {
    let resolved = (ctx.resolver.lookup(name).await)
        .map_err(|e| Failure::new(FailReason::Resolve, format!("resolve {e}")))?;
    let mut probes = tokio::task::JoinSet::new();
    let mut targets = Vec::with_capacity(resolved.addresses.len());
    for &address in &resolved.addresses {
        let at = target.at(address);
        at.revalidate().map_err(|e| {
            Failure::new(
                FailReason::Resolve,
                format!("{name} resolved to {address}: {e}"),
            )
        })?;
        (ctx.registry.deny())
            .check(std::net::SocketAddr::new(address, at.port))
            .map_err(|why| {
                Failure::new(
                    FailReason::DeniedDestination,
                    format!("{name} resolved to {address}: {why}"),
                )
            })?;
        targets.push(at);
    }
    for at in targets {
        let checker = checker.clone();
        probes.spawn(async move {
            let outcome = checker.probe(&at).await;
            outcome.map_err(|f| Failure::new(f.reason, format!("{}: {}", at.address, f.detail)))
        });
    }
    while let Some(done) = probes.join_next().await {
        done.map_err(|e| Failure::new(FailReason::Other, format!("probe task: {e}")))??;
    }
    Ok(())
}

fn record(
    ctx: &ProbeContext,
    key: TargetKey,
    cycle: u64,
    protocol: &'static str,
    outcome: &Result<(), Failure>,
    latency: Duration,
) {
    let reason = outcome.as_ref().err().map(|f| f.reason);
    let label = reason.map_or("pass", FailReason::as_str);
    ctx.metrics
        .probes
        .get_or_create(&ProbeLabels {
            protocol,
            outcome: label,
        })
        .inc();
    if reason != Some(FailReason::InvalidTarget) {
        ctx.metrics
            .latency
            .get_or_create(&ProtocolLabels { protocol })
            .observe(latency.as_secs_f64());
    }
    if let Err(f) = outcome {
        tracing::debug!(member = %key.member, check = %key.check, cycle, reason = label, detail = %f.detail, "probe failed");
    }
    ctx.buffer.push(ProbeResult {
        member: key.member,
        check: key.check,
        cycle,
        failure: reason,
        latency_us: latency.as_micros().min(u128::from(u32::MAX)) as u32,
    });
    ctx.metrics.queue_depth.set(ctx.buffer.len() as i64);
}
