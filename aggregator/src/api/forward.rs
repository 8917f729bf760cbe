//! A follower's REST writes, sent on to the leader: the same method, path,
//! headers (the caller's token and preconditions included) and body, over
//! the cluster's TLS (trusting the cluster's CA), and the leader's answer
//! passed back as it comes. A forwarded call carries
//! [`FORWARDED`]; a node that does not lead never forwards such a call
//! again (no loops while leadership moves), it answers as before.

use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::http::{HeaderValue, header};
use axum::response::{IntoResponse, Response};
use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper_util::rt::TokioIo;

pub use crate::api::caller::{FORWARDED, FORWARDED_FOR};
/// The largest body forwarded: the largest any route takes (a zone file).
pub const MAX_FORWARDED_BODY: usize = crate::core::zonefile::MAX_ZONE_FILE_BYTES;
/// How long connecting to the leader and its answer's head may take.
pub const FORWARD_TIMEOUT: Duration = Duration::from_secs(30);

/// Headers that belong to one connection, never passed on (RFC 9110 7.6.1).
const HOP_BY_HOP: [&str; 8] = [
    "connection",
    "keep-alive",
    "proxy-authenticate",
    "proxy-authorization",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

/// How this node reaches the leader's REST listener.
#[derive(Clone)]
pub struct Forwarder {
    /// `None`: plain text (the cluster runs `--insecure`).
    tls: Option<tokio_rustls::TlsConnector>,
    /// This node's id, in [`FORWARDED`].
    node: u64,
}

impl std::fmt::Debug for Forwarder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Forwarder")
            .field("tls", &self.tls.is_some())
            .field("node", &self.node)
            .finish()
    }
}

impl Forwarder {
    /// A forwarder trusting the CA in `ca` (none: plain text).
    pub fn new(ca: Option<&std::path::Path>, node: u64) -> anyhow::Result<Self> {
        let tls = match ca {
            None => None,
            Some(ca) => {
                let roots = gslb_proto::link::tls::read_roots(ca)?;
                let provider = Arc::new(rustls::crypto::ring::default_provider());
                let mut config = rustls::ClientConfig::builder_with_provider(provider)
                    .with_safe_default_protocol_versions()?
                    .with_root_certificates(roots)
                    .with_no_client_auth();
                config.alpn_protocols = vec![b"http/1.1".to_vec()];
                Some(tokio_rustls::TlsConnector::from(Arc::new(config)))
            }
        };
        Ok(Forwarder { tls, node })
    }

    /// Send `request` to the leader's REST listener at `leader`
    /// (`HOST:PORT`) and answer with what it answers.
    pub async fn forward(&self, leader: &str, request: Request) -> Response {
        let client = crate::api::caller::source(&request);
        let (parts, body) = request.into_parts();
        let body = match Limited::new(body, MAX_FORWARDED_BODY).collect().await {
            Ok(body) => body.to_bytes(),
            Err(_) => {
                return error(
                    axum::http::StatusCode::PAYLOAD_TOO_LARGE,
                    "invalid_argument",
                    &format!("body: at most {MAX_FORWARDED_BODY} bytes (or it could not be read)"),
                );
            }
        };
        let path = parts
            .uri
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_owned();
        let mut outgoing = hyper::Request::builder()
            .method(parts.method.clone())
            .uri(path);
        for (name, value) in &parts.headers {
            let ours = name == FORWARDED || name == FORWARDED_FOR;
            if name != header::HOST && !ours && !HOP_BY_HOP.contains(&name.as_str()) {
                outgoing = outgoing.header(name, value);
            }
        }
        let outgoing = outgoing
            .header(header::HOST, leader)
            .header(FORWARDED, self.node.to_string())
            .header(FORWARDED_FOR, client)
            .body(Full::new(body));
        let Ok(outgoing) = outgoing else {
            return unavailable("the call could not be forwarded to the leader");
        };
        match tokio::time::timeout(FORWARD_TIMEOUT, self.send(leader, outgoing)).await {
            Ok(Ok(response)) => response,
            Ok(Err(why)) => unavailable(&format!("forwarding to the leader at {leader}: {why}")),
            Err(_) => unavailable(&format!(
                "forwarding to the leader at {leader}: no answer within {} s",
                FORWARD_TIMEOUT.as_secs()
            )),
        }
    }

    async fn send(
        &self,
        leader: &str,
        request: hyper::Request<Full<Bytes>>,
    ) -> Result<Response, String> {
        let tcp = tokio::net::TcpStream::connect(leader)
            .await
            .map_err(|e| format!("connect: {e}"))?;
        let _ = tcp.set_nodelay(true);
        match &self.tls {
            None => exchange(TokioIo::new(tcp), request).await,
            Some(tls) => {
                let host = leader.rsplit_once(':').map_or(leader, |(h, _)| h);
                let host = host.trim_start_matches('[').trim_end_matches(']');
                let name = rustls::pki_types::ServerName::try_from(host.to_owned())
                    .map_err(|e| format!("server name {host:?}: {e}"))?;
                let stream = tls
                    .connect(name, tcp)
                    .await
                    .map_err(|e| format!("TLS: {e}"))?;
                exchange(TokioIo::new(stream), request).await
            }
        }
    }
}

/// Send `request` on `io`; the answer, its body streamed back as it
/// arrives (the connection's task ends with it).
async fn exchange<T>(
    io: TokioIo<T>,
    request: hyper::Request<Full<Bytes>>,
) -> Result<Response, String>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| format!("HTTP: {e}"))?;
    tokio::spawn(async move {
        // Bounded: the body is read by the caller, or dropped with it.
        let _ = tokio::time::timeout(FORWARD_TIMEOUT * 4, conn).await;
    });
    let answer = sender
        .send_request(request)
        .await
        .map_err(|e| format!("HTTP: {e}"))?;
    let (parts, body) = answer.into_parts();
    let mut response = Response::from_parts(parts, Body::new(body));
    for name in HOP_BY_HOP {
        response.headers_mut().remove(name);
    }
    Ok(response)
}

/// An error in the REST API's JSON shape.
fn error(status: axum::http::StatusCode, code: &str, message: &str) -> Response {
    let body = axum::Json(serde_json::json!({
        "error": {"code": code, "message": message}
    }));
    (status, body).into_response()
}

fn unavailable(why: &str) -> Response {
    let mut response = error(
        axum::http::StatusCode::SERVICE_UNAVAILABLE,
        "unavailable",
        why,
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
    response
}
