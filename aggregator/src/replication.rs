//! Replication: the Raft log, state machine and network (`raft`), and the
//! cluster node built on them (`cluster`), whose store proposes every
//! durable write through the log. Depends on `core` and `net` only.

pub mod cluster;
pub mod raft;
