//! The edge feed: an edge subscribes with the version it holds and receives
//! the full snapshot or the deltas since, then every change as it happens;
//! it reports what it applied, so status can show each edge's staleness.

use std::sync::Arc;

use gslb_proto::pb;
use gslb_proto::pb::snapshot_update::Update;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::{EdgeInfo, Service, lock, now};
use crate::core::feed::Catchup;

/// The `EdgeFeed` gRPC service.
#[derive(Debug, Clone)]
pub struct EdgeStreams(pub Arc<Service>);

#[tonic::async_trait]
impl pb::edge_feed_server::EdgeFeed for EdgeStreams {
    type SubscribeStream = ReceiverStream<Result<pb::SnapshotUpdate, Status>>;

    async fn subscribe(
        &self,
        request: Request<pb::SubscribeRequest>,
    ) -> Result<Response<Self::SubscribeStream>, Status> {
        let req = request.into_inner();
        check_edge_id(&req.edge_id)?;
        let (tx, rx) = mpsc::channel(16);
        tokio::spawn(run(self.0.clone(), req.edge_id, req.held_version, tx));
        Ok(Response::new(ReceiverStream::new(rx)))
    }

    async fn report_applied(
        &self,
        request: Request<pb::AppliedReport>,
    ) -> Result<Response<pb::AppliedAck>, Status> {
        let r = request.into_inner();
        check_edge_id(&r.edge_id)?;
        let version = r.version;
        let published = self.0.call(move |c| c.feed().published_at(version)).await;
        let mut edges = lock(&self.0.edges);
        let edge = edges
            .entry(r.edge_id.clone())
            .or_insert_with(|| EdgeInfo::new(&r.edge_id));
        edge.applied_version = edge.applied_version.max(r.version);
        edge.lag_ms = published.map_or(0, |p| r.applied_at_ms.saturating_sub(p));
        edge.last_seen_ms = now().0;
        edge.skipped = r
            .skipped
            .into_iter()
            .take(MAX_SKIPPED)
            .map(|mut reason| {
                if reason.len() > MAX_REASON {
                    let cut = (0..=MAX_REASON)
                        .rev()
                        .find(|&i| reason.is_char_boundary(i))
                        .unwrap_or(0);
                    reason.truncate(cut);
                }
                reason
            })
            .collect();
        if !edge.skipped.is_empty() {
            tracing::warn!(edge = %r.edge_id, skipped = ?edge.skipped, "edge is degraded: record sets not served");
        }
        Ok(Response::new(pb::AppliedAck {}))
    }
}

/// Skipped record sets kept per edge report.
const MAX_SKIPPED: usize = 32;
/// Longest reason kept, in bytes.
const MAX_REASON: usize = 512;

/// An edge id is 1 to 128 characters (an empty one made a nameless row).
fn check_edge_id(id: &str) -> Result<(), Status> {
    if id.is_empty() || id.chars().count() > 128 || id.chars().any(char::is_control) {
        return Err(Status::invalid_argument(
            "edgeId: must be 1 to 128 characters, none of them control characters",
        ));
    }
    Ok(())
}

fn set_connected(service: &Service, edge_id: &str, connected: bool) {
    let mut edges = lock(&service.edges);
    let edge = edges
        .entry(edge_id.to_owned())
        .or_insert_with(|| EdgeInfo::new(edge_id));
    edge.connected = connected;
    edge.last_seen_ms = now().0;
}

async fn run(
    service: Arc<Service>,
    edge_id: String,
    mut held: u64,
    tx: mpsc::Sender<Result<pb::SnapshotUpdate, Status>>,
) {
    set_connected(&service, &edge_id, true);
    tracing::info!(edge = %edge_id, held, "edge subscribed");
    let mut versions = service.watch_version();
    loop {
        let catchup = service.call(move |c| c.feed().since(held)).await;
        let updates: Vec<pb::SnapshotUpdate> = match catchup {
            Catchup::UpToDate => Vec::new(),
            Catchup::Full(s) => {
                if held != 0 {
                    tracing::info!(edge = %edge_id, held, current = s.version, "edge fell behind the delta window; sending a full snapshot");
                }
                held = s.version;
                vec![pb::SnapshotUpdate {
                    published_at_ms: s.published_at_ms,
                    update: Some(Update::Full(pb::Snapshot::from(s.as_ref()))),
                }]
            }
            Catchup::Deltas(deltas) => {
                held = deltas.last().map_or(held, |d| d.version);
                deltas
                    .iter()
                    .map(|d| pb::SnapshotUpdate {
                        published_at_ms: d.published_at_ms,
                        update: Some(Update::Delta(pb::SnapshotDelta::from(d.as_ref()))),
                    })
                    .collect()
            }
        };
        for update in updates {
            if tx.send(Ok(update)).await.is_err() {
                set_connected(&service, &edge_id, false);
                return;
            }
        }
        tokio::select! {
            changed = versions.changed() => if changed.is_err() { break },
            _ = tx.closed() => break,
        }
    }
    set_connected(&service, &edge_id, false);
    tracing::info!(edge = %edge_id, "edge unsubscribed");
}
