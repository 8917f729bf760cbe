//! Proto ↔ domain conversions, one file per message family.
//!
//! Domain → proto is infallible (`From`). Proto → domain is `TryFrom` with a
//! [`ValidationError`] naming the offending field, because everything that
//! arrives over the wire is peer input: addresses are parsed with the same
//! rules as the admin API, enums must be known, required parts present.

mod assignment;
mod check;
mod facts;
mod member;
mod notifier;
mod pool;
mod probe;
mod record;
mod signing;
mod snapshot;
mod status;
mod zone;

use gslb_shared::validate::ValidationError;
use gslb_shared::{DnsName, Region};

pub use assignment::{assignments_to_pb, offers_from_pb};
pub use facts::{health_from_pb, health_to_pb, ramp_from_pb};
pub use notifier::notifier_kind;
pub use probe::{fail_reason_from_pb, fail_reason_to_pb};
pub use record::rtype_from_pb;
pub use snapshot::{
    delta_from_pb, snapshot_from_bytes, snapshot_from_pb, snapshot_to_bytes, update_from_pb,
};
pub use status::{decisions_json, failure_name, health_name};

/// A conversion failure on `field`.
pub(crate) fn bad(field: &str, rule: impl Into<String>) -> ValidationError {
    ValidationError::single(field, rule)
}

pub(crate) fn name(field: &str, text: &str) -> Result<DnsName, ValidationError> {
    DnsName::parse(text).map_err(|e| bad(field, e.to_string()))
}

pub(crate) fn ip(field: &str, text: &str) -> Result<std::net::IpAddr, ValidationError> {
    gslb_shared::validate::plain_ip(text).map_err(|e| bad(field, e.to_string()))
}

pub(crate) fn member_address(
    field: &str,
    text: &str,
) -> Result<gslb_shared::MemberAddress, ValidationError> {
    gslb_shared::MemberAddress::parse(text).map_err(|e| bad(field, e.to_string()))
}

pub(crate) fn u16_field(field: &str, value: u32) -> Result<u16, ValidationError> {
    u16::try_from(value).map_err(|_| bad(field, "must be between 0 and 65535"))
}

pub(crate) fn region(text: &str) -> Option<Region> {
    (!text.is_empty()).then(|| Region::new(text))
}

pub(crate) fn millis(d: std::time::Duration) -> u64 {
    d.as_millis().min(u128::from(u64::MAX)) as u64
}
