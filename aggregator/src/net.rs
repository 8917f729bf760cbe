//! Link and admin security: mutual TLS on the gRPC listener with the
//! caller's role taken from its certificate (`identity`, `tls`,
//! `listener`), per-service access rules (`guard`), admin bearer tokens
//! (`tokens`, `rest_auth`) and the development CA behind `gslbctl certs`
//! (`pki`). See docs/security.md.

pub mod identity;
pub mod link;
pub mod listener;
pub mod pki;
pub mod tls;
pub mod watch;
