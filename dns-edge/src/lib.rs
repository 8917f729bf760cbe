//! The gslb DNS edge (`gslb-edge`).
//!
//! Not built yet: the snapshot feed, answer tables and DNS server are issue 5.
//! The crate exists so the workspace has its final shape; it exports nothing.
