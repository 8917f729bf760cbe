//! Client regions from a table of CIDR prefixes, longest prefix wins: the
//! `--geo-file` the edges answer with and the aggregator's explain places
//! a client address with, so both decide the same.
//!
//! File format: one `CIDR REGION` per line, `#` comments, blank lines
//! ignored; an error names the line.

use std::net::IpAddr;

use ipnet::IpNet;
use rustc_hash::FxHashMap;

use crate::{Region, validate};

/// A region match: the region and the length of the prefix that matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Match<'a> {
    /// The client's region.
    pub region: &'a Region,
    /// Prefix length of the entry that matched (the ECS scope).
    pub prefix_len: u8,
}

/// A line of the file that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("geo table line {line}: {rule}")]
pub struct TableError {
    /// 1-based line number.
    pub line: usize,
    /// What is wrong.
    pub rule: String,
}

/// One address family's prefixes, by length.
#[derive(Debug, Clone, Default)]
struct Family {
    /// Lengths present, longest first.
    lengths: Vec<u8>,
    /// (length, masked address bits) -> region index.
    entries: FxHashMap<(u8, u128), usize>,
}

impl Family {
    fn insert(&mut self, len: u8, bits: u128, region: usize) -> Option<usize> {
        if !self.lengths.contains(&len) {
            self.lengths.push(len);
            self.lengths.sort_unstable_by(|a, b| b.cmp(a));
        }
        self.entries.insert((len, bits), region)
    }

    #[inline]
    fn lookup(&self, bits: u128, width: u8) -> Option<(u8, usize)> {
        self.lengths.iter().find_map(|&len| {
            self.entries
                .get(&(len, mask(bits, len, width)))
                .map(|r| (len, *r))
        })
    }
}

/// Keep the top `len` of `width` bits.
#[inline]
fn mask(bits: u128, len: u8, width: u8) -> u128 {
    if len == 0 {
        return 0;
    }
    let drop = u32::from(width - len);
    (bits >> drop) << drop
}

/// The CIDR → region table.
#[derive(Debug, Clone, Default)]
pub struct RegionTable {
    regions: Vec<Region>,
    v4: Family,
    v6: Family,
}

impl RegionTable {
    /// Parse the file format described in the module docs.
    pub fn parse(text: &str) -> Result<Self, TableError> {
        let mut table = RegionTable::default();
        for (index, raw) in text.lines().enumerate() {
            let line = index + 1;
            let content = raw.split('#').next().unwrap_or("").trim();
            if content.is_empty() {
                continue;
            }
            let mut words = content.split_whitespace();
            let (Some(cidr), Some(region), None) = (words.next(), words.next(), words.next())
            else {
                return Err(TableError {
                    line,
                    rule: "must be `CIDR REGION`".into(),
                });
            };
            let net: IpNet = cidr.parse().map_err(|e| TableError {
                line,
                rule: format!("{cidr:?} is not a CIDR prefix: {e}"),
            })?;
            let region = Region::new(region);
            validate::region(&region).map_err(|rule| TableError {
                line,
                rule: format!("region {region}: {rule}"),
            })?;
            if let Some(previous) = table.insert(net, region.clone())
                && previous != region
            {
                return Err(TableError {
                    line,
                    rule: format!("{net} is already mapped to {previous}"),
                });
            }
        }
        Ok(table)
    }

    /// Map a prefix (host bits beyond it are ignored); the region it had.
    pub fn insert(&mut self, net: IpNet, region: Region) -> Option<Region> {
        let index = match self.regions.iter().position(|r| *r == region) {
            Some(i) => i,
            None => {
                self.regions.push(region);
                self.regions.len() - 1
            }
        };
        let len = net.prefix_len();
        let previous = match net.trunc() {
            IpNet::V4(n) => self.v4.insert(len, u128::from(u32::from(n.addr())), index),
            IpNet::V6(n) => self.v6.insert(len, u128::from(n.addr()), index),
        };
        previous.map(|i| self.regions[i].clone())
    }

