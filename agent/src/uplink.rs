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

use gslb_proto::pb;
use gslb_proto::pb::agent_service_client::AgentServiceClient;
use gslb_shared::config::LinkTls;
use gslb_shared::{CheckId, MemberId};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Endpoint;

use crate::backoff::Backoff;
use crate::buffer::ResultBuffer;
use crate::metrics::Metrics;
use crate::schedule::TargetKey;
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

/// How a session ended without an error.
#[derive(Debug, PartialEq, Eq)]
enum SessionEnd {
    /// The server closed the stream.
    Closed,
    /// The server pointed at the leader.
    Redirect(String),
}

/// A session that failed, and whether it had been established first.
#[derive(Debug)]
struct SessionError {
    established: bool,
    error: String,
}

/// The uplink task's state.
#[derive(Debug)]
pub struct Uplink {
    cfg: UplinkConfig,
    scheduler: Scheduler,
    buffer: Arc<ResultBuffer>,
    metrics: Arc<Metrics>,
    seq: u64,
}

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
        }
    }

    /// Run until the task is dropped.
    pub async fn run(mut self) {
        let mut attempt = 0u32;
        let mut index = 0usize;
        let mut hint: Option<String> = None;
        loop {
            let address = match hint.take() {
                Some(leader) => leader,
                None => self.cfg.addresses[index % self.cfg.addresses.len()].clone(),
            };
            let established = match self.session(&address).await {
                Ok(SessionEnd::Redirect(leader)) => {
                    tracing::info!(from = %address, to = %leader, "following leader hint");
                    hint = Some(leader);
                    attempt = 0;
                    continue;
                }
                Ok(SessionEnd::Closed) => {
                    tracing::warn!(%address, "aggregator closed the stream; probing continues, results are buffered");
                    true
                }
                Err(SessionError { established, error }) => {
                    tracing::warn!(%address, %error, established, "aggregator stream failed; probing continues, results are buffered");
                    established
                }
            };
            if established {
                attempt = 0;
            }
            index += 1;
            let delay = self.cfg.backoff.delay(attempt, &mut rand::rng());
            attempt = attempt.saturating_add(1);
            tracing::info!(next = %self.cfg.addresses[index % self.cfg.addresses.len()], delay = ?delay, "reconnecting");
            tokio::time::sleep(delay).await;
        }
    }

    async fn session(&mut self, address: &str) -> Result<SessionEnd, SessionError> {
        let fail = |established: bool| {
            move |e: &dyn std::error::Error| SessionError {
                established,
                error: gslb_shared::telemetry::error_chain(e),
            }
        };
        let mut endpoint = Endpoint::from_shared(address.to_owned())
            .map_err(|e| fail(false)(&e))?
            .connect_timeout(self.cfg.connect_timeout)
            .tcp_nodelay(true)
            .http2_keep_alive_interval(Duration::from_secs(10))
            .keep_alive_timeout(Duration::from_secs(5));
        if let Some(tls) =
            gslb_proto::link::link_config(&self.cfg.tls).map_err(|e| fail(false)(&e))?
        {
            endpoint = endpoint.tls_config(tls).map_err(|e| fail(false)(&e))?;
        }
        let channel = endpoint.connect().await.map_err(|e| fail(false)(&e))?;
        let (tx, rx) = mpsc::channel::<pb::AgentMessage>(64);
        let register = pb::Register {
            location: self.cfg.location.clone(),
            region: self.cfg.region.clone(),
            version: env!("CARGO_PKG_VERSION").into(),
            agent_id: self.cfg.agent_id.clone(),
        };
        // The receiver is alive: it was just created and is moved below.
        let _ = tx
            .send(msg(pb::agent_message::Msg::Register(register)))
            .await;
        // Assignment sets of large locations exceed tonic's 4 MiB default.
        let mut inbound = AgentServiceClient::new(channel)
            .max_decoding_message_size(gslb_proto::MAX_MESSAGE)
            .session(ReceiverStream::new(rx))
            .await
            .map_err(|e| fail(false)(&e))?
            .into_inner();
        tracing::info!(%address, location = %self.cfg.location, "aggregator stream open");
        self.metrics.connected.set(1);
        self.metrics.connects.inc();
        let mut unacked: BTreeMap<u64, Vec<pb::ProbeResult>> = BTreeMap::new();
        let mut tick = tokio::time::interval(self.cfg.batch_interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let end = loop {
            tokio::select! {
                message = inbound.message() => match message {
                    Ok(Some(m)) => {
                        if let Some(end) = self.handle(m, &tx, &mut unacked).await {
                            break Ok(end);
                        }
                    }
                    Ok(None) => break Ok(SessionEnd::Closed),
                    Err(status) => break Err(fail(true)(&status)),
                },
                _ = tick.tick() => {
                    if let Err(e) = self.flush(&tx, &mut unacked).await {
                        break Err(SessionError { established: true, error: e.into() });
                    }
                }
                _ = self.buffer.batch_ready() => {
                    if let Err(e) = self.flush(&tx, &mut unacked).await {
                        break Err(SessionError { established: true, error: e.into() });
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
        unacked: &mut BTreeMap<u64, Vec<pb::ProbeResult>>,
    ) -> Option<SessionEnd> {
        use pb::aggregator_message::Msg;
        let rejections = match m.msg? {
            Msg::Full(set) => {
                self.scheduler.deny_listeners(&set.own_listeners);
                let r = self.scheduler.apply_full(&set.assignments);
                tracing::info!(
                    version = set.version,
                    targets = self.scheduler.len(),
                    invalid = r.len(),
                    "assignment set applied"
                );
                r
            }
            Msg::Delta(delta) => {
                let removals: Vec<_> = delta
                    .removals
                    .iter()
                    .map(|k| TargetKey {
                        member: MemberId(k.member_id),
                        check: CheckId(k.check_id),
                    })
                    .collect();
                let r = self.scheduler.apply_delta(&delta.upserts, &removals);
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
                return Some(SessionEnd::Redirect(hint.leader_address));
            }
            Msg::Redirect(_) => Vec::new(),
        };
        for Rejection { key, error } in rejections {
            let rejected = pb::AssignmentRejected {
                key: Some(pb::AssignmentKey {
                    member_id: key.member.0,
                    check_id: key.check.0,
                }),
                field: error.field,
                reason: error.rule,
            };
            if tx
                .send(msg(pb::agent_message::Msg::Rejected(rejected)))
                .await
                .is_err()
            {
                return Some(SessionEnd::Closed);
            }
        }
        None
    }

    async fn flush(
        &mut self,
        tx: &mpsc::Sender<pb::AgentMessage>,
        unacked: &mut BTreeMap<u64, Vec<pb::ProbeResult>>,
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
                results,
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
