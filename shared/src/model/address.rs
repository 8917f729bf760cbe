//! Where a member is: an IP address, or a hostname (an AWS ELB, a CDN
//! name) whose addresses are looked up when it is probed or answered.

use std::fmt;
use std::net::IpAddr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::DnsName;
use super::ip_text::{AddressError, plain_ip};

/// A member's address as written: an IP literal or a hostname.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MemberAddress {
    /// An IP address, answered as it is.
    Ip(IpAddr),
    /// A hostname: probed at every address it resolves to, answered as a
    /// CNAME to it or (flattened) as the addresses it resolves to.
    Host(DnsName),
}

/// Why an address text was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MemberAddressError {
    /// Not an IP literal and not a hostname either.
    #[error("{}", address_rule(*.0))]
    Address(AddressError),
    /// A name, but not one a host can have.
    #[error("hostname {name:?}: {rule}")]
    Host {
        /// The text.
        name: String,
        /// The rule it broke.
        rule: String,
    },
}

/// The rule an address text broke, said of an IP address or hostname.
fn address_rule(e: AddressError) -> &'static str {
    match e {
        AddressError::Empty => "must not be empty",
        AddressError::UserInfo => "must be an IP address or a hostname without user information",
        AddressError::Scheme => "must be an IP address or a hostname without a scheme",
        AddressError::Path => "must be an IP address or a hostname without a path",
        AddressError::Query => "must be an IP address or a hostname without a query",
        AddressError::Fragment => "must be an IP address or a hostname without a fragment",
        AddressError::Port => "must be an IP address or a hostname without a port",
        AddressError::Whitespace => "must not contain white space or control characters",
        AddressError::NotAnIp => "must be an IP address or a hostname",
    }
}

impl MemberAddress {
    /// Parse an IP literal (`[v6]` brackets allowed) or a hostname (a
    /// trailing dot is optional). A hostname needs two labels or more, no
    /// wildcard, and a last label that is not all digits (which would be a
    /// mistyped IPv4 address).
    pub fn parse(text: &str) -> Result<Self, MemberAddressError> {
        let not_ip = match plain_ip(text) {
            Ok(ip) => return Ok(MemberAddress::Ip(ip)),
            Err(AddressError::NotAnIp) => AddressError::NotAnIp,
            Err(e) => return Err(MemberAddressError::Address(e)),
        };
        let host = |rule: String| MemberAddressError::Host {
            name: text.to_owned(),
            rule,
        };
        if !text.contains(|c: char| c.is_ascii_alphabetic() || c == '-' || c == '_') {
            // Digits and dots only: a malformed IPv4 address, not a name.
            return Err(MemberAddressError::Address(not_ip));
        }
        let name = DnsName::parse(text).map_err(|e| host(e.to_string()))?;
        if name.is_wildcard() {
            return Err(host("must not be a wildcard".into()));
        }
        let labels: Vec<&str> = name.as_str().split('.').collect();
        if labels.len() < 2 {
            return Err(host(
                "must be fully qualified (two labels or more, such as lb.example.com)".into(),
            ));
        }
        if labels
            .last()
            .is_some_and(|l| l.bytes().all(|b| b.is_ascii_digit()))
        {
            return Err(host("must not end in an all-digit label".into()));
        }
        Ok(MemberAddress::Host(name))
    }

    /// The IP address, for an IP member.
    pub fn ip(&self) -> Option<IpAddr> {
        match self {
            MemberAddress::Ip(ip) => Some(*ip),
            MemberAddress::Host(_) => None,
        }
    }

    /// The hostname, for a hostname member.
    pub fn host(&self) -> Option<&DnsName> {
        match self {
            MemberAddress::Ip(_) => None,
            MemberAddress::Host(name) => Some(name),
        }
    }
}

impl From<IpAddr> for MemberAddress {
    fn from(ip: IpAddr) -> Self {
        MemberAddress::Ip(ip)
    }
}

impl From<std::net::Ipv4Addr> for MemberAddress {
    fn from(ip: std::net::Ipv4Addr) -> Self {
        MemberAddress::Ip(ip.into())
    }
}

impl From<std::net::Ipv6Addr> for MemberAddress {
    fn from(ip: std::net::Ipv6Addr) -> Self {
        MemberAddress::Ip(ip.into())
    }
}

impl std::str::FromStr for MemberAddress {
    type Err = MemberAddressError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        MemberAddress::parse(text)
    }
}

impl fmt::Display for MemberAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MemberAddress::Ip(ip) => ip.fmt(f),
            MemberAddress::Host(name) => name.fmt(f),
        }
    }
}

impl Serialize for MemberAddress {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for MemberAddress {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        MemberAddress::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ip_literals_and_hostnames_parse_to_their_kind() {
        assert_eq!(
            MemberAddress::parse("192.0.2.1").unwrap(),
            MemberAddress::Ip("192.0.2.1".parse().unwrap())
        );
        assert_eq!(
            MemberAddress::parse("[2001:db8::1]").unwrap().to_string(),
            "2001:db8::1"
        );
        let host = MemberAddress::parse("My-LB.eu-west-1.elb.amazonaws.com.").unwrap();
        assert_eq!(host.to_string(), "my-lb.eu-west-1.elb.amazonaws.com");
        assert!(host.ip().is_none() && host.host().is_some());
    }

    #[test]
    fn refusals_name_the_rule() {
        let cases = [
            ("10.0.0.256", "IP address or a hostname"),
            ("1.2.3", "IP address or a hostname"),
            ("lb.example.com:80", "without a port"),
            ("http://lb.example.com", "without a scheme"),
            ("*.example.com", "wildcard"),
            ("localhost", "fully qualified"),
            ("lb.10", "all-digit"),
            ("a..example.com", "empty label"),
            ("a b.example.com", "white space"),
            ("ex!ample.com", "letters, digits"),
        ];
        for (text, rule) in cases {
            let err = MemberAddress::parse(text).unwrap_err().to_string();
            assert!(err.contains(rule), "{text}: {err}");
        }
    }

    #[test]
    fn serde_round_trips_as_a_string() {
        for text in ["192.0.2.7", "2001:db8::7", "lb.example.com"] {
            let a = MemberAddress::parse(text).unwrap();
            let json = serde_json::to_string(&a).unwrap();
            assert_eq!(json, format!("\"{text}\""));
            assert_eq!(serde_json::from_str::<MemberAddress>(&json).unwrap(), a);
        }
        assert!(serde_json::from_str::<MemberAddress>("\"-bad.example.com\"").is_err());
    }
}
