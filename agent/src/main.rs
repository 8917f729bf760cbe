//! `gslb-agent`: parse settings, set up logging, TLS and metrics, then run the
//! uplink (which drives the scheduler) until SIGINT or SIGTERM.

use std::sync::Arc;

use anyhow::Context;
use clap::Parser;
use gslb_agent::agent::Agent;
use gslb_agent::config::Settings;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let config = Settings::parse().merged()?.validate()?;
    gslb_shared::telemetry::init(config.log_format);
    rustls::crypto::ring::default_provider()
        .install_default()
        .map_err(|_| anyhow::anyhow!("a TLS crypto provider was already installed"))?;
    let agent = Arc::new(Agent::build(&config).await.context("starting the agent")?);
    if let Some(addr) = agent.metrics_addr() {
        // Like the other binaries: the line scripts and tests wait for.
        #[allow(clippy::print_stdout)]
        {
            println!("metrics listening on {addr}");
        }
    }
    tracing::info!(location = %config.location, region = %config.region, aggregators = ?config.aggregators, "gslb-agent started");
    tokio::select! {
        result = agent.run(config) => result?,
        _ = shutdown_signal() => tracing::info!("shutting down"),
    }
    Ok(())
}

async fn shutdown_signal() {
    let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => return std::future::pending().await,
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}
