//! The gslb aggregator. So far: the pure health engine that turns raw probe
//! results, heartbeats and configuration into health decisions.

pub mod assignments;
pub mod catalog;
pub mod cluster;
pub mod config;
pub mod control;
pub mod ctl;
pub mod declarative;
pub mod defaults;
pub mod engine;
pub mod feed;
pub mod gated;
pub mod metrics;
pub mod raft;
pub mod rest;
pub mod security;
pub mod server;
pub mod service;
pub mod store;
pub mod strict_json;
