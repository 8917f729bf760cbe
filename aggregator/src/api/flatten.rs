//! Resolving for flattened records: the hostname members that a flattened
//! A/AAAA record answers with are looked up through the configured
//! resolver on the node that decides (a single node or the cluster's
//! leader), and what was found goes to the control core, which makes it
//! durable and publishes it as a version, as it does health decisions.
//!
//! Each name is asked again when its TTL has run out (kept between
//! [`MIN_REFRESH`] and [`MAX_REFRESH`]). A lookup that gets no answer
//! keeps the last addresses (a resolver outage must not empty answers); one
//! that finds no such name, or no address, forgets them.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use gslb_proto::link::resolve::{ResolveError, Resolver};
use gslb_shared::{Catalog, DnsName, MemberId, RecordData, Resolved};
use tokio::time::Instant;

use crate::api::service::Service;
use crate::core::control::Role;
use crate::core::now;

/// Shortest time between two lookups of one name (its TTL may be shorter).
pub const MIN_REFRESH: Duration = Duration::from_secs(5);
/// Longest time between two lookups of one name.
pub const MAX_REFRESH: Duration = Duration::from_secs(300);
/// How often due names are looked for.
const SCAN: Duration = Duration::from_secs(1);
/// Most lookups in flight at once.
const MAX_IN_FLIGHT: usize = 32;

/// The hostname members of every flattened record's pools.
pub fn wanted(catalog: &Catalog) -> HashMap<MemberId, DnsName> {
    let mut pools: std::collections::HashSet<gslb_shared::PoolId> = Default::default();
    for r in catalog.records.values() {
        if let RecordData::Dynamic(d) = &r.data
            && d.flatten
        {
            pools.extend(d.all_pools());
        }
    }
    if pools.is_empty() {
        return HashMap::new();
    }
    (catalog.members.values())
        .filter(|m| pools.contains(&m.pool))
        .filter_map(|m| Some((m.id, m.address.host()?.clone())))
        .collect()
}

/// When a name found with `ttl` is asked again.
fn refresh_after(ttl: u32) -> Duration {
    Duration::from_secs(u64::from(ttl)).clamp(MIN_REFRESH, MAX_REFRESH)
}

/// Resolve until the process ends.
pub async fn run(service: Arc<Service>, resolver: Resolver) {
    tracing::info!(
        resolver = resolver.source(),
        "resolving hostname members of flattened records"
    );
    let mut due: HashMap<MemberId, (DnsName, Instant)> = HashMap::new();
    let mut seen_generation = None;
    let mut wanted_now = HashMap::new();
    let mut interval = tokio::time::interval(SCAN);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        interval.tick().await;
        let view = service.view();
        if view.role() == Role::Follower {
            // The leader resolves; start afresh if this node leads later.
            due.clear();
            seen_generation = None;
            continue;
        }
        if seen_generation != Some(view.catalog_generation()) {
            seen_generation = Some(view.catalog_generation());
            wanted_now = wanted(view.catalog());
        }
        due.retain(|id, (name, _)| wanted_now.get(id) == Some(name));
        let start = Instant::now();
        for (id, name) in &wanted_now {
            due.entry(*id).or_insert_with(|| (name.clone(), start));
        }
        let mut updates: Vec<(MemberId, Option<Resolved>)> = (view.snapshot().resolved.keys())
            .filter(|id| !wanted_now.contains_key(id))
            .map(|id| (*id, None))
            .collect();
        let ready: Vec<(MemberId, DnsName)> = (due.iter())
            .filter(|(_, (_, at))| *at <= start)
            .map(|(id, (name, _))| (*id, name.clone()))
            .collect();
        for chunk in ready.chunks(MAX_IN_FLIGHT) {
            let mut lookups = tokio::task::JoinSet::new();
            for (id, name) in chunk.iter().cloned() {
                let resolver = resolver.clone();
                lookups.spawn(async move { (id, resolver.lookup(&name).await) });
            }
            while let Some(Ok((id, found))) = lookups.join_next().await {
                let next = match found {
                    Ok(r) => {
                        let next = refresh_after(r.ttl);
                        updates.push((id, Some(r)));
                        next
                    }
                    Err(e @ (ResolveError::NoSuchName(_) | ResolveError::NoAddress(_))) => {
                        tracing::warn!(member = %id, error = %e, "hostname member has no address: left out of flattened answers");
                        updates.push((id, None));
                        MIN_REFRESH
                    }
                    Err(e) => {
                        tracing::warn!(member = %id, error = %e, "lookup failed: the last addresses stay");
                        MIN_REFRESH
                    }
                };
                if let Some(entry) = due.get_mut(&id) {
                    entry.1 = Instant::now() + next;
                }
            }
        }
        if updates.is_empty() {
            continue;
        }
        match service.call(move |c| c.set_resolved(updates, now())).await {
            Ok(Some(version)) => tracing::debug!(version, "resolved addresses published"),
            Ok(None) => {}
            Err(e) => {
                tracing::warn!(error = %e, "resolved addresses not published: every name is asked again");
                due.clear();
            }
        }
    }
}
