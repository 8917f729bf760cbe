//! The snapshot feed client: subscribe with the held version, apply full
//! snapshots and deltas (checking each delta's base), swap the compiled
//! table in whole, write the cache, report the applied version. On a gap or
//! an update that cannot be applied it resubscribes for a full snapshot; on
//! a lost stream it retries every aggregator in turn with backoff 1 s → 60 s.
//!
//! [`Follower`] is the pure part (updates in, snapshots out); [`run`] is
//! the IO around it.

use std::sync::Arc;
use std::time::Duration;

use gslb_proto::convert::update_from_pb;
use gslb_proto::link::{Ended, Link, Redial, Session};
use gslb_proto::pb;
use gslb_shared::backoff::Backoff;
use gslb_shared::config::LinkTls;
use gslb_shared::{FeedUpdate, Snapshot};
use tokio_stream::StreamExt;

use crate::state::{Shared, now_ms};
use crate::table::Table;

/// Time allowed to open a connection to an aggregator.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);
/// Time allowed for the aggregator to answer a subscribe (it asks the
/// control core, which a large write can keep busy for seconds).
const SUBSCRIBE_TIMEOUT: Duration = Duration::from_secs(30);

/// Largest feed message accepted (a full snapshot of a large catalog).
pub use gslb_proto::MAX_MESSAGE;

/// What a new snapshot changed, as far as compiling it goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// Anything: compile in full.
    Full,
    /// Only the facts or resolved addresses of these members, over the
    /// snapshot of version `base`: a table of that version can be
    /// refreshed ([`Table::refresh`]).
    Health {
        /// The version the delta applied to.
        base: u64,
        /// The members it touched.
        touched: Vec<gslb_shared::MemberId>,
    },
}

/// What applying one update did.
#[derive(Debug)]
pub enum Applied {
    /// A new snapshot to serve: [`Follower::held`].
    Snapshot(Change),
    /// The delta does not follow the held version: resync in full.
    Gap(String),
    /// The update does not decode: resync in full.
    Invalid(String),
    /// A full snapshot that would take the edge back (a lower version or
    /// an empty catalog in place of a non-empty one, in the same epoch):
    /// refused, the held snapshot is kept.
    Refused(String),
}

/// Follows the feed: holds the last applied snapshot.
#[derive(Debug, Default)]
pub struct Follower {
    held: Option<Snapshot>,
}

impl Follower {
    /// Start from a snapshot (e.g. the cache's).
    pub fn new(held: Option<Snapshot>) -> Self {
        Self { held }
    }

    /// The snapshot held.
    pub fn held(&self) -> Option<&Snapshot> {
        self.held.as_ref()
    }

    /// The version held (0: none).
    pub fn version(&self) -> u64 {
        self.held.as_ref().map_or(0, |s| s.version)
    }

    /// Apply one update; on success the returned snapshot is also held.
    pub fn apply(&mut self, update: FeedUpdate) -> Applied {
        match update {
            FeedUpdate::Full(s) => {
                if let Some(why) = self.regression(&s) {
                    return Applied::Refused(why);
                }
                self.held = Some(s);
                Applied::Snapshot(Change::Full)
            }
            FeedUpdate::Delta(delta) => {
                let Some(held) = self.held.as_mut() else {
                    return Applied::Gap(format!(
                        "delta {}->{} with no snapshot held",
                        delta.base_version, delta.version
                    ));
                };
                // `apply` checks the base before it changes anything.
                let change = match delta.health_only() {
                    Some(touched) => Change::Health {
                        base: held.version,
                        touched,
                    },
                    None => Change::Full,
                };
                match held.apply(&delta) {
                    Ok(()) => Applied::Snapshot(change),
                    Err(gap) => Applied::Gap(gap.to_string()),
                }
            }
        }
    }

    /// Decode `update` off the wire and apply it; one that does not decode
    /// is [`Applied::Invalid`] and changes nothing.
    pub fn apply_pb(&mut self, update: pb::SnapshotUpdate) -> Applied {
        match update_from_pb(update) {
            Ok(update) => self.apply(update),
            Err(why) => Applied::Invalid(why),
        }
    }

