//! The gslb DNS edge (`gslb-edge`): subscribes to the aggregator's snapshot
//! feed, compiles each applied snapshot into an answer table, and answers
//! authoritative DNS over UDP and TCP from memory.

pub mod answer;
pub mod cache;
pub mod config;
pub mod edge;
pub mod feed;
pub mod geo;
pub mod geo_reload;
pub mod metrics;
pub mod pools;
pub mod rrl;
pub mod server;
pub mod state;
pub mod status;
pub mod table;
pub mod warmup;
pub mod xfr;
