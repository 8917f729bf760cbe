//! Ask peers for their hot keys: each URL in turn (a DNS name tries every
//! address it resolves to), each with a share of what is left of one
//! deadline (a hanging peer cannot take it all); peers not ready (no
//! snapshot) or without keys are passed over, and of the rest the one
//! with the most keys is taken. A reply is bounded by this edge's own
//! `--hot-keys`: its bytes, and the keys kept.

use std::sync::Arc;

use axum::http::{Request, StatusCode, header};
use gslb_proto::link::tls;
use http_body_util::{BodyExt, Empty, Limited};
use hyper_util::rt::TokioIo;
use rustls::ClientConfig;
use rustls::pki_types::ServerName;
use tokio::time::Instant;
use tokio_rustls::TlsConnector;

use super::Token;
use super::endpoint::unframe;
use super::keys::Body;

/// Largest reply with a snapshot read: the largest snapshot the feed
/// accepts, plus a full LRU of the longest names.
pub const MAX_BODY: usize = gslb_proto::MAX_MESSAGE + 32 * 1024 * 1024;
/// Bytes read per key of a keys-only reply: the longest name in text
/// (every byte escaped), its type, flags and region.
pub const BYTES_PER_KEY: usize = 1_200;

/// Largest keys-only reply read when this edge keeps `max_keys`.
pub fn max_keys_body(max_keys: usize) -> usize {
    max_keys.saturating_mul(BYTES_PER_KEY) + 64 * 1024
}
/// The endpoint's path.
pub const PATH: &str = "/internal/warmup";

/// A peer to ask.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peer<'a> {
    /// `https://`: its TLS warm-up listener (which also serves the snapshot).
    pub tls: bool,
    /// `HOST:PORT`.
    pub authority: &'a str,
}

/// The peer of a URL (`http://HOST:PORT`, a status listener, or
/// `https://HOST:PORT`, a TLS warm-up listener), or why not.
pub fn authority(url: &str) -> Result<Peer<'_>, String> {
    let bad = || {
        format!(
            "{url:?} must be http://HOST:PORT (a peer's status listener) or https://HOST:PORT (its --listen-warmup)"
        )
    };
    let (tls, rest) = match (url.strip_prefix("http://"), url.strip_prefix("https://")) {
        (Some(rest), _) => (false, rest),
        (_, Some(rest)) => (true, rest),
        _ => return Err(bad()),
    };
    let rest = rest.strip_suffix('/').unwrap_or(rest);
    let port_ok = rest
        .rsplit_once(':')
        .is_some_and(|(h, p)| !h.is_empty() && p.parse::<u16>().is_ok_and(|p| p > 0));
    if !port_ok || rest.contains(['/', '?', '#', '@']) {
        return Err(bad());
    }
    Ok(Peer {
        tls,
        authority: rest,
    })
}

/// What a peer gave.
#[derive(Debug)]
pub struct Fetched {
    /// Its URL.
    pub source: String,
    /// Its keys.
    pub body: Body,
    /// Its snapshot in the cache file's format, when asked for.
    pub snapshot: Option<Vec<u8>>,
}

/// The client side of TLS to peers: this edge's certificate, trusting the CA.
pub fn client_config(link: &gslb_shared::config::LinkTls) -> Result<Arc<ClientConfig>, String> {
    let (Some((cert, key)), Some(ca)) = (&link.identity, &link.ca) else {
        return Err("https:// peers need --tls-cert, --tls-key and --tls-ca".into());
    };
    let roots = tls::read_roots(ca).map_err(|e| format!("{e:#}"))?;
    let chain = tls::read_chain(cert).map_err(|e| format!("{e:#}"))?;
    let key = tls::read_key(key).map_err(|e| format!("{e:#}"))?;
    let mut config = ClientConfig::builder()
        .with_root_certificates(roots)
        .with_client_auth_cert(chain, key)
        .map_err(|e| format!("tls-key does not match tls-cert: {e}"))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// What the best peer gives (ready, with keys, the most of them) among
/// those that answer before `deadline`, with its URL; else why none did
/// (every peer's reason). With `snapshot`, only `https://` peers are
/// asked, for their keys and snapshot. At most `max_keys` keys are kept.
pub async fn keys(
    urls: &[String],
    token: &Token,
    deadline: Instant,
    tls: Option<&Arc<ClientConfig>>,
    snapshot: bool,
    max_keys: usize,
) -> Result<Fetched, String> {
    let mut why = Vec::new();
    let mut best: Option<Fetched> = None;
    for (i, url) in urls.iter().enumerate() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            why.push(format!("{url}: not tried, the warm-up timeout passed"));
            continue;
        }
        // A share of what is left, so one hanging peer cannot take it all.
        let share = left / u32::try_from(urls.len() - i).unwrap_or(u32::MAX);
        let ask = Ask {
            token,
            tls,
            snapshot,
            max_keys,
        };
        match tokio::time::timeout(share, from_peer(url, ask)).await {
            Ok(Ok((mut body, snapshot))) => {
                if body.version == 0 {
                    why.push(format!("{url}: not ready (no snapshot applied)"));
                    continue;
                }
                if body.keys.is_empty() && snapshot.is_none() {
                    why.push(format!("{url}: has no keys"));
                    continue;
                }
                body.keys.truncate(max_keys);
                if best
                    .as_ref()
                    .is_none_or(|b| body.keys.len() > b.body.keys.len())
                {
                    best = Some(Fetched {
                        source: url.clone(),
                        body,
                        snapshot,
                    });
                }
            }
            Ok(Err(e)) => why.push(format!("{url}: {e}")),
            Err(_) => why.push(format!(
                "{url}: no answer within its share of the warm-up timeout ({} ms)",
                share.as_millis()
            )),
        }
    }
    best.ok_or_else(|| why.join("; "))
}