    /// Why `offered` must not replace the held snapshot, if it must not.
    /// An aggregator that lost its store would otherwise empty every edge;
    /// only a deliberate reset (a higher epoch) takes an edge back.
    fn regression(&self, offered: &Snapshot) -> Option<String> {
        let held = self.held.as_ref()?;
        let reset = "if this is deliberate, reset the edges with gslbctl reset-edges";
        if offered.epoch > held.epoch {
            return None;
        }
        if offered.epoch < held.epoch {
            return Some(format!(
                "refused snapshot version {} of epoch {}: this edge holds epoch {} (version {}); \
                 the aggregator is older than the last reset",
                offered.version, offered.epoch, held.epoch, held.version
            ));
        }
        if offered.version < held.version {
            return Some(format!(
                "refused snapshot version {}: lower than the held version {} (the aggregator \
                 lost or rolled back its state); still serving version {}; {reset}",
                offered.version, held.version, held.version
            ));
        }
        let empty = |s: &Snapshot| s.catalog.zones.is_empty() && s.catalog.records.is_empty();
        if empty(offered) && !empty(held) {
            return Some(format!(
                "refused snapshot version {}: its catalog is empty and would replace version {} \
                 ({} zones, {} record sets); still serving version {}; {reset}",
                offered.version,
                held.version,
                held.catalog.zones.len(),
                held.catalog.records.len(),
                held.version
            ));
        }
        None
    }

    /// The version to subscribe with: 0 asks for a full snapshot (after a
    /// gap or a bad update; the held snapshot keeps being served meanwhile).
    pub fn held_for_subscribe(&self, full: bool) -> u64 {
        if full { 0 } else { self.version() }
    }
}

/// Feed settings.
#[derive(Debug, Clone)]
pub struct FeedConfig {
    /// Aggregator URLs, tried in turn.
    pub aggregators: Vec<String>,
    /// This edge's id.
    pub edge_id: String,
    /// Writes applied snapshots to the cache, off the apply path.
    pub cache: Option<crate::cache::Writer>,
    /// TLS files for the aggregator link, read at each connection.
    pub tls: LinkTls,
    /// Reconnect policy.
    pub backoff: Backoff,
}

/// Compile `snapshot` (or refresh the served table, when `change` allows),
/// install it, and hand it to the cache writer. Returns false when it
/// cannot be compiled (the old table keeps serving).
pub fn install(
    shared: &Shared,
    cfg: &FeedConfig,
    snapshot: &Snapshot,
    change: &Change,
    source: &str,
) -> bool {
    let started = std::time::Instant::now();
    let now = gslb_shared::clock::now_secs();
    let previous = shared.table.load_full();
    let refreshed = match (change, previous.as_deref()) {
        (Change::Health { base, touched }, Some(p)) if p.version == *base => {
            p.refresh(snapshot, touched, now)
        }
        _ => Ok(None),
    };
    let compiled = match refreshed {
        Ok(Some(t)) => Ok(t),
        Ok(None) => Table::compile_after(snapshot, previous.as_deref(), now),
        Err(e) => Err(e),
    };
    let table = match compiled {
        Ok(t) => t,
        Err(e) => {
            tracing::warn!(version = snapshot.version, error = %e, "snapshot not applied");
            shared.failure(e.to_string(), true);
            return false;
        }
    };
    let (refresh, decided) = (table.lineage != table.serial, table.decided_here());
    let apply_us = started.elapsed().as_micros() as u64;
    shared.install(table, source, true);
    shared.metrics.applied(refresh, apply_us);
    tracing::info!(
        version = snapshot.version,
        source,
        apply_us,
        refresh,
        decided,
        "snapshot applied"
    );
    take_in_transfers(shared, snapshot);
    if let Some(cache) = &cfg.cache {
        cache.write(snapshot);
    }
    true
}

/// Longest wait between two looks at whether signatures are due.
const RESIGN_LOOK: std::time::Duration = std::time::Duration::from_secs(60);

