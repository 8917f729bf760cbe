//! Where outbound connections never go: a deny-list of address ranges (by
//! default link-local, where cloud metadata services live) and the
//! aggregator's own listeners, checked against the address a socket
//! actually connected to, so an IPv4-mapped IPv6 form cannot slip past.
//! Agents' probes and the aggregator's notifications share these rules.

use std::net::{IpAddr, SocketAddr};
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

    /// Why `ip` is denied, if it is.
    pub fn denied_ip(&self, ip: IpAddr) -> Option<String> {
        let ip = canonical(ip);
        self.ranges
            .iter()
            .find(|r| r.contains(&ip))
            .map(|r| format!("{ip} is in the denied range {r}"))
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
