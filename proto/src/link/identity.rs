//! Who is on the other end of a link: the role and name a certificate
//! carries as a SPIFFE-style URI SAN, `spiffe://gslb/ROLE/NAME`.

use std::fmt;
use std::str::FromStr;

use rustls::pki_types::CertificateDer;

/// The trust domain and path prefix of every gslb identity.
pub const URI_PREFIX: &str = "spiffe://gslb/";

/// What a component may do on the aggregator's gRPC listener.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Role {
    /// Streams probe results (`AgentService`).
    Agent,
    /// Subscribes to snapshots (`EdgeFeed`).
    Edge,
    /// Another aggregator: Raft and cluster status.
    Aggregator,
    /// gslbctl and other admin clients (a bearer token is needed as well).
    Operator,
}

impl Role {
    /// Every role, in a stable order.
    pub const ALL: [Role; 4] = [Role::Agent, Role::Edge, Role::Aggregator, Role::Operator];

    /// The word used in certificates and flags.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Agent => "agent",
            Role::Edge => "edge",
            Role::Aggregator => "aggregator",
            Role::Operator => "operator",
        }
    }
}

impl fmt::Display for Role {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Role {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Role::ALL
            .into_iter()
            .find(|r| r.as_str() == s)
            .ok_or_else(|| format!("{s:?} is not a role (agent, edge, aggregator, operator)"))
    }
}

/// A verified peer's identity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// Its role.
    pub role: Role,
    /// Its name (a location, an edge id, a node name, a person).
    pub name: String,
}

impl fmt::Display for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {:?}", self.role, self.name)
    }
}

/// The URI SAN naming `role` and `name`.
pub fn uri(role: Role, name: &str) -> String {
    format!("{URI_PREFIX}{role}/{name}")
}

/// Parse a URI SAN written by [`uri`].
pub fn parse_uri(uri: &str) -> Option<Identity> {
    let (role, name) = uri.strip_prefix(URI_PREFIX)?.split_once('/')?;
    let role = role.parse().ok()?;
    if name.is_empty() || name.contains('/') {
        return None;
    }
    Some(Identity {
        role,
        name: name.to_owned(),
    })
}

/// The identity a (verified) certificate carries: exactly one gslb URI SAN.
pub fn of_certificate(cert: &CertificateDer<'_>) -> Result<Identity, String> {
    let (_, parsed) = x509_parser::parse_x509_certificate(cert.as_ref())
        .map_err(|e| format!("unreadable certificate: {e}"))?;
    let names = parsed
        .subject_alternative_name()
        .map_err(|e| format!("bad subjectAltName: {e}"))?
        .map(|ext| ext.value.general_names.clone())
        .unwrap_or_default();
    let mut found = names.iter().filter_map(|n| match n {
        x509_parser::extensions::GeneralName::URI(u) if u.starts_with(URI_PREFIX) => Some(*u),
        _ => None,
    });
    let (Some(first), None) = (found.next(), found.next()) else {
        return Err(format!(
            "the certificate must carry exactly one {URI_PREFIX}ROLE/NAME URI SAN"
        ));
    };
    parse_uri(first)
        .ok_or_else(|| format!("{first:?} is not {URI_PREFIX}ROLE/NAME with a known role"))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn uris_round_trip_and_bad_ones_are_refused() {
        for role in Role::ALL {
            let id = parse_uri(&uri(role, "fra-1")).unwrap();
            assert_eq!((id.role, id.name.as_str()), (role, "fra-1"));
        }
        for bad in [
            "spiffe://gslb/admin/x",
            "spiffe://gslb/agent/",
            "spiffe://gslb/agent/a/b",
            "spiffe://other/agent/x",
            "spiffe://gslb/agent",
        ] {
            assert_eq!(parse_uri(bad), None, "{bad}");
        }
    }
}
