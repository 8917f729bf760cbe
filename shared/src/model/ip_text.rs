//! Probe and answer addresses written as IP literals must be plain (seed
//! 004): no user information, port, path, query or fragment. IPv6's colons
//! are not a port.

use std::net::IpAddr;

/// Why an address text was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AddressError {
    /// Empty text.
    #[error("must not be empty")]
    Empty,
    /// Contains `user@`.
    #[error("must be a plain IP address without user information")]
    UserInfo,
    /// Contains a scheme such as `http://`.
    #[error("must be a plain IP address without a scheme")]
    Scheme,
    /// Contains `/path`.
    #[error("must be a plain IP address without a path")]
    Path,
    /// Contains `?query`.
    #[error("must be a plain IP address without a query")]
    Query,
    /// Contains `#fragment`.
    #[error("must be a plain IP address without a fragment")]
    Fragment,
    /// Contains `:port` (or `[v6]:port`).
    #[error("must be a plain IP address without a port")]
    Port,
    /// Contains white space or control characters.
    #[error("must not contain white space or control characters")]
    Whitespace,
    /// A host name or otherwise not an IP literal.
    #[error("must be an IPv4 or IPv6 address literal")]
    NotAnIp,
}

/// Parse a plain IPv4 or IPv6 literal; `[v6]` brackets are accepted and
/// dropped. Anything that carries more than a host is refused with the reason.
pub fn plain_ip(text: &str) -> Result<IpAddr, AddressError> {
    if text.is_empty() {
        return Err(AddressError::Empty);
    }
    if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(AddressError::Whitespace);
    }
    if text.contains("://") {
        return Err(AddressError::Scheme);
    }
    if text.contains('@') {
        return Err(AddressError::UserInfo);
    }
    if text.contains('#') {
        return Err(AddressError::Fragment);
    }
    if text.contains('?') {
        return Err(AddressError::Query);
    }
    if text.contains('/') {
        return Err(AddressError::Path);
    }
    if let Some(rest) = text.strip_prefix('[') {
        let (inner, after) = rest.split_once(']').ok_or(AddressError::NotAnIp)?;
        if !after.is_empty() {
            return Err(if after.starts_with(':') {
                AddressError::Port
            } else {
                AddressError::NotAnIp
            });
        }
        return match inner.parse::<IpAddr>() {
            Ok(IpAddr::V6(v6)) => Ok(IpAddr::V6(v6)),
            _ => Err(AddressError::NotAnIp),
        };
    }
    if let Ok(ip) = text.parse::<IpAddr>() {
        return Ok(ip);
    }
    // One colon after something IPv4- or name-like is a port; IPv6 has several.
    if text.matches(':').count() == 1 {
        return Err(AddressError::Port);
    }
    Err(AddressError::NotAnIp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_v4_v6_and_bracketed_v6() {
        assert_eq!(plain_ip("10.0.0.1").unwrap().to_string(), "10.0.0.1");
        assert_eq!(plain_ip("2001:db8::1").unwrap().to_string(), "2001:db8::1");
        assert_eq!(
            plain_ip("[2001:db8::1]").unwrap().to_string(),
            "2001:db8::1"
        );
        assert_eq!(
            plain_ip("::ffff:10.0.0.1").unwrap().to_string(),
            "::ffff:10.0.0.1"
        );
    }

    #[test]
    fn refuses_every_extra_url_component_with_its_reason() {
        let cases = [
            ("", AddressError::Empty),
            ("user@10.0.0.1", AddressError::UserInfo),
            ("user:pw@10.0.0.1", AddressError::UserInfo),
            ("10.0.0.1:80", AddressError::Port),
            ("[2001:db8::1]:80", AddressError::Port),
            ("10.0.0.1/admin", AddressError::Path),
            ("10.0.0.1?x=1", AddressError::Query),
            ("10.0.0.1#frag", AddressError::Fragment),
            ("http://10.0.0.1", AddressError::Scheme),
            ("10.0.0.1 ", AddressError::Whitespace),
            ("10.0.0.1\n", AddressError::Whitespace),
            ("example.com", AddressError::NotAnIp),
            ("example.com:80", AddressError::Port),
            ("[10.0.0.1]", AddressError::NotAnIp),
            ("[::1", AddressError::NotAnIp),
            ("10.0.0.256", AddressError::NotAnIp),
        ];
        for (text, expected) in cases {
            assert_eq!(plain_ip(text), Err(expected), "{text:?}");
        }
    }
}
