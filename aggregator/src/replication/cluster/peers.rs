//! A leader's HTTP address, asked of the node itself (`Link::own_status`),
//! for redirecting REST writes.

use std::time::Duration;

use gslb_proto::link::Link;

/// The HTTP address the node at gRPC `address` reports.
pub async fn http_address_of(link: &Link, address: &str) -> Option<String> {
    let status = link
        .own_status(address, Duration::from_secs(1))
        .await
        .ok()?;
    Some(status.http_address).filter(|a| !a.is_empty())
}
