//! HTTP and HTTPS checks on hyper's connection API: one fresh connection per
//! request to exactly the target address (a pooled connection never hides a
//! dead server), SNI and Host chosen by the check, at most 64 KiB of body
//! read. Redirects are followed only when the check asks (`followRedirects`,
//! at most 5); every hop's address is resolved and checked against the
//! deny-list before anything connects to it.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use bytes::Bytes;
use gslb_proto::link::resolve::Resolver;
use gslb_shared::{DnsName, FailReason, HttpProbe, Probe};
use http_body_util::{BodyExt, Empty};
use hyper::Request;
use hyper::body::Incoming;
use hyper::header::{HOST, HeaderName, HeaderValue, USER_AGENT};
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncWrite};

use super::tls::ProbeTls;
use super::{Checker, Failure, Outcome, ProbeFuture};
use crate::checker::destination::DenyList;
use crate::metrics::CertExpiry;
use crate::target::Target;

/// Most body bytes read for the body expression.
pub const MAX_BODY: usize = 64 * 1024;

/// HTTP(S) checker.
#[derive(Debug, Clone)]
pub struct HttpChecker {
    tls: ProbeTls,
    deny: Arc<DenyList>,
    resolver: Resolver,
    certs: CertExpiry,
}

impl HttpChecker {
    /// A checker using these TLS settings for HTTPS, `resolver` for the
    /// hosts redirects name, never reaching `deny`, and recording the days
    /// left on each server certificate in `certs`.
    pub fn new(tls: ProbeTls, deny: Arc<DenyList>, resolver: Resolver, certs: CertExpiry) -> Self {
        Self {
            tls,
            deny,
            resolver,
            certs,
        }
    }
}

/// Aborts the connection task when the probe ends, however it ends.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Where one request of a probe goes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Hop {
    https: bool,
    address: IpAddr,
    port: u16,
    /// The Host header.
    host: String,
    /// The TLS server name; `None` uses the address.
    sni: Option<String>,
    path: String,
    method: String,
    /// Whether the check's own headers go along (not to another host).
    own_headers: bool,
}

/// The Host header: the check's own, else its TLS server name, else the
/// member's hostname, else the address (with the port when not default).
fn host_header(http: &HttpProbe, target: &Target, https: bool) -> String {
    if let Some(h) = http
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("host"))
    {
        return h.value.clone();
    }
    let host = match (&http.tls_server_name, &target.hostname) {
        (Some(name), _) => name.clone(),
        (None, Some(name)) => name.to_string(),
        (None, None) => ip_host(target.address),
    };
    with_port(host, target.port, https)
}

fn ip_host(address: IpAddr) -> String {
    match address {
        IpAddr::V6(v6) => format!("[{v6}]"),
        IpAddr::V4(v4) => v4.to_string(),
    }
}

fn with_port(host: String, port: u16, https: bool) -> String {
    let default_port = if https { 443 } else { 80 };
    if port == default_port {
        host
    } else {
        format!("{host}:{port}")
    }
}

fn first_hop(http: &HttpProbe, target: &Target, https: bool) -> Hop {
    let sni = super::tls::server_name(&http.tls_server_name, target);
    Hop {
        https,
        address: target.address,
        port: target.port,
        host: host_header(http, target, https),
        sni,
        path: http.path.clone(),
        method: http.method.clone(),
        own_headers: true,
    }
}

impl Checker for HttpChecker {
    fn probe<'a>(&'a self, target: &'a Target) -> ProbeFuture<'a> {
        Box::pin(async move {
            let (https, http) = match &target.check.probe {
                Probe::Http(h) => (false, h),
                Probe::Https(h) => (true, h),
                _ => return Err(Failure::new(FailReason::Other, "not an http check")),
            };
            let mut hop = first_hop(http, target, https);
            let mut followed = 0u8;
            loop {
                let (response, connection) = self.request(&hop, http, target).await?;
                let status = response.status().as_u16();
                if accepted(http, status) {
                    return body_matches(response, http, target, connection).await;
                }
                let location = response
                    .headers()
                    .get("location")
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                let location = match location {
                    Some(to) if (300..=399).contains(&status) => to,
                    _ => return Err(Failure::new(FailReason::Status, format!("status {status}"))),
                };
                if followed >= http.follow_redirects {
                    return Err(self.unfollowed(status, &location, http.follow_redirects));
                }
                followed += 1;
                hop = self.next_hop(&hop, status, &location, followed).await?;
            }
        })
    }
}

impl HttpChecker {
    /// Connect to a hop and send its request; the response and the task
    /// driving its connection (dropped, it closes the connection).
    async fn request(
        &self,
        hop: &Hop,
        http: &HttpProbe,
        target: &Target,
    ) -> Result<(hyper::Response<Incoming>, AbortOnDrop), Failure> {
        let tcp = super::connect_tcp(SocketAddr::new(hop.address, hop.port), &self.deny).await?;
        let _ = tcp.set_nodelay(true);
        super::tcp::reset_on_close(&tcp);
        if !hop.https {
            return exchange(tcp, hop, http).await;
        }
        let config = self.tls.config(http.tls_verify);
        let stream = super::tls::handshake(
            config,
            tcp,
            hop.sni.as_deref(),
            hop.address,
            &self.certs,
            target.key,
        )
        .await?;
        exchange(stream, hop, http).await
    }

