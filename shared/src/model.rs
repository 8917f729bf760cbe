//! The model of DESIGN.md ("The model"): zones, record sets, pools, members and
//! health checks, plus the health facts that selection reads.
//!
//! These are plain values; [`crate::validate`] decides whether they are
//! acceptable and the generated protobuf types never appear here.

mod address;
mod catalog;
mod check;
mod facts;
mod ids;
mod ip_text;
mod member;
mod name;
mod notifier;
mod place;
mod pool;
mod probe;
mod record;
mod resolved;
mod rtt;
mod schema;
mod signing;
mod snapshot;
mod tsig;
mod zone;

pub use address::*;
pub use catalog::*;
pub use check::*;
pub use facts::*;
pub use ids::*;
pub use ip_text::{AddressError, plain_ip};
pub use member::*;
pub use name::*;
pub use notifier::*;
pub use place::*;
pub use pool::*;
pub use probe::*;
pub use record::*;
pub use resolved::*;
pub use rtt::*;
pub use signing::*;
pub use snapshot::*;
pub use tsig::*;
pub use zone::*;
