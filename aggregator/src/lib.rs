//! The gslb aggregator (the health engine is its own crate, gslb-engine): the
//! control core and its store, the admin and stream APIs, and replication.

pub mod assignments;
pub mod catalog;
pub mod cluster;
pub mod config;
pub mod control;
pub mod ctl;
pub mod declarative;
pub mod defaults;

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