    /// The failure of a redirect the check does not follow (any more).
    fn unfollowed(&self, status: u16, location: &str, limit: u8) -> Failure {
        // One that points at a denied address is reported as what it is,
        // an attempt to reach it.
        if let Some(why) = redirect_ip(location).and_then(|ip| self.deny.denied_ip(ip)) {
            return Failure::new(
                FailReason::DeniedDestination,
                format!("status {status} redirects to a denied destination ({why}); not followed"),
            );
        }
        let detail = if limit == 0 {
            format!("status {status} (redirect to {location}, not followed)")
        } else {
            format!("status {status} (redirect to {location}): more than {limit} redirects")
        };
        Failure::new(FailReason::Status, detail)
    }

    /// Where a redirect leads: its host resolved (a name) and every address
    /// checked against the deny-list, its path checked like a check's.
    async fn next_hop(
        &self,
        from: &Hop,
        status: u16,
        location: &str,
        n: u8,
    ) -> Result<Hop, Failure> {
        let bad = |why: String| {
            Failure::new(
                FailReason::Protocol,
                format!("redirect {n} to {location:?}: {why}"),
            )
        };
        let method = if status == 303 && from.method != "HEAD" {
            "GET".to_owned()
        } else {
            from.method.clone()
        };
        let absolute = location.split('/').next().is_some_and(|s| s.ends_with(':'));
        if !absolute && !location.starts_with("//") {
            // A reference on the same server: a path, or relative to the
            // directory of the current one.
            let path = if location.starts_with('/') {
                location.to_owned()
            } else {
                relative(&from.path, location)
            };
            gslb_shared::validate::http_path(&path).map_err(|e| bad(e.to_string()))?;
            return Ok(Hop {
                path,
                method,
                ..from.clone()
            });
        }
        let full = if absolute {
            location.to_owned()
        } else {
            let scheme = if from.https { "https:" } else { "http:" };
            format!("{scheme}{location}")
        };
        let uri: hyper::Uri = full.parse().map_err(|e| bad(format!("{e}")))?;
        let path = uri
            .path_and_query()
            .map_or("/", |pq| pq.as_str())
            .to_owned();
        gslb_shared::validate::http_path(&path).map_err(|e| bad(e.to_string()))?;
        let host = uri.host().ok_or_else(|| bad("no host".into()))?;
        let https = match uri.scheme_str() {
            Some("https") => true,
            Some("http") => false,
            other => return Err(bad(format!("scheme {other:?} is not http or https"))),
        };
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        let literal = host.trim_start_matches('[').trim_end_matches(']');
        let (address, sni) = match literal.parse::<IpAddr>() {
            Ok(ip) => (ip, None),
            Err(_) => {
                let name = DnsName::parse(literal).map_err(|e| bad(e.to_string()))?;
                let resolved = self.resolver.lookup(&name).await.map_err(|e| {
                    Failure::new(FailReason::Resolve, format!("redirect {n}: resolve {e}"))
                })?;
                for &ip in &resolved.addresses {
                    if let Some(why) = self.deny.denied_ip(ip) {
                        return Err(Failure::new(
                            FailReason::DeniedDestination,
                            format!(
                                "redirect {n}: {name} resolved to a denied destination ({why}); not followed"
                            ),
                        ));
                    }
                }
                let first = resolved.addresses.first().copied().ok_or_else(|| {
                    Failure::new(
                        FailReason::Resolve,
                        format!("redirect {n}: {name} has no address"),
                    )
                })?;
                (first, Some(name.to_string()))
            }
        };
        if let Some(why) = self.deny.denied_ip(address) {
            return Err(Failure::new(
                FailReason::DeniedDestination,
                format!("status {status} redirects to a denied destination ({why}); not followed"),
            ));
        }
        let host_name = sni.clone().unwrap_or_else(|| ip_host(address));
        let same_host = https == from.https && port == from.port && address == from.address;
        Ok(Hop {
            https,
            address,
            port,
            host: with_port(host_name, port, https),
            sni,
            path,
            method,
            own_headers: from.own_headers && same_host,
        })
    }
}

/// A relative reference resolved against the directory of `base`.
fn relative(base: &str, reference: &str) -> String {
    let path = base.split('?').next().unwrap_or("/");
    let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
    format!("{}{reference}", if dir.is_empty() { "/" } else { dir })
}

fn accepted(http: &HttpProbe, status: u16) -> bool {
    if http.expected_status.is_empty() {
        (200..=299).contains(&status)
    } else {
        http.expected_status
            .iter()
            .any(|r| (r.from..=r.to).contains(&status))
    }
}

