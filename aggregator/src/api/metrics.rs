//! Prometheus metrics of the aggregator, read from the running state at
//! scrape time: what the control core knows is asked of its owner first
//! (one call), the registries are read by the collector.

use std::sync::{Arc, Mutex, Weak};

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;

use crate::api::service::{Service, lock};

mod health;
mod notifications;

use crate::api::service::deliveries::StatusView;
use health::HealthFigures;

/// What the control core reports at a scrape.
#[derive(Debug, Clone, Default)]
struct CoreFigures {
    version: u64,
    members: u64,
    store: u64,
    counters: gslb_engine::Counters,
    gate: bool,
    hold: crate::core::catalog::DecisionHold,
    /// Every location the engine knows, and whether it is set aside.
    locations: Vec<(gslb_shared::LocationId, bool)>,
    /// When this node's certificate expires (seconds since the epoch).
    cert_expiry: Option<i64>,
}

/// Reads the service (and the core's figures of this scrape).
#[derive(Debug)]
struct State(
    Weak<Service>,
    Arc<Mutex<CoreFigures>>,
    Arc<Mutex<HealthFigures>>,
    Arc<Mutex<Option<StatusView>>>,
);

/// The aggregator's metrics: a registry and the core figures it shows.
#[derive(Debug)]
pub struct Metrics {
    registry: Registry,
    service: Weak<Service>,
    figures: Arc<Mutex<CoreFigures>>,
    health: Arc<Mutex<HealthFigures>>,
    /// The notification outbox and deliveries of this scrape.
    notifications: Arc<Mutex<Option<StatusView>>>,
    /// This node's certificate (`--tls-cert`), if it runs TLS.
    cert: Option<std::path::PathBuf>,
}

/// Encode a gauge.
pub(crate) fn gauge(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: u64,
) -> Result<(), std::fmt::Error> {
    let metric = ConstGauge::new(i64::try_from(value).unwrap_or(i64::MAX));
    metric.encode(encoder.encode_descriptor(name, help, None, metric.metric_type())?)
}

/// Encode a counter (whole numbers, or seconds as `f64`).
pub(crate) fn counter<N>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: N,
) -> Result<(), std::fmt::Error>
where
    ConstCounter<N>: EncodeMetric,
{
    let metric = ConstCounter::new(value);
    metric.encode(encoder.encode_descriptor(name, help, None, metric.metric_type())?)
}

impl Collector for State {
    fn encode(&self, mut e: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let Some(service) = self.0.upgrade() else {
            return Ok(());
        };
        let CoreFigures {
            version,
            members,
            store,
            counters,
            gate,
            hold,
            cert_expiry,
            ..
        } = lock(&self.1).clone();
        // (agent, location, connected) of every registered agent: a bounded
        // set (the registry keeps at most 1,000 disconnected rows).
        let rows: Vec<(String, String, bool)> = lock(&service.agents)
            .rows()
            .map(|a| (a.agent_id.clone(), a.location.to_string(), a.connected))
            .collect();
        let agents = rows.iter().filter(|a| a.2).count() as u64;
        let (edges, lag) = {
            let edges = lock(&service.edges);
            let connected = edges.values().filter(|x| x.connected);
            (
                connected.clone().count() as u64,
                connected.map(|x| x.lag_ms).max().unwrap_or(0),
            )
        };
        // A read of the store's table length: no lock, never the core.
        let audit_records = service.view().audit_count().unwrap_or(0);
        gauge(&mut e, "version", "Current snapshot version", version)?;
        gauge(&mut e, "members", "Configured members", members)?;
        gauge(&mut e, "agents_connected", "Agent streams open", agents)?;
        {
            let mut family = e.encode_descriptor(
                "agent_connected",
                "1 while a registered agent's stream is open here, 0 after it closed (kept for the agent retention)",
                None,
                MetricType::Gauge,
            )?;
            for (agent, location, connected) in &rows {
                let labels = [("agent", agent.as_str()), ("location", location.as_str())];
                ConstGauge::new(i64::from(*connected)).encode(family.encode_family(&labels)?)?;
            }
        }
        gauge(&mut e, "edges_connected", "Edge subscriptions open", edges)?;
        gauge(
            &mut e,
            "edge_lag_max_milliseconds",
            "Largest publish-to-apply lag a connected edge reported",
            lag,
        )?;
        gauge(&mut e, "store_bytes", "Store size on disk", store)?;
        gauge(
            &mut e,
            "audit_records",
            "Audit records kept (at most --audit-keep, none older than --audit-days)",
            audit_records,
        )?;
        counter(
            &mut e,
            "audit_trimmed_total",
            "Audit records trimmed by this process (past --audit-keep or --audit-days)",
            crate::core::store::audit_trimmed(),
        )?;
        gauge(
            &mut e,
            "decisions_enabled",
            "1 once the startup gate is open",
            u64::from(gate),
        )?;
        gauge(
            &mut e,
            "decisions_paused",
            "1 while an operator pauses health decisions for every pool",
            u64::from(hold.all_since_ms.is_some()),
        )?;
        gauge(
            &mut e,
            "decisions_paused_pools",
            "Pools whose health decisions an operator pauses one by one",
            hold.pools.len() as u64,
        )?;
        lock(&self.2).encode(&mut e)?;
        {
            let family = e.encode_descriptor(
                "tls_cert_expiry_timestamp_seconds",
                gslb_proto::link::tls::EXPIRY_HELP,
                None,
                MetricType::Gauge,
            )?;
            if let Some(at) = cert_expiry {
                ConstGauge::new(at).encode(family)?;
            }
        }
        if let Some(cluster) = service.cluster() {
            let m = cluster.raft.metrics().borrow().clone();
            gauge(
                &mut e,
                "raft_leader",
                "1 while this node leads with its quorum confirmed (and decides)",
                u64::from(service.leading()),
            )?;
            gauge(&mut e, "raft_term", "Current Raft term", m.current_term)?;
            gauge(
                &mut e,
                "raft_last_log_index",
                "Last index in this node's Raft log",
                m.last_log_index.unwrap_or(0),
            )?;
            gauge(
                &mut e,
                "raft_applied_index",
                "Last Raft index applied here",
                m.last_applied.map_or(0, |l| l.index),
            )?;
        }
        counter(
            &mut e,
            "results_accepted",
            "Results ingested into cycles",
            counters.accepted,
        )?;
        counter(
            &mut e,
            "results_late",
            "Results for cycles already closed",
            counters.late,
        )?;
        counter(
            &mut e,
            "results_future",
            "Results for cycles too far ahead (clock skew)",
            counters.future,
        )?;
        counter(
            &mut e,
            "results_unknown_member",
            "Results for unknown members",
            counters.unknown_member,
        )?;
        counter(
            &mut e,
            "results_stale_check",
            "Results for a check or location no longer assigned",
            counters.stale_check,
        )?;
        counter(
            &mut e,
            "results_invalid_target",
            "invalid-target results (never counted)",
            counters.invalid_target,
        )?;
        if let Some(view) = lock(&self.3).as_ref() {
            notifications::encode(view, &mut e)?;
        }
        Ok(())
    }
}

