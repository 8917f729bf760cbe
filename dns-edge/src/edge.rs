//! The edge's lifecycle (seed 003): bind the status listener, load the
//! cache, follow the feed, bind DNS once a snapshot is applied, and drain
//! on shutdown.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::Context;

use crate::answer::Responder;
use crate::config::EdgeConfig;
use crate::feed::{self, FeedConfig, Follower};
use crate::geo::GeoTable;
use crate::rrl::Limiter;
use crate::server;
use crate::state::Shared;
use crate::table::Table;
use crate::warmup::fetch::Fetched;
use crate::warmup::hot::HotKeys;
use crate::warmup::{Report, Token, WarmupConfig, fetch, keys, replay};

/// Longest wait at exit for the cache writer to store the last snapshot.
const CACHE_FLUSH: Duration = Duration::from_secs(5);

/// How often the wait for a first snapshot and the drain log their state.
const REPORT_EVERY: Duration = Duration::from_secs(10);

/// Print a bound address on stdout, where tests and scripts read it (port 0
/// picks a free one).
#[allow(clippy::print_stdout)]
fn announce(name: &str, addr: std::net::SocketAddr) {
    println!("{name} listening on {addr}");
}

/// Load the cached snapshot, if any; a bad one is ignored with a warning.
fn load_cache(shared: &Shared, cfg: &EdgeConfig) -> Follower {
    let Some(dir) = &cfg.cache_dir else {
        return Follower::default();
    };
    let snapshot = match crate::cache::load(dir) {
        Ok(Some(s)) => s,
        Ok(None) => return Follower::default(),
        Err(e) => {
            tracing::warn!(error = %e, "snapshot cache ignored");
            return Follower::default();
        }
    };
    let started = std::time::Instant::now();
    match Table::compile(&snapshot) {
        Ok(table) => {
            let source = format!("cache:{}", crate::cache::path(dir).display());
            let compile_ms = started.elapsed().as_millis() as u64;
            tracing::info!(version = snapshot.version, %source, compile_ms, "snapshot loaded from cache");
            shared.install(table, &source, false);
            feed::take_in_transfers(shared, &snapshot);
            Follower::new(Some(snapshot))
        }
        Err(e) => {
            tracing::warn!(error = %e, "snapshot cache ignored");
            Follower::default()
        }
    }
}

