//! Asking a peer about itself: the status a node gives of its own (its id,
//! role, HTTP address), for joins and for a leader's HTTP address.

use std::time::Duration;

use gslb_proto::pb;
use gslb_proto::pb::cluster_service_client::ClusterServiceClient;
use tonic::Request;

use gslb_proto::link::Link;

/// The status the node at gRPC `address` gives of itself (asked stale, so
/// a follower or a node outside any cluster answers too), within `timeout`
/// for connecting and again for the call.
pub async fn own_status(
    link: &Link,
    address: &str,
    timeout: Duration,
) -> Result<pb::ClusterStatus, String> {
    let channel = link
        .endpoint(&link.url(address), timeout)
        .map_err(|e| e.to_string())?
        .timeout(timeout)
        .connect()
        .await
        .map_err(|e| gslb_shared::telemetry::error_chain(&e))?;
    let mut ask = Request::new(pb::ClusterStatusRequest {});
    ask.metadata_mut().insert(
        gslb_proto::metadata::STALE,
        tonic::metadata::MetadataValue::from_static("1"),
    );
    link.authorize(&mut ask);
    let status = ClusterServiceClient::new(channel)
        .status(ask)
        .await
        .map_err(|e| e.message().to_owned())?;
    Ok(status.into_inner())
}

/// The HTTP address the node at gRPC `address` reports.
pub async fn http_address_of(link: &Link, address: &str) -> Option<String> {
    let status = own_status(link, address, Duration::from_secs(1))
        .await
        .ok()?;
    Some(status.http_address).filter(|a| !a.is_empty())
}
