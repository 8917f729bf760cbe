//! A probe target as the agent runs it: the assignment parsed and validated
//! (seed 004) into plain values, with its regular expressions compiled.
//!
//! Validation happens when an assignment arrives (an invalid one is reported
//! back and never probed) and again before every probe
//! ([`Target::revalidate`]), so a target can never send traffic it should not.

use std::net::IpAddr;

use gslb_shared::assignment::{Assignment, Offered, TargetKey};
use gslb_shared::validate::{self, ValidationError};
use gslb_shared::{Check, DnsName, MemberAddress, Probe, expect_pattern, payload_bytes};
use regex::bytes::Regex;

/// A target that passed validation.
#[derive(Debug, Clone)]
pub struct Target {
    /// Its id.
    pub key: TargetKey,
    /// The address probes connect to: the check's probe address, or the
    /// member's. Unspecified while `resolve` is set: each probe then runs on
    /// a copy at each address the name resolved to ([`Target::at`]).
    pub address: IpAddr,
    /// The hostname a probe resolves first (a hostname member without a
    /// probe address).
    pub resolve: Option<DnsName>,
    /// The member's hostname: the HTTP Host and TLS server name unless the
    /// check names others.
    pub hostname: Option<DnsName>,
    /// The port probes use (the check's port, or the member's).
    pub port: u16,
    /// The check, validated.
    pub check: Check,
    /// The TCP/UDP expected-reply or HTTP body expression, compiled.
    pub pattern: Option<Regex>,
    /// The TCP/UDP payload as bytes (`hex:` decoded).
    pub payload: Vec<u8>,
}

/// Why an assignment cannot be probed: the field and the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {rule}")]
pub struct InvalidTarget {
    /// The offending field.
    pub field: String,
    /// The rule it broke.
    pub rule: String,
}

impl From<ValidationError> for InvalidTarget {
    fn from(err: ValidationError) -> Self {
        match err.errors.first() {
            Some(first) => InvalidTarget {
                field: first.field.clone(),
                rule: err.to_string(),
            },
            None => InvalidTarget {
                field: String::new(),
                rule: "invalid".into(),
            },
        }
    }
}

/// The address of a hostname target before it is resolved.
const UNRESOLVED: IpAddr = IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED);

impl Target {
    /// This target probed at `address`, one its hostname resolved to.
    pub fn at(&self, address: IpAddr) -> Target {
        Target {
            address,
            resolve: None,
            ..self.clone()
        }
    }

    /// The target of an offered assignment, or why it cannot be probed.
    pub fn from_offered(o: &Offered) -> Result<Target, InvalidTarget> {
        match &o.assignment {
            Ok(a) => Target::from_assignment(a),
            Err(e) => Err(e.clone().into()),
        }
    }

    /// Validate an assignment from the aggregator and compile its
    /// expressions (the wire's conversion already parsed its address, port
    /// and check).
    pub fn from_assignment(a: &Assignment) -> Result<Target, InvalidTarget> {
        let key = a.key();
        let check = Check::clone(&a.check);
        validate::check(&check)?;
        let (member_address, member_port) = (a.address.clone(), a.port);
        let invalid = |field: &str, rule: String| InvalidTarget {
            field: field.into(),
            rule: format!("{field}: {rule}"),
        };
        let (pattern_text, payload) = match &check.probe {
            Probe::Tcp(s) | Probe::Udp(s) => (
                (s.expect.as_deref().map(expect_pattern).transpose())
                    .map_err(|e| invalid("probe.expect", e))?,
                payload_bytes(&s.send).map_err(|e| invalid("probe.send", e))?,
            ),
            Probe::Http(h) | Probe::Https(h) => (h.body_regex.clone(), Vec::new()),
            Probe::None | Probe::Icmp | Probe::Mysql | Probe::Dns(_) | Probe::Grpc(_) => {
                (None, Vec::new())
            }
        };
        let pattern = pattern_text
            .map(|p| Regex::new(&p))
            .transpose()
            .map_err(|e| InvalidTarget {
                field: "probe".into(),
                rule: format!("regular expression: {e}"),
            })?;
        let hostname = member_address.host().cloned();
        let (address, resolve) = match (check.probe_address, &member_address) {
            (Some(ip), _) => (ip, None),
            (None, MemberAddress::Ip(ip)) => (*ip, None),
            (None, MemberAddress::Host(name)) => (UNRESOLVED, Some(name.clone())),
        };
        let target = Target {
            key,
            address,
            resolve,
            hostname,
            port: check.port.unwrap_or(member_port),
            check,
            pattern,
            payload,
        };
        target.revalidate()?;
        Ok(target)
    }