/// Run the edge until `shutdown` completes, then drain.
pub async fn run(cfg: EdgeConfig, shutdown: impl Future<Output = ()>) -> anyhow::Result<()> {
    let geo = match &cfg.geo_file {
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .with_context(|| format!("geo-file {}", path.display()))?;
            GeoTable::parse(&text).with_context(|| format!("geo-file {}", path.display()))?
        }
        None => GeoTable::new(),
    };
    // Fail at startup on unreadable files; the feed reads them again at each connection.
    gslb_proto::link::link_config(&cfg.link_tls)?;
    let tls = cfg.link_tls.clone();
    let geo = geo.with_databases(crate::geo_reload::load(&cfg.geo_mmdb)?);
    let shared = Shared::new(geo);
    shared.transfers.set_depth(cfg.xfr_journal_depth);
    if let Some(nsid) = &cfg.nsid {
        let _ = shared.nsid.set(nsid.clone());
    }
    if let Some(capacity) = std::num::NonZeroUsize::new(cfg.warmup.hot_keys) {
        let hot = HotKeys::start(capacity, cfg.warmup.sample_every).context("hot-key thread")?;
        let _ = shared.warmup.hot.set(hot);
    }
    if let Some(path) = &cfg.warmup.token_file {
        let _ = shared
            .warmup
            .token
            .set(Token::read(path).map_err(anyhow::Error::msg)?);
    }
    let status = tokio::net::TcpListener::bind(cfg.listen_status)
        .await
        .with_context(|| format!("listen-status {}", cfg.listen_status))?;
    let status_addr = status.local_addr()?;
    announce("status", status_addr);
    tracing::info!(addr = %status_addr, "status listener bound");
    let cert = cfg.link_tls.identity.as_ref().map(|(cert, _)| cert.clone());
    let app = crate::status::app(Arc::clone(&shared), cert);
    tokio::spawn(async move {
        let app = app.into_make_service_with_connect_info::<std::net::SocketAddr>();
        if let Err(e) = axum::serve(status, app).await {
            tracing::error!(error = %e, "status listener failed");
        }
    });

    if let Some(addr) = cfg.warmup.listen {
        let config = server::warmup::server_config(&cfg.link_tls)?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("listen-warmup {addr}"))?;
        announce("warmup", listener.local_addr()?);
        tokio::spawn(server::warmup::serve(listener, config, Arc::clone(&shared)));
    }
    let peers_tls = if cfg.warmup.from.iter().any(|u| u.starts_with("https://")) {
        Some(fetch::client_config(&cfg.link_tls).map_err(anyhow::Error::msg)?)
    } else {
        None
    };

    let follower = load_cache(&shared, &cfg);
    tokio::spawn(feed::resign(Arc::clone(&shared)));
    let cache = cfg.cache_dir.clone().map(crate::cache::Writer::spawn);
    if !cfg.aggregators.is_empty() {
        let feed_cfg = FeedConfig {
            aggregators: cfg.aggregators.clone(),
            edge_id: cfg.edge_id.clone(),
            cache: cache.clone(),
            tls,
            backoff: gslb_shared::backoff::Backoff::default(),
        };
        tokio::spawn(feed::run(Arc::clone(&shared), feed_cfg, follower));
    }
    // Neither a cache nor (within the warm-up timeout) an aggregator: a
    // serving peer's snapshot, over mutual TLS.
    let mut fetched = None;
    if let Some(tls) = &peers_tls
        && !shared.loaded()
    {
        if !cfg.aggregators.is_empty() {
            let _ = tokio::time::timeout(cfg.warmup.timeout, shared.wait_loaded()).await;
        }
        if !shared.loaded() {
            fetched = seed_from_peer(&shared, &cfg.warmup, tls, cache.as_ref()).await;
        }
    }

    tokio::pin!(shutdown);
    // Fail the boot now, not after the wait for a snapshot, when the DNS
    // address cannot be bound (in use, not local, no permission). The
    // sockets are let go at once: nothing may answer before a snapshot.
    if cfg.listen_dns.port() != 0 {
        drop(
            server::bind(cfg.listen_dns, 1)
                .with_context(|| format!("listen-dns {}: cannot bind", cfg.listen_dns))?,
        );
    }
    if !shared.loaded() {
        tracing::info!("waiting for the first snapshot before binding the DNS listeners");
        let mut report =
            tokio::time::interval_at(tokio::time::Instant::now() + REPORT_EVERY, REPORT_EVERY);
        loop {
            tokio::select! {
                _ = shared.wait_loaded() => break,
                _ = report.tick() => tracing::warn!("DNS listeners still not bound: no snapshot has been applied yet"),
                _ = &mut shutdown => {
                    tracing::info!("shutting down before any snapshot was applied");
                    return Ok(());
                }
            }
        }
    }

    // The XDP path's workers (one per queue) are warmed with the rest.
    let xdp_queues = cfg.xdp.as_deref().map_or(0, server::xdp::queue_count);
    let mut responders = warm_up(
        &shared,
        &cfg,
        peers_tls.as_ref(),
        fetched,
        cfg.udp_workers + xdp_queues,
    )
    .await;
    let xdp_responders = responders.split_off(cfg.udp_workers.min(responders.len()));
    let bound = server::bind(cfg.listen_dns, cfg.udp_workers)
        .with_context(|| format!("listen-dns {}", cfg.listen_dns))?;
    shared.metrics.set_ready();
    let dns_addr = bound.addr;
    let stop_udp = Arc::new(AtomicBool::new(false));
    let rrl = Limiter::new(cfg.rrl).map(Arc::new);
    let kernel_udp = bound.udp[0].try_clone()?;
    let workers = server::udp::spawn(bound.udp, responders, &shared, rrl.clone(), &stop_udp)?;
    let mut xdp = cfg.xdp.as_deref().and_then(|iface| {
        let setup = server::xdp::XdpSetup {
            iface,
            addr: dns_addr,
            kernel: &kernel_udp,
            rrl,
            responders: xdp_responders,
        };
        server::xdp::start(&shared, setup)
            .inspect_err(|reason| {
                tracing::warn!(iface, %reason, "XDP path not started: answering on the kernel path");
            })
            .ok()
    });
    let (stop_tcp, stop_rx) = tokio::sync::watch::channel(false);
    let listener = tokio::net::TcpListener::from_std(bound.tcp)?;
    let tcp = tokio::spawn(server::tcp::serve(
        listener,
        Arc::clone(&shared),
        cfg.tcp,
        stop_rx,
    ));
    shared.set_dns_bound(dns_addr);
    announce("dns", dns_addr);
    tracing::info!(addr = %dns_addr, udp_workers = cfg.udp_workers, rrl = cfg.rrl.rate > 0, "DNS listeners bound");

    shutdown.await;
    drain(&shared, &cfg, xdp.as_mut(), &stop_udp, &stop_tcp).await;
    let _ = tcp.await;
    for w in workers {
        let _ = tokio::task::spawn_blocking(move || w.join()).await;
    }
    if let Some(cache) = &cache
        && !cache.flush(CACHE_FLUSH).await
    {
        tracing::warn!(
            limit_ms = CACHE_FLUSH.as_millis() as u64,
            "snapshot cache not written before exit: a restart starts from an older cache"
        );
    }
    tracing::info!("drained; exiting");
    Ok(())
}

