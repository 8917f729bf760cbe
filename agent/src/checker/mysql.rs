//! MySQL: read the server greeting and pass on a protocol-10 handshake.
//! No login is attempted.

use std::net::SocketAddr;

use gslb_shared::FailReason;
use std::sync::Arc;
use tokio::io::AsyncReadExt;

use crate::checker::destination::DenyList;

use super::{Checker, Failure, ProbeFuture};
use crate::target::Target;

/// Largest greeting accepted.
const MAX_GREETING: usize = 16 * 1024;

/// MySQL checker.
#[derive(Debug, Clone)]
pub struct MysqlChecker {
    /// Destinations never connected to.
    pub deny: Arc<DenyList>,
}

impl Checker for MysqlChecker {
    fn probe<'a>(&'a self, target: &'a Target) -> ProbeFuture<'a> {
        Box::pin(async move {
            let mut stream =
                super::connect_tcp(SocketAddr::new(target.address, target.port), &self.deny)
                    .await?;
            super::tcp::reset_on_close(&stream);
            let mut header = [0u8; 4];
            stream
                .read_exact(&mut header)
                .await
                .map_err(|e| Failure::io("read greeting", &e))?;
            let len =
                usize::from(header[0]) | usize::from(header[1]) << 8 | usize::from(header[2]) << 16;
            if len == 0 || len > MAX_GREETING {
                return Err(Failure::new(
                    FailReason::Protocol,
                    format!("greeting length {len} is not plausible"),
                ));
            }
            let mut payload = vec![0u8; len];
            stream
                .read_exact(&mut payload)
                .await
                .map_err(|e| Failure::io("read greeting", &e))?;
            parse_greeting(&payload)
        })
    }
}

/// Accept a protocol-10 handshake; report an error packet's message.
pub fn parse_greeting(payload: &[u8]) -> Result<(), Failure> {
    match payload.first() {
        Some(10) => {
            let version_end = payload[1..].iter().position(|b| *b == 0);
            match version_end {
                Some(_) => Ok(()),
                None => Err(Failure::new(
                    FailReason::Protocol,
                    "protocol 10 greeting without a version string",
                )),
            }
        }
        Some(0xff) => {
            let message = payload
                .get(3..)
                .map(String::from_utf8_lossy)
                .unwrap_or_default();
            Err(Failure::new(
                FailReason::Protocol,
                format!("server refused: {message}"),
            ))
        }
        Some(v) => Err(Failure::new(
            FailReason::Protocol,
            format!("unsupported protocol version {v}"),
        )),
        None => Err(Failure::new(FailReason::Protocol, "empty greeting")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greeting_shapes() {
        assert!(parse_greeting(b"\x0a8.0.36\0rest").is_ok());
        assert_eq!(
            parse_greeting(b"\x0a8.0").unwrap_err().reason,
            FailReason::Protocol
        );
        let err = parse_greeting(b"\xff\x6a\x04Host is blocked").unwrap_err();
        assert!(err.detail.contains("Host is blocked"), "{}", err.detail);
        assert!(parse_greeting(b"\x09old").is_err());
        assert!(parse_greeting(b"").is_err());
    }
}
