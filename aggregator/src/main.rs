//! `gslb-aggregator`: parse settings, open the store, bind both listeners
//! (printing their addresses on stdout, so a test can use port 0), and
//! serve until SIGINT or SIGTERM.

use std::io::Write;
use std::sync::Arc;

use anyhow::Context;
use clap::Parser;
use gslb_aggregator::api::Security;
use gslb_aggregator::api::roles::follow;
use gslb_aggregator::api::service::{Service, now};
use gslb_aggregator::api::tokens::Tokens;
use gslb_aggregator::config::{Settings, Transport};
use gslb_aggregator::core::control::Control;
use gslb_aggregator::core::store::RedbStore;
use gslb_aggregator::net::tls::ReloadingTls;
use gslb_aggregator::replication::cluster::{Cluster, RaftStore, check_data_dir};
use gslb_proto::link::Link;

/// How long the flattening resolver waits for each answer.
const RESOLVE_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(2);

/// Restore backup `file` into `data_dir` (no aggregator may run on it);
/// what was restored, for the operator.
fn restore(data_dir: &std::path::Path, file: &std::path::Path) -> anyhow::Result<String> {
    use gslb_aggregator::core::store::backup::{self, Backup};
    let bytes = std::fs::read(file).with_context(|| format!("reading {}", file.display()))?;
    let doc = Backup::decode(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
    let version = backup::restore(data_dir, &doc)?;
    let c = &doc.state.catalog;
    Ok(format!(
        "restored version {version} ({} zones, {} record sets, {} pools, {} members, {} checks) into {}; \
         start gslb-aggregator --data-dir {} (edges holding a newer version refuse it until gslbctl reset-edges)\n",
        c.zones.len(),
        c.records.len(),
        c.pools.len(),
        c.members.len(),
        c.checks.len(),
        data_dir.display(),
        data_dir.display()
    ))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let settings = Settings::parse().merged()?;
    if let Some(file) = &settings.restore {
        let data_dir = settings.data_dir.as_deref().ok_or_else(|| {
            gslb_shared::config::invalid("data-dir", "is required with --restore")
        })?;
        let done = restore(data_dir, file)?;
        // The outcome is what this run is for.
        #[allow(clippy::print_stdout)]
        {
            print!("{done}");
        }
        return Ok(());
    }
    let config = settings.validate()?;
    gslb_shared::telemetry::init(config.log_format);
    rustls::crypto::ring::default_provider()
        .install_default()
        .map_err(|_| anyhow::anyhow!("a TLS crypto provider was already installed"))?;
    let security = security(&config)?;
    let link = Link {
        tls: security.tls.as_ref().map(|t| t.files().as_link()),
        token: None,
    };
    std::fs::create_dir_all(&config.data_dir)
        .with_context(|| format!("creating {}", config.data_dir.display()))?;
    check_data_dir(&config.data_dir, config.cluster.is_some())?;
    gslb_aggregator::core::store::set_cache_mib(config.store_cache_mib);
    gslb_aggregator::core::store::set_audit_limits(
        config.audit_keep,
        config.audit_days * 24 * 3600 * 1000,
    );
    let (service, follower) = match &config.cluster {
        None => {
            let store = RedbStore::open(&config.data_dir).context("opening the store")?;
            let control =
                Control::open(Box::new(store), config.engine, now()).context("loading state")?;
            (Arc::new(Service::new(control)), None)
        }
        Some(cluster_config) => {
            let (cluster, events) =
                Cluster::start(cluster_config, &config.data_dir, config.engine, link).await?;
            let store = RaftStore::new(cluster.clone());
            let control = Control::open(Box::new(store), config.engine, now())
                .context("loading state")?
                .into_replica();
            let service = Arc::new(Service::clustered(control, cluster.clone()));
            let follower = tokio::spawn(follow(service.clone(), cluster, events));
            (service, Some(follower))
        }
    };
    let loaded = service.view();
    tracing::info!(
        version = loaded.version(),
        members = loaded.catalog().members.len(),
        "state loaded"
    );
    let grpc = tokio::net::TcpListener::bind(config.listen_grpc)
        .await
        .context("binding the gRPC listener")?;
    let http = tokio::net::TcpListener::bind(config.listen_http)
        .await
        .context("binding the HTTP listener")?;
    service.set_http_address(advertised_http(http.local_addr()?, &config));
    service.set_agent_retention(config.agent_retention);
    service.set_own_listeners(vec![grpc.local_addr()?, http.local_addr()?]);
    service.set_geo(gslb_aggregator::api::geo::ExplainGeo::open(
        config.geo_mmdb.clone(),
        config.geo_file.clone(),
    )?);
    for (name, listener) in [("grpc", &grpc), ("http", &http)] {
        let addr = listener.local_addr()?;
        if security.tls.is_none() {
            tracing::warn!(%addr, "{name} listener is PLAIN TEXT (--insecure): no TLS and no client identities; loopback only, for development");
        }
        // The bound addresses are the one thing this binary prints to stdout.
        #[allow(clippy::print_stdout)]
        {
            println!("{name} listening on {addr}");
        }
    }
    std::io::stdout().flush()?;
    // Answered by the listeners below: the resolver only ever asks.
    let flattening = tokio::spawn(gslb_aggregator::api::flatten::run(
        service.clone(),
        gslb_proto::link::resolve::Resolver::configured(config.resolver, RESOLVE_TIMEOUT),
    ));
    let rolling = tokio::spawn(gslb_aggregator::api::rollover::run(service.clone()));
    let sender = gslb_aggregator::api::notify::Sender::new(service.deny())
        .context("the notifications' TLS client configuration")?;
    let notifying = tokio::spawn(gslb_aggregator::api::notify::run(service.clone(), sender));
    let served = gslb_aggregator::api::server::run(
        service.clone(),
        grpc,
        http,
        config.tick,
        security,
        config.limits,
        shutdown_signal(),
    )
    .await;
    flattening.abort();
    rolling.abort();
    notifying.abort();
    if let Some(follower) = follower {
        follower.abort();
    }
    // Published decisions to disk and the version reservation given back,
    // so a clean restart continues at this version.
    service.call(|control| control.settle()).await;
    if let Some(cluster) = service.cluster() {
        // Stop replicating before the process exits; peers see us leave.
        let _ = cluster.raft.shutdown().await;
    }
    served
}

/// TLS material and tokens, loaded (a file that does not load stops the start).
fn security(config: &gslb_aggregator::config::AggregatorConfig) -> anyhow::Result<Security> {
    let tls = match &config.transport {
        Transport::Tls(files) => Some(Arc::new(ReloadingTls::load(files.clone())?)),
        Transport::Insecure => None,
    };
    let tokens = Tokens::load(config.tokens_file.clone())?;
    if !config.tokens_file.exists() {
        tracing::warn!(
            path = %config.tokens_file.display(),
            "no admin tokens yet: every admin call is refused until `gslbctl tokens create --file` writes this file"
        );
    }
    Ok(Security {
        tls,
        tokens: Arc::new(tokens),
    })
}

/// The HTTP listener as other hosts reach it: its own address, or for a
/// wildcard bind the host this node is known by in `--peers`.
fn advertised_http(
    bound: std::net::SocketAddr,
    config: &gslb_aggregator::config::AggregatorConfig,
) -> String {
    if !bound.ip().is_unspecified() {
        return bound.to_string();
    }
    let host = config
        .cluster
        .as_ref()
        .and_then(|c| c.peers.get(&c.node_id))
        .and_then(|addr| addr.rsplit_once(':').map(|(host, _)| host.to_owned()))
        .unwrap_or_else(|| "127.0.0.1".to_owned());
    format!("{host}:{}", bound.port())
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