/// Install a peer's snapshot (checked: its checksum, and that it
/// compiles); the keys that came with it, for the warm-up. `None`, with one
/// log line, when no peer gave one: the edge waits for an aggregator.
async fn seed_from_peer(
    shared: &Arc<Shared>,
    cfg: &WarmupConfig,
    tls: &Arc<rustls::ClientConfig>,
    cache: Option<&crate::cache::Writer>,
) -> Option<Fetched> {
    let token = shared.warmup.token.get()?;
    let deadline = tokio::time::Instant::now() + cfg.timeout;
    let fetched = match fetch::keys(&cfg.from, token, deadline, Some(tls), true, cfg.hot_keys).await
    {
        Ok(f) => f,
        Err(why) => {
            tracing::warn!(reason = %why, "no snapshot from peers: waiting for an aggregator");
            return None;
        }
    };
    let bytes = fetched.snapshot.as_deref().unwrap_or_default();
    let source = format!("peer:{}", fetched.source);
    let decoded = crate::cache::decode(bytes, std::path::Path::new(&fetched.source));
    let compiled = decoded.and_then(|s| {
        Table::compile(&s)
            .map(|t| (s, t))
            .map_err(|e| crate::cache::CacheError::Corrupt {
                path: source.clone().into(),
                rule: e.to_string(),
            })
    });
    match compiled {
        Ok((snapshot, table)) => {
            if !shared.install_first(table, &source) {
                tracing::info!(%source, "a peer's snapshot not used: the aggregator's came first");
                return None;
            }
            tracing::info!(version = snapshot.version, %source, "snapshot seeded from a peer");
            feed::take_in_transfers(shared, &snapshot);
            if let Some(cache) = cache {
                cache.write(&snapshot);
            }
            Some(fetched)
        }
        Err(e) => {
            tracing::warn!(error = %e, "a peer's snapshot refused: waiting for an aggregator");
            None
        }
    }
}

/// The UDP workers' responders, warmed with a peer's hot keys when
/// `--warmup-from` names peers (seed 001): the keys' queries are answered
/// in each before DNS is bound. Any failure is one log line and a cold
/// start, within the warm-up timeout. `fetched`: the keys that came with
/// a peer's snapshot (not asked for again).
async fn warm_up(
    shared: &Arc<Shared>,
    cfg: &EdgeConfig,
    tls: Option<&Arc<rustls::ClientConfig>>,
    fetched: Option<Fetched>,
    workers: usize,
) -> Vec<Responder> {
    let responders: Vec<Responder> = (0..workers).map(server::udp::responder).collect();
    if cfg.warmup.from.is_empty() {
        return responders;
    }
    let started = std::time::Instant::now();
    let (responders, mut report) = from_peers(shared, &cfg.warmup, tls, fetched, responders).await;
    report.duration_ms = started.elapsed().as_millis() as u64;
    // Ours, with the reason and the figures, then seed 001's lines as
    // the seed writes them.
    match &report.reason {
        Some(reason) => {
            tracing::warn!(
                %reason,
                duration_ms = report.duration_ms,
                "warm-up: starting cold"
            );
            tracing::error!("Warmup failed - proceeding with cold start");
        }
        None => {
            tracing::info!(
                source = report.source.as_deref().unwrap_or(""),
                keys_replayed = report.keys_replayed,
                duration_ms = report.duration_ms,
                "warm-up: the peer's hot keys are answered in every worker"
            );
            tracing::info!(
                "Warmup complete: {} payloads executed",
                report.keys_replayed
            );
        }
    }
    shared.set_warmup(report);
    responders
}

