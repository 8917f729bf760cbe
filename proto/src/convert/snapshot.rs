//! Snapshots and deltas of the edge feed.

use gslb_shared::validate::ValidationError;
use gslb_shared::{
    Delta, FeedUpdate, LocationId, LocationRtt, MAX_RESOLVED_ADDRESSES, MAX_RTT_LOCATIONS,
    MemberFacts, MemberId, PoolId, RecordSetId, Resolved, Rtts, Snapshot, TsigKeyId, ZoneId,
};

use crate::pb;

fn facts_to_pb<'a>(
    facts: impl Iterator<Item = (&'a MemberId, &'a MemberFacts)>,
) -> Vec<pb::MemberFacts> {
    facts
        .map(|(id, f)| pb::MemberFacts::from((*id, *f)))
        .collect()
}

fn facts_from_pb(
    facts: Vec<pb::MemberFacts>,
) -> Result<Vec<(MemberId, MemberFacts)>, ValidationError> {
    facts
        .into_iter()
        .map(<(MemberId, MemberFacts)>::try_from)
        .collect()
}

fn resolved_to_pb<'a>(
    resolved: impl Iterator<Item = (&'a MemberId, &'a Resolved)>,
) -> Vec<pb::Resolution> {
    resolved
        .map(|(id, r)| pb::Resolution {
            member_id: id.0,
            addresses: r.addresses.iter().map(ToString::to_string).collect(),
            ttl: r.ttl,
        })
        .collect()
}

/// Resolutions from the wire: unicast addresses, at most
/// [`MAX_RESOLVED_ADDRESSES`] each.
fn resolved_from_pb(
    resolved: Vec<pb::Resolution>,
) -> Result<Vec<(MemberId, Resolved)>, ValidationError> {
    resolved
        .into_iter()
        .enumerate()
        .map(|(i, r)| {
            let field = format!("resolved[{i}].addresses");
            if r.addresses.len() > MAX_RESOLVED_ADDRESSES {
                return Err(super::bad(
                    &field,
                    format!("must list at most {MAX_RESOLVED_ADDRESSES} addresses"),
                ));
            }
            let mut addresses = Vec::with_capacity(r.addresses.len());
            for a in &r.addresses {
                let ip = super::ip(&field, a)?;
                if let Some(rule) = gslb_shared::validate::unanswerable(&ip) {
                    return Err(super::bad(&field, rule));
                }
                addresses.push(ip);
            }
            Ok((
                MemberId(r.member_id),
                Resolved {
                    addresses,
                    ttl: r.ttl,
                },
            ))
        })
        .collect()
}

fn rtt_to_pb<'a>(rtt: impl Iterator<Item = (&'a MemberId, &'a Rtts)>) -> Vec<pb::MemberRtt> {
    rtt.map(|(id, r)| pb::MemberRtt {
        member_id: id.0,
        locations: (r.locations().iter().zip(r.micros()))
            .map(|(location, &micros)| pb::LocationRtt {
                location: location.to_string(),
                micros,
            })
            .collect(),
    })
    .collect()
}

/// Round-trip tables from the wire: at most [`MAX_RTT_LOCATIONS`] each,
/// valid location names, sorted with none twice.
fn rtt_from_pb(rtt: Vec<pb::MemberRtt>) -> Result<Vec<(MemberId, Rtts)>, ValidationError> {
    rtt.into_iter()
        .enumerate()
        .map(|(i, r)| {
            let field = format!("rtt[{i}].locations");
            if r.locations.len() > MAX_RTT_LOCATIONS {
                return Err(super::bad(
                    &field,
                    format!("must list at most {MAX_RTT_LOCATIONS} locations"),
                ));
            }
            let mut table = Vec::with_capacity(r.locations.len());
            for l in r.locations {
                let location = LocationId::new(l.location);
                gslb_shared::validate::location_id(&location)
                    .map_err(|rule| super::bad(&field, rule))?;
                table.push(LocationRtt {
                    location,
                    micros: l.micros,
                });
            }
            let table = Rtts::new(table);
            if !table.is_sorted_unique() {
                return Err(super::bad(
                    &field,
                    "must be sorted by location, each location once",
                ));
            }
            Ok((MemberId(r.member_id), table))
        })
        .collect()
}

fn all<P, D: TryFrom<P, Error = ValidationError>>(
    kind: &str,
    items: Vec<P>,
) -> Result<Vec<D>, ValidationError> {
    items
        .into_iter()
        .enumerate()
        .map(|(i, item)| {
            D::try_from(item).map_err(|e| ValidationError {
                errors: e
                    .errors
                    .into_iter()
                    .map(|f| gslb_shared::validate::FieldError {
                        field: format!("{kind}[{i}].{}", f.field),
                        rule: f.rule,
                    })
                    .collect(),
            })
        })
        .collect()
}

impl From<&Snapshot> for pb::Snapshot {
    fn from(s: &Snapshot) -> Self {
        let c = &s.catalog;
        pb::Snapshot {
            version: s.version,
            epoch: s.epoch,
            zones: c.zones.values().map(pb::Zone::from).collect(),
            records: c.records.values().map(pb::RecordSet::from).collect(),
            pools: c.pools.values().map(pb::Pool::from).collect(),
            members: c.members.values().map(pb::Member::from).collect(),
            facts: facts_to_pb(s.facts.iter()),
            tsig_keys: c.tsig_keys.values().map(pb::TsigKey::from).collect(),
            resolved: resolved_to_pb(s.resolved.iter()),
            rtt: rtt_to_pb(s.rtt.iter()),
        }
    }
}

