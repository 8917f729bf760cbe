//! Health checks: what agents probe, how often, and how results become health.

use std::net::IpAddr;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{CheckId, LocationId};

/// Default quorum to become healthy (DESIGN.md, seed 002).
pub const DEFAULT_RISE: f64 = 0.85;
/// Default quorum below which a healthy member becomes unhealthy.
pub const DEFAULT_FALL: f64 = 0.20;

/// A health check, shared by the members of the pools that name it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Check {
    /// Check id.
    pub id: CheckId,
    /// Human name.
    pub name: String,
    /// Protocol and its settings.
    pub probe: Probe,
    /// Port to probe; `None` uses the member's port.
    pub port: Option<u16>,
    /// Time between cycles.
    #[serde(with = "crate::duration")]
    #[schema(value_type = String)]
    pub interval: Duration,
    /// Time one probe may take.
    #[serde(with = "crate::duration")]
    #[schema(value_type = String)]
    pub timeout: Duration,
    /// Score at or above which a member becomes healthy.
    pub rise: f64,
    /// Score below which a healthy member becomes unhealthy.
    pub fall: f64,
    /// Number of cycles with data the score averages over.
    pub window: u32,
    /// Locations that run it; empty means all.
    #[serde(default)]
    pub locations: Vec<LocationId>,
    /// Probe this address instead of the answered one (e.g. the VIP's host).
    #[serde(default)]
    #[schema(value_type = Option<String>)]
    pub probe_address: Option<IpAddr>,
    /// A control check targets something known to be up: a location failing
    /// it is a broken vantage point, not evidence against targets.
    #[serde(default)]
    pub control: bool,
    /// Optional route-flap damping.
    #[serde(default)]
    pub damping: Option<FlapDamping>,
    /// Extra attempts within a cycle after a failed one; the first pass
    /// wins. Each attempt has the whole `timeout`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub retries: u32,
    /// A pass slower than this counts as a failure with reason `slow`.
    #[serde(
        default,
        with = "crate::duration::optional",
        skip_serializing_if = "Option::is_none"
    )]
    #[schema(value_type = Option<String>)]
    pub latency_threshold: Option<Duration>,
    /// The check passes when the probe fails and fails when it passes
    /// (Route 53's "inverted"); the probe's own reason is logged.
    #[serde(default, skip_serializing_if = "is_false")]
    pub inverted: bool,
}

/// The protocol of a check with its protocol-specific settings.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum Probe {
    /// No active check: health is up unless manually set.
    None,
    /// ICMP echo.
    Icmp,
    /// TCP connect, optionally sending a payload and matching the reply.
    Tcp(StreamProbe),
    /// UDP send, matching the reply.
    Udp(StreamProbe),
    /// Plain HTTP.
    Http(HttpProbe),
    /// HTTP over TLS.
    Https(HttpProbe),
    /// MySQL server greeting (protocol 10), no login.
    Mysql,
    /// A DNS query and its reply.
    Dns(DnsProbe),
    /// `grpc.health.v1.Health/Check`.
    Grpc(GrpcProbe),
}

impl Probe {
    /// Short protocol name as used in the API.
    pub fn protocol(&self) -> &'static str {
        match self {
            Probe::None => "none",
            Probe::Icmp => "icmp",
            Probe::Tcp(_) => "tcp",
            Probe::Udp(_) => "udp",
            Probe::Http(_) => "http",
            Probe::Https(_) => "https",
            Probe::Mysql => "mysql",
            Probe::Dns(_) => "dns",
            Probe::Grpc(_) => "grpc",
        }
    }
}

/// Settings of TCP and UDP checks.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct StreamProbe {
    /// Payload sent after connecting (TCP) or as the datagram (UDP): text,
    /// or `hex:` and the bytes in hexadecimal.
    #[serde(default)]
    pub send: String,
    /// What the reply must hold: a regular expression, or `hex:` and bytes
    /// the reply must contain.
    #[serde(default)]
    pub expect: Option<String>,
}

/// The prefix that makes a TCP/UDP payload hexadecimal bytes.
pub const HEX_PREFIX: &str = "hex:";

/// A TCP/UDP payload as bytes: `hex:` payloads decoded, others as text.
/// `Err` names what is not hexadecimal.
pub fn payload_bytes(text: &str) -> Result<Vec<u8>, String> {
    match text.strip_prefix(HEX_PREFIX) {
        None => Ok(text.as_bytes().to_vec()),
        Some(digits) => {
            let digits: String = digits.split_whitespace().collect();
            hex::decode(&digits).map_err(|e| format!("must be hexadecimal after \"hex:\": {e}"))
        }
    }
}

/// The regular expression over reply bytes an `expect` stands for: a
/// `hex:` byte string found anywhere, or the text as an expression.
pub fn expect_pattern(expect: &str) -> Result<String, String> {
    if !expect.starts_with(HEX_PREFIX) {
        return Ok(expect.to_owned());
    }
    let bytes = payload_bytes(expect)?;
    if bytes.is_empty() {
        return Err("must hold at least one byte after \"hex:\"".into());
    }
    let mut pattern = String::from("(?s-u)");
    for b in bytes {
        pattern.push_str(&format!("\\x{b:02x}"));
    }
    Ok(pattern)
}

/// Transport of a DNS check's query.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum DnsTransport {
    /// One datagram (a truncated reply counts as a reply).
    #[default]
    Udp,
    /// A TCP connection, length-prefixed (RFC 1035 4.2.2).
    Tcp,
}

