//! The APIs: admin gRPC with the agent and edge streams (`service`), REST
//! (`rest`), the listeners (`server`), metrics, access rules and admin
//! tokens (`access`, `guard`, `rest_auth`, `tokens`), and the adapters that put the
//! cluster behind them: the leader gate (`leader`), `gslbctl cluster`
//! (`membership`) and role changes (`roles`). Depends on `core`,
//! `replication` and `net`.

pub mod access;
pub mod caller;
pub mod flatten;
pub mod forward;
pub mod gated;
pub mod geo;
pub mod guard;
pub mod leader;
pub mod membership;
pub mod metrics;
pub mod notify;
pub mod rest;
pub mod rest_auth;
pub mod roles;
pub mod rollover;
pub mod secrets;
pub mod server;
pub mod service;
pub mod tokens;
pub mod ui;

use std::sync::Arc;

/// What the listeners and guards of one aggregator use.
pub struct Security {
    /// TLS material; `None` runs plain text (`--insecure`, loopback only).
    pub tls: Option<Arc<crate::net::tls::ReloadingTls>>,
    /// Admin tokens.
    pub tokens: Arc<tokens::Tokens>,
}
