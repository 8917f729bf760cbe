//! Domain names as the model stores them: lower case, absolute, without the
//! trailing dot (`www.example.com`), so that comparison is plain equality.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Longest presentation name we accept (RFC 1035's 255 octets on the wire is
/// 253 characters in dotted form without the trailing dot).
pub const MAX_NAME_LEN: usize = 253;
/// Longest label (RFC 1035).
pub const MAX_LABEL_LEN: usize = 63;

/// Why a name was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    /// The name is empty.
    #[error("must not be empty")]
    Empty,
    /// The root name `.`: every name here lies below the root, and a zone
    /// is a delegated zone below it (the root itself is served by root
    /// servers such as Knot or NSD, not by a load balancer).
    #[error("is the root (.): give a name below the root; gslb does not serve the root zone")]
    Root,
    /// The whole name is too long.
    #[error("must be at most {MAX_NAME_LEN} characters")]
    TooLong,
    /// A label is empty (two dots in a row, or a leading dot).
    #[error("must not contain an empty label")]
    EmptyLabel,
    /// A label is longer than 63 characters.
    #[error("label {0:?} is longer than {MAX_LABEL_LEN} characters")]
    LabelTooLong(String),
    /// A label has a character outside letters, digits, '-' and '_'.
    #[error("label {0:?} may contain only letters, digits, '-' and '_'")]
    BadCharacter(String),
    /// A label starts or ends with a hyphen.
    #[error("label {0:?} must not start or end with '-'")]
    Hyphen(String),
    /// A '*' appears anywhere but as the whole leftmost label.
    #[error("'*' is allowed only as the whole leftmost label")]
    Wildcard,
}

/// A validated domain name (see the module docs for the canonical form).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DnsName(String);

impl DnsName {
    /// Parse a presentation-format name; a trailing dot is optional.
    pub fn parse(text: &str) -> Result<Self, NameError> {
        if text == "." {
            return Err(NameError::Root);
        }
        let trimmed = text.strip_suffix('.').unwrap_or(text);
        if trimmed.is_empty() {
            return Err(NameError::Empty);
        }
        if trimmed.len() > MAX_NAME_LEN {
            return Err(NameError::TooLong);
        }
        for (index, label) in trimmed.split('.').enumerate() {
            check_label(label, index == 0)?;
        }
        Ok(Self(trimmed.to_ascii_lowercase()))
    }

    /// The canonical text (lower case, no trailing dot).
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True when `self` is `zone` or lies below it.
    pub fn is_in_zone(&self, zone: &DnsName) -> bool {
        self.0 == zone.0
            || (self.0.len() > zone.0.len()
                && self.0.ends_with(zone.0.as_str())
                && self.0.as_bytes()[self.0.len() - zone.0.len() - 1] == b'.')
    }

    /// The name one label up (`None` for a top-level label).
    pub fn parent(&self) -> Option<DnsName> {
        // A suffix of a valid name is valid: no need to parse it again.
        self.0
            .split_once('.')
            .map(|(_, rest)| DnsName(rest.to_owned()))
    }

    /// True for a wildcard owner such as `*.example.com`.
    pub fn is_wildcard(&self) -> bool {
        self.0.starts_with("*.")
    }
}

fn check_label(label: &str, leftmost: bool) -> Result<(), NameError> {
    if label.is_empty() {
        return Err(NameError::EmptyLabel);
    }
    if label.len() > MAX_LABEL_LEN {
        return Err(NameError::LabelTooLong(label.to_owned()));
    }
    if label == "*" {
        return if leftmost {
            Ok(())
        } else {
            Err(NameError::Wildcard)
        };
    }
    if label.contains('*') {
        return Err(NameError::Wildcard);
    }
    if !label
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
    {
        return Err(NameError::BadCharacter(label.to_owned()));
    }
    if label.starts_with('-') || label.ends_with('-') {
        return Err(NameError::Hyphen(label.to_owned()));
    }
    Ok(())
}

impl fmt::Display for DnsName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for DnsName {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for DnsName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        DnsName::parse(&text)
            .map_err(|err| serde::de::Error::custom(format!("invalid name {text:?}: {err}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_form_is_lower_case_without_trailing_dot() {
        assert_eq!(
            DnsName::parse("WWW.Example.COM.").unwrap().as_str(),
            "www.example.com"
        );
    }

    #[test]
    fn zone_membership_respects_label_boundaries() {
        let zone = DnsName::parse("example.com").unwrap();
        assert!(DnsName::parse("example.com").unwrap().is_in_zone(&zone));
        assert!(DnsName::parse("a.b.example.com").unwrap().is_in_zone(&zone));
        assert!(!DnsName::parse("badexample.com").unwrap().is_in_zone(&zone));
        assert!(!DnsName::parse("example.org").unwrap().is_in_zone(&zone));
    }

    #[test]
    fn rejects_each_malformed_shape() {
        assert_eq!(DnsName::parse(""), Err(NameError::Empty));
        assert_eq!(DnsName::parse("."), Err(NameError::Root));
        assert_eq!(DnsName::parse("a..b"), Err(NameError::EmptyLabel));
        assert!(matches!(
            DnsName::parse(&"a".repeat(64)),
            Err(NameError::LabelTooLong(_))
        ));
        assert_eq!(
            DnsName::parse(&["a"; 130].join(".")),
            Err(NameError::TooLong)
        );
        assert!(matches!(
            DnsName::parse("a b.com"),
            Err(NameError::BadCharacter(_))
        ));
        assert!(matches!(
            DnsName::parse("-a.com"),
            Err(NameError::Hyphen(_))
        ));
        assert_eq!(DnsName::parse("a.*.com"), Err(NameError::Wildcard));
        assert_eq!(DnsName::parse("a*.com"), Err(NameError::Wildcard));
        assert!(DnsName::parse("*.example.com").unwrap().is_wildcard());
        assert!(DnsName::parse("_sip._tcp.example.com").is_ok());
    }
}
