//! Helpers for the aggregator's integration tests: the real binary, a
//! scripted agent, an HTTP client.
#![allow(dead_code, missing_docs, clippy::unwrap_used)]

pub mod agent;
pub mod http;
pub mod process;
