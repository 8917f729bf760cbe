//! UDP: send the payload, wait for a reply, match it. A connected socket
//! turns an ICMP port-unreachable into `refused`.
//!
//! A check with no payload and no expected reply sends an empty datagram
//! and passes on any reply, or on silence: no ICMP port-unreachable within
//! three quarters of the timeout (the rest is left for the scheduler).

use std::net::SocketAddr;

use gslb_shared::{FailReason, Probe};
use std::sync::Arc;

use crate::checker::destination::DenyList;

use super::{Checker, Failure, ProbeFuture};
use crate::target::Target;

/// UDP checker.
#[derive(Debug, Clone)]
pub struct UdpChecker {
    /// Destinations never sent to.
    pub deny: Arc<DenyList>,
}

impl Checker for UdpChecker {
    fn probe<'a>(&'a self, target: &'a Target) -> ProbeFuture<'a> {
        Box::pin(async move {
            let Probe::Udp(stream) = &target.check.probe else {
                return Err(Failure::new(FailReason::Other, "not a udp check"));
            };
            let silence_passes = target.payload.is_empty() && stream.expect.is_none();
            let socket =
                super::connect_udp(SocketAddr::new(target.address, target.port), &self.deny)
                    .await?;
            socket
                .send(&target.payload)
                .await
                .map_err(|e| Failure::io("send", &e))?;
            let mut reply = vec![0u8; 64 * 1024];
            let received = socket.recv(&mut reply);
            let n = if silence_passes {
                let quiet = target.check.timeout.mul_f64(0.75);
                match tokio::time::timeout(quiet, received).await {
                    Err(_) => return Ok(()),
                    Ok(n) => n.map_err(|e| Failure::io("recv", &e))?,
                }
            } else {
                received.await.map_err(|e| Failure::io("recv", &e))?
            };
            match &target.pattern {
                Some(pattern) if !pattern.is_match(&reply[..n]) => Err(Failure::new(
                    FailReason::BodyMismatch,
                    format!("reply of {n} bytes did not match"),
                )),
                _ => Ok(()),
            }
        })
    }
}
