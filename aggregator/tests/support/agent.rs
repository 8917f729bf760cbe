//! A scripted agent for tests against the real aggregator: registers a
//! location over the agent protocol and hands back the stream's ends.

use gslb_proto::pb;
use gslb_proto::pb::agent_service_client::AgentServiceClient;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

/// Register `location` at `grpc`: its first message (the assignment set),
/// a sender for results, and the rest of the inbound stream.
pub async fn register(
    grpc: &str,
    location: &str,
    agent_id: &str,
) -> (
    pb::AggregatorMessage,
    mpsc::Sender<pb::AgentMessage>,
    tonic::Streaming<pb::AggregatorMessage>,
) {
    let (tx, rx) = mpsc::channel(16);
    let register = pb::Register {
        location: location.into(),
        region: "eu".into(),
        version: "test".into(),
        agent_id: agent_id.into(),
        // The older form: every check inline (real agents ask for checks
        // by id; both are served).
        checks_by_id: false,
        sets_in_parts: false,
    };
    tx.send(pb::AgentMessage {
        msg: Some(pb::agent_message::Msg::Register(register)),
    })
    .await
    .unwrap();
    let mut inbound = AgentServiceClient::connect(grpc.to_owned())
        .await
        .unwrap()
        .session(ReceiverStream::new(rx))
        .await
        .unwrap()
        .into_inner();
    let first = inbound.message().await.unwrap().unwrap();
    (first, tx, inbound)
}
