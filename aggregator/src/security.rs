//! Link and admin security: mutual TLS on the gRPC listener with the
//! caller's role taken from its certificate (`identity`, `tls`,
//! `listener`), per-service access rules (`guard`), admin bearer tokens
//! (`tokens`, `rest_auth`) and the development CA behind `gslbctl certs`
//! (`pki`). See docs/security.md.

pub mod guard;
pub mod identity;
pub mod link;
pub mod listener;
pub mod pki;
pub mod rest_auth;
pub mod tls;
pub mod tokens;
pub mod watch;

use std::sync::Arc;

/// What the listeners and guards of one aggregator use.
pub struct Security {
    /// TLS material; `None` runs plain text (`--insecure`, loopback only).
    pub tls: Option<Arc<tls::ReloadingTls>>,
    /// Admin tokens.
    pub tokens: Arc<tokens::Tokens>,
}
