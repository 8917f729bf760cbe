//! End-to-end scenarios: the real aggregator, agents, edge and demo
//! backends on loopback (and, for the location quorum, in network
//! namespaces this test creates), observed through gslbctl and dig.
//! Every wait polls a condition with a deadline.
#![allow(missing_docs, clippy::unwrap_used)]

mod access;
mod audit;
mod backup;
mod change_safety;
mod checks;
mod cluster;
mod dnssec;
mod edge_warmup;
mod ephemeral;
mod findings;
mod geo_mmdb;
mod hardening;
mod hostnames;
mod latency;
mod notifications;
mod observability;
mod openapi;
mod partition;
mod quorum;
mod restart;
mod rollover;
mod routes;
mod security;
mod slow_start;
mod steering;
mod transfer;
mod ui;
mod warmup;
mod zonefile;
