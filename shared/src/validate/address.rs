//! Whether an address can be answered to clients as a host address.

use std::net::IpAddr;

/// Why `ip` cannot be answered to clients as a host address, if it cannot:
/// unspecified, multicast, the IPv4 broadcast, or IPv4-mapped IPv6 (an
/// AAAA answer that is really an IPv4 host; give it as IPv4).
pub fn unanswerable(ip: &IpAddr) -> Option<&'static str> {
    if ip.is_unspecified() || ip.is_multicast() {
        return Some("must be a unicast address (not 0.0.0.0, :: or multicast)");
    }
    match ip {
        IpAddr::V4(v4) if v4.is_broadcast() => {
            Some("must not be the broadcast address 255.255.255.255")
        }
        IpAddr::V6(v6) if v6.to_ipv4_mapped().is_some() => {
            Some("must not be IPv4-mapped IPv6 (::ffff:a.b.c.d): give the IPv4 address")
        }
        // ::a.b.c.d (deprecated IPv4-compatible); :: and ::1 are not.
        IpAddr::V6(v6) if u128::from(*v6) >> 32 == 0 && u128::from(*v6) > 1 => {
            Some("must not be IPv4-compatible IPv6 (::a.b.c.d): give the IPv4 address")
        }
        _ => None,
    }
}
