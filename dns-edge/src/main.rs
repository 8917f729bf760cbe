//! `gslb-edge`: parse settings, set up logging, then run the edge until
//! SIGINT or SIGTERM starts the drain.

use clap::Parser;
use gslb_edge::config::Settings;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> anyhow::Result<()> {
    let config = Settings::parse().merged()?.validate()?;
    gslb_shared::telemetry::init(config.log_format);
    tracing::info!(aggregators = ?config.aggregators, edge = %config.edge_id, "gslb-edge starting");
    gslb_edge::edge::run(config, shutdown_signal()).await
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