/// Settings of DNS checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DnsProbe {
    /// The name asked for.
    pub query_name: String,
    /// The record type asked for (`A`, `AAAA`, `TXT`, `SOA`, …; default `A`).
    #[serde(default = "default_query_type")]
    pub query_type: String,
    /// UDP (default) or TCP.
    #[serde(default)]
    pub transport: DnsTransport,
    /// Accepted response codes (default `NOERROR`).
    #[serde(default = "default_rcodes")]
    pub expected_rcodes: Vec<String>,
    /// The answer must hold this address (an A/AAAA record equal to it) or,
    /// when not an address, a record whose data contains this text.
    #[serde(default)]
    pub expect_answer: Option<String>,
    /// Set the RD bit (for checking a recursive resolver; default off).
    #[serde(default)]
    pub recursion_desired: bool,
}

fn default_query_type() -> String {
    "A".into()
}

fn default_rcodes() -> Vec<String> {
    vec!["NOERROR".into()]
}

impl DnsProbe {
    /// A check of `name` with the defaults (A over UDP, NOERROR).
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            query_name: name.into(),
            query_type: default_query_type(),
            transport: DnsTransport::Udp,
            expected_rcodes: default_rcodes(),
            expect_answer: None,
            recursion_desired: false,
        }
    }
}

/// Settings of gRPC health checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GrpcProbe {
    /// The service asked about; empty asks about the server as a whole.
    #[serde(default)]
    pub service: String,
    /// Connect over TLS (HTTP/2 negotiated with ALPN).
    #[serde(default)]
    pub tls: bool,
    /// TLS server name; defaults to the member's hostname or address.
    #[serde(default)]
    pub tls_server_name: Option<String>,
    /// Verify the server certificate (with `tls`).
    #[serde(default = "default_true")]
    pub tls_verify: bool,
}

impl Default for GrpcProbe {
    fn default() -> Self {
        Self {
            service: String::new(),
            tls: false,
            tls_server_name: None,
            tls_verify: true,
        }
    }
}

/// Settings of HTTP and HTTPS checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HttpProbe {
    /// Request method (default `GET`).
    #[serde(default = "default_method")]
    pub method: String,
    /// Relative reference: path and optional query (default `/`).
    #[serde(default = "default_path")]
    pub path: String,
    /// Extra request headers.
    #[serde(default)]
    pub headers: Vec<Header>,
    /// Accepted status codes; empty means 200–299 (a redirect that is not
    /// followed fails unless listed).
    #[serde(default)]
    pub expected_status: Vec<StatusRange>,
    /// Regular expression over the first 64 KiB of the body.
    #[serde(default)]
    pub body_regex: Option<String>,
    /// Text the first 64 KiB of the body must contain.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body_contains: Option<String>,
    /// Redirects followed (at most 5; default 0: none). Every hop is
    /// resolved and checked against the deny-list before connecting.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub follow_redirects: u8,
    /// TLS server name (SNI) for HTTPS; defaults to the member address.
    #[serde(default)]
    pub tls_server_name: Option<String>,
    /// Verify the server certificate (HTTPS).
    #[serde(default = "default_true")]
    pub tls_verify: bool,
}

fn default_true() -> bool {
    true
}

fn is_false(v: &bool) -> bool {
    !*v
}

fn is_zero<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

fn default_method() -> String {
    "GET".into()
}

fn default_path() -> String {
    "/".into()
}

impl Default for HttpProbe {
    fn default() -> Self {
        Self {
            method: default_method(),
            path: default_path(),
            headers: Vec::new(),
            expected_status: Vec::new(),
            body_regex: None,
            body_contains: None,
            follow_redirects: 0,
            tls_server_name: None,
            tls_verify: true,
        }
    }
}

/// One custom request header.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Header {
    /// Header name (an HTTP token).
    pub name: String,
    /// Header value (no control characters but tab).
    pub value: String,
}

/// An inclusive range of HTTP status codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusRange {
    /// First accepted code.
    pub from: u16,
    /// Last accepted code.
    pub to: u16,
}

/// BGP-style route-flap damping parameters (RFC 2439's shape).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FlapDamping {
    /// Penalty added on every transition.
    pub penalty: f64,
    /// Above this penalty a member is held down.
    pub suppress: f64,
    /// A held member is released once the penalty decays below this.
    pub reuse: f64,
    /// Time for the penalty to halve.
    #[serde(with = "crate::duration")]
    #[schema(value_type = String)]
    pub half_life: Duration,
    /// The penalty never grows above this, which bounds suppression time.
    pub max_penalty: f64,
}

impl Default for FlapDamping {
    fn default() -> Self {
        Self {
            penalty: 1000.0,
            suppress: 2000.0,
            reuse: 750.0,
            half_life: Duration::from_secs(60),
            max_penalty: 6000.0,
        }
    }
}

impl Check {
    /// A check with the documented defaults (10 s interval, 5 s timeout).
    pub fn new(id: CheckId, name: impl Into<String>, probe: Probe) -> Self {
        Self {
            id,
            name: name.into(),
            probe,
            port: None,
            interval: Duration::from_secs(10),
            timeout: Duration::from_secs(5),
            rise: DEFAULT_RISE,
            fall: DEFAULT_FALL,
            window: 1,
            locations: Vec::new(),
            probe_address: None,
            control: false,
            damping: None,
            retries: 0,
            latency_threshold: None,
            inverted: false,
        }
    }

    /// True when the check actively probes (anything but `none`).
    pub fn is_active(&self) -> bool {
        !matches!(self.probe, Probe::None)
    }
}
