//! `gslbctl cluster status|init|join|remove`. Status comes from the leader (a
//! follower's refusal names it and gslbctl follows, like every call); each
//! node is then asked, stale, for its own applied index.

use std::time::Duration;

use gslb_proto::pb;
use gslb_proto::pb::cluster_service_client::ClusterServiceClient;
use serde_json::json;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use super::table::render;
use super::{CallMeta, CtlError, Output};

/// Cluster actions.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum ClusterAction {
    /// The leader, the term and each node's replicated and applied index and lag.
    Status,
    /// Add a node started with `--node-id ID` (no --peers) listening at ADDRESS.
    Join {
        /// The new node's id.
        #[arg(long)]
        id: u64,
        /// Its gRPC address, HOST:PORT.
        #[arg(long)]
        address: String,
    },
    /// Form the cluster of the reached node's --peers, once (nodes started
    /// with --bootstrap manual wait for this).
    Init,
    /// Remove a node from the cluster.
    Remove {
        /// The node's id.
        #[arg(long)]
        id: u64,
    },
}

type Client = ClusterServiceClient<InterceptedService<Channel, CallMeta>>;

/// Run one cluster action on the node behind `channel`.
pub async fn run(
    channel: Channel,
    action: ClusterAction,
    meta: CallMeta,
    out: Output,
) -> Result<String, CtlError> {
    let link = meta.link.clone();
    let mut c: Client = ClusterServiceClient::with_interceptor(channel, meta);
    let status = match action {
        ClusterAction::Status => c.status(pb::ClusterStatusRequest {}).await?,
        ClusterAction::Join { id, address } => {
            c.add_node(pb::AddNodeRequest { id, address }).await?
        }
        ClusterAction::Remove { id } => c.remove_node(pb::RemoveNodeRequest { id }).await?,
        ClusterAction::Init => c.form_cluster(pb::FormClusterRequest {}).await?,
    }
    .into_inner();
    let mut applied = Vec::new();
    for node in &status.nodes {
        applied.push(applied_at(&link, &node.address).await);
    }
    Ok(show(&status, &applied, out))
}

/// A node's own applied index, asked of it directly (None: no answer).
async fn applied_at(link: &gslb_proto::link::Link, address: &str) -> Option<u64> {
    let status = link.own_status(address, Duration::from_secs(2)).await;
    status.ok().map(|s| s.applied_index)
}

fn show(s: &pb::ClusterStatus, applied: &[Option<u64>], out: Output) -> String {
    let number = |n: Option<u64>| n.map_or_else(|| "-".to_owned(), |n| n.to_string());
    if out == Output::Json {
        let nodes: Vec<_> = s
            .nodes
            .iter()
            .zip(applied)
            .map(|(n, a)| {
                json!({"id": n.id, "address": n.address, "voter": n.voter,
                    "matchedIndex": n.matched_index, "lag": n.lag, "appliedIndex": a})
            })
            .collect();
        let value = json!({"nodeId": s.node_id, "role": s.role, "leaderId": s.leader_id,
            "leaderAddress": s.leader_address, "term": s.term, "lastLogIndex": s.last_log_index,
            "appliedIndex": s.applied_index, "version": s.version, "nodes": nodes});
        return serde_json::to_string_pretty(&value).unwrap_or_default() + "\n";
    }
    if s.role == "single" {
        return format!("single node (no --node-id), version {}\n", s.version);
    }
    let leader = if s.leader_id == 0 {
        "none known".to_owned()
    } else {
        format!("node {} at {}", s.leader_id, s.leader_address)
    };
    let head = format!(
        "node {} ({}), term {}, leader {leader}, last log index {}, applied {}, version {}\n",
        s.node_id, s.role, s.term, s.last_log_index, s.applied_index, s.version
    );
    let rows: Vec<Vec<String>> = s
        .nodes
        .iter()
        .zip(applied)
        .map(|(n, a)| {
            vec![
                n.id.to_string(),
                n.address.clone(),
                if n.voter { "voter" } else { "learner" }.to_owned(),
                number(n.matched_index),
                number(*a),
                number(n.lag),
            ]
        })
        .collect();
    head + &render(
        &["ID", "ADDRESS", "ROLE", "MATCHED", "APPLIED", "LAG"],
        &rows,
    )
}
