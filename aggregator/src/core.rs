//! The core: what the aggregator knows and decides, with no API and no
//! replication in it. Catalog rules, the control core behind every API,
//! the store, the feed to edges, declarative planning, assignments.

pub mod assignments;
pub mod audit;
pub mod catalog;
pub mod control;
pub mod declarative;
pub mod feed;
pub mod notify;
pub mod scope;
pub mod sessions;
pub mod store;
pub mod strict_json;
pub mod zonefile;

use std::sync::{Mutex, MutexGuard};

/// Lock a mutex, ignoring poisoning: every critical section in the
/// aggregator leaves its data consistent before anything that could panic.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The wall clock as engine time.
pub fn now() -> gslb_engine::Timestamp {
    gslb_engine::Timestamp(gslb_shared::clock::now_ms())
}
