//! Every gRPC metadata key (and matching HTTP header) gslb uses, in one
//! table.

/// The caller's bearer token: `Bearer TOKEN`.
pub const AUTHORIZATION: &str = "authorization";
/// Sent by a follower with its refusal: the leader's gRPC address (also an
/// HTTP response header).
pub const LEADER: &str = "gslb-leader";
/// Asks for a local, possibly stale read instead of the leader's.
pub const STALE: &str = "gslb-stale";
