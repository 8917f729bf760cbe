//! The gslb DNS edge (`gslb-edge`), being built (issue 5). So far: the
//! client-region table and name resolution over a snapshot. Wire encoding,
//! the snapshot feed and the DNS server are not written yet; no binary.

pub mod geo;
pub mod lookup;