impl Metrics {
    /// Metrics of `service`.
    pub fn new(service: &Arc<Service>) -> Self {
        let figures = Arc::new(Mutex::new(CoreFigures::default()));
        let health = Arc::new(Mutex::new(HealthFigures::default()));
        let notifications = Arc::new(Mutex::new(None));
        let mut registry = Registry::with_prefix("gslb_aggregator");
        registry.register_collector(Box::new(State(
            Arc::downgrade(service),
            Arc::clone(&figures),
            Arc::clone(&health),
            Arc::clone(&notifications),
        )));
        Self {
            registry,
            service: Arc::downgrade(service),
            figures,
            health,
            notifications,
            cert: None,
        }
    }

    /// The same metrics with the expiry of the certificate in `cert`.
    pub fn with_cert(mut self, cert: Option<std::path::PathBuf>) -> Self {
        self.cert = cert;
        self
    }

    /// The same metrics with `collector`'s beside them (the web UI's).
    pub fn with(mut self, collector: Box<dyn Collector>) -> Self {
        self.registry.register_collector(collector);
        self
    }

    /// The text exposition, as of now.
    pub async fn scrape(&self) -> String {
        if let Some(service) = self.service.upgrade() {
            let mut figures = service
                .call(|c| CoreFigures {
                    version: c.version(),
                    members: c.catalog().members.len() as u64,
                    store: c.store_size(),
                    counters: c.engine().counters(),
                    gate: c.engine().decisions_enabled(),
                    hold: c.hold().clone(),
                    locations: c.engine().location_quarantine(),
                    cert_expiry: None,
                })
                .await;
            // A file that does not read is no sample: TLS itself reports it.
            figures.cert_expiry =
                (self.cert.as_deref()).and_then(|c| gslb_proto::link::tls::not_after(c).ok());
            let view = service.view();
            let locations = figures.locations.clone();
            let health =
                crate::api::service::off_worker(move || HealthFigures::of(&view, locations)).await;
            // A store that does not read leaves the notification figures out.
            let reader = Arc::clone(&service);
            let notifications = crate::api::service::off_worker(move || {
                crate::api::service::deliveries::status(&reader).ok()
            })
            .await;
            *lock(&self.figures) = figures;
            *lock(&self.health) = health;
            *lock(&self.notifications) = notifications;
        }
        let mut out = String::new();
        // Writing into a String cannot fail.
        let _ = prometheus_client::encoding::text::encode(&mut out, &self.registry);
        out
    }
}
