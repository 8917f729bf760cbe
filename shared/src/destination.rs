//! Where outbound connections never go: a deny-list of address ranges (by
//! default link-local, where cloud metadata services live) and the
//! aggregator's own listeners, checked against the address a socket
//! actually connected to, so an IPv4-mapped IPv6 form cannot slip past.
//! Agents' probes and the aggregator's notifications share these rules.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::RwLock;

use ipnet::IpNet;

/// The ranges denied when none are configured.
pub fn default_ranges() -> Vec<IpNet> {
    ["169.254.0.0/16", "fe80::/10", "fd00:ec2::254/128"]
        .iter()
        .filter_map(|r| r.parse().ok())
        .collect()
}

/// Destinations probes may not reach.
#[derive(Debug, Default)]
pub struct DenyList {
    ranges: Vec<IpNet>,
    exact: RwLock<Vec<SocketAddr>>,
    /// The aggregators' addresses, for their listeners bound to every address.
    hosts: RwLock<Vec<IpAddr>>,
}

/// `addr` with an IPv4-mapped (`::ffff:a.b.c.d`) address as plain IPv4.
fn canonical(ip: IpAddr) -> IpAddr {
    ip.to_canonical()
}

impl DenyList {
    /// Deny `ranges` (IPv4-mapped forms of IPv4 ranges included).
    pub fn new(ranges: Vec<IpNet>) -> Self {
        DenyList {
            ranges,
            exact: RwLock::default(),
            hosts: RwLock::default(),
        }
    }

    /// Also deny exactly `addrs`: the addresses the aggregator URLs resolve
    /// to (with their ports); their hosts are remembered for
    /// [`DenyList::deny_listeners`].
    pub fn deny_exact(&self, addrs: impl IntoIterator<Item = SocketAddr>) {
        let addrs: Vec<SocketAddr> = addrs.into_iter().collect();
        let mut hosts = self.hosts.write().unwrap_or_else(|p| p.into_inner());
        for addr in &addrs {
            let ip = canonical(addr.ip());
            if !hosts.contains(&ip) {
                hosts.push(ip);
            }
        }
        drop(hosts);
        self.add_exact(addrs);
    }

    /// Deny the listeners an aggregator reports (`IP:PORT`); one bound to an
    /// unspecified address is denied on that aggregator's known addresses
    /// and on loopback. Unparsable entries are skipped.
    pub fn deny_listeners(&self, listeners: &[String]) {
        let mut add = Vec::new();
        for addr in listeners
            .iter()
            .filter_map(|l| l.parse::<SocketAddr>().ok())
        {
            if addr.ip().is_unspecified() {
                let hosts = self.hosts.read().unwrap_or_else(|p| p.into_inner());
                let local = [
                    IpAddr::from([127, 0, 0, 1]),
                    IpAddr::from([0u16, 0, 0, 0, 0, 0, 0, 1]),
                ];
                for ip in hosts.iter().chain(&local) {
                    add.push(SocketAddr::new(*ip, addr.port()));
                }
            } else {
                add.push(addr);
            }
        }
        self.add_exact(add);
    }

    fn add_exact(&self, addrs: Vec<SocketAddr>) {
        let mut exact = self.exact.write().unwrap_or_else(|p| p.into_inner());
        for addr in addrs {
            let addr = SocketAddr::new(canonical(addr.ip()), addr.port());
            if !exact.contains(&addr) {
                exact.push(addr);
            }
        }
    }

    /// Why `ip` is denied, if it is: not a unicast address (unspecified,
    /// broadcast, multicast; always), or in a denied range. An IPv6 address
    /// that carries an IPv4 one (mapped, compatible, NAT64, 6to4, Teredo)
    /// is judged by that IPv4 address too.
    pub fn denied_ip(&self, ip: IpAddr) -> Option<String> {
        let ip = canonical(ip);
        if let Some(why) = not_unicast(ip) {
            return Some(why);
        }
        if let Some(r) = self.ranges.iter().find(|r| r.contains(&ip)) {
            return Some(format!("{ip} is in the denied range {r}"));
        }
        let IpAddr::V6(v6) = ip else {
            return None;
        };
        embedded_ipv4(v6).into_iter().flatten().find_map(|v4| {
            let inner = IpAddr::V4(v4);
            not_unicast(inner)
                .or_else(|| {
                    self.ranges
                        .iter()
                        .find(|r| r.contains(&inner))
                        .map(|r| format!("{inner} is in the denied range {r}"))
                })
                .map(|why| format!("{why} (carried in {v6})"))
        })
    }

    /// Why `addr` (a target, or the peer a socket connected to) is
    /// refused, if it is.
    pub fn check(&self, addr: SocketAddr) -> Result<(), String> {
        if let Some(why) = self.denied_ip(addr.ip()) {
            return Err(why);
        }
        let plain = SocketAddr::new(canonical(addr.ip()), addr.port());
        let exact = self.exact.read().unwrap_or_else(|p| p.into_inner());
        if exact.contains(&plain) {
            return Err(format!("{plain} is the aggregator's own listener"));
        }
        Ok(())
    }
}

/// Why `ip` can never be a destination: unspecified, the IPv4 broadcast,
/// or multicast.
fn not_unicast(ip: IpAddr) -> Option<String> {
    let broadcast = matches!(ip, IpAddr::V4(v4) if v4.is_broadcast());
    (ip.is_unspecified() || ip.is_multicast() || broadcast)
        .then(|| format!("{ip} is not a unicast address"))
}

