//! Each protocol's settings of a health check: HTTP(S), TCP/UDP payloads,
//! DNS questions and gRPC health services.

use super::error::Findings;
use super::{header, http_path, method};
use crate::model::{
    DnsName, DnsProbe, DnsTransport, GrpcProbe, HttpProbe, StreamProbe, expect_pattern,
    payload_bytes,
};
use crate::wire::{query_type, response_code};

/// Largest TCP/UDP payload.
pub const MAX_PAYLOAD: usize = 4096;
/// Largest compiled regular expression, in bytes.
pub const MAX_REGEX_SIZE: usize = 64 * 1024;
/// Most custom headers.
pub const MAX_HEADERS: usize = 32;
/// Most redirects an HTTP check follows.
pub const MAX_REDIRECTS: u8 = 5;
/// Longest `bodyContains` and DNS `expectAnswer` text.
pub const MAX_MATCH_TEXT: usize = 1024;
/// Most accepted DNS response codes.
pub const MAX_RCODES: usize = 8;
/// Longest gRPC service name.
pub const MAX_GRPC_SERVICE: usize = 256;

/// A regular expression over bytes (as agents match replies), or the
/// finding.
pub fn regex(f: &mut Findings, field: &str, pattern: &str) {
    if let Err(err) = regex::bytes::RegexBuilder::new(pattern)
        .size_limit(MAX_REGEX_SIZE)
        .build()
    {
        f.add(field, format!("must be a valid regular expression: {err}"));
    }
}

fn server_name(f: &mut Findings, field: &str, name: &Option<String>) {
    if let Some(name) = name
        && let Err(err) = DnsName::parse(name)
    {
        f.add(field, format!("must be a DNS name: {err}"));
    }
}

fn match_text(f: &mut Findings, field: &str, text: &Option<String>) {
    if let Some(text) = text {
        f.require(
            !text.is_empty() && text.len() <= MAX_MATCH_TEXT,
            field,
            format!("must hold 1 to {MAX_MATCH_TEXT} bytes"),
        );
    }
}

/// HTTP and HTTPS settings.
pub fn http(f: &mut Findings, http: &HttpProbe) {
    if let Err(err) = method(&http.method) {
        f.add("probe.method", err.to_string());
    }
    if let Err(err) = http_path(&http.path) {
        f.add("probe.path", err.to_string());
    }
    f.require(
        http.headers.len() <= MAX_HEADERS,
        "probe.headers",
        format!("must hold at most {MAX_HEADERS} headers"),
    );
    for (i, h) in http.headers.iter().enumerate() {
        if let Err(err) = header(&h.name, &h.value) {
            f.add(&format!("probe.headers[{i}]"), err.to_string());
        }
    }
    for (i, range) in http.expected_status.iter().enumerate() {
        let at = format!("probe.expectedStatus[{i}]");
        f.require(
            (100..=599).contains(&range.from) && (100..=599).contains(&range.to),
            &at,
            "status codes must be between 100 and 599",
        );
        f.require(
            range.from <= range.to,
            &at,
            "from must not be greater than to",
        );
    }
    if let Some(pattern) = &http.body_regex {
        regex(f, "probe.bodyRegex", pattern);
    }
    match_text(f, "probe.bodyContains", &http.body_contains);
    f.require(
        http.follow_redirects <= MAX_REDIRECTS,
        "probe.followRedirects",
        format!("must be between 0 and {MAX_REDIRECTS}"),
    );
    server_name(f, "probe.tlsServerName", &http.tls_server_name);
}

/// TCP and UDP payloads. A UDP check may send nothing (an empty datagram).
pub fn stream(f: &mut Findings, stream: &StreamProbe) {
    match payload_bytes(&stream.send) {
        Ok(bytes) => f.require(
            bytes.len() <= MAX_PAYLOAD,
            "probe.send",
            format!("must be at most {MAX_PAYLOAD} bytes"),
        ),
        Err(rule) => f.add("probe.send", rule),
    }
    if let Some(expect) = &stream.expect {
        match expect_pattern(expect) {
            Ok(pattern) => regex(f, "probe.expect", &pattern),
            Err(rule) => f.add("probe.expect", rule),
        }
    }
}

/// DNS question and expected reply.
pub fn dns(f: &mut Findings, dns: &DnsProbe) {
    if let Err(err) = DnsName::parse(&dns.query_name) {
        f.add("probe.queryName", format!("must be a DNS name: {err}"));
    }
    f.require(
        query_type(&dns.query_type).is_some(),
        "probe.queryType",
        "must be a record type such as A, AAAA, TXT or SOA (not a transfer or meta type)",
    );
    f.require(
        (1..=MAX_RCODES).contains(&dns.expected_rcodes.len()),
        "probe.expectedRcodes",
        format!("must list 1 to {MAX_RCODES} response codes"),
    );
    for (i, rcode) in dns.expected_rcodes.iter().enumerate() {
        f.require(
            response_code(rcode).is_some(),
            &format!("probe.expectedRcodes[{i}]"),
            "must be a response code such as NOERROR, NXDOMAIN, SERVFAIL or REFUSED",
        );
    }
    match_text(f, "probe.expectAnswer", &dns.expect_answer);
    // Both transports are valid; the match keeps a new one from slipping by.
    match dns.transport {
        DnsTransport::Udp | DnsTransport::Tcp => {}
    }
}

/// gRPC health service and TLS settings.
pub fn grpc(f: &mut Findings, grpc: &GrpcProbe) {
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/');
    f.require(
        grpc.service.len() <= MAX_GRPC_SERVICE && grpc.service.chars().all(ok),
        "probe.service",
        format!(
            "must be at most {MAX_GRPC_SERVICE} characters of letters, digits, '.', '_', '-' and '/'"
        ),
    );
    server_name(f, "probe.tlsServerName", &grpc.tls_server_name);
    f.require(
        grpc.tls || grpc.tls_server_name.is_none(),
        "probe.tlsServerName",
        "needs tls: true",
    );
}
