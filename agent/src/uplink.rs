//! The uplink: one bidirectional gRPC stream to an aggregator. It registers,
//! applies the assignment set and its changes to the scheduler, and sends
//! results in batches (when a batch is full or every `batch_interval`).
//!
//! When the stream drops, probing goes on and results wait in the bounded
//! buffer; batches that were sent but not acknowledged are put back in front
//! (a duplicate result is harmless to the engine). Reconnects back off from
//! 1 s to 60 s with jitter, rotating through the configured addresses, and a
//! leader hint from the server is followed at once.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use gslb_proto::convert::offers_from_pb;
use gslb_proto::link::{Ended, Link, Redial, Session};
use gslb_proto::pb;
use gslb_proto::pb::agent_service_client::AgentServiceClient;
use gslb_shared::ProbeResult;
use gslb_shared::assignment::{Offered, TargetKey};
use gslb_shared::config::LinkTls;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use crate::backoff::Backoff;
use crate::buffer::ResultBuffer;
use crate::metrics::Metrics;
use crate::scheduler::{Rejection, Scheduler};

/// Most sent-but-unacknowledged batches remembered for resending.
const MAX_UNACKED_BATCHES: usize = 256;

/// Uplink settings.
#[derive(Debug, Clone)]
pub struct UplinkConfig {
    /// Aggregator gRPC URLs, tried in turn.
    pub addresses: Vec<String>,
    /// This agent's location.
    pub location: String,
    /// This agent's region.
    pub region: String,
    /// Stable per process.
    pub agent_id: String,
    /// Results per batch at most.
    pub batch_size: usize,
    /// Longest time a result waits before being sent.
    pub batch_interval: Duration,
    /// Reconnect policy.
    pub backoff: Backoff,
    /// Time allowed to open a connection.
    pub connect_timeout: Duration,
    /// TLS files for `https://` addresses, read at each connection.
    pub tls: LinkTls,
}

impl Session for Uplink {
    async fn dial(&mut self, address: &str) -> Ended {
        self.session(address).await
    }
}

/// The uplink task's state.
#[derive(Debug)]
pub struct Uplink {
    cfg: UplinkConfig,
    scheduler: Scheduler,
    buffer: Arc<ResultBuffer>,
    metrics: Arc<Metrics>,
    seq: u64,
    /// The parts of a set received so far (its version and offers), until
    /// its last part arrives.
    parts: Option<(u64, Vec<Offered>)>,
}

/// Most targets a set may hold, counted while its parts arrive: far above
/// any real location, so an aggregator that never ends a set cannot grow
/// this agent's memory without bound.
const MAX_SET_TARGETS: usize = 10_000_000;

impl Uplink {
    /// An uplink driving `scheduler` from the aggregator's assignments.
    pub fn new(
        cfg: UplinkConfig,
        scheduler: Scheduler,
        buffer: Arc<ResultBuffer>,
        metrics: Arc<Metrics>,
    ) -> Self {
        Self {
            cfg,
            scheduler,
            buffer,
            metrics,
            seq: 0,
            parts: None,
        }
    }

    /// Run until the task is dropped.
    pub async fn run(mut self) {
        let redial = match Redial::new("uplink", self.cfg.addresses.clone(), self.cfg.backoff) {
            Ok(r) => r,
            Err(e) => {
                tracing::error!(error = %e, "no uplink");
                return;
            }
        };
        // Probing goes on while the stream is down; results are buffered.
        redial.run(&mut self).await;
    }

