//! HTTP and HTTPS checks on hyper's connection API: one fresh connection per
//! probe to exactly the target address (a pooled connection never hides a
//! dead server), SNI and Host chosen by the check, redirects never followed,
//! at most 64 KiB of body read.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use bytes::Bytes;
use gslb_shared::{FailReason, HttpProbe, Probe};
use http_body_util::{BodyExt, Empty};
use hyper::Request;
use hyper::header::{HOST, HeaderName, HeaderValue, USER_AGENT};
use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::TlsConnector;

use super::tls::ProbeTls;
use super::{Checker, Failure, Outcome, ProbeFuture};
use crate::checker::destination::DenyList;
use crate::target::Target;

/// Most body bytes read for the body expression.
pub const MAX_BODY: usize = 64 * 1024;

/// HTTP(S) checker.
#[derive(Debug, Clone)]
pub struct HttpChecker {
    tls: ProbeTls,
    deny: Arc<DenyList>,
}

impl HttpChecker {
    /// A checker using these TLS settings for HTTPS and never reaching `deny`.
    pub fn new(tls: ProbeTls, deny: Arc<DenyList>) -> Self {
        Self { tls, deny }
    }
}

/// Aborts the connection task when the probe ends, however it ends.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// The Host header: the check's own, else its TLS server name, else the
/// member's hostname, else the address (with the port when not default).
fn host_header(http: &HttpProbe, target: &Target, https: bool) -> String {
    let (address, port) = (target.address, target.port);
    if let Some(h) = http
        .headers
        .iter()
        .find(|h| h.name.eq_ignore_ascii_case("host"))
    {
        return h.value.clone();
    }
    let host = match (&http.tls_server_name, &target.hostname, address) {
        (Some(name), _, _) => name.clone(),
        (None, Some(name), _) => name.to_string(),
        (None, None, IpAddr::V6(v6)) => format!("[{v6}]"),
        (None, None, IpAddr::V4(v4)) => v4.to_string(),
    };
    let default_port = if https { 443 } else { 80 };
    if port == default_port {
        host
    } else {
        format!("{host}:{port}")
    }
}

fn tls_failure(err: std::io::Error) -> Failure {
    let is_tls = err
        .get_ref()
        .is_some_and(|inner| inner.is::<rustls::Error>());
    if is_tls {
        Failure::new(FailReason::Tls, format!("tls: {err}"))
    } else {
        Failure::io("tls handshake", &err)
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
            let tcp = super::connect_tcp(SocketAddr::new(target.address, target.port), &self.deny)
                .await?;
            let _ = tcp.set_nodelay(true);
            super::tcp::reset_on_close(&tcp);
            let host = host_header(http, target, https);
            if !https {
                return exchange(tcp, http, &host, target, &self.deny).await;
            }
            // The check's server name, else the member's hostname (a CDN
            // or load balancer serves the certificate of its name).
            let sni = (http.tls_server_name.clone())
                .or_else(|| target.hostname.as_ref().map(ToString::to_string));
            let name = match sni {
                Some(sni) => ServerName::try_from(sni.clone()).map_err(|e| {
                    Failure::new(FailReason::Tls, format!("server name {sni:?}: {e}"))
                })?,
                None => ServerName::IpAddress(target.address.into()),
            };
            let connector = TlsConnector::from(self.tls.config(http.tls_verify));
            let stream = connector.connect(name, tcp).await.map_err(tls_failure)?;
            exchange(stream, http, &host, target, &self.deny).await
        })
    }
}

async fn exchange<S>(
    io: S,
    http: &HttpProbe,
    host: &str,
    target: &Target,
    deny: &DenyList,
) -> Outcome
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .map_err(|e| http_error("handshake", &e))?;
    let _connection = AbortOnDrop(tokio::spawn(async move {
        let _ = connection.await;
    }));
    let mut request = Request::builder()
        .method(http.method.as_str())
        .uri(http.path.as_str());
    let headers = request
        .headers_mut()
        .ok_or_else(|| Failure::new(FailReason::Other, "invalid request"))?;
    let value = |v: &str| {
        HeaderValue::from_str(v)
            .map_err(|e| Failure::new(FailReason::Other, format!("header: {e}")))
    };
    headers.insert(HOST, value(host)?);
    headers.insert(
        USER_AGENT,
        HeaderValue::from_static(concat!("gslb-agent/", env!("CARGO_PKG_VERSION"))),
    );
    for h in http
        .headers
        .iter()
        .filter(|h| !h.name.eq_ignore_ascii_case("host"))
    {
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
    let status = response.status().as_u16();
    let accepted = if http.expected_status.is_empty() {
        (200..=299).contains(&status)
    } else {
        http.expected_status
            .iter()
            .any(|r| (r.from..=r.to).contains(&status))
    };
    if !accepted {
        let location = response
            .headers()
            .get("location")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        // Redirects are never followed; one that points at a denied
        // address is reported as what it is, an attempt to reach it.
        if let Some(why) = location
            .as_deref()
            .and_then(redirect_ip)
            .and_then(|ip| deny.denied_ip(ip))
        {
            return Err(Failure::new(
                FailReason::DeniedDestination,
                format!("status {status} redirects to a denied destination ({why}); not followed"),
            ));
        }
        let detail = match location {
            Some(to) => format!("status {status} (redirect to {to}, not followed)"),
            None => format!("status {status}"),
        };
        return Err(Failure::new(FailReason::Status, detail));
    }
    let Some(pattern) = &target.pattern else {
        return Ok(());
    };
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
    if pattern.is_match(&seen) {
        Ok(())
    } else {
        Err(Failure::new(
            FailReason::BodyMismatch,
            format!("body ({} bytes read) did not match", seen.len()),
        ))
    }
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
}