/// Compile the table anew from its own snapshot when its static
/// signatures are due to be made again and no snapshot came to do it.
/// A table the feed installed meanwhile is never replaced.
pub async fn resign(shared: Arc<Shared>) {
    loop {
        let now = gslb_shared::clock::now_secs();
        let due = (shared.table.load().as_ref()).and_then(|t| t.signatures.refresh_at);
        let wait = due.map_or(RESIGN_LOOK, |d| {
            std::time::Duration::from_secs(d.saturating_sub(now).max(1)).min(RESIGN_LOOK)
        });
        tokio::time::sleep(wait).await;
        let Some(current) = shared.table.load_full() else {
            continue;
        };
        let now = gslb_shared::clock::now_secs();
        if current.signatures.refresh_at.is_none_or(|d| d > now) {
            continue;
        }
        let previous = Arc::clone(&current);
        let compiled = tokio::task::spawn_blocking(move || {
            Table::compile_after(&previous.snapshot, Some(&previous), now)
        })
        .await;
        match compiled {
            Ok(Ok(table)) => {
                let before = shared
                    .table
                    .compare_and_swap(&Some(Arc::clone(&current)), Some(Arc::new(table)));
                if before.as_ref().is_some_and(|b| Arc::ptr_eq(b, &current)) {
                    tracing::info!(version = current.version, "signatures made anew");
                }
            }
            Ok(Err(e)) => tracing::warn!(error = %e, "re-signing failed"),
            Err(e) => tracing::warn!(error = %e, "re-signing task failed"),
        }
    }
}

/// Rebuild the zone transfer state from an applied snapshot (after its
/// table is installed, so a secondary that asks for the SOA on NOTIFY
/// sees the new serial), and NOTIFY the targets of every zone: at once
/// when its data changed, coalesced when only its serial moved. Zones that
/// cannot be transferred are logged; they are still answered.
pub fn take_in_transfers(shared: &Shared, snapshot: &Snapshot) {
    let started = std::time::Instant::now();
    let update = shared.transfers.update(snapshot);
    for e in &update.errors {
        tracing::warn!(error = %e, "zone not transferable at this version");
    }
    if !update.changed.is_empty() || !update.errors.is_empty() {
        tracing::info!(
            version = snapshot.version,
            changed = update.changed.len(),
            build_ms = started.elapsed().as_millis() as u64,
            "zone transfer state updated"
        );
    }
    let notifier = std::sync::Arc::clone(&shared.transfers.notifier);
    let bound = shared.dns_bound();
    let with_targets = |zones: Vec<std::sync::Arc<crate::xfr::ZoneXfr>>| -> Vec<_> {
        zones.into_iter().filter(|z| !z.notify.is_empty()).collect()
    };
    let (changed, moved) = (with_targets(update.changed), with_targets(update.moved));
    if changed.is_empty() && moved.is_empty() {
        return;
    }
    let shared_bound = shared.dns_bound_cell();
    tokio::spawn(async move {
        // Before the first snapshot the DNS listener is not bound yet:
        // a secondary told now could not ask back. Wait for it (bounded).
        let mut source = bound;
        for _ in 0..600 {
            if source.is_some() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
            source = shared_bound.get().copied();
        }
        let Some(source) = source else {
            tracing::warn!("NOTIFY not sent: the DNS listener was not bound within 60 s");
            return;
        };
        for zone in &changed {
            crate::xfr::notify::send_all(&notifier, zone, source.ip());
        }
        for zone in &moved {
            crate::xfr::notify::send_coalesced(&notifier, zone, source.ip());
        }
    });
}

/// Follow the feed forever.
pub async fn run(shared: Arc<Shared>, cfg: FeedConfig, follower: Follower) {
    let redial = match Redial::new("feed", cfg.aggregators.clone(), cfg.backoff) {
        Ok(r) => r,
        Err(e) => {
            tracing::error!(error = %e, "no feed");
            return;
        }
    };
    let mut feed = Feed {
        shared,
        cfg,
        follower,
        full: false,
    };
    redial.run(&mut feed).await;
}

/// The feed's state across sessions.
struct Feed {
    shared: Arc<Shared>,
    cfg: FeedConfig,
    follower: Follower,
    /// The next subscription asks for a full snapshot.
    full: bool,
}

impl Session for Feed {
    async fn dial(&mut self, url: &str) -> Ended {
        let mut subscribed = false;
        let result = follow(
            &self.shared,
            &self.cfg,
            url,
            &mut self.follower,
            &mut self.full,
            &mut subscribed,
        )
        .await;
        let error = match result {
            Ok(()) => "stream closed".to_owned(),
            Err(e) => e,
        };
        self.shared.failure(format!("{url}: {error}"), false);
        Ended::Failed {
            established: subscribed,
            error,
        }
    }
}

