//! A notification receiver on loopback, as an operator's webhook endpoint
//! would be: it records every POST (headers, body, when it arrived),
//! answers 500 to the first `fail_first` of them, and verifies signatures
//! the way receivers are told to (HMAC-SHA256 of `TIMESTAMP.BODY`).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use serde_json::Value;

/// One POST as it arrived.
#[derive(Debug, Clone)]
pub struct Received {
    /// Header values by lower-case name.
    pub headers: HashMap<String, String>,
    /// The raw body.
    pub body: Vec<u8>,
    /// When it arrived, ms since the Unix epoch.
    pub at_ms: u64,
    /// The status it was answered with.
    pub status: u16,
}

impl Received {
    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }

    /// True when `X-Gslb-Signature` is the HMAC-SHA256 under `secret` of
    /// `X-Gslb-Timestamp`, a dot and the body.
    pub fn signed_by(&self, secret: &[u8]) -> bool {
        let (Some(ts), Some(sig)) = (
            self.header("x-gslb-timestamp"),
            self.header("x-gslb-signature"),
        ) else {
            return false;
        };
        let Some(mac) = sig.strip_prefix("v1=").and_then(|h| hex::decode(h).ok()) else {
            return false;
        };
        let mut message = format!("{ts}.").into_bytes();
        message.extend_from_slice(&self.body);
        let key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, secret);
        ring::hmac::verify(&key, &message, &mac).is_ok()
    }
}

#[derive(Default)]
struct Shared {
    received: Mutex<Vec<Received>>,
    fail_first: AtomicUsize,
}

/// The receiver (stopped on drop with its runtime).
pub struct Receiver {
    /// Where it listens.
    pub addr: SocketAddr,
    shared: Arc<Shared>,
    _runtime: tokio::runtime::Runtime,
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// What a failing answer carries: text an internal service might hold,
/// which the aggregator must never show or log.
pub const FAILURE_BODY: &str = "RECEIVER-INTERNAL-DETAIL: db password hunter2";

async fn receive(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> (StatusCode, &'static str) {
    let at_ms = now_ms();
    let fail = shared
        .fail_first
        .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
        .is_ok();
    let status = if fail {
        StatusCode::INTERNAL_SERVER_ERROR
    } else {
        StatusCode::OK
    };
    let headers = (headers.iter())
        .map(|(k, v)| (k.as_str().to_owned(), v.to_str().unwrap_or("").to_owned()))
        .collect();
    shared
        .received
        .lock()
        .expect("receiver log")
        .push(Received {
            headers,
            body: body.to_vec(),
            at_ms,
            status: status.as_u16(),
        });
    (status, if fail { FAILURE_BODY } else { "" })
}

impl Receiver {
    /// Listen on `bind` (e.g. `127.0.0.1:0`), answering 500 to the first
    /// `fail_first` POSTs.
    pub fn start(bind: &str, fail_first: usize) -> Receiver {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("receiver runtime");
        let shared = Arc::new(Shared::default());
        shared.fail_first.store(fail_first, Ordering::SeqCst);
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind(bind))
            .expect("receiver bind");
        let addr = listener.local_addr().expect("receiver address");
        let app = Router::new()
            .route("/{*path}", axum::routing::post(receive))
            .with_state(Arc::clone(&shared));
        runtime.spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver {
            addr,
            shared,
            _runtime: runtime,
        }
    }

    /// Answer 500 to the next `n` POSTs (0: accept from now on).
    pub fn fail_next(&self, n: usize) {
        self.shared.fail_first.store(n, Ordering::SeqCst);
    }

    /// Its URL for `path`.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Everything received so far.
    pub fn received(&self) -> Vec<Received> {
        self.shared.received.lock().expect("receiver log").clone()
    }

    /// What was accepted (answered 2xx), once per idempotency key, in the
    /// order first received: what a de-duplicating receiver keeps.
    pub fn unique(&self) -> Vec<Received> {
        let mut seen = std::collections::HashSet::new();
        self.received()
            .into_iter()
            .filter(|r| r.status < 300)
            .filter(|r| seen.insert(r.header("idempotency-key").unwrap_or("").to_owned()))
            .collect()
    }
}
