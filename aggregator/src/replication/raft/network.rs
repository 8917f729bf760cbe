//! Raft messages between aggregator nodes over gRPC (`gslb.v1.RaftService`):
//! openraft's requests and responses as JSON in a small envelope carrying
//! the sender's node id. The client side is openraft's network factory;
//! the server side hands each request to the local Raft instance.

use std::error::Error;

use gslb_proto::pb;
use gslb_proto::pb::raft_service_client::RaftServiceClient;
use openraft::error::{
    InstallSnapshotError, NetworkError, RPCError, RaftError, RemoteError, Unreachable,
};
use openraft::network::{RPCOption, RaftNetwork, RaftNetworkFactory};
use openraft::raft::{
    AppendEntriesRequest, AppendEntriesResponse, InstallSnapshotRequest, InstallSnapshotResponse,
    VoteRequest, VoteResponse,
};
use openraft::{BasicNode, Raft};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tonic::transport::Channel;

use super::TypeConfig;

/// Opens a [`Connection`] per peer for openraft.
#[derive(Debug, Clone)]
pub struct Network {
    /// This node's id, sent with every message.
    pub from: u64,
    /// How peers are reached.
    pub link: gslb_proto::link::Link,
}

impl RaftNetworkFactory<TypeConfig> for Network {
    type Network = Connection;

    async fn new_client(&mut self, target: u64, node: &BasicNode) -> Connection {
        Connection {
            from: self.from,
            target,
            addr: node.addr.clone(),
            link: self.link.clone(),
            client: None,
        }
    }
}

/// The link to one peer; connects lazily and again after a failure.
#[derive(Debug)]
pub struct Connection {
    from: u64,
    target: u64,
    addr: String,
    link: gslb_proto::link::Link,
    client: Option<RaftServiceClient<Channel>>,
}

type Rpc<E> = RPCError<u64, BasicNode, RaftError<u64, E>>;

impl Connection {
    async fn client(&mut self) -> Result<RaftServiceClient<Channel>, Unreachable> {
        if let Some(c) = &self.client {
            return Ok(c.clone());
        }
        let url = self.link.url(&self.addr);
        let channel = self
            .link
            .endpoint(&url, std::time::Duration::from_secs(1))
            .map_err(|e| Unreachable::new(&std::io::Error::other(e)))?
            .connect()
            .await
            .map_err(|e| Unreachable::new(&e))?;
        let client = RaftServiceClient::new(channel)
            .max_decoding_message_size(gslb_proto::MAX_MESSAGE)
            .max_encoding_message_size(gslb_proto::MAX_MESSAGE);
        self.client = Some(client.clone());
        Ok(client)
    }

    /// Send `req` with `call`, decode the remote `Result`.
    async fn send<Req, Resp, E, F, Fut>(&mut self, req: &Req, call: F) -> Result<Resp, Rpc<E>>
    where
        Req: Serialize,
        Resp: DeserializeOwned,
        E: Error + DeserializeOwned,
        F: FnOnce(RaftServiceClient<Channel>, pb::RaftPayload) -> Fut,
        Fut: Future<Output = Result<tonic::Response<pb::RaftPayload>, tonic::Status>>,
    {
        let json = serde_json::to_vec(req).map_err(|e| RPCError::Network(NetworkError::new(&e)))?;
        let client = self.client().await.map_err(RPCError::Unreachable)?;
        let payload = pb::RaftPayload {
            from: self.from,
            json,
        };
        let reply = match call(client, payload).await {
            Ok(r) => r.into_inner(),
            Err(status) => {
                // Reconnect next time; the peer may have restarted elsewhere.
                self.client = None;
                return Err(RPCError::Unreachable(Unreachable::new(&status)));
            }
        };
        let result: Result<Resp, RaftError<u64, E>> = serde_json::from_slice(&reply.json)
            .map_err(|e| RPCError::Network(NetworkError::new(&e)))?;
        result.map_err(|e| RPCError::RemoteError(RemoteError::new(self.target, e)))
    }
}

impl RaftNetwork<TypeConfig> for Connection {
    async fn append_entries(
        &mut self,
        rpc: AppendEntriesRequest<TypeConfig>,
        _option: RPCOption,
    ) -> Result<AppendEntriesResponse<u64>, Rpc<openraft::error::Infallible>> {
        self.send(&rpc, |mut c, p| async move { c.append_entries(p).await })
            .await
    }

    async fn install_snapshot(
        &mut self,
        rpc: InstallSnapshotRequest<TypeConfig>,
        _option: RPCOption,
    ) -> Result<InstallSnapshotResponse<u64>, Rpc<InstallSnapshotError>> {
        self.send(&rpc, |mut c, p| async move { c.install_snapshot(p).await })
            .await
    }

    async fn vote(
        &mut self,
        rpc: VoteRequest<u64>,
        _option: RPCOption,
    ) -> Result<VoteResponse<u64>, Rpc<openraft::error::Infallible>> {
        self.send(&rpc, |mut c, p| async move { c.vote(p).await })
            .await
    }
}

/// The gRPC service in front of the local Raft instance.
#[derive(Clone)]
pub struct RaftRpc {
    /// The local node.
    pub raft: Raft<TypeConfig>,
}

impl RaftRpc {
    /// Refuse senders outside a membership this node already has.
    fn admit(&self, from: u64) -> Result<(), tonic::Status> {
        let metrics = self.raft.metrics().borrow().clone();
        let members = metrics.membership_config.membership();
        let known = members.nodes().count() == 0 || members.nodes().any(|(id, _)| *id == from);
        if known {
            Ok(())
        } else {
            Err(tonic::Status::permission_denied(format!(
                "node {from} is not a member of this cluster"
            )))
        }
    }
}

fn decode<T: DeserializeOwned>(p: &pb::RaftPayload) -> Result<T, tonic::Status> {
    serde_json::from_slice(&p.json)
        .map_err(|e| tonic::Status::invalid_argument(format!("json: {e}")))
}

fn encode<T: Serialize>(value: &T) -> Result<tonic::Response<pb::RaftPayload>, tonic::Status> {
    let json = serde_json::to_vec(value).map_err(|e| tonic::Status::internal(e.to_string()))?;
    Ok(tonic::Response::new(pb::RaftPayload { from: 0, json }))
}

#[tonic::async_trait]
impl pb::raft_service_server::RaftService for RaftRpc {
    async fn append_entries(
        &self,
        request: tonic::Request<pb::RaftPayload>,
    ) -> Result<tonic::Response<pb::RaftPayload>, tonic::Status> {
        let p = request.into_inner();
        self.admit(p.from)?;
        encode(&self.raft.append_entries(decode(&p)?).await)
    }

    async fn vote(
        &self,
        request: tonic::Request<pb::RaftPayload>,
    ) -> Result<tonic::Response<pb::RaftPayload>, tonic::Status> {
        let p = request.into_inner();
        self.admit(p.from)?;
        encode(&self.raft.vote(decode(&p)?).await)
    }

    async fn install_snapshot(
        &self,
        request: tonic::Request<pb::RaftPayload>,
    ) -> Result<tonic::Response<pb::RaftPayload>, tonic::Status> {
        let p = request.into_inner();
        self.admit(p.from)?;
        encode(&self.raft.install_snapshot(decode(&p)?).await)
    }
}
