//! ICMP echo through surge-ping, v4 and v6. The sockets are opened on first
//! use: unprivileged ICMP sockets where `net.ipv4.ping_group_range` allows,
//! else raw sockets (root or CAP_NET_RAW); which one is logged once.

use std::sync::atomic::{AtomicU16, Ordering};

use gslb_shared::FailReason;
use surge_ping::{Client, Config, ICMP, PingIdentifier, PingSequence, SurgeError};
use tokio::sync::OnceCell;

use super::{Checker, Failure, ProbeFuture};
use crate::target::Target;

/// ICMP checker with one lazily opened client per family.
#[derive(Default)]
pub struct IcmpChecker {
    v4: OnceCell<Result<Client, String>>,
    v6: OnceCell<Result<Client, String>>,
    /// Identifiers distinguish concurrent pings to the same host.
    next_ident: AtomicU16,
}

impl std::fmt::Debug for IcmpChecker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("IcmpChecker")
            .field("v4_open", &self.v4.initialized())
            .field("v6_open", &self.v6.initialized())
            .finish()
    }
}

impl IcmpChecker {
    /// A checker; sockets open on the first probe.
    pub fn new() -> Self {
        Self::default()
    }

    async fn client(&self, v6: bool) -> Result<&Client, Failure> {
        let (cell, kind, family) = if v6 {
            (&self.v6, ICMP::V6, "IPv6")
        } else {
            (&self.v4, ICMP::V4, "IPv4")
        };
        let client = cell
            .get_or_init(|| async move {
                let config = Config::builder().kind(kind).sock_type_hint(socket2::Type::DGRAM).build();
                match Client::new(&config) {
                    Ok(client) => {
                        let how = if client.get_socket().get_type() == socket2::Type::DGRAM {
                            "unprivileged ICMP socket (ping_group_range allows it)"
                        } else {
                            "raw ICMP socket (root or CAP_NET_RAW)"
                        };
                        tracing::info!(family, socket = how, "icmp checker ready");
                        Ok(client)
                    }
                    Err(err) => {
                        tracing::warn!(family, error = %err, "icmp checker cannot open a socket; icmp probes will fail");
                        Err(err.to_string())
                    }
                }
            })
            .await;
        client
            .as_ref()
            .map_err(|e| Failure::new(FailReason::Other, format!("icmp socket: {e}")))
    }
}

impl Checker for IcmpChecker {
    fn probe<'a>(&'a self, target: &'a Target) -> ProbeFuture<'a> {
        Box::pin(async move {
            let client = self.client(target.address.is_ipv6()).await?;
            let ident = PingIdentifier(self.next_ident.fetch_add(1, Ordering::Relaxed));
            let mut pinger = client.pinger(target.address, ident).await;
            pinger.timeout(target.check.timeout);
            match pinger.ping(PingSequence(0), &[0u8; 16]).await {
                Ok(_) => Ok(()),
                Err(SurgeError::Timeout { .. }) => {
                    Err(Failure::new(FailReason::Timeout, "no echo reply"))
                }
                Err(SurgeError::IOError(e)) => Err(Failure::io("icmp", &e)),
                Err(other) => Err(Failure::new(FailReason::Other, format!("icmp: {other}"))),
            }
        })
    }
}
