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
        let who = super::quota::caller(request.extensions());
        let req = request.into_inner();
        check_edge_id(&req.edge_id)?;
        let slot = super::quota::take(&self.0, FEEDS, who.as_deref())?;
        set_connected(&self.0, &req.edge_id, true)?;
        // Two updates queued at most: a slow subscriber holds little.
        let (tx, rx) = mpsc::channel(2);
        tokio::spawn(run(self.0.clone(), req.edge_id, req.held_version, tx, slot));
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
        let edge = row(&mut edges, &r.edge_id)?;
        let before = edge.skipped.clone();
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
        // Logged when it changes, with a count and the first reason only:
        // a report must not buy a 16 KB log line each time.
        if !edge.skipped.is_empty() && edge.skipped != before {
            tracing::warn!(
                edge = %r.edge_id,
                skipped = edge.skipped.len(),
                first = %edge.skipped[0],
                "edge is degraded: record sets not served"
            );
        }
        Ok(Response::new(pb::AppliedAck {}))
    }
}

/// Most feed subscriptions one edge certificate may hold open: an edge
/// needs one (two while it reconnects).
pub const MAX_FEEDS_PER_IDENTITY: usize = 8;
/// Most feed subscriptions open in all.
pub const MAX_FEEDS: usize = 1_024;
/// Longest an update may wait for a subscriber to take it; past it the
/// subscription is dropped (the edge resubscribes with its version).
pub const FEED_SEND_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The feed's limit (see [`quota`](super::quota)).
const FEEDS: super::quota::Limit = super::quota::Limit {
    kind: "subscribe",
    what: "feed subscriptions",
    per_identity: MAX_FEEDS_PER_IDENTITY,
    total: MAX_FEEDS,
};

/// Skipped record sets kept per edge report.
const MAX_SKIPPED: usize = 16;
/// Longest reason kept, in bytes.
const MAX_REASON: usize = 256;
/// Most edges the registry keeps; a new one past it takes the row of the
/// edge disconnected longest, and is refused when every one is connected.
pub const MAX_EDGES: usize = 1_000;
/// An edge id by the rule the edge checks at start.
fn check_edge_id(id: &str) -> Result<(), Status> {
    gslb_shared::validate::edge_id(id)
        .map_err(|rule| Status::invalid_argument(format!("edgeId: {rule}")))
}

/// The registry row of `edge_id`, made when new: past [`MAX_EDGES`] the
/// disconnected row seen longest ago makes room; with every row connected
/// the edge is refused.
fn row<'a>(
    edges: &'a mut std::collections::BTreeMap<String, EdgeInfo>,
    edge_id: &str,
) -> Result<&'a mut EdgeInfo, Status> {
    if !edges.contains_key(edge_id) && edges.len() >= MAX_EDGES {
        let oldest = (edges.values())
            .filter(|e| !e.connected)
            .min_by_key(|e| e.last_seen_ms)
            .map(|e| e.edge_id.clone());
        let Some(oldest) = oldest else {
            return Err(Status::resource_exhausted(format!(
                "edges: {MAX_EDGES} edges are registered and connected, the most this aggregator keeps"
            )));
        };
        edges.remove(&oldest);
    }
    Ok(edges
        .entry(edge_id.to_owned())
        .or_insert_with(|| EdgeInfo::new(edge_id)))
}

fn set_connected(service: &Service, edge_id: &str, connected: bool) -> Result<(), Status> {
    let mut edges = lock(&service.edges);
    let edge = row(&mut edges, edge_id)?;
    edge.connected = connected;
    edge.last_seen_ms = now().0;
    Ok(())
}

async fn run(
    service: Arc<Service>,
    edge_id: String,
    mut held: u64,
    tx: mpsc::Sender<Result<pb::SnapshotUpdate, Status>>,
    _slot: super::quota::Held,
) {
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
            match tokio::time::timeout(FEED_SEND_TIMEOUT, tx.send(Ok(update))).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) => {
                    let _ = set_connected(&service, &edge_id, false);
                    return;
                }
                Err(_) => {
                    tracing::warn!(edge = %edge_id, "edge did not take its update within 30 s: subscription dropped (it resubscribes)");
                    let _ = set_connected(&service, &edge_id, false);
                    return;
                }
            }
        }
        tokio::select! {
            changed = versions.changed() => if changed.is_err() { break },
            _ = tx.closed() => break,
        }
    }
    let _ = set_connected(&service, &edge_id, false);
    tracing::info!(edge = %edge_id, "edge unsubscribed");
}
