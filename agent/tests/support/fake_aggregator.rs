//! An in-process aggregator for the agent stream: sends an assignment set,
//! acknowledges result batches, and can drop a session or redirect.
#![allow(dead_code, missing_docs, clippy::unwrap_used)]

use std::sync::{Arc, Mutex};

use gslb_proto::pb;
use gslb_proto::pb::agent_service_server::{AgentService, AgentServiceServer};
use tokio::sync::mpsc;
use tokio_stream::wrappers::{ReceiverStream, TcpListenerStream};
use tonic::{Request, Response, Status, Streaming};

/// How the fake aggregator treats its sessions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Behaviour {
    Normal,
    /// Close the first session after its first result batch, without acking it.
    DropFirstSessionAfterOneBatch,
    /// Answer the registration with a leader hint.
    Redirect(u16),
}

/// What the fake aggregator has seen.
#[derive(Debug, Default)]
pub struct Seen {
    pub sessions: usize,
    pub registers: Vec<pb::Register>,
    /// Kept only when recording (tests); benchmarks only count.
    pub batches: Vec<(usize, pb::ResultBatch)>,
    pub rejected: Vec<pb::AssignmentRejected>,
    pub results: u64,
    pub passed: u64,
}

#[derive(Clone)]
struct FakeAggregator {
    seen: Arc<Mutex<Seen>>,
    assignments: Vec<pb::Assignment>,
    behaviour: Behaviour,
    record: bool,
}

#[tonic::async_trait]
impl AgentService for FakeAggregator {
    type SessionStream = ReceiverStream<Result<pb::AggregatorMessage, Status>>;

    async fn session(
        &self,
        request: Request<Streaming<pb::AgentMessage>>,
    ) -> Result<Response<Self::SessionStream>, Status> {
        let mut inbound = request.into_inner();
        let (tx, rx) = mpsc::channel(16);
        let this = self.clone();
        tokio::spawn(async move {
            let session = {
                let mut seen = this.seen.lock().unwrap();
                seen.sessions += 1;
                seen.sessions
            };
            let send = |m| pb::AggregatorMessage { msg: Some(m) };
            use pb::aggregator_message::Msg;
            while let Ok(Some(message)) = inbound.message().await {
                match message.msg {
                    Some(pb::agent_message::Msg::Register(r)) => {
                        let (by_id, in_parts) = (r.checks_by_id, r.sets_in_parts);
                        this.seen.lock().unwrap().registers.push(r);
                        let reply = match this.behaviour {
                            Behaviour::Redirect(port) => Msg::Redirect(pb::LeaderHint {
                                leader_id: 2,
                                leader_address: format!("http://127.0.0.1:{port}"),
                            }),
                            _ => {
                                let mut parts = set_parts(&this.assignments, by_id, in_parts);
                                let last = parts.pop().unwrap_or_default();
                                for part in parts {
                                    let _ = tx.send(Ok(send(Msg::Full(part)))).await;
                                }
                                Msg::Full(last)
                            }
                        };
                        let _ = tx.send(Ok(send(reply))).await;
                    }
                    Some(pb::agent_message::Msg::Results(batch)) => {
                        let seq = batch.seq;
                        {
                            let mut seen = this.seen.lock().unwrap();
                            seen.results += batch.results.len() as u64;
                            seen.passed +=
                                batch.results.iter().filter(|r| r.failure == 0).count() as u64;
                            if this.record {
                                seen.batches.push((session, batch));
                            }
                        }
                        if this.behaviour == Behaviour::DropFirstSessionAfterOneBatch
                            && session == 1
                        {
                            return; // drops tx: the stream ends without an ack
                        }
                        let _ = tx
                            .send(Ok(send(Msg::Ack(pb::BatchAck {
                                seq,
                                accepted: 0,
                                rejected: 0,
                            }))))
                            .await;
                    }
                    Some(pb::agent_message::Msg::Rejected(r)) => {
                        this.seen.lock().unwrap().rejected.push(r)
                    }
                    None => {}
                }
            }
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}

/// Serve the fake aggregator on a loopback port; `record` keeps every batch.
pub async fn start_aggregator(
    assignments: Vec<pb::Assignment>,
    behaviour: Behaviour,
    record: bool,
) -> (u16, Arc<Mutex<Seen>>) {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Seen::default()));
    let svc = FakeAggregator {
        seen: seen.clone(),
        assignments,
        behaviour,
        record,
    };
    tokio::spawn(async move {
        tonic::transport::Server::builder()
            .add_service(AgentServiceServer::new(svc))
            .serve_with_incoming(TcpListenerStream::new(listener))
            .await
    });
    (port, seen)
}

/// `assignments` as an aggregator sends them to an agent that asked for
/// checks by id (each check once, beside the assignments), or inline.
fn wire_form(assignments: &[pb::Assignment], by_id: bool) -> (Vec<pb::Assignment>, Vec<pb::Check>) {
    if !by_id {
        return (assignments.to_vec(), Vec::new());
    }
    let mut checks = std::collections::BTreeMap::new();
    let stripped = assignments
        .iter()
        .map(|a| {
            let mut a = a.clone();
            if let Some(check) = a.check.take() {
                checks.insert(a.check_id, check);
            }
            a
        })
        .collect();
    (stripped, checks.into_values().collect())
}

/// The set as sent to an agent: whole, or (when it takes sets in parts)
/// one assignment per part with every part but the last marked `more`.
fn set_parts(
    assignments: &[pb::Assignment],
    by_id: bool,
    in_parts: bool,
) -> Vec<pb::AssignmentSet> {
    let chunks: Vec<&[pb::Assignment]> = if in_parts && !assignments.is_empty() {
        assignments.chunks(1).collect()
    } else {
        vec![assignments]
    };
    let last = chunks.len() - 1;
    chunks
        .into_iter()
        .enumerate()
        .map(|(i, chunk)| {
            let (assignments, checks) = wire_form(chunk, by_id);
            pb::AssignmentSet {
                version: 1,
                assignments,
                own_listeners: vec![],
                checks,
                more: i < last,
            }
        })
        .collect()
}