/// The IPv4 addresses an IPv6 address carries, by the well-known
/// transition forms: IPv4-compatible `::a.b.c.d` (RFC 4291, deprecated but
/// routed by some stacks), NAT64 `64:ff9b::/96` and `64:ff9b:1::/48`
/// (RFC 6052, 8215; the last 32 bits), 6to4 `2002:AABB:CCDD::/48`
/// (RFC 3056) and Teredo `2001::/32` (RFC 4380: the server, and the client
/// with its bits inverted). Mapped `::ffff:a.b.c.d` is made IPv4 before.
pub fn embedded_ipv4(v6: Ipv6Addr) -> [Option<Ipv4Addr>; 2] {
    let s = v6.segments();
    let low = Ipv4Addr::from(((u32::from(s[6])) << 16) | u32::from(s[7]));
    let bits = u128::from(v6);
    if bits >> 32 == 0 && bits > 1 {
        return [Some(low), None];
    }
    if bits >> 32 == 0x0064_ff9b_0000_0000_0000_0000
        || (s[0] == 0x64 && s[1] == 0xff9b && s[2] == 1)
    {
        return [Some(low), None];
    }
    if s[0] == 0x2002 {
        let v4 = Ipv4Addr::from(((u32::from(s[1])) << 16) | u32::from(s[2]));
        return [Some(v4), None];
    }
    if s[0] == 0x2001 && s[1] == 0 {
        let server = Ipv4Addr::from(((u32::from(s[2])) << 16) | u32::from(s[3]));
        return [Some(server), Some(Ipv4Addr::from(!u32::from(low)))];
    }
    [None, None]
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn denied(list: &DenyList, addr: &str) -> bool {
        list.check(addr.parse().unwrap()).is_err()
    }

    #[test]
    fn link_local_and_its_mapped_forms_are_denied_by_default() {
        let list = DenyList::new(default_ranges());
        for addr in [
            "169.254.169.254:80",
            "[::ffff:169.254.169.254]:80",
            "[fe80::1]:80",
            "[febf::1]:443",
        ] {
            assert!(denied(&list, addr), "{addr}");
        }
        for addr in [
            "127.0.0.1:80",
            "10.0.0.1:80",
            "[::1]:80",
            "[fec0::1]:80",
            "169.253.255.255:80",
        ] {
            assert!(!denied(&list, addr), "{addr}");
        }
        let why = list
            .check("[::ffff:169.254.1.2]:80".parse().unwrap())
            .unwrap_err();
        assert!(
            why.contains("169.254.1.2 is in the denied range 169.254.0.0/16"),
            "{why}"
        );
        assert!(denied(&list, "[fd00:ec2::254]:80"), "AWS's IPv6 metadata");
    }

    #[test]
    fn every_embedded_form_of_a_denied_ipv4_address_is_denied() {
        let list = DenyList::new(default_ranges());
        for addr in [
            "[::a9fe:a9fe]:80",                          // IPv4-compatible
            "[::169.254.169.254]:80",                    // the same, dotted
            "[64:ff9b::a9fe:a9fe]:80",                   // NAT64 well-known prefix
            "[64:ff9b:1::a9fe:a9fe]:80",                 // NAT64 local-use prefix
            "[2002:a9fe:a9fe::1]:80",                    // 6to4
            "[2001:0:a9fe:a9fe::1]:80",                  // Teredo server
            "[2001:0:4136:e378:8000:63bf:5601:5601]:80", // Teredo client 169.254.169.254 (inverted)
            "0.0.0.0:80",
            "255.255.255.255:80",
            "[::]:80",
            "224.0.0.1:80",
            "[ff02::1]:80",
            "[::ffff:0.0.0.0]:80",
            "[64:ff9b::ffff:ffff]:80", // NAT64 of the broadcast
        ] {
            assert!(denied(&list, addr), "{addr}");
        }
        let why = list
            .check("[64:ff9b::a9fe:a9fe]:80".parse().unwrap())
            .unwrap_err();
        assert!(
            why.contains("169.254.169.254 is in the denied range 169.254.0.0/16")
                && why.contains("64:ff9b::a9fe:a9fe"),
            "{why}"
        );
        for addr in [
            "[::1]:80",
            "[64:ff9b::808:808]:53",
            "[2002:c000:201::1]:80",
            "[2001:db8::1]:80",
            "192.0.2.1:80",
        ] {
            assert!(!denied(&list, addr), "{addr}");
        }
    }

    #[test]
    fn the_aggregator_listener_is_denied_exactly() {
        let list = DenyList::new(vec![]);
        list.deny_exact(["127.0.0.1:7000".parse().unwrap()]);
        assert!(denied(&list, "127.0.0.1:7000"));
        assert!(denied(&list, "[::ffff:127.0.0.1]:7000"));
        assert!(!denied(&list, "127.0.0.1:7001"));
        assert!(!denied(&list, "127.0.0.2:7000"));
        // Its HTTP listener on every address: denied on its host and loopback.
        list.deny_listeners(&["0.0.0.0:7080".into(), "10.0.0.9:7443".into(), "junk".into()]);
        assert!(denied(&list, "127.0.0.1:7080"));
        assert!(denied(&list, "[::1]:7080"));
        assert!(denied(&list, "10.0.0.9:7443"));
        assert!(!denied(&list, "10.0.0.8:7080"));
    }
}
