//! Wiring: settings in, a running agent out (checkers, scheduler, buffer,
//! uplink, metrics listener). Kept out of `main` so tests can start it.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;
use tonic::transport::{Certificate, ClientTlsConfig, Identity};

use crate::backoff::Backoff;
use crate::buffer::ResultBuffer;
use crate::checker::Registry;
use crate::checker::tls::ProbeTls;
use crate::clock::Clock;
use crate::config::AgentConfig;
use crate::metrics::{self, Metrics};
use crate::scheduler::{ProbeContext, Scheduler};
use crate::uplink::{Uplink, UplinkConfig};

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
        let metrics = Metrics::new();
        let buffer = Arc::new(ResultBuffer::new(config.buffer_capacity, config.batch_size));
        let ctx = Arc::new(ProbeContext {
            registry: Registry::builtin(tls),
            limit: Semaphore::new(config.concurrency),
            buffer,
            clock: Clock::system(),
            metrics,
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
                tls: link_tls(&config)?,
            },
            Scheduler::new(self.ctx.clone()),
            self.ctx.buffer.clone(),
            self.ctx.metrics.clone(),
        );
        uplink.run().await;
        Ok(())
    }
}

fn link_tls(config: &AgentConfig) -> anyhow::Result<Option<ClientTlsConfig>> {
    let tls = &config.link_tls;
    if tls.identity.is_none() && tls.ca.is_none() {
        return Ok(None);
    }
    let mut c = ClientTlsConfig::new();
    if let Some(ca) = &tls.ca {
        let pem = std::fs::read(ca).map_err(|e| anyhow::anyhow!("tls-ca {}: {e}", ca.display()))?;
        c = c.ca_certificate(Certificate::from_pem(pem));
    }
    if let Some((cert, key)) = &tls.identity {
        let cert =
            std::fs::read(cert).map_err(|e| anyhow::anyhow!("tls-cert {}: {e}", cert.display()))?;
        let key =
            std::fs::read(key).map_err(|e| anyhow::anyhow!("tls-key {}: {e}", key.display()))?;
        c = c.identity(Identity::from_pem(cert, key));
    }
    Ok(Some(c))
}

struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}
