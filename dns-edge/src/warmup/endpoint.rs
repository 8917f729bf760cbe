//! `GET /internal/warmup`: the snapshot version, the capture time and the
//! hot keys, for a peer that presents the bearer token. Without the token:
//! 401 and nothing else. An edge without a token file serves nothing (404).
//! With `?snapshot=1`, on the TLS warm-up listener only (the peer's edge
//! certificate checked), the reply also carries the served snapshot, for
//! a new edge that has neither an aggregator nor a cache: framed as a
//! u32 (big-endian) length, the JSON body, then the snapshot in the cache
//! file's format (magic, CRC-32, length, protobuf).

use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::Warmup;
use super::keys::{Body, to_text};

/// The media type of a reply that carries the snapshot.
pub const FRAMED: &str = "application/x-gslb-warmup";

/// Whether and where the snapshot may be served.
#[derive(Debug)]
pub enum Snapshot {
    /// Not asked for.
    NotAsked,
    /// Asked for on the plain status listener: refused.
    NotHere,
    /// Asked for on the TLS listener: these bytes (from `cache::encode`),
    /// or none before the first snapshot.
    Encoded(Option<Vec<u8>>),
}

/// Whether `?snapshot=1` is in `query`.
pub fn asks_snapshot(query: Option<&str>) -> bool {
    query.is_some_and(|q| q.split('&').any(|p| p == "snapshot=1"))
}

/// The refusal of a request without the token (none when it has it), from
/// `peer`: a source with more than 10 wrong tokens in 10 s is refused
/// (429) for 60 s without its token being looked at; a burst is logged
/// once.
pub fn refusal(warmup: &Warmup, headers: &HeaderMap, peer: std::net::IpAddr) -> Option<Response> {
    use gslb_shared::guesses::Failure;
    let Some(token) = warmup.token.get() else {
        return Some(
            (
                StatusCode::NOT_FOUND,
                "warm-up endpoint off: this edge has no --warmup-token-file\n",
            )
                .into_response(),
        );
    };
    let now = gslb_shared::clock::now_ms();
    if let Err(wait_ms) = warmup.guesses.check(peer, now) {
        return Some(
            (
                StatusCode::TOO_MANY_REQUESTS,
                format!(
                    "warm-up: too many wrong tokens from {peer}; try again in {} s\n",
                    wait_ms.div_ceil(1_000)
                ),
            )
                .into_response(),
        );
    }
    let sent = headers.get(header::AUTHORIZATION).map(|v| v.as_bytes());
    if token.admits(sent) {
        warmup.guesses.succeeded(peer);
        return None;
    }
    match warmup.guesses.failed(peer, now) {
        Failure::First => {
            tracing::warn!(%peer, "warm-up endpoint: wrong or missing token (further tries from this address within 10 s are counted, not logged)")
        }
        Failure::Blocked => {
            tracing::warn!(%peer, "warm-up endpoint: more than 10 wrong tokens from this address in 10 s; refused for 60 s")
        }
        Failure::Again => {}
    }
    Some(
        (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
        )
            .into_response(),
    )
}

/// The keys, as of snapshot `version`.
pub fn body(warmup: &Warmup, version: u64) -> Body {
    let hot = warmup.hot.get();
    let keys = hot.map(|h| h.keys()).unwrap_or_default();
    Body {
        version,
        captured_at_ms: gslb_shared::clock::now_ms(),
        sample_every: hot.map_or(0, |h| h.every()),
        keys: keys.iter().filter_map(to_text).collect(),
    }
}

/// Seed 001's path: the same keys as [`super::fetch::PATH`], as `payloads`
/// with `capturedAt`.
pub const SEED_PATH: &str = "/internal/warmup/payloads";

/// Answer an authorized request (`seed`: on [`SEED_PATH`], in its names).
pub fn answer(body: &Body, snapshot: Snapshot, seed: bool) -> Response {
    match snapshot {
        Snapshot::NotAsked if seed => axum::Json(body.seed()).into_response(),
        Snapshot::NotAsked => axum::Json(body).into_response(),
        Snapshot::NotHere => (
            StatusCode::FORBIDDEN,
            "the snapshot is served only on the TLS warm-up listener (--listen-warmup), to edge certificates\n",
        )
            .into_response(),
        Snapshot::Encoded(None) => {
            (StatusCode::SERVICE_UNAVAILABLE, "no snapshot applied yet\n").into_response()
        }
        Snapshot::Encoded(Some(bytes)) => {
            let json = serde_json::to_vec(body).unwrap_or_default();
            let mut out = Vec::with_capacity(4 + json.len() + bytes.len());
            out.extend_from_slice(&(json.len() as u32).to_be_bytes());
            out.extend_from_slice(&json);
            out.extend_from_slice(&bytes);
            ([(header::CONTENT_TYPE, FRAMED)], out).into_response()
        }
    }
}

/// Split a framed reply into its JSON body and the snapshot's bytes.
pub fn unframe(bytes: &[u8]) -> Result<(&[u8], &[u8]), String> {
    let len = bytes
        .get(..4)
        .map(|l| u32::from_be_bytes([l[0], l[1], l[2], l[3]]) as usize)
        .ok_or("framed reply shorter than its length")?;
    let rest = &bytes[4..];
    if rest.len() < len {
        return Err(format!(
            "framed reply: body of {len} bytes announced, {} present",
            rest.len()
        ));
    }
    Ok(rest.split_at(len))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_framed_reply_splits_back_and_a_short_one_is_refused() {
        let body = Body {
            version: 3,
            captured_at_ms: 1,
            sample_every: 16,
            keys: vec![],
        };
        let json = serde_json::to_vec(&body).unwrap_or_default();
        let mut framed = (json.len() as u32).to_be_bytes().to_vec();
        framed.extend_from_slice(&json);
        framed.extend_from_slice(b"SNAP");
        assert_eq!(unframe(&framed), Ok((&json[..], &b"SNAP"[..])));
        assert!(unframe(&framed[..6]).is_err());
        assert!(unframe(&[0, 0]).is_err());
        assert!(asks_snapshot(Some("a=b&snapshot=1")));
        assert!(!asks_snapshot(Some("snapshot=0")));
    }
}