    /// The region of an address, by the longest matching prefix.
    #[inline]
    pub fn lookup(&self, addr: IpAddr) -> Option<Match<'_>> {
        let found = match addr {
            IpAddr::V4(v4) => self.v4.lookup(u128::from(u32::from(v4)), 32),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                // An IPv4-mapped address is looked up as the IPv4 address it is.
                Some(v4) => self.v4.lookup(u128::from(u32::from(v4)), 32),
                None => self.v6.lookup(u128::from(v6), 128),
            },
        };
        found.map(|(prefix_len, i)| Match {
            region: &self.regions[i],
            prefix_len,
        })
    }

    /// Number of prefixes.
    pub fn len(&self) -> usize {
        self.v4.entries.len() + self.v6.entries.len()
    }

    /// True when there are no prefixes.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const FILE: &str = "\
# documentation ranges only
192.0.2.0/24     eu
192.0.2.128/25   eu-west   # more specific
198.51.100.0/24  us
0.0.0.0/0        world
2001:db8::/32    eu
2001:db8:1::/48  ap
";

    fn at(table: &RegionTable, addr: &str) -> Option<(String, u8)> {
        table
            .lookup(addr.parse().unwrap())
            .map(|m| (m.region.to_string(), m.prefix_len))
    }

    #[test]
    fn longest_prefix_wins_and_its_length_is_the_scope() {
        let t = RegionTable::parse(FILE).unwrap();
        assert_eq!(at(&t, "192.0.2.1"), Some(("eu".into(), 24)));
        assert_eq!(at(&t, "192.0.2.200"), Some(("eu-west".into(), 25)));
        assert_eq!(at(&t, "198.51.100.7"), Some(("us".into(), 24)));
        assert_eq!(at(&t, "203.0.113.9"), Some(("world".into(), 0)));
        assert_eq!(at(&t, "2001:db8:1::5"), Some(("ap".into(), 48)));
        assert_eq!(at(&t, "2001:db8:2::5"), Some(("eu".into(), 32)));
        assert_eq!(at(&t, "2001:db9::1"), None, "no IPv6 default");
        assert_eq!(
            at(&t, "::ffff:192.0.2.1"),
            Some(("eu".into(), 24)),
            "IPv4-mapped looks up as IPv4"
        );
        assert_eq!(t.len(), 6);
    }

    #[test]
    fn bad_lines_are_named() {
        let cases = [
            ("192.0.2.0/24", 1, "CIDR REGION"),
            ("192.0.2.0/33 eu", 1, "not a CIDR"),
            ("\n\nexample.com eu", 3, "not a CIDR"),
            ("192.0.2.0/24 EU West", 1, "CIDR REGION"),
            ("192.0.2.0/24 EU", 1, "lower-case"),
            (
                "192.0.2.0/24 eu\n192.0.2.9/24 us",
                2,
                "already mapped to eu",
            ),
        ];
        for (text, line, rule) in cases {
            let err = RegionTable::parse(text).unwrap_err();
            assert_eq!(err.line, line, "{text:?}: {err}");
            assert!(err.rule.contains(rule), "{text:?}: {err}");
        }
        assert!(
            RegionTable::parse("192.0.2.0/24 eu\n192.0.2.7/24 eu").is_ok(),
            "the same mapping twice is harmless"
        );
    }

    proptest! {
        #[test]
        fn lookup_equals_the_brute_force_longest_match(
            prefixes in prop::collection::vec((any::<u32>(), 0u8..=32, 0usize..4), 1..40),
            probes in prop::collection::vec(any::<u32>(), 1..40),
        ) {
            let mut t = RegionTable::default();
            let mut reference: Vec<(u32, u8, String)> = Vec::new();
            for (bits, len, r) in prefixes {
                let net = IpNet::V4(ipnet::Ipv4Net::new(bits.into(), len).unwrap()).trunc();
                let region = format!("r{r}");
                let masked = if len == 0 { 0 } else { (bits >> (32 - u32::from(len))) << (32 - u32::from(len)) };
                reference.retain(|(b, l, _)| !(*b == masked && *l == len));
                reference.push((masked, len, region.clone()));
                t.insert(net, Region::new(region));
            }
            for probe in probes {
                let expected = reference
                    .iter()
                    .filter(|(b, l, _)| *l == 0 || (probe >> (32 - u32::from(*l))) << (32 - u32::from(*l)) == *b)
                    .max_by_key(|(_, l, _)| *l)
                    .map(|(_, l, r)| (r.clone(), *l));
                let got = t.lookup(std::net::Ipv4Addr::from(probe).into()).map(|m| (m.region.to_string(), m.prefix_len));
                prop_assert_eq!(got, expected);
            }
        }
    }
}
