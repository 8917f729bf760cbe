//! TCP connect, optionally sending a payload and matching the reply.

use std::net::SocketAddr;
use std::sync::Arc;

use gslb_shared::{FailReason, Probe};
use regex::bytes::Regex;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::{Checker, Failure, Outcome, ProbeFuture};
use crate::checker::destination::DenyList;
use crate::target::Target;

/// Most reply bytes read while looking for the expected pattern.
pub const MAX_REPLY: usize = 64 * 1024;

/// TCP checker.
#[derive(Debug, Clone)]
pub struct TcpChecker {
    /// Destinations never connected to.
    pub deny: Arc<DenyList>,
}

impl Checker for TcpChecker {
    fn probe<'a>(&'a self, target: &'a Target) -> ProbeFuture<'a> {
        Box::pin(async move {
            let send: &[u8] = match &target.check.probe {
                Probe::Tcp(_) => &target.payload,
                _ => b"",
            };
            let mut stream =
                super::connect_tcp(SocketAddr::new(target.address, target.port), &self.deny)
                    .await?;
            if !send.is_empty() {
                stream
                    .write_all(send)
                    .await
                    .map_err(|e| Failure::io("send", &e))?;
            }
            reset_on_close(&stream);
            if let Some(pattern) = &target.pattern {
                read_until_match(&mut stream, pattern).await?;
            }
            Ok(())
        })
    }
}

/// Close probe connections with a reset instead of a FIN: a probe that
/// closes first would otherwise hold its port in TIME_WAIT for a minute, and
/// at thousands of probes a second that exhausts the ephemeral port range.
pub fn reset_on_close(stream: &TcpStream) {
    // Best effort: failing to set it costs ports, not correctness.
    let _ = socket2::SockRef::from(stream).set_linger(Some(std::time::Duration::ZERO));
}

/// Read until `pattern` matches what has arrived, the peer closes, or
/// [`MAX_REPLY`] bytes have been read.
pub async fn read_until_match<R: AsyncRead + Unpin>(reader: &mut R, pattern: &Regex) -> Outcome {
    let mut reply = Vec::with_capacity(512);
    let mut chunk = [0u8; 4096];
    loop {
        let n = reader
            .read(&mut chunk)
            .await
            .map_err(|e| Failure::io("read", &e))?;
        if n == 0 {
            return Err(Failure::new(
                FailReason::BodyMismatch,
                format!("reply of {} bytes did not match", reply.len()),
            ));
        }
        reply.extend_from_slice(&chunk[..n]);
        if pattern.is_match(&reply) {
            return Ok(());
        }
        if reply.len() >= MAX_REPLY {
            return Err(Failure::new(
                FailReason::BodyMismatch,
                "no match in the first 64 KiB",
            ));
        }
    }
}
