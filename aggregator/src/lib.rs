//! The gslb aggregator, in three parts (docs/architecture.md). Every
//! dependency points one way: `api` and `replication` depend on `core`,
//! `api` on `replication`; `core` imports neither, and `net` (links and
//! TLS) nothing of the aggregator. The health engine is its own crate,
//! `gslb-engine`, which the compiler keeps free of IO, clocks and runtimes.
//!
//! - [`core`]: catalog rules, the control core, the store, the edge feed,
//!   declarative planning, agents' assignments.
//! - [`replication`]: Raft (log, state machine, network) and the cluster
//!   node built on it.
//! - [`api`]: admin gRPC and the agent and edge streams, REST, the HTTP
//!   listener, metrics, access rules and tokens, and the adapters that put
//!   the cluster behind them (leader gate, membership, role changes).
//! - [`net`]: the listener's mutual TLS and accept loop (identities, the
//!   dialer and the token file are `gslb_proto::link`'s).
//! - [`config`] (the binary's settings) sits on top. gslbctl is its own
//!   package (`aggregator/ctl`), on `gslb-proto` and `gslb-shared` only.

pub mod api;
pub mod config;
pub mod core;
pub mod net;
pub mod replication;
