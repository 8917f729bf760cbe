//! Validation of every field of the model, with errors that name the field and
//! the rule. The admin API runs it before anything is stored; agents and edges
//! run the runtime parts (address, HTTP target) again before acting.

mod address;
mod catalog;
mod check;
mod cuts;
mod error;
mod geo;
pub mod hostnames;
mod http;
mod member;
mod notifier;
mod pool;
mod probe;
mod record;
mod signing;
mod text;
mod tsig;
mod zone;

pub use crate::model::{AddressError, plain_ip};
pub use address::unanswerable;
pub use catalog::catalog;
pub use check::{MAX_INTERVAL, MAX_RETRIES, MIN_INTERVAL, check};
pub use cuts::{highest_cut, placement};
pub use error::{FieldError, ValidationError};
pub use geo::{CONTINENTS, MAX_GEO_KEYS, MAX_LOCATIONS_PER_REGION, MAX_REGION_LOCATIONS};
pub use http::{HttpTargetError, header, http_path, method};
pub use member::member;
pub use notifier::{
    MAX_FILTER_ENTRIES, MAX_NOTIFIER_SECRET, MAX_URL_LEN, MIN_SIGNING_SECRET, endpoint, notifier,
    url,
};
pub use pool::{MAX_SLOW_START, MIN_SLOW_START, pool};
pub use probe::{
    MAX_GRPC_SERVICE, MAX_HEADERS, MAX_MATCH_TEXT, MAX_PAYLOAD, MAX_RCODES, MAX_REDIRECTS,
    MAX_REGEX_SIZE,
};
pub use record::record;
pub use text::{MAX_EDGE_ID, edge_id, location_id, region};
pub use text::{invisible, name_key};
pub use tsig::{
    MAX_NOTIFY_TARGETS, MAX_TRANSFER_PEERS, MAX_TSIG_SECRET, MIN_TSIG_SECRET, tsig_key, tsig_secret,
};
pub use zone::zone;

/// Largest TTL we accept, in seconds (one week).
pub const MAX_TTL: u32 = 604_800;
/// Largest member weight.
pub const MAX_WEIGHT: u32 = 1_000_000;
/// Largest warm-up threshold, in cycles.
pub const MAX_WARMUP_THRESHOLD: u32 = 1_000;
/// Largest score window, in cycles.
pub const MAX_WINDOW: u32 = 64;
/// Largest `firstN`.
pub const MAX_FIRST_N: u32 = 64;
