//! Wiring: settings in, a running agent out (checkers, scheduler, buffer,
//! uplink, metrics listener). Kept out of `main` so tests can start it.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

use crate::backoff::Backoff;
use crate::buffer::ResultBuffer;
use crate::checker::Registry;
use crate::checker::destination::DenyList;
use crate::checker::tls::ProbeTls;
use crate::clock::Clock;
use crate::config::AgentConfig;
use crate::metrics::{self, Metrics};
use crate::scheduler::{ProbeContext, Scheduler};
use crate::uplink::{Uplink, UplinkConfig};

/// How long the resolver waits for each answer (a probe's own timeout
/// bounds the whole lookup too).
const RESOLVE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// A configured agent, not yet running.
#[derive(Debug)]
pub struct Agent {
    /// Shared by every probe task.
    pub ctx: Arc<ProbeContext>,
    /// The bound metrics listener, if configured.
    metrics_listener: std::sync::Mutex<Option<tokio::net::TcpListener>>,
}

impl Agent {
    /// Build checkers and bind the metrics listener (so its address is known
    /// before anything runs).
    pub async fn build(config: &AgentConfig) -> anyhow::Result<Self> {
        let tls = ProbeTls::new(config.probe_ca_file.as_deref(), config.system_roots)?;
        let own_cert = config.link_tls.identity.as_ref().map(|(c, _)| c.clone());
        let metrics = Metrics::with_cert(own_cert);
        let buffer = Arc::new(ResultBuffer::new(config.buffer_capacity, config.batch_size));
        let resolver =
            gslb_proto::link::resolve::Resolver::configured(config.resolver, RESOLVE_TIMEOUT);
        let ctx = Arc::new(ProbeContext {
            registry: Registry::builtin(
                tls,
                Arc::new(deny_list(config).await),
                resolver.clone(),
                metrics.cert_expiry.clone(),
            ),
            limit: Semaphore::new(config.concurrency),
            buffer,
            clock: Clock::system(),
            metrics,
            resolver,
        });
        let listener = match config.listen_metrics {
            Some(addr) => Some(metrics::bind(addr).await?),
            None => None,
        };
        Ok(Self {
            ctx,
            metrics_listener: std::sync::Mutex::new(listener),
        })
    }

    /// The bound metrics address, if any (port 0 resolved).
    pub fn metrics_addr(&self) -> Option<std::net::SocketAddr> {
        let guard = self.metrics_listener.lock().ok()?;
        guard.as_ref().and_then(|l| l.local_addr().ok())
    }

    /// Run the metrics listener and the uplink until the future is dropped.
    pub async fn run(&self, config: AgentConfig) -> anyhow::Result<()> {
        let listener = self
            .metrics_listener
            .lock()
            .map_err(|_| anyhow::anyhow!("metrics listener lock"))?
            .take();
        let _metrics_task = listener
            .map(|l| AbortOnDrop(tokio::spawn(metrics::serve(l, self.ctx.metrics.clone()))));
        let uplink = Uplink::new(
            UplinkConfig {
                addresses: config.aggregators.clone(),
                location: config.location.to_string(),
                region: config.region.to_string(),
                agent_id: config.agent_id.clone(),
                batch_size: config.batch_size,
                batch_interval: config.batch_interval,
                backoff: Backoff::default(),
                connect_timeout: Duration::from_secs(5),
                tls: config.link_tls.clone(),
            },
            Scheduler::new(self.ctx.clone()),
            self.ctx.buffer.clone(),
            self.ctx.metrics.clone(),
        );
        uplink.run().await;
        Ok(())
    }
}

/// The configured ranges plus every address the aggregator URLs resolve
/// to (with their ports): a check can never probe the aggregator's listener.
async fn deny_list(config: &AgentConfig) -> DenyList {
    let deny = DenyList::new(config.deny_destinations.clone());
    for url in &config.aggregators {
        let host_port = url
            .split_once("://")
            .map_or(url.as_str(), |(_, rest)| rest)
            .trim_end_matches('/');
        match tokio::net::lookup_host(host_port).await {
            Ok(addrs) => deny.deny_exact(addrs),
            Err(e) => {
                tracing::warn!(%url, error = %e, "aggregator address not resolved; it is not on the probe deny-list")
            }
        }
    }
    deny
}

struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}
