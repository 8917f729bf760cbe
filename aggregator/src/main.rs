//! `gslb-aggregator`: parse settings, open the store, bind both listeners
//! (printing their addresses on stdout, so a test can use port 0), and
//! serve until SIGINT or SIGTERM.

use std::io::Write;
use std::sync::Arc;

use anyhow::Context;
use clap::Parser;
use gslb_aggregator::config::Settings;
use gslb_aggregator::control::Control;
use gslb_aggregator::service::{Service, now};
use gslb_aggregator::store::SledStore;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let config = Settings::parse().merged()?.validate()?;
    gslb_shared::telemetry::init(config.log_format);
    std::fs::create_dir_all(&config.data_dir)
        .with_context(|| format!("creating {}", config.data_dir.display()))?;
    let store = SledStore::open(&config.data_dir).context("opening the store")?;
    let control = Control::open(Box::new(store), config.engine, now()).context("loading state")?;
    tracing::info!(
        version = control.version(),
        members = control.catalog().members.len(),
        "state loaded"
    );
    let grpc = tokio::net::TcpListener::bind(config.listen_grpc)
        .await
        .context("binding the gRPC listener")?;
    let http = tokio::net::TcpListener::bind(config.listen_http)
        .await
        .context("binding the HTTP listener")?;
    for (name, listener) in [("grpc", &grpc), ("http", &http)] {
        let addr = listener.local_addr()?;
        if !addr.ip().is_loopback() {
            tracing::warn!(%addr, "{name} listener is plain text on a non-loopback address (TLS arrives with the security work)");
        }
        // The bound addresses are the one thing this binary prints to stdout.
        #[allow(clippy::print_stdout)]
        {
            println!("{name} listening on {addr}");
        }
    }
    std::io::stdout().flush()?;
    gslb_aggregator::server::run(
        Arc::new(Service::new(control)),
        grpc,
        http,
        config.tick,
        shutdown_signal(),
    )
    .await
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
    tracing::info!("shutting down");
}