async fn exchange<S>(
    io: S,
    hop: &Hop,
    http: &HttpProbe,
) -> Result<(hyper::Response<Incoming>, AbortOnDrop), Failure>
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .map_err(|e| http_error("handshake", &e))?;
    let connection = AbortOnDrop(tokio::spawn(async move {
        let _ = connection.await;
    }));
    let mut request = Request::builder()
        .method(hop.method.as_str())
        .uri(hop.path.as_str());
    let headers = request
        .headers_mut()
        .ok_or_else(|| Failure::new(FailReason::Other, "invalid request"))?;
    let value = |v: &str| {
        HeaderValue::from_str(v)
            .map_err(|e| Failure::new(FailReason::Other, format!("header: {e}")))
    };
    headers.insert(HOST, value(&hop.host)?);
    headers.insert(
        USER_AGENT,
        HeaderValue::from_static(concat!("gslb-agent/", env!("CARGO_PKG_VERSION"))),
    );
    let own = http
        .headers
        .iter()
        .filter(|h| hop.own_headers && !h.name.eq_ignore_ascii_case("host"));
    for h in own {
        let name = HeaderName::from_bytes(h.name.as_bytes())
            .map_err(|e| Failure::new(FailReason::Other, format!("header {}: {e}", h.name)))?;
        headers.append(name, value(&h.value)?);
    }
    let request = request
        .body(Empty::<Bytes>::new())
        .map_err(|e| Failure::new(FailReason::Other, format!("request: {e}")))?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| http_error("request", &e))?;
    Ok((response, connection))
}

/// Read at most [`MAX_BODY`] bytes when the check matches the body, and
/// match them.
async fn body_matches(
    response: hyper::Response<Incoming>,
    http: &HttpProbe,
    target: &Target,
    _connection: AbortOnDrop,
) -> Outcome {
    let contains = http.body_contains.as_deref().map(str::as_bytes);
    if target.pattern.is_none() && contains.is_none() {
        return Ok(());
    }
    let mut body = response.into_body();
    let mut seen = Vec::with_capacity(1024);
    while seen.len() < MAX_BODY {
        match body.frame().await {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref() {
                    let room = MAX_BODY - seen.len();
                    seen.extend_from_slice(&data[..data.len().min(room)]);
                }
            }
            Some(Err(e)) => return Err(http_error("body", &e)),
            None => break,
        }
    }
    if let Some(pattern) = &target.pattern
        && !pattern.is_match(&seen)
    {
        return Err(Failure::new(
            FailReason::BodyMismatch,
            format!("body ({} bytes read) did not match", seen.len()),
        ));
    }
    if let Some(text) = contains
        && !seen.windows(text.len()).any(|w| w == text)
    {
        return Err(Failure::new(
            FailReason::BodyMismatch,
            format!(
                "body ({} bytes read) does not contain the expected text",
                seen.len()
            ),
        ));
    }
    Ok(())
}

/// The IP literal an absolute `Location` points at, if it names one.
fn redirect_ip(location: &str) -> Option<IpAddr> {
    let uri: hyper::Uri = location.parse().ok()?;
    let host = uri.host()?;
    host.trim_start_matches('[')
        .trim_end_matches(']')
        .parse()
        .ok()
}

fn http_error(step: &str, err: &hyper::Error) -> Failure {
    use std::error::Error;
    if let Some(io) = err
        .source()
        .and_then(|s| s.downcast_ref::<std::io::Error>())
    {
        return Failure::io(step, io);
    }
    let reason = if err.is_incomplete_message() {
        FailReason::Reset
    } else {
        FailReason::Protocol
    };
    Failure::new(reason, format!("{step}: {err}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(address: &str, port: u16, hostname: Option<&str>) -> Target {
        let a = gslb_shared::assignment::Assignment {
            member: gslb_shared::MemberId(1),
            address: hostname.unwrap_or(address).parse().unwrap(),
            port,
            check: std::sync::Arc::new(gslb_shared::Check::new(
                gslb_shared::CheckId(1),
                "c",
                Probe::Http(HttpProbe::default()),
            )),
        };
        Target::from_assignment(&a)
            .unwrap()
            .at(address.parse().unwrap())
    }

    #[test]
    fn host_header_defaults_to_name_or_address_with_non_default_port() {
        let mut h = HttpProbe::default();
        assert_eq!(
            host_header(&h, &at("127.0.0.1", 80, None), false),
            "127.0.0.1"
        );
        assert_eq!(host_header(&h, &at("::1", 8443, None), true), "[::1]:8443");
        assert_eq!(
            host_header(&h, &at("::1", 8443, Some("lb.example.com")), true),
            "lb.example.com:8443"
        );
        h.tls_server_name = Some("api.example.com".into());
        assert_eq!(
            host_header(&h, &at("::1", 443, None), true),
            "api.example.com"
        );
        h.headers.push(gslb_shared::Header {
            name: "host".into(),
            value: "x.test".into(),
        });
        assert_eq!(host_header(&h, &at("::1", 443, None), true), "x.test");
    }

    #[test]
    fn relative_references_resolve_against_the_directory() {
        assert_eq!(relative("/a/b?x=1", "c"), "/a/c");
        assert_eq!(relative("/", "c?d"), "/c?d");
        assert_eq!(relative("/a/", "c"), "/a/c");
    }
}
