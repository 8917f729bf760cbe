//! The gslb probe agent: checkers, scheduling and the result uplink.

pub mod agent;
pub use gslb_shared::backoff;
pub mod buffer;
pub mod checker;
pub mod clock;
pub mod config;
pub mod metrics;
pub mod scheduler;
pub mod target;
pub mod uplink;
pub mod verdict;
