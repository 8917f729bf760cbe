//! The gslb DNS edge (`gslb-edge`), being built (issue 5). So far: the
//! client-region table. The snapshot feed, answer tables and DNS server
//! are not written yet; this crate has no binary.

pub mod geo;
