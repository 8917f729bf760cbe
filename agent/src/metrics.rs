//! Prometheus metrics of the agent, and the optional listener that serves
//! them with `/livez` and `/readyz`.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use gslb_shared::assignment::TargetKey;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

/// Labels of the probe counter.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ProbeLabels {
    /// `tcp`, `http`, …
    pub protocol: &'static str,
    /// `pass` or a failure reason.
    pub outcome: &'static str,
}

/// Labels of the latency histogram.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ProtocolLabels {
    /// `tcp`, `http`, …
    pub protocol: &'static str,
}

/// Labels of per-target gauges.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct TargetLabels {
    /// Member id.
    pub member: u64,
    /// Check id.
    pub check: u64,
}

/// Days until the server certificate an HTTPS or gRPC-over-TLS probe was
/// shown expires (negative once expired), per target: the last probe's.
#[derive(Debug, Clone, Default)]
pub struct CertExpiry(Family<TargetLabels, Gauge<f64, AtomicU64>>);

impl CertExpiry {
    /// Record the leaf certificate a probe of `key` was shown. A certificate
    /// that does not parse records nothing (the handshake judged it).
    pub fn record(&self, key: TargetKey, leaf: &[u8]) {
        let Ok((_, cert)) = x509_parser::parse_x509_certificate(leaf) else {
            return;
        };
        let not_after = cert.validity().not_after.timestamp();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        let days = (not_after - now) as f64 / 86_400.0;
        self.0.get_or_create(&labels(key)).set(days);
    }

    /// Drop a target's series (it is no longer assigned).
    pub fn forget(&self, key: TargetKey) {
        self.0.remove(&labels(key));
    }

    /// The recorded days left of a target, if any.
    pub fn days(&self, key: TargetKey) -> Option<f64> {
        let labels = labels(key);
        // Look without creating a series.
        self.0.get(&labels).map(|g| g.get())
    }
}

fn labels(key: TargetKey) -> TargetLabels {
    TargetLabels {
        member: key.member.0,
        check: key.check.0,
    }
}

fn latency_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.000_1, 2.0, 18))
}

/// The expiry of the agent's own certificate (`--tls-cert`), read at each
/// scrape so a rotated file shows its new date.
#[derive(Debug)]
struct OwnCert(std::path::PathBuf);

impl prometheus_client::collector::Collector for OwnCert {
    fn encode(&self, mut e: prometheus_client::encoding::DescriptorEncoder) -> std::fmt::Result {
        use prometheus_client::encoding::EncodeMetric;
        let family = e.encode_descriptor(
            "tls_cert_expiry_timestamp_seconds",
            gslb_proto::link::tls::EXPIRY_HELP,
            None,
            prometheus_client::metrics::MetricType::Gauge,
        )?;
        // A file that does not read is no sample: TLS itself reports it.
        match gslb_proto::link::tls::not_after(&self.0) {
            Ok(at) => prometheus_client::metrics::gauge::ConstGauge::new(at).encode(family),
            Err(_) => Ok(()),
        }
    }
}

/// Every metric the agent exports.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    /// Probes run, by protocol and outcome.
    pub probes: Family<ProbeLabels, Counter>,
    /// Probe latency, by protocol.
    pub latency: Family<ProtocolLabels, Histogram, fn() -> Histogram>,
    /// Results waiting for the uplink.
    pub queue_depth: Gauge,
    /// Results dropped because the queue was full.
    pub dropped: Counter,
    /// 1 while a stream to an aggregator is up.
    pub connected: Gauge,
    /// Assigned targets.
    pub assignments: Gauge,
    /// Assignments refused by runtime validation.
    pub invalid_targets: Gauge,
    /// Stream (re)connections made.
    pub connects: Counter,
    /// Days left on probed servers' certificates.
    pub cert_expiry: CertExpiry,
    /// Set once the first assignment set has arrived.
    ready: AtomicBool,
}

impl Metrics {
    /// A fresh registry with every metric registered.
    pub fn new() -> Arc<Self> {
        Self::with_cert(None)
    }

    /// [`Metrics::new`], with the expiry of the agent's own certificate
    /// `cert` (its `--tls-cert`) when it has one.
    pub fn with_cert(cert: Option<std::path::PathBuf>) -> Arc<Self> {
        let mut registry = Registry::with_prefix("gslb_agent");
        if let Some(cert) = cert {
            registry.register_collector(Box::new(OwnCert(cert)));
        }
        let probes = Family::<ProbeLabels, Counter>::default();
        let latency = Family::<ProtocolLabels, Histogram, fn() -> Histogram>::new_with_constructor(
            latency_histogram,
        );
        let queue_depth = Gauge::default();
        let dropped = Counter::default();
        let connected = Gauge::default();
        let assignments = Gauge::default();
        let invalid_targets = Gauge::default();
        let connects = Counter::default();
        let cert_expiry = CertExpiry::default();
        registry.register(
            "tls_cert_expiry_days",
            "Days until the certificate an HTTPS or gRPC TLS probe was shown expires",
            cert_expiry.0.clone(),
        );
        registry.register(
            "probes",
            "Probes run, by protocol and outcome",
            probes.clone(),
        );
        registry.register("probe_duration_seconds", "Probe latency", latency.clone());
        registry.register(
            "queue_depth",
            "Results waiting for the uplink",
            queue_depth.clone(),
        );
        registry.register(
            "results_dropped",
            "Results dropped because the queue was full",
            dropped.clone(),
        );
        registry.register(
            "connected",
            "1 while a stream to an aggregator is up",
            connected.clone(),
        );
        registry.register("assignments", "Assigned targets", assignments.clone());
        registry.register(
            "invalid_targets",
            "Assigned targets refused by runtime validation",
            invalid_targets.clone(),
        );
        registry.register(
            "stream_connects",
            "Streams opened to an aggregator",
            connects.clone(),
        );
        Arc::new(Self {
            registry,
            probes,
            latency,
            queue_depth,
            dropped,
            connected,
            assignments,
            invalid_targets,
            connects,
            cert_expiry,
            ready: AtomicBool::new(false),
        })
    }

    /// Mark the agent ready (it holds an assignment set).
    pub fn set_ready(&self) {
        self.ready.store(true, Ordering::Relaxed);
    }

    /// True once an assignment set has arrived.
    pub fn is_ready(&self) -> bool {
        self.ready.load(Ordering::Relaxed)
    }

    /// The text exposition.
    pub fn encode(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}

/// The metrics router: `/metrics`, `/livez`, `/readyz`.
pub fn router(metrics: Arc<Metrics>) -> Router {
    Router::new()
        .route(
            "/metrics",
            get(|State(m): State<Arc<Metrics>>| async move { m.encode() }),
        )
        .route("/livez", get(|| async { "ok" }))
        .route(
            "/readyz",
            get(|State(m): State<Arc<Metrics>>| async move {
                if m.is_ready() {
                    (StatusCode::OK, "ready")
                } else {
                    (
                        StatusCode::SERVICE_UNAVAILABLE,
                        "waiting for the first assignment set",
                    )
                }
            }),
        )
        .with_state(metrics)
}

/// Serve the metrics router on a bound listener until the task is dropped.
pub async fn serve(
    listener: tokio::net::TcpListener,
    metrics: Arc<Metrics>,
) -> std::io::Result<()> {
    axum::serve(listener, router(metrics)).await
}

/// Bind the metrics listener, logging the bound address.
pub async fn bind(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    tracing::info!(address = %listener.local_addr()?, "metrics listener bound");
    Ok(listener)
}
