//! What an answer was, for metrics and rate limiting: its query type and
//! response code, as buckets.

use domain::base::iana::{OptRcode, Rtype};

/// What was answered, for metrics and rate limiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Summary {
    /// Query type bucket (see [`QTYPES`]).
    pub qtype: usize,
    /// Response code bucket (see [`RCODES`]).
    pub rcode: usize,
    /// TC was set.
    pub truncated: bool,
    /// Copied from a prebuilt reply, not encoded.
    pub prebuilt: bool,
}

/// Query type buckets for metrics.
pub const QTYPES: [&str; 11] = [
    "A", "AAAA", "CNAME", "TXT", "MX", "SRV", "CAA", "NS", "SOA", "ANY", "other",
];
/// Response code buckets for metrics.
pub const RCODES: [&str; 7] = [
    "NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN", "NOTIMP", "REFUSED", "BADVERS",
];
/// The bucket of FORMERR in [`RCODES`].
pub const FORMERR_BUCKET: usize = 1;
/// The bucket of REFUSED in [`RCODES`].
pub const REFUSED_BUCKET: usize = 5;

pub(super) fn qtype_bucket(t: Rtype) -> usize {
    match t {
        Rtype::A => 0,
        Rtype::AAAA => 1,
        Rtype::CNAME => 2,
        Rtype::TXT => 3,
        Rtype::MX => 4,
        Rtype::SRV => 5,
        Rtype::CAA => 6,
        Rtype::NS => 7,
        Rtype::SOA => 8,
        Rtype::ANY => 9,
        _ => 10,
    }
}

pub(super) fn rcode_bucket(r: OptRcode) -> usize {
    match r {
        OptRcode::NOERROR => 0,
        OptRcode::FORMERR => FORMERR_BUCKET,
        OptRcode::SERVFAIL => 2,
        OptRcode::NXDOMAIN => 3,
        OptRcode::NOTIMP => 4,
        OptRcode::BADVERS => 6,
        _ => REFUSED_BUCKET,
    }
}

pub(super) fn summary_of(qtype: Rtype, rcode: OptRcode) -> Summary {
    Summary {
        qtype: qtype_bucket(qtype),
        rcode: rcode_bucket(rcode),
        truncated: false,
        prebuilt: false,
    }
}