/// One request's settings.
#[derive(Clone, Copy)]
struct Ask<'a> {
    token: &'a Token,
    tls: Option<&'a Arc<ClientConfig>>,
    snapshot: bool,
    max_keys: usize,
}

type Reply = (Body, Option<Vec<u8>>);

async fn from_peer(url: &str, ask: Ask<'_>) -> Result<Reply, String> {
    let peer = authority(url)?;
    if ask.snapshot && !peer.tls {
        return Err("a snapshot is only taken over https://".into());
    }
    let host = peer.authority;
    let addrs: Vec<_> = tokio::net::lookup_host(host)
        .await
        .map_err(|e| format!("resolve {host}: {e}"))?
        .collect();
    let mut why = Vec::new();
    for addr in addrs {
        let stream = match tokio::net::TcpStream::connect(addr).await {
            Ok(s) => s,
            Err(e) => {
                why.push(format!("{addr}: connect: {e}"));
                continue;
            }
        };
        let got = if peer.tls {
            let Some(config) = ask.tls else {
                return Err("https:// peers need --tls-cert, --tls-key and --tls-ca".into());
            };
            let name = host.rsplit_once(':').map_or(host, |(h, _)| h);
            let name = name
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned();
            let name = ServerName::try_from(name).map_err(|e| format!("server name: {e}"))?;
            match TlsConnector::from(Arc::clone(config))
                .connect(name, stream)
                .await
            {
                Ok(s) => get(s, host, ask).await,
                Err(e) => Err(format!("TLS: {e}")),
            }
        } else {
            get(stream, host, ask).await
        };
        match got {
            Ok(reply) => return Ok(reply),
            Err(e) => why.push(format!("{addr}: {e}")),
        }
    }
    if why.is_empty() {
        why.push(format!("{host} resolves to no address"));
    }
    Err(why.join(", "))
}

async fn get<S>(io: S, host: &str, ask: Ask<'_>) -> Result<Reply, String>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(io))
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    let driver = tokio::spawn(connection);
    let path = if ask.snapshot {
        format!("{PATH}?snapshot=1")
    } else {
        PATH.to_owned()
    };
    let request = Request::get(path)
        .header(header::HOST, host)
        .header(header::AUTHORIZATION, ask.token.bearer())
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
        // Bounded by this edge's own --hot-keys (the snapshot on top).
        let limit = if ask.snapshot {
            MAX_BODY
        } else {
            max_keys_body(ask.max_keys)
        };
        let bytes = Limited::new(response.into_body(), limit)
            .collect()
            .await
            .map_err(|e| {
                format!(
                    "body: {e} (at most {limit} bytes are read: --hot-keys {} keys)",
                    ask.max_keys
                )
            })?
            .to_bytes();
        let (json, snapshot) = if ask.snapshot {
            let (json, snapshot) = unframe(&bytes)?;
            (json, Some(snapshot.to_vec()))
        } else {
            (&bytes[..], None)
        };
        let body = serde_json::from_slice::<Body>(json).map_err(|e| format!("body: {e}"))?;
        Ok((body, snapshot))
    }
    .await;
    driver.abort();
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_peer_url_is_http_or_https_host_port() {
        let peer = |tls, authority| Ok(Peer { tls, authority });
        assert_eq!(
            authority("http://127.0.0.1:8053"),
            peer(false, "127.0.0.1:8053")
        );
        assert_eq!(
            authority("http://edges.example:8053/"),
            peer(false, "edges.example:8053")
        );
        assert_eq!(authority("https://[::1]:8054"), peer(true, "[::1]:8054"));
        for bad in [
            "ftp://a:1",
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