/// Fetch the hot keys (unless they came with the snapshot) and answer
/// them in `responders`; the report says what was done, or why nothing
/// was (`cold`).
async fn from_peers(
    shared: &Arc<Shared>,
    cfg: &WarmupConfig,
    tls: Option<&Arc<rustls::ClientConfig>>,
    fetched: Option<Fetched>,
    mut responders: Vec<Responder>,
) -> (Vec<Responder>, Report) {
    let mut report = Report {
        cold: true,
        ..Report::default()
    };
    let deadline = tokio::time::Instant::now() + cfg.timeout;
    let cold = |mut report: Report, responders, why: String| {
        report.reason = Some(why);
        (responders, report)
    };
    let (Some(token), Some(table)) = (shared.warmup.token.get(), shared.table.load_full()) else {
        return cold(report, responders, "no token or no snapshot".into());
    };
    let fetched = match fetched {
        Some(f) => f,
        None => match fetch::keys(&cfg.from, token, deadline, tls, false, cfg.hot_keys).await {
            Ok(f) => f,
            Err(why) => return cold(report, responders, why),
        },
    };
    let (source, body) = (fetched.source, fetched.body);
    report.source = Some(source.clone());
    report.keys_fetched = body.keys.len();
    let (mut keys, mut unusable) = (Vec::new(), 0usize);
    for k in &body.keys {
        match keys::from_text(k) {
            Ok(r) => keys.push(r),
            Err(_) => unusable += 1,
        }
    }
    if keys.is_empty() {
        let why = format!("{source} gave no usable keys ({unusable} unusable)");
        return cold(report, responders, why);
    }
    let geo = Arc::clone(&shared.geo);
    let workers = responders.len();
    let until =
        std::time::Instant::now() + deadline.saturating_duration_since(tokio::time::Instant::now());
    let replayed = tokio::task::spawn_blocking(move || {
        let (n, branches) = replay::replay(&table, &geo, &keys, &mut responders, until);
        (responders, n, branches, keys)
    })
    .await;
    let Ok((responders, replayed, branches, keys)) = replayed else {
        let fresh = (0..workers).map(server::udp::responder).collect();
        return cold(report, fresh, "the replay task failed".into());
    };
    // Replayed keys enter this edge's own LRU (oldest first, so the
    // peer's most recent stay the most recent): it can warm the next.
    if let Some(hot) = shared.warmup.hot.get() {
        for (k, branch) in keys.iter().zip(&branches).rev() {
            hot.touch(&k.key, *branch, k.region.as_deref(), k.subnet);
        }
    }
    report.keys_replayed = replayed;
    report.cold = replayed == 0;
    if replayed == 0 {
        report.reason = Some("the warm-up timeout passed before any key was answered".into());
    }
    (responders, report)
}

/// Seed 003's drain: unready at once, answer for the window, then close
/// idle TCP and wait for open connections to finish.
async fn drain(
    shared: &Shared,
    cfg: &EdgeConfig,
    xdp: Option<&mut server::xdp::XdpPath>,
    stop_udp: &AtomicBool,
    stop_tcp: &tokio::sync::watch::Sender<bool>,
) {
    shared.start_drain();
    if let Some(xdp) = xdp {
        // The kernel's sockets answer the window; nothing is left attached
        // to the interface whatever ends the process after it.
        xdp.stop();
        tracing::info!("XDP program detached: the drain window is answered on the kernel path");
    }
    tracing::info!(
        min_drain_secs = cfg.min_drain.as_secs(),
        in_flight = shared.metrics.in_flight(),
        open_connections = shared.tcp_open(),
        "draining: /readyz now reports 503, DNS keeps answering"
    );
    let window = tokio::time::sleep(cfg.min_drain);
    tokio::pin!(window);
    let mut report =
        tokio::time::interval_at(tokio::time::Instant::now() + REPORT_EVERY, REPORT_EVERY);
    loop {
        tokio::select! {
            _ = &mut window => break,
            _ = report.tick() => tracing::info!(in_flight = shared.metrics.in_flight(), open_connections = shared.tcp_open(), "still draining"),
        }
    }
    stop_udp.store(true, std::sync::atomic::Ordering::Relaxed);
    let _ = stop_tcp.send(true);
    let mut report = tokio::time::interval(REPORT_EVERY);
    let mut poll = tokio::time::interval(Duration::from_millis(20));
    // `None`: no deadline (seed 003); the platform's grace period rules.
    let deadline = async {
        match cfg.tcp_drain {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(deadline);
    while shared.tcp_open() > 0 {
        tokio::select! {
            _ = poll.tick() => {}
            _ = report.tick() => tracing::info!(open_connections = shared.tcp_open(), "still draining open DNS TCP connections"),
            () = &mut deadline => {
                tracing::warn!(
                    open_connections = shared.tcp_open(),
                    tcp_drain_timeout_ms = cfg.tcp_drain.map_or(0, |d| d.as_millis() as u64),
                    "closing the DNS TCP connections still open after tcp-drain-timeout"
                );
                break;
            }
        }
    }
    tracing::info!(
        open_connections = shared.tcp_open(),
        "drain window over; DNS listeners closed"
    );
}
