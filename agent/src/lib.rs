//! The gslb probe agent (`gslb-agent`).
//!
//! Not built yet: the checkers, scheduler and uplink are issue 3. The crate
//! exists so the workspace has its final shape; it exports nothing.