async fn follow(
    shared: &Shared,
    cfg: &FeedConfig,
    url: &str,
    follower: &mut Follower,
    full: &mut bool,
    subscribed: &mut bool,
) -> Result<(), String> {
    let channel = Link::with_tls(&cfg.tls)
        .connect(url, CONNECT_TIMEOUT)
        .await
        .map_err(|e| e.to_string())?;
    let mut client =
        pb::edge_feed_client::EdgeFeedClient::new(channel).max_decoding_message_size(MAX_MESSAGE);
    // Resyncs in a row without an applied snapshot: the first is at once
    // (a gap is routine), later ones back off like reconnects, so a
    // snapshot that cannot be applied is not fetched again in a tight loop.
    let mut resyncs = 0u32;
    loop {
        if resyncs > 0 {
            let delay = cfg.backoff.delay(resyncs - 1, &mut rand::rng());
            tracing::info!(
                delay_ms = delay.as_millis() as u64,
                resyncs,
                "waiting before resyncing"
            );
            tokio::time::sleep(delay).await;
        }
        let held = follower.held_for_subscribe(*full);
        // Bounded, as the connect is: a peer that drops every connection
        // could keep the call waiting on reconnects for ever.
        let opened = tokio::time::timeout(
            SUBSCRIBE_TIMEOUT,
            client.subscribe(pb::SubscribeRequest {
                edge_id: cfg.edge_id.clone(),
                held_version: held,
                edge_version: env!("CARGO_PKG_VERSION").to_owned(),
            }),
        )
        .await
        .map_err(|_| format!("subscribe: no answer within {SUBSCRIBE_TIMEOUT:?}"))?;
        let mut stream = opened
            .map_err(|s| format!("subscribe: {}", s.message()))?
            .into_inner();
        tracing::info!(aggregator = %url, held, "subscribed to the snapshot feed");
        shared.subscribed(held);
        *subscribed = true;
        let mut resync = false;
        while let Some(update) = stream.next().await {
            let update = update.map_err(|s| format!("stream: {}", s.message()))?;
            shared.contact();
            match follower.apply_pb(update) {
                Applied::Snapshot(change) => {
                    let Some(s) = follower.held() else {
                        continue;
                    };
                    let version = s.version;
                    if !install(shared, cfg, s, &change, url) {
                        resync = true;
                        break;
                    }
                    *full = false;
                    resyncs = 0;
                    let report = pb::AppliedReport {
                        edge_id: cfg.edge_id.clone(),
                        version,
                        applied_at_ms: now_ms(),
                        skipped: shared.status().skipped,
                    };
                    if let Err(s) = client.report_applied(report).await {
                        tracing::debug!(error = %s.message(), "applied version not reported");
                    }
                }
                Applied::Refused(why) => {
                    // Keep the stream: a reset reaches this edge as the
                    // next update (a gap, then a full snapshot of a higher
                    // epoch).
                    tracing::warn!(aggregator = %url, reason = %why, "snapshot refused");
                    shared.failure(why, true);
                }
                Applied::Gap(why) | Applied::Invalid(why) => {
                    tracing::warn!(aggregator = %url, reason = %why, "resyncing with a full snapshot");
                    shared.out_of_sync(why);
                    resync = true;
                    break;
                }
            }
        }
        if !resync {
            return Ok(());
        }
        resyncs = resyncs.saturating_add(1);
        *full = true;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn full(version: u64) -> pb::SnapshotUpdate {
        pb::SnapshotUpdate {
            published_at_ms: 7,
            update: Some(pb::snapshot_update::Update::Full(pb::Snapshot {
                version,
                ..pb::Snapshot::default()
            })),
        }
    }

    fn delta(base: u64, version: u64) -> pb::SnapshotUpdate {
        pb::SnapshotUpdate {
            published_at_ms: 8,
            update: Some(pb::snapshot_update::Update::Delta(pb::SnapshotDelta {
                base_version: base,
                version,
                ..pb::SnapshotDelta::default()
            })),
        }
    }

    #[test]
    fn full_then_chained_deltas_apply() {
        let mut f = Follower::default();
        assert!(matches!(f.apply_pb(full(3)), Applied::Snapshot(_)));
        assert_eq!(f.version(), 3);
        assert!(matches!(f.apply_pb(delta(3, 5)), Applied::Snapshot(_)));
        assert_eq!(f.version(), 5);
    }

    fn with_zone(version: u64, epoch: u64) -> pb::SnapshotUpdate {
        let zone = gslb_shared::Zone {
            id: gslb_shared::ZoneId(1),
            apex: gslb_shared::DnsName::parse("example.test").unwrap_or_else(|_| unreachable!()),
            soa: gslb_shared::Soa {
                mname: gslb_shared::DnsName::parse("ns.example.test")
                    .unwrap_or_else(|_| unreachable!()),
                rname: gslb_shared::DnsName::parse("h.example.test")
                    .unwrap_or_else(|_| unreachable!()),
                refresh: 1,
                retry: 1,
                expire: 1,
                negative_ttl: 1,
            },
            ns: vec![],
            default_ttl: 60,
            ns_ttl: None,
            transfer: Default::default(),
            dnssec: None,
        };
        pb::SnapshotUpdate {
            published_at_ms: 7,
            update: Some(pb::snapshot_update::Update::Full(pb::Snapshot {
                version,
                epoch,
                zones: vec![pb::Zone::from(&zone)],
                ..pb::Snapshot::default()
            })),
        }
    }

    #[test]
    fn a_lower_version_or_an_empty_catalog_is_refused_unless_the_epoch_is_higher() {
        let mut f = Follower::default();
        assert!(matches!(f.apply_pb(with_zone(10, 0)), Applied::Snapshot(_)));
        // Lower version, same epoch: the aggregator lost state.
        let Applied::Refused(why) = f.apply_pb(with_zone(4, 0)) else {
            panic!("a lower version was applied")
        };
        assert!(why.contains("lower than the held version 10"), "{why}");
        // Empty catalog at a higher version: also refused.
        let Applied::Refused(why) = f.apply_pb(full(11)) else {
            panic!("an empty catalog was applied")
        };
        assert!(why.contains("catalog is empty"), "{why}");
        assert_eq!(f.version(), 10);
        // A higher version with data is routine.
        assert!(matches!(f.apply_pb(with_zone(12, 0)), Applied::Snapshot(_)));
        // A deliberate reset (higher epoch) takes the edge back, even empty.
        assert!(matches!(f.apply_pb(full(3)), Applied::Refused(_)));
        let reset = pb::SnapshotUpdate {
            published_at_ms: 9,
            update: Some(pb::snapshot_update::Update::Full(pb::Snapshot {
                version: 3,
                epoch: 1,
                ..pb::Snapshot::default()
            })),
        };
        assert!(matches!(f.apply_pb(reset), Applied::Snapshot(_)));
        assert_eq!(f.version(), 3);
        // And an aggregator of an older epoch is refused from then on.
        assert!(matches!(f.apply_pb(with_zone(50, 0)), Applied::Refused(_)));
    }

    #[test]
    fn a_gap_is_refused_and_leaves_the_held_snapshot() {
        let mut f = Follower::default();
        assert!(
            matches!(f.apply_pb(delta(0, 1)), Applied::Gap(_)),
            "nothing held"
        );
        f.apply_pb(full(3));
        assert!(matches!(f.apply_pb(delta(4, 5)), Applied::Gap(_)));
        assert_eq!(f.version(), 3);
        assert_eq!(f.held_for_subscribe(true), 0);
        assert_eq!(f.held_for_subscribe(false), 3);
    }

    #[test]
    fn an_update_without_content_or_with_invalid_objects_is_invalid() {
        let mut f = Follower::default();
        let empty = pb::SnapshotUpdate {
            published_at_ms: 0,
            update: None,
        };
        assert!(matches!(f.apply_pb(empty), Applied::Invalid(_)));
        let mut bad = pb::Snapshot {
            version: 2,
            ..pb::Snapshot::default()
        };
        bad.zones.push(pb::Zone::default());
        let bad = pb::SnapshotUpdate {
            published_at_ms: 0,
            update: Some(pb::snapshot_update::Update::Full(bad)),
        };
        assert!(matches!(f.apply_pb(bad), Applied::Invalid(_)));
        assert_eq!(f.version(), 0);
    }
}
