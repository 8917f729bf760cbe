//! Ask peers for their hot keys: each URL in turn (a DNS name tries every
//! address it resolves to), all within one deadline, the body bounded.

use std::time::Duration;

use axum::http::{Request, StatusCode, header};
use http_body_util::{BodyExt, Empty, Limited};
use hyper_util::rt::TokioIo;
use tokio::time::Instant;

use super::Token;
use super::keys::Body;

/// Largest reply read: a full LRU of the longest names fits.
pub const MAX_BODY: usize = 64 * 1024 * 1024;
/// The endpoint's path.
pub const PATH: &str = "/internal/warmup";

/// The `HOST:PORT` of a peer status URL (`http://HOST:PORT`), or why not.
pub fn authority(url: &str) -> Result<&str, String> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| format!("{url:?} must be http://HOST:PORT (a peer's status listener)"))?;
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let port_ok = rest
        .rsplit_once(':')
        .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok_and(|p| p > 0));
    if !port_ok || rest.contains(['/', '?', '#', '@']) {
        return Err(format!(
            "{url:?} must be http://HOST:PORT (a peer's status listener)"
        ));
    }
    Ok(rest)
}

/// The keys of the first peer that gives them before `deadline`, with its
/// URL; else why none did (every peer's reason).
pub async fn keys(
    urls: &[String],
    token: &Token,
    deadline: Instant,
) -> Result<(String, Body), String> {
    let mut why = Vec::new();
    for url in urls {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            why.push(format!("{url}: not tried, the warm-up timeout passed"));
            continue;
        }
        match tokio::time::timeout(left, from_peer(url, token)).await {
            Ok(Ok(body)) => return Ok((url.clone(), body)),
            Ok(Err(e)) => why.push(format!("{url}: {e}")),
            Err(_) => why.push(format!("{url}: no answer within the warm-up timeout")),
        }
    }
    Err(why.join("; "))
}

async fn from_peer(url: &str, token: &Token) -> Result<Body, String> {
    let host = authority(url)?;
    let addrs: Vec<_> = tokio::net::lookup_host(host)
        .await
        .map_err(|e| format!("resolve {host}: {e}"))?
        .collect();
    let mut why = Vec::new();
    for addr in addrs {
        match get(addr, host, token).await {
            Ok(body) => return Ok(body),
            Err(e) => why.push(format!("{addr}: {e}")),
        }
    }
    if why.is_empty() {
        why.push(format!("{host} resolves to no address"));
    }
    Err(why.join(", "))
}

async fn get(addr: std::net::SocketAddr, host: &str, token: &Token) -> Result<Body, String> {
    let stream = tokio::net::TcpStream::connect(addr)
        .await
        .map_err(|e| format!("connect: {e}"))?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    let driver = tokio::spawn(connection);
    let request = Request::get(PATH)
        .header(header::HOST, host)
        .header(header::AUTHORIZATION, token.bearer())
        .body(Empty::<bytes::Bytes>::new())
        .map_err(|e| format!("request: {e}"))?;
    let result = async {
        let response = sender
            .send_request(request)
            .await
            .map_err(|e| format!("request: {e}"))?;
        let status = response.status();
        if status != StatusCode::OK {
            return Err(format!("answered {status}"));
        }
        let bytes = Limited::new(response.into_body(), MAX_BODY)
            .collect()
            .await
            .map_err(|e| format!("body: {e} (at most {MAX_BODY} bytes)"))?
            .to_bytes();
        serde_json::from_slice::<Body>(&bytes).map_err(|e| format!("body: {e}"))
    }
    .await;
    driver.abort();
    result
}

/// How long the warm-up may take, as a deadline from now.
pub fn deadline(timeout: Duration) -> Instant {
    Instant::now() + timeout
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_url_is_http_host_port() {
        assert_eq!(authority("http://127.0.0.1:8053"), Ok("127.0.0.1:8053"));
        assert_eq!(
            authority("http://edges.example:8053/"),
            Ok("edges.example:8053")
        );
        for bad in [
            "https://a:1",
            "http://a",
            "http://a:0",
            "http://:1",
            "http://a:1/x",
            "a:1",
        ] {
            assert!(authority(bad).is_err(), "{bad}");
        }
    }
}
