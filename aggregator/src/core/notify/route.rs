//! Which targets want an event: its kind among the filter's events, and,
//! for a member or pool event, its pool or member named by the filter or
//! its pool answering a record of one of the filter's zones.

use gslb_shared::{Catalog, Notifier, PoolId, RecordData};

use super::{Event, Subject};

/// True when `target` wants `event`, as the catalog stands.
pub fn wants(target: &Notifier, event: &Event, catalog: &Catalog) -> bool {
    let f = &target.filter;
    if !f.wants(event.kind) {
        return false;
    }
    if !event.kind.is_scoped() || f.is_unscoped() {
        return true;
    }
    let (pool, pool_name, member) = match &event.subject {
        Subject::Member {
            name,
            pool,
            pool_name,
            ..
        } => (*pool, pool_name, Some(name)),
        Subject::Pool { id, name } => (*id, name, None),
        _ => return true,
    };
    f.pools.contains(pool_name)
        || member.is_some_and(|m| f.members.contains(m))
        || (!f.zones.is_empty() && answers_in(catalog, pool, &f.zones))
}

/// True when `pool` answers a record set of one of the zones `apexes`.
fn answers_in(catalog: &Catalog, pool: PoolId, apexes: &[gslb_shared::DnsName]) -> bool {
    let zones: Vec<_> = (catalog.zones.values())
        .filter(|z| apexes.contains(&z.apex))
        .map(|z| z.id)
        .collect();
    catalog.records.values().any(|r| {
        zones.contains(&r.zone)
            && match &r.data {
                RecordData::Dynamic(d) => {
                    d.pools.contains(&pool) || d.geo.iter().any(|b| b.pools.contains(&pool))
                }
                RecordData::Static(_) => false,
            }
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use gslb_shared::{EventKind, MemberId, NotifierId, NotifierKind, NotifyFilter, Secret};

    fn target(filter: NotifyFilter) -> Notifier {
        Notifier {
            id: NotifierId(1),
            name: "ops".into(),
            kind: NotifierKind::Webhook,
            url: "http://127.0.0.1:9/".into(),
            filter,
            secret: Secret(vec![1; 16]),
        }
    }

    fn member_event(kind: EventKind, name: &str, pool: &str) -> Event {
        Event {
            seq: 1,
            at_ms: 1,
            kind,
            subject: Subject::Member {
                id: MemberId(3),
                name: name.into(),
                pool: PoolId(2),
                pool_name: pool.into(),
            },
            detail: String::new(),
        }
    }

    #[test]
    fn an_empty_filter_wants_everything_and_each_list_narrows() {
        let c = Catalog::default();
        let down = member_event(EventKind::MemberDown, "web-1", "web");
        assert!(wants(&target(NotifyFilter::default()), &down, &c));
        let only_up = NotifyFilter {
            events: vec![EventKind::MemberUp],
            ..NotifyFilter::default()
        };
        assert!(!wants(&target(only_up), &down, &c));
        let pools = |p: &str| NotifyFilter {
            pools: vec![p.into()],
            ..NotifyFilter::default()
        };
        assert!(wants(&target(pools("web")), &down, &c));
        assert!(!wants(&target(pools("api")), &down, &c));
        let members = NotifyFilter {
            members: vec!["web-2".into()],
            ..NotifyFilter::default()
        };
        assert!(!wants(&target(members.clone()), &down, &c));
        assert!(wants(
            &target(members),
            &member_event(EventKind::MemberDown, "web-2", "web"),
            &c
        ));
        // Mesh-wide events are not narrowed by pools.
        let lost = Event {
            kind: EventKind::AgentLost,
            subject: Subject::Agent {
                name: "a1".into(),
                location: "ams".into(),
            },
            ..down.clone()
        };
        assert!(wants(&target(pools("api")), &lost, &c));
    }
}
