//! A demo backend for the quickstart and the end-to-end tests: an HTTP
//! server that answers `GET /health` with 200 and `GET /` with its name, so
//! HTTP and TCP checks have something real to probe. Stopping the process
//! is how a demo or a test takes a backend down.

use std::net::SocketAddr;

use axum::Router;
use axum::routing::get;
use clap::Parser;

/// gslb-demo-backend: a tiny HTTP server to point health checks at.
#[derive(Parser)]
#[command(version)]
struct Args {
    /// Address to listen on (port 0 picks one).
    #[arg(long)]
    listen: SocketAddr,
    /// Name returned by `GET /`.
    #[arg(long, default_value = "backend")]
    name: String,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let name = format!("{}\n", args.name);
    let app = Router::new()
        .route("/health", get(|| async { "ok\n" }))
        .route("/", get(move || async move { name }));
    let listener = tokio::net::TcpListener::bind(args.listen).await?;
    // The line the quickstart and the tests wait for.
    #[allow(clippy::print_stdout)]
    {
        println!("backend listening on {}", listener.local_addr()?);
    }
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
