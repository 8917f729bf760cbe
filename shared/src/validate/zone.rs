//! Zone rules.

use super::MAX_TTL;
use super::error::{Findings, ValidationError, in_range};
use crate::model::Zone;

/// Most name servers a zone may publish.
pub const MAX_NS: usize = 13;

/// Validate a zone on its own.
pub fn zone(zone: &Zone) -> Result<(), ValidationError> {
    let mut f = Findings::new("");
    f.require(
        !zone.apex.is_wildcard(),
        "apex",
        "must not be a wildcard name",
    );
    f.require(
        !zone.ns.is_empty(),
        "ns",
        "must list at least one name server",
    );
    f.require(
        zone.ns.len() <= MAX_NS,
        "ns",
        format!("must list at most {MAX_NS} name servers"),
    );
    for (i, ns) in zone.ns.iter().enumerate() {
        f.require(
            !ns.is_wildcard(),
            &format!("ns[{i}]"),
            "must not be a wildcard name",
        );
        // A set holds each record once (RFC 2181 5).
        f.require(
            !zone.ns[..i].contains(ns),
            &format!("ns[{i}]"),
            format!("{ns} is listed twice"),
        );
    }
    in_range(&mut f, "defaultTtl", zone.default_ttl, 0, MAX_TTL);
    if let Some(t) = zone.ns_ttl {
        in_range(&mut f, "nsTtl", t, 0, MAX_TTL);
    }
    in_range(&mut f, "soa.refresh", zone.soa.refresh, 1, MAX_TTL * 4);
    in_range(&mut f, "soa.retry", zone.soa.retry, 1, MAX_TTL * 4);
    in_range(&mut f, "soa.expire", zone.soa.expire, 1, MAX_TTL * 16);
    in_range(&mut f, "soa.negativeTtl", zone.soa.negative_ttl, 0, 86_400);
    f.require(
        zone.soa.retry <= zone.soa.refresh,
        "soa.retry",
        "must not be greater than soa.refresh",
    );
    f.require(
        zone.soa.expire >= zone.soa.refresh,
        "soa.expire",
        "must not be less than soa.refresh",
    );
    super::tsig::transfer(&zone.transfer, &mut f);
    if let Some(s) = &zone.dnssec {
        super::signing::signing(s, &mut f);
    }
    f.finish()
}
