//! One HTTP POST to a notification target: its URL's host resolved (with a
//! deadline), every address checked against the deny-list (link-local and
//! metadata ranges, this aggregator's own listeners), HTTPS verified
//! against the system's roots, no redirects followed, the answer read up
//! to a bound. A 2xx status is a delivery; anything else is a failure that
//! says why.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use gslb_shared::destination::DenyList;
use http_body_util::{BodyExt, Full, Limited};
use hyper::Request;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

use crate::api::service::deliveries::addresses;
use crate::core::notify::payload::Post;

/// How long one delivery may take, resolving and connecting included.
pub const DELIVERY_TIMEOUT: Duration = Duration::from_secs(10);
/// The most of a failed answer's body read (to count it; it is never shown
/// or logged: a receiver pointed at an internal service would leak it).
pub const MAX_ANSWER_BYTES: usize = 4_096;

/// The client side of deliveries: TLS roots and the deny-list.
#[derive(Clone)]
pub struct Sender {
    tls: tokio_rustls::TlsConnector,
    deny: Arc<DenyList>,
}

impl std::fmt::Debug for Sender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sender").finish_non_exhaustive()
    }
}

impl Sender {
    /// A sender trusting the system's roots, refusing `deny`'s destinations.
    pub fn new(deny: Arc<DenyList>) -> Result<Self, rustls::Error> {
        let mut roots = rustls::RootCertStore::empty();
        for cert in rustls_native_certs::load_native_certs().certs {
            // One unparsable system certificate must not disable HTTPS.
            let _ = roots.add(cert);
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Sender {
            tls: tokio_rustls::TlsConnector::from(Arc::new(config)),
            deny,
        })
    }

    /// The deny-list deliveries go through.
    pub fn deny(&self) -> &DenyList {
        &self.deny
    }

    /// POST `post` to `url`; `Ok` on a 2xx answer, else why not.
    pub async fn send(&self, url: &str, post: &Post) -> Result<(), String> {
        match tokio::time::timeout(DELIVERY_TIMEOUT, self.try_send(url, post)).await {
            Ok(result) => result,
            Err(_) => Err(format!("no answer within {} s", DELIVERY_TIMEOUT.as_secs())),
        }
    }

    async fn try_send(&self, url: &str, post: &Post) -> Result<(), String> {
        let uri = gslb_shared::validate::url(url)?;
        let https = uri.scheme_str() == Some("https");
        let authority = uri.authority().ok_or("the URL names no host")?;
        let (host, port) = gslb_shared::validate::endpoint(&uri).ok_or("the URL names no host")?;
        let addr = self.resolve(host, port).await?;
        let tcp = TcpStream::connect(addr)
            .await
            .map_err(|e| format!("connect {addr}: {e}"))?;
        // The peer a socket reached is checked too (an IPv4-mapped form).
        let peer = tcp
            .peer_addr()
            .map_err(|e| format!("connect {addr}: {e}"))?;
        self.deny.check(peer)?;
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        let request = Request::post(path)
            .header(hyper::header::HOST, authority.as_str())
            .header(hyper::header::CONTENT_TYPE, "application/json")
            .header(
                hyper::header::USER_AGENT,
                concat!("gslb-aggregator/", env!("CARGO_PKG_VERSION")),
            );
        let request = (post.headers.iter())
            .fold(request, |r, (name, value)| r.header(*name, value))
            .body(Full::new(Bytes::from(post.body.clone())))
            .map_err(|e| format!("request: {e}"))?;
        if https {
            let name = rustls::pki_types::ServerName::try_from(host.to_owned())
                .map_err(|e| format!("TLS name {host}: {e}"))?;
            let tls = self
                .tls
                .connect(name, tcp)
                .await
                .map_err(|e| format!("TLS handshake with {addr}: {e}"))?;
            exchange(TokioIo::new(tls), request).await
        } else {
            exchange(TokioIo::new(tcp), request).await
        }
    }

    /// The first address of `host` the deny-list allows.
    async fn resolve(&self, host: &str, port: u16) -> Result<SocketAddr, String> {
        // The delivery's own deadline bounds the lookup.
        let addrs = addresses(host, port, DELIVERY_TIMEOUT).await?;
        let mut why = format!("{host} resolved to no address");
        for addr in addrs {
            match self.deny.check(addr) {
                Ok(()) => return Ok(addr),
                Err(denied) => why = format!("denied: {denied}"),
            }
        }
        Err(why)
    }
}

/// Send `request` on `io` and judge the answer.
async fn exchange<T>(io: TokioIo<T>, request: Request<Full<Bytes>>) -> Result<(), String>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, conn) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| format!("HTTP: {e}"))?;
    let driver = tokio::spawn(conn);
    let answer = sender.send_request(request).await;
    let result = match answer {
        Err(e) => Err(format!("HTTP: {e}")),
        Ok(answer) => {
            let status = answer.status();
            if status.is_success() {
                Ok(())
            } else {
                // Past the limit (or cut off) the count is "at least".
                let read = Limited::new(answer.into_body(), MAX_ANSWER_BYTES)
                    .collect()
                    .await
                    .map_or(MAX_ANSWER_BYTES, |b| b.to_bytes().len());
                let what = if status.is_redirection() {
                    " (redirects are not followed)"
                } else {
                    ""
                };
                let size = match read {
                    0 => String::new(),
                    n if n >= MAX_ANSWER_BYTES => format!(", a body of {n} bytes or more"),
                    n => format!(", a body of {n} bytes"),
                };
                Err(format!("HTTP {status}{what}{size} (bodies are not shown)"))
            }
        }
    };
    driver.abort();
    result
}