    async fn session(&mut self, address: &str) -> Ended {
        let failed = |established: bool| {
            move |e: &dyn std::error::Error| Ended::Failed {
                established,
                error: gslb_shared::telemetry::error_chain(e),
            }
        };
        let link = Link::with_tls(&self.cfg.tls);
        let channel = match link.connect(address, self.cfg.connect_timeout).await {
            Ok(c) => c,
            Err(e) => return failed(false)(&e),
        };
        let (tx, rx) = mpsc::channel::<pb::AgentMessage>(64);
        let register = pb::Register {
            location: self.cfg.location.clone(),
            region: self.cfg.region.clone(),
            version: env!("CARGO_PKG_VERSION").into(),
            agent_id: self.cfg.agent_id.clone(),
            checks_by_id: true,
            sets_in_parts: true,
        };
        // A set cut off with the last session is not applied.
        self.parts = None;
        // The receiver is alive: it was just created and is moved below.
        let _ = tx
            .send(msg(pb::agent_message::Msg::Register(register)))
            .await;
        // Assignment sets of large locations exceed tonic's 4 MiB default.
        // Bounded: a peer that accepts connections and drops each one (a
        // TLS listener asked in plain text) could otherwise keep the
        // channel reconnecting under the pending call for ever.
        let inbound = tokio::time::timeout(
            self.cfg.connect_timeout,
            AgentServiceClient::new(channel)
                .max_decoding_message_size(gslb_proto::MAX_MESSAGE)
                .session(ReceiverStream::new(rx)),
        )
        .await;
        let mut inbound = match inbound {
            Ok(Ok(r)) => r.into_inner(),
            Ok(Err(e)) => return failed(false)(&e),
            Err(_) => {
                return Ended::Failed {
                    established: false,
                    error: format!(
                        "the stream did not open within {:?}",
                        self.cfg.connect_timeout
                    ),
                };
            }
        };
        tracing::info!(%address, location = %self.cfg.location, "aggregator stream open");
        self.metrics.connected.set(1);
        self.metrics.connects.inc();
        let mut unacked: BTreeMap<u64, Vec<ProbeResult>> = BTreeMap::new();
        let mut tick = tokio::time::interval(self.cfg.batch_interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let end = loop {
            tokio::select! {
                message = inbound.message() => match message {
                    Ok(Some(m)) => {
                        if let Some(end) = self.handle(m, &tx, &mut unacked).await {
                            break end;
                        }
                    }
                    Ok(None) => break Ended::Closed,
                    Err(status) => break failed(true)(&status),
                },
                _ = tick.tick() => {
                    if let Err(e) = self.flush(&tx, &mut unacked).await {
                        break Ended::Failed { established: true, error: e.into() };
                    }
                }
                _ = self.buffer.batch_ready() => {
                    if let Err(e) = self.flush(&tx, &mut unacked).await {
                        break Ended::Failed { established: true, error: e.into() };
                    }
                }
            }
        };
        self.metrics.connected.set(0);
        let pending: Vec<_> = unacked.into_values().flatten().collect();
        if !pending.is_empty() {
            tracing::info!(results = pending.len(), "requeueing unacknowledged results");
            self.buffer.requeue_front(pending);
        }
        end
    }

    async fn handle(
        &mut self,
        m: pb::AggregatorMessage,
        tx: &mpsc::Sender<pb::AgentMessage>,
        unacked: &mut BTreeMap<u64, Vec<ProbeResult>>,
    ) -> Option<Ended> {
        use pb::aggregator_message::Msg;
        let rejections = match m.msg? {
            Msg::Full(set) => {
                self.scheduler.deny_listeners(&set.own_listeners);
                let mut offered = match self.parts.take() {
                    Some((version, so_far)) if version == set.version => so_far,
                    _ => Vec::new(),
                };
                offered.extend(offers_from_pb(&set.assignments, &set.checks));
                if set.more {
                    if offered.len() > MAX_SET_TARGETS {
                        tracing::warn!(
                            targets = offered.len(),
                            limit = MAX_SET_TARGETS,
                            "assignment set exceeds the limit: reconnecting"
                        );
                        return Some(Ended::Closed);
                    }
                    self.parts = Some((set.version, offered));
                    return None;
                }
                let r = self.scheduler.apply_full(&offered);
                tracing::info!(
                    version = set.version,
                    targets = self.scheduler.len(),
                    invalid = r.len(),
                    "assignment set applied"
                );
                r
            }
            Msg::Delta(delta) => {
                let removals: Vec<TargetKey> = delta.removals.iter().map(TargetKey::from).collect();
                let upserts = offers_from_pb(&delta.upserts, &delta.checks);
                let r = self.scheduler.apply_delta(&upserts, &removals);
                tracing::debug!(
                    version = delta.version,
                    upserts = delta.upserts.len(),
                    removals = removals.len(),
                    "assignment delta applied"
                );
                r
            }
            Msg::Ack(ack) => {
                unacked.remove(&ack.seq);
                Vec::new()
            }
            Msg::Redirect(hint) if !hint.leader_address.is_empty() => {
                return Some(Ended::Redirect(hint.leader_address));
            }
            Msg::Redirect(_) => Vec::new(),
        };
        for Rejection { key, error } in rejections {
            let rejected = pb::AssignmentRejected {
                key: Some(key.into()),
                field: error.field,
                reason: error.rule,
            };
            if tx
                .send(msg(pb::agent_message::Msg::Rejected(rejected)))
                .await
                .is_err()
            {
                return Some(Ended::Closed);
            }
        }
        None
    }

    async fn flush(
        &mut self,
        tx: &mpsc::Sender<pb::AgentMessage>,
        unacked: &mut BTreeMap<u64, Vec<ProbeResult>>,
    ) -> Result<(), &'static str> {
        loop {
            let (results, dropped) = self.buffer.take(self.cfg.batch_size);
            self.metrics.queue_depth.set(self.buffer.len() as i64);
            if dropped > 0 {
                self.metrics.dropped.inc_by(dropped);
            }
            if results.is_empty() && dropped == 0 {
                return Ok(());
            }
            self.seq += 1;
            unacked.insert(self.seq, results.clone());
            while unacked.len() > MAX_UNACKED_BATCHES {
                unacked.pop_first();
            }
            let batch = pb::ResultBatch {
                seq: self.seq,
                results: results.iter().map(pb::ProbeResult::from).collect(),
                dropped,
            };
            tx.send(msg(pb::agent_message::Msg::Results(batch)))
                .await
                .map_err(|_| "stream closed")?;
            if self.buffer.is_empty() {
                return Ok(());
            }
        }
    }
}

fn msg(m: pb::agent_message::Msg) -> pb::AgentMessage {
    pb::AgentMessage { msg: Some(m) }
}
