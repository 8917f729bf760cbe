//! MaxMind files on the edge: read at start (a bad file stops the start,
//! naming it), then watched; a changed file set is read again in the
//! background and swapped in whole. A file that fails to load is logged
//! and the old ones kept until the files change again.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use gslb_shared::geo_db::{GeoDbs, fingerprint};

use crate::geo::GeoDbSlot;

/// How often the files' sizes and modification times are looked at.
pub const GEO_RELOAD_EVERY: Duration = Duration::from_secs(2);

/// The databases in `paths` (none when empty), and a task that keeps them
/// fresh.
pub fn load(paths: &[PathBuf]) -> anyhow::Result<Arc<GeoDbSlot>> {
    let slot = Arc::new(GeoDbSlot::default());
    if paths.is_empty() {
        return Ok(slot);
    }
    let dbs = GeoDbs::open(paths)?;
    for (path, kind) in dbs.describe() {
        tracing::info!(path = %path.display(), kind, "geo database loaded");
    }
    slot.current.store(Some(Arc::new(dbs)));
    tokio::spawn(watch(paths.to_vec(), Arc::clone(&slot)));
    Ok(slot)
}

async fn watch(paths: Vec<PathBuf>, slot: Arc<GeoDbSlot>) {
    let mut loaded = fingerprint(&paths);
    let mut failed = None;
    let mut tick = tokio::time::interval(GEO_RELOAD_EVERY);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        let now = fingerprint(&paths);
        if now == loaded || failed.as_ref() == Some(&now) {
            continue;
        }
        let again = paths.clone();
        match tokio::task::spawn_blocking(move || GeoDbs::open(&again)).await {
            Ok(Ok(dbs)) => {
                for (path, kind) in dbs.describe() {
                    tracing::info!(path = %path.display(), kind, "geo database reloaded");
                }
                slot.current.store(Some(Arc::new(dbs)));
                slot.reloads.fetch_add(1, Ordering::Relaxed);
                loaded = now;
                failed = None;
            }
            Ok(Err(e)) => {
                tracing::error!(error = %e, "geo database not reloaded; the previous files stay in use");
                slot.failures.fetch_add(1, Ordering::Relaxed);
                failed = Some(now);
            }
            Err(e) => tracing::error!(error = %e, "geo database reload task failed"),
        }
    }
}
