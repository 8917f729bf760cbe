//! What the aggregator's resolver found for a hostname member that a
//! flattened record answers with: the addresses, and how long they may be
//! kept. Part of the snapshot, like health facts.

use std::net::IpAddr;

use serde::{Deserialize, Serialize};

/// Most addresses kept per name (an AWS ELB answers up to 8).
pub const MAX_RESOLVED_ADDRESSES: usize = 8;

/// A hostname's addresses as last resolved.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize, Default, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct Resolved {
    /// Sorted, at most [`MAX_RESOLVED_ADDRESSES`].
    #[schema(value_type = Vec<String>)]
    pub addresses: Vec<IpAddr>,
    /// The smallest TTL of the records that gave them (seconds): flattened
    /// answers never carry a longer one.
    pub ttl: u32,
}

impl Resolved {
    /// Its addresses of one family (`v6`: AAAA, else A).
    pub fn of_family(&self, v6: bool) -> impl Iterator<Item = IpAddr> + '_ {
        self.addresses
            .iter()
            .copied()
            .filter(move |a| a.is_ipv6() == v6)
    }
}
