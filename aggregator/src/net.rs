//! The aggregator's side of link security: mutual TLS on the gRPC
//! listener with the caller's role taken from its certificate (`tls`,
//! `listener`; the identity rules, the development CA and the token file
//! are `gslb_proto::link`'s, shared with gslbctl) and the file-change
//! stamps that reload certificates and tokens (`watch`). See
//! docs/security.md.

pub mod listener;
pub mod tls;
pub mod watch;
