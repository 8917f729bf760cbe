//! `gslb.v1.ClusterService`: the cluster's state (leader, each node's
//! replicated index and lag) and membership changes. A node is added only
//! when it answers at its address with the id it is added under and is not
//! in a cluster yet; it catches up as a learner before it votes. A refused
//! change leaves the membership as it was.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use gslb_proto::pb;
use openraft::{BasicNode, ChangeMembers};
use tonic::{Request, Response, Status};

use crate::api::service::Service;
use crate::replication::cluster::Cluster;
use gslb_proto::link::Link;

/// How long a new node may take to catch up as a learner.
const CATCH_UP: Duration = Duration::from_secs(120);

/// The `ClusterService` gRPC service.
#[derive(Debug, Clone)]
pub struct Membership(pub Arc<Service>);

/// This node's view of the cluster.
pub fn status(service: &Service) -> pb::ClusterStatus {
    let version = service.view().version();
    let Some(cluster) = service.cluster() else {
        return pb::ClusterStatus {
            role: "single".into(),
            version,
            http_address: service.http_address().unwrap_or_default().to_owned(),
            ..Default::default()
        };
    };
    let m = cluster.raft.metrics().borrow().clone();
    let last = m.last_log_index.unwrap_or(0);
    let membership = m.membership_config.membership();
    let voters: BTreeSet<u64> = membership.voter_ids().collect();
    let nodes = membership
        .nodes()
        .map(|(id, node)| {
            let matched = match &m.replication {
                Some(_) if *id == cluster.id => Some(last),
                Some(r) => r.get(id).map(|l| l.map_or(0, |l| l.index)),
                None => None,
            };
            pb::ClusterNode {
                id: *id,
                address: node.addr.clone(),
                voter: voters.contains(id),
                matched_index: matched,
                lag: matched.map(|i| last.saturating_sub(i)),
            }
        })
        .collect();
    let leading = service.leading();
    let (leader_id, leader_address) = cluster.leader(leading).unwrap_or_default();
    pb::ClusterStatus {
        node_id: cluster.id,
        role: cluster.role(leading).into(),
        leader_id,
        leader_address,
        term: m.current_term,
        last_log_index: last,
        applied_index: m.last_applied.map_or(0, |l| l.index),
        version,
        nodes,
        http_address: service.http_address().unwrap_or_default().to_owned(),
    }
}

fn cluster(service: &Service) -> Result<&Arc<Cluster>, Status> {
    service.cluster().ok_or_else(|| {
        Status::failed_precondition("this aggregator runs alone (started without --node-id)")
    })
}

/// Check that `address` is a node started with `--node-id id` and no cluster.
async fn check_candidate(link: &Link, id: u64, address: &str) -> Result<(), Status> {
    let theirs = link
        .own_status(address, Duration::from_secs(2))
        .await
        .map_err(|e| {
            Status::failed_precondition(format!(
                "address: node {id} is not reachable at {address}: {e}"
            ))
        })?;
    if theirs.node_id != id {
        return Err(Status::failed_precondition(format!(
            "id: the aggregator at {address} is node {} ({}), not node {id}",
            theirs.node_id,
            if theirs.node_id == 0 {
                "started without --node-id"
            } else {
                "another node"
            }
        )));
    }
    if !theirs.nodes.is_empty() {
        return Err(Status::failed_precondition(format!(
            "id: node {id} at {address} is already in a cluster; start it with an empty data directory and no --peers"
        )));
    }
    Ok(())
}

#[tonic::async_trait]
impl pb::cluster_service_server::ClusterService for Membership {
    async fn status(
        &self,
        _: Request<pb::ClusterStatusRequest>,
    ) -> Result<Response<pb::ClusterStatus>, Status> {
        Ok(Response::new(status(&self.0)))
    }

    async fn add_node(
        &self,
        request: Request<pb::AddNodeRequest>,
    ) -> Result<Response<pb::ClusterStatus>, Status> {
        let cluster = cluster(&self.0)?;
        let pb::AddNodeRequest { id, address } = request.into_inner();
        if id == 0 {
            return Err(Status::invalid_argument("id: must be 1 or more"));
        }
        if address
            .rsplit_once(':')
            .and_then(|(_, p)| p.parse::<u16>().ok())
            .is_none()
        {
            return Err(Status::invalid_argument("address: must be HOST:PORT"));
        }
        let members = cluster.raft.metrics().borrow().membership_config.clone();
        if let Some(node) = members.membership().get_node(&id) {
            return Err(Status::already_exists(format!(
                "id: node {id} is already a member (at {})",
                node.addr
            )));
        }
        check_candidate(&cluster.link, id, &address).await?;
        let learner = cluster.raft.add_learner(id, BasicNode::new(&address), true);
        tokio::time::timeout(CATCH_UP, learner)
            .await
            .map_err(|_| Status::deadline_exceeded(format!("node {id} did not catch up within {CATCH_UP:?}; it stays a learner (remove it or retry)")))?
            .map_err(|e| Status::unavailable(format!("adding node {id}: {e}")))?;
        let mut voters: BTreeSet<u64> = members.membership().voter_ids().collect();
        voters.insert(id);
        cluster
            .raft
            .change_membership(voters, false)
            .await
            .map_err(|e| Status::unavailable(format!("making node {id} a voter: {e}")))?;
        tracing::info!(node = id, %address, "node added to the cluster");
        Ok(Response::new(status(&self.0)))
    }

    async fn form_cluster(
        &self,
        _: Request<pb::FormClusterRequest>,
    ) -> Result<Response<pb::ClusterStatus>, Status> {
        let cluster = cluster(&self.0)?;
        cluster.form().await.map_err(|e| match e {
            crate::replication::cluster::FormError::NoPeers => Status::failed_precondition(
                "this node was started without --peers: it joins a cluster with gslbctl cluster join",
            ),
            crate::replication::cluster::FormError::Formed => {
                Status::already_exists("the cluster is already formed")
            }
            crate::replication::cluster::FormError::Failed(why) => {
                Status::unavailable(format!("forming the cluster: {why}"))
            }
        })?;
        tracing::info!(node = cluster.id, "cluster formed (gslbctl cluster init)");
        Ok(Response::new(status(&self.0)))
    }

    async fn remove_node(
        &self,
        request: Request<pb::RemoveNodeRequest>,
    ) -> Result<Response<pb::ClusterStatus>, Status> {
        let cluster = cluster(&self.0)?;
        let id = request.into_inner().id;
        let members = cluster.raft.metrics().borrow().membership_config.clone();
        if members.membership().get_node(&id).is_none() {
            return Err(Status::not_found(format!("id: node {id} is not a member")));
        }
        let mut voters: BTreeSet<u64> = members.membership().voter_ids().collect();
        let change = if voters.remove(&id) {
            if voters.is_empty() {
                return Err(Status::failed_precondition(format!(
                    "id: node {id} is the last voter; a cluster needs one"
                )));
            }
            ChangeMembers::ReplaceAllVoters(voters)
        } else {
            ChangeMembers::RemoveNodes(BTreeSet::from([id]))
        };
        cluster
            .raft
            .change_membership(change, false)
            .await
            .map_err(|e| Status::unavailable(format!("removing node {id}: {e}")))?;
        tracing::info!(node = id, "node removed from the cluster");
        Ok(Response::new(status(&self.0)))
    }
}
