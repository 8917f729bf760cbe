//! The end-to-end harness: start the real gslb binaries (aggregator, agents,
//! edge, demo backends) on loopback or inside network namespaces the test
//! creates, drive them with gslbctl and dig, and wait on conditions with
//! deadlines. Used by this crate's tests and by the failover benchmark.

pub mod bench;
pub mod bins;
pub mod browser;
pub mod catalog;
pub mod cluster;
pub mod dns;
pub mod local;
pub mod mesh;
pub mod mmdb;
pub mod netns;
pub mod pki;
pub mod process;
pub mod receiver;
pub mod secondary;
pub mod unbound;
pub mod wait;
pub mod watcher;

pub use catalog::ZONE;
pub use local::LocalMesh;
pub use mesh::{Agent, Aggregator, Backend, Edge};
pub use wait::{temp_dir, wait_until};
pub use watcher::{Watched, Watcher};
