//! End-to-end tests of `gslb-edge`: the real binary, a real aggregator (or
//! a test feed server where the test must control the stream), checked
//! with dig, kdig, raw sockets and Knot, on loopback only.
#![allow(missing_docs, clippy::unwrap_used)]

mod dig;
mod feed_gap;
mod generated;
mod health;
mod knot;
mod lifecycle;
mod resolver;
mod rootzone;
mod rrl;
mod support;
mod tcp;
mod xdp;
