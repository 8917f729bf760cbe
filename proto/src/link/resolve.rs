//! Hostname lookups for hostname members: an agent resolves a member's
//! name before it probes, the aggregator for flattened answers. Through
//! the system's name servers (`/etc/resolv.conf`) or one configured server,
//! with NLnet Labs' stub resolver; the A and AAAA questions go out together.

use std::net::{IpAddr, SocketAddr};
use std::str::FromStr;
use std::time::Duration;

use domain::base::iana::Rcode;
use domain::base::{Name, Rtype, ToName};
use domain::rdata::AllRecordData;
use domain::resolv::StubResolver;
use domain::resolv::stub::conf::{ResolvConf, ServerConf, Transport};
use gslb_shared::DnsName;
use gslb_shared::validate::unanswerable;

pub use gslb_shared::{MAX_RESOLVED_ADDRESSES as MAX_ADDRESSES, Resolved};
/// Most CNAME hops followed inside one answer.
const MAX_HOPS: usize = 8;

/// Why a name did not resolve.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResolveError {
    /// NXDOMAIN.
    #[error("{0}: no such name")]
    NoSuchName(String),
    /// The name exists but has no A or AAAA record with a unicast address.
    #[error("{0}: no address records (none with a unicast address)")]
    NoAddress(String),
    /// The resolver failed, refused or did not answer.
    #[error("{name}: {why}")]
    Failed {
        /// The name.
        name: String,
        /// What happened.
        why: String,
    },
}

/// A stub resolver.
#[derive(Clone)]
pub struct Resolver {
    stub: std::sync::Arc<StubResolver>,
    /// Where it asks, for logs.
    source: String,
}

impl std::fmt::Debug for Resolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resolver")
            .field("source", &self.source)
            .finish()
    }
}

impl Resolver {
    /// The system's name servers, from `/etc/resolv.conf`.
    pub fn system() -> Self {
        Resolver {
            stub: std::sync::Arc::new(StubResolver::new()),
            source: "/etc/resolv.conf".into(),
        }
    }

    /// One server (UDP, then TCP for a truncated reply), each question
    /// allowed `timeout` and two attempts.
    pub fn server(addr: SocketAddr, timeout: Duration) -> Self {
        let mut conf = ResolvConf::new();
        conf.servers.push(ServerConf::new(addr, Transport::UdpTcp));
        conf.options.timeout = timeout;
        conf.options.attempts = 2;
        conf.finalize();
        Resolver {
            stub: std::sync::Arc::new(StubResolver::from_conf(conf)),
            source: addr.to_string(),
        }
    }

    /// The system's servers, or `server` when one is configured.
    pub fn configured(server: Option<SocketAddr>, timeout: Duration) -> Self {
        server.map_or_else(Resolver::system, |s| Resolver::server(s, timeout))
    }

    /// Where it asks.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// The A and AAAA addresses of `name` (absolute: no search list).
    pub async fn lookup(&self, name: &DnsName) -> Result<Resolved, ResolveError> {
        let failed = |why: String| ResolveError::Failed {
            name: name.to_string(),
            why,
        };
        let qname = Name::<Vec<u8>>::from_str(&format!("{name}."))
            .map_err(|e| failed(format!("not a DNS name: {e}")))?;
        let (v4, v6) = tokio::join!(
            self.stub.query((&qname, Rtype::A)),
            self.stub.query((&qname, Rtype::AAAA))
        );
        let mut found = Found::default();
        let mut errors = Vec::new();
        for reply in [v4, v6] {
            match reply {
                Ok(answer) => found.read(&qname, &answer),
                Err(e) => errors.push(e.to_string()),
            }
        }
        if found.addresses.is_empty() {
            return Err(if let Some(e) = errors.first() {
                failed(e.clone())
            } else if let Some(rcode) = found.error {
                if rcode == Rcode::NXDOMAIN {
                    ResolveError::NoSuchName(name.to_string())
                } else {
                    failed(format!("resolver answered {rcode}"))
                }
            } else {
                ResolveError::NoAddress(name.to_string())
            });
        }
        found.addresses.sort();
        found.addresses.dedup();
        found.addresses.truncate(MAX_ADDRESSES);
        Ok(Resolved {
            addresses: found.addresses,
            ttl: found.ttl.unwrap_or(0),
        })
    }
}

/// What the replies held.
#[derive(Debug, Default)]
struct Found {
    addresses: Vec<IpAddr>,
    ttl: Option<u32>,
    /// A reply's rcode other than NOERROR.
    error: Option<Rcode>,
}

impl Found {
    /// Follow `qname`'s CNAME chain through the answer section and keep
    /// the addresses at its end; records of other owners are ignored.
    fn read(&mut self, qname: &Name<Vec<u8>>, message: &domain::resolv::stub::Answer) {
        let rcode = message.header().rcode();
        if rcode != Rcode::NOERROR {
            self.error = Some(rcode);
            return;
        }
        let Ok(answer) = message.answer() else {
            return;
        };
        let records: Vec<_> = answer
            .limit_to::<AllRecordData<_, _>>()
            .filter_map(Result::ok)
            .collect();
        let mut owner = qname.to_vec();
        let mut ttls = Vec::new();
        for _ in 0..MAX_HOPS {
            let mut next = None;
            for r in &records {
                if !r.owner().name_eq(&owner) {
                    continue;
                }
                let address = match r.data() {
                    AllRecordData::A(a) => Some(IpAddr::V4(a.addr())),
                    AllRecordData::Aaaa(a) => Some(IpAddr::V6(a.addr())),
                    _ => None,
                };
                // 0.0.0.0 (what blocking resolvers answer), multicast and
                // the like are never a host to probe or answer.
                if let Some(ip) = address {
                    if unanswerable(&ip).is_none() {
                        self.addresses.push(ip);
                        ttls.push(r.ttl().as_secs());
                    }
                    continue;
                }
                if let AllRecordData::Cname(c) = r.data() {
                    next = Some(c.cname().to_vec());
                    ttls.push(r.ttl().as_secs());
                }
            }
            match next {
                Some(target) if !target.name_eq(&owner) => owner = target,
                _ => break,
            }
        }
        if let Some(min) = ttls.into_iter().min() {
            self.ttl = Some(self.ttl.map_or(min, |t| t.min(min)));
        }
    }
}