/// Decode a full snapshot sent at `published_at_ms`.
pub fn snapshot_from_pb(
    s: pb::Snapshot,
    published_at_ms: u64,
) -> Result<Snapshot, ValidationError> {
    let mut out = Snapshot {
        version: s.version,
        epoch: s.epoch,
        published_at_ms,
        ..Snapshot::default()
    };
    for z in all::<_, gslb_shared::Zone>("zones", s.zones)? {
        out.catalog.zones.insert(z.id, z);
    }
    for r in all::<_, gslb_shared::RecordSet>("records", s.records)? {
        out.catalog.records.insert(r.id, r);
    }
    for p in all::<_, gslb_shared::Pool>("pools", s.pools)? {
        out.catalog.pools.insert(p.id, p);
    }
    for m in all::<_, gslb_shared::Member>("members", s.members)? {
        out.catalog.members.insert(m.id, m);
    }
    for k in all::<_, gslb_shared::TsigKey>("tsigKeys", s.tsig_keys)? {
        out.catalog.tsig_keys.insert(k.id, k);
    }
    out.facts = facts_from_pb(s.facts)?.into_iter().collect();
    out.resolved = resolved_from_pb(s.resolved)?.into_iter().collect();
    out.rtt = rtt_from_pb(s.rtt)?.into_iter().collect();
    Ok(out)
}

impl From<&Delta> for pb::SnapshotDelta {
    fn from(d: &Delta) -> Self {
        pb::SnapshotDelta {
            base_version: d.base_version,
            version: d.version,
            epoch: d.epoch,
            upsert_zones: d.zones.iter().map(pb::Zone::from).collect(),
            removed_zones: d.removed_zones.iter().map(|i| i.0).collect(),
            upsert_records: d.records.iter().map(pb::RecordSet::from).collect(),
            removed_records: d.removed_records.iter().map(|i| i.0).collect(),
            upsert_pools: d.pools.iter().map(pb::Pool::from).collect(),
            removed_pools: d.removed_pools.iter().map(|i| i.0).collect(),
            upsert_members: d.members.iter().map(pb::Member::from).collect(),
            removed_members: d.removed_members.iter().map(|i| i.0).collect(),
            facts: facts_to_pb(d.facts.iter().map(|(id, f)| (id, f))),
            upsert_tsig_keys: d.tsig_keys.iter().map(pb::TsigKey::from).collect(),
            removed_tsig_keys: d.removed_tsig_keys.iter().map(|i| i.0).collect(),
            resolved: resolved_to_pb(d.resolved.iter().map(|(id, r)| (id, r))),
            unresolved: d.unresolved.iter().map(|i| i.0).collect(),
            rtt: rtt_to_pb(d.rtt.iter().map(|(id, r)| (id, r))),
            unmeasured: d.unmeasured.iter().map(|i| i.0).collect(),
        }
    }
}

/// Decode a delta sent at `published_at_ms`.
pub fn delta_from_pb(d: pb::SnapshotDelta, published_at_ms: u64) -> Result<Delta, ValidationError> {
    Ok(Delta {
        base_version: d.base_version,
        version: d.version,
        epoch: d.epoch,
        published_at_ms,
        zones: all("upsertZones", d.upsert_zones)?,
        removed_zones: d.removed_zones.into_iter().map(ZoneId).collect(),
        records: all("upsertRecords", d.upsert_records)?,
        removed_records: d.removed_records.into_iter().map(RecordSetId).collect(),
        pools: all("upsertPools", d.upsert_pools)?,
        removed_pools: d.removed_pools.into_iter().map(PoolId).collect(),
        members: all("upsertMembers", d.upsert_members)?,
        removed_members: d.removed_members.into_iter().map(MemberId).collect(),
        facts: facts_from_pb(d.facts)?,
        tsig_keys: all("upsertTsigKeys", d.upsert_tsig_keys)?,
        removed_tsig_keys: d.removed_tsig_keys.into_iter().map(TsigKeyId).collect(),
        resolved: resolved_from_pb(d.resolved)?,
        unresolved: d.unresolved.into_iter().map(MemberId).collect(),
        rtt: rtt_from_pb(d.rtt)?,
        unmeasured: d.unmeasured.into_iter().map(MemberId).collect(),
    })
}

/// Decode one feed update; the error says which part failed and why.
pub fn update_from_pb(update: pb::SnapshotUpdate) -> Result<FeedUpdate, String> {
    let published = update.published_at_ms;
    match update.update {
        None => Err("update carries neither a snapshot nor a delta".into()),
        Some(pb::snapshot_update::Update::Full(full)) => snapshot_from_pb(full, published)
            .map(FeedUpdate::Full)
            .map_err(|e| format!("full snapshot: {e}")),
        Some(pb::snapshot_update::Update::Delta(delta)) => delta_from_pb(delta, published)
            .map(FeedUpdate::Delta)
            .map_err(|e| format!("delta: {e}")),
    }
}

/// A full snapshot as the bytes of one encoded `SnapshotUpdate` (what an
/// edge's snapshot cache holds).
pub fn snapshot_to_bytes(snapshot: &Snapshot) -> Vec<u8> {
    use prost::Message;
    pb::SnapshotUpdate {
        published_at_ms: snapshot.published_at_ms,
        update: Some(pb::snapshot_update::Update::Full(pb::Snapshot::from(
            snapshot,
        ))),
    }
    .encode_to_vec()
}

/// Decode bytes written by [`snapshot_to_bytes`]; the error says why not.
pub fn snapshot_from_bytes(bytes: &[u8]) -> Result<Snapshot, String> {
    use prost::Message;
    let update = pb::SnapshotUpdate::decode(bytes).map_err(|e| e.to_string())?;
    let Some(pb::snapshot_update::Update::Full(full)) = update.update else {
        return Err("holds no full snapshot".into());
    };
    snapshot_from_pb(full, update.published_at_ms).map_err(|e| e.to_string())
}