    /// The runtime checks of seed 004, cheap enough to run before every
    /// probe: a unicast address, a real port, an origin-form HTTP path,
    /// token header names and control-free values.
    pub fn revalidate(&self) -> Result<(), InvalidTarget> {
        let bad = |field: &str, rule: String| InvalidTarget {
            field: field.into(),
            rule: format!("{field}: {rule}"),
        };
        if self.resolve.is_none() && (self.address.is_unspecified() || self.address.is_multicast())
        {
            return Err(bad("address", "must be a unicast address".into()));
        }
        if self.port == 0 {
            return Err(bad("port", "must be between 1 and 65535".into()));
        }
        if let Probe::Http(h) | Probe::Https(h) = &self.check.probe {
            validate::http_path(&h.path).map_err(|e| bad("probe.path", e.to_string()))?;
            validate::method(&h.method).map_err(|e| bad("probe.method", e.to_string()))?;
            for (i, header) in h.headers.iter().enumerate() {
                validate::header(&header.name, &header.value)
                    .map_err(|e| bad(&format!("probe.headers[{i}]"), e.to_string()))?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use gslb_proto::pb;
    use gslb_shared::{CheckId, HttpProbe, Probe};

    use super::*;

    /// A target as the agent makes one from the wire.
    fn parse(a: &pb::Assignment) -> Result<Target, InvalidTarget> {
        Target::from_offered(&Offered::from(a))
    }

    fn assignment(address: &str, probe: Probe) -> pb::Assignment {
        let check = Check::new(CheckId(2), "c", probe);
        pb::Assignment {
            member_id: 1,
            check_id: 2,
            address: address.into(),
            port: 80,
            check: Some(pb::Check::from(&check)),
        }
    }

    #[test]
    fn valid_assignment_becomes_a_target() {
        let t = parse(&assignment("127.0.0.1", Probe::Http(HttpProbe::default()))).unwrap();
        assert_eq!((t.address.to_string(), t.port), ("127.0.0.1".into(), 80));
    }

    #[test]
    fn address_with_extra_url_parts_is_invalid() {
        for bad in [
            "127.0.0.1:80",
            "user@127.0.0.1",
            "127.0.0.1/x",
            "host.example:80",
            "localhost",
        ] {
            let err = parse(&assignment(bad, Probe::Icmp)).unwrap_err();
            assert_eq!(err.field, "address", "{bad}: {err}");
        }
    }

    #[test]
    fn invalid_http_target_names_the_field() {
        let http = HttpProbe {
            path: "http://evil/".into(),
            ..HttpProbe::default()
        };
        let err = parse(&assignment("127.0.0.1", Probe::Http(http))).unwrap_err();
        assert_eq!(err.field, "probe.path");
        let http = HttpProbe {
            headers: vec![gslb_shared::Header {
                name: "Content-Length".into(),
                value: "1".into(),
            }],
            ..HttpProbe::default()
        };
        let err = parse(&assignment("127.0.0.1", Probe::Http(http))).unwrap_err();
        assert_eq!(err.field, "probe.headers[0]");
    }

    proptest::proptest! {
        #[test]
        fn no_assignment_makes_the_parser_panic(
            address in ".{0,40}", port in proptest::prelude::any::<u32>(),
            interval in proptest::prelude::any::<u64>(), timeout in proptest::prelude::any::<u64>(),
            path in ".{0,30}", header in ".{0,20}", regex in ".{0,20}",
        ) {
            let http = HttpProbe { path, headers: vec![gslb_shared::Header { name: header.clone(), value: header }], body_regex: Some(regex), ..HttpProbe::default() };
            let mut a = assignment(&address, Probe::Http(http));
            a.port = port;
            if let Some(c) = a.check.as_mut() {
                c.interval_ms = interval;
                c.timeout_ms = timeout;
            }
            let _ = parse(&a);
        }
    }

    #[test]
    fn revalidation_catches_a_target_changed_after_parsing() {
        let mut t = parse(&assignment("127.0.0.1", Probe::Http(HttpProbe::default()))).unwrap();
        if let Probe::Http(h) = &mut t.check.probe {
            h.path = "//evil/".into();
        }
        assert_eq!(t.revalidate().unwrap_err().field, "probe.path");
    }
}
