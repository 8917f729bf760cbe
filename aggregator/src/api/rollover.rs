//! Key rollovers: the node that decides (a single node or the cluster's
//! leader) looks each second for a due step of each signed zone's rollover
//! (`gslb_shared::rollover`), or a scheduled ZSK rollover to start, and
//! writes it as a zone change (`Op::Rekey`), replicated like any write. A
//! leader change mid-rollover continues it: the state is in the keys.
//! Operators start rollovers and confirm a new DS through
//! `Service::start_rollover` and `Service::ds_seen` (`api/service/keys.rs`).

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use gslb_shared::rollover::{self, Timings};
use gslb_shared::{Catalog, Zone, ZoneId};

use crate::api::service::Service;
use crate::core::control::Role;

/// How often due steps are looked for.
const SCAN: Duration = Duration::from_secs(1);

/// The TTLs the steps of each zone in `zones` wait out: its DNSKEY set's
/// (the default TTL) and the largest of its record sets, SOA and negative
/// answers. One pass over the records.
pub fn timings(catalog: &Catalog, zones: &[&Zone]) -> Vec<(ZoneId, Timings)> {
    let mut largest: HashMap<ZoneId, u32> = zones.iter().map(|z| (z.id, 0)).collect();
    for r in catalog.records.values() {
        if let Some(t) = largest.get_mut(&r.zone) {
            *t = (*t).max(r.ttl);
        }
    }
    (zones.iter())
        .map(|z| (z.id, Timings::of(z, largest[&z.id])))
        .collect()
}

/// Run due steps until the process ends.
pub async fn run(service: Arc<Service>) {
    let mut interval = tokio::time::interval(SCAN);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        interval.tick().await;
        let view = service.view();
        if view.role() == Role::Follower {
            continue;
        }
        let now = gslb_shared::clock::now_secs();
        let catalog = view.catalog();
        // Zones with a rollover running, or one that may come due.
        let busy: Vec<&Zone> = (catalog.zones.values())
            .filter(|z| {
                (z.dnssec.as_ref())
                    .is_some_and(|s| rollover::running(s).is_some() || s.zsk_lifetime > 0)
            })
            .collect();
        if busy.is_empty() {
            continue;
        }
        let signed = timings(catalog, &busy);
        drop(busy);
        drop(view);
        for (id, t) in signed {
            let outcome = service
                .rekey(id, |s| {
                    if let Some(keys) = rollover::step(s, t, now) {
                        return Ok(Some(keys));
                    }
                    let Some(role) = rollover::scheduled(s, now) else {
                        return Ok(None);
                    };
                    let new = crate::api::secrets::new_key(s.algorithm, role)
                        .ok_or_else(|| "the server could not make a key".to_owned())?;
                    rollover::start(s, role, new, now).map(Some)
                })
                .await;
            match outcome {
                Ok(Some(change)) => {
                    tracing::info!(zone = %id, version = change.version, "rollover step written")
                }
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(zone = %id, error = %e, "rollover step not written; tried again in a second")
                }
            }
        }
    }
}
