//! Health gauges: members by health, each member's and pool's state as
//! selection sees it, and each location's quarantine. Computed at scrape
//! from the published view (one pass over the members, off the runtime's
//! workers), so a scrape takes no lock that ingest or writes need.

use gslb_shared::{FailMode, Health, LocationId, MemberId};
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::gauge::ConstGauge;

use crate::api::service::admin::views::pool_flags;
use crate::core::control::View;

/// Reads one flag of a pool's figures.
type PoolFlag = fn(&PoolFigures) -> bool;

/// One pool's state as selection sees it.
#[derive(Debug, Clone)]
struct PoolFigures {
    name: String,
    eligible: bool,
    protected: bool,
    /// Not eligible and its fail mode answers every member.
    fail_open: bool,
}

/// The health figures of one scrape.
#[derive(Debug, Clone, Default)]
pub(super) struct HealthFigures {
    /// Enabled members that are up, down, and not yet decided.
    by_health: [u64; 3],
    /// (index into `pools`, member, up) of each enabled member with a
    /// decision: the pool's name is not copied per member.
    members: Vec<(usize, String, bool)>,
    pools: Vec<PoolFigures>,
    /// Every location the engine knows, and whether it is set aside.
    locations: Vec<(LocationId, bool)>,
}

impl HealthFigures {
    /// The figures of `view`, with the engine's `locations` (and whether
    /// each is set aside). Costs one pass over the members.
    pub(super) fn of(view: &View, locations: Vec<(LocationId, bool)>) -> Self {
        let snapshot = view.snapshot();
        let catalog = view.catalog();
        let mut figures = HealthFigures {
            locations,
            ..Self::default()
        };
        for (id, pool) in &catalog.pools {
            let ids: Vec<MemberId> = view.state().pool_member_ids(*id).collect();
            let (eligible, protected, not_eligible) = pool_flags(snapshot, *id, &ids);
            figures.pools.push(PoolFigures {
                name: pool.name.clone(),
                eligible,
                protected,
                fail_open: not_eligible && pool.fail_mode == FailMode::Open,
            });
            for member in ids.iter().filter_map(|m| catalog.members.get(m)) {
                if !member.enabled {
                    continue;
                }
                let health = snapshot.facts.get(&member.id).map(|f| f.health);
                let (slot, up) = match health.unwrap_or_default() {
                    Health::Up => (0, Some(true)),
                    Health::Down => (1, Some(false)),
                    Health::Unknown => (2, None),
                };
                figures.by_health[slot] += 1;
                if let Some(up) = up {
                    let pool = figures.pools.len() - 1;
                    figures.members.push((pool, member.name.clone(), up));
                }
            }
        }
        figures
    }

    /// Encode the gauges.
    pub(super) fn encode(&self, e: &mut DescriptorEncoder) -> std::fmt::Result {
        {
            let mut family = e.encode_descriptor(
                "members_by_health",
                "Enabled members by published health (unknown: no decision yet)",
                None,
                MetricType::Gauge,
            )?;
            for (health, n) in ["up", "down", "unknown"].iter().zip(self.by_health) {
                gauge_in(&mut family, &[("health", health)], n)?;
            }
        }
        {
            let mut family = e.encode_descriptor(
                "member_up",
                "1 while an enabled member's published health is up, 0 while down (absent before its first decision)",
                None,
                MetricType::Gauge,
            )?;
            for (pool, member, up) in &self.members {
                let pool = self.pools[*pool].name.as_str();
                let labels = [("pool", pool), ("member", member.as_str())];
                gauge_in(&mut family, &labels, u64::from(*up))?;
            }
        }
        let flags: [(&str, &str, PoolFlag); 3] = [
            (
                "pool_eligible",
                "1 while the pool has enough healthy members to answer from (min-healthy)",
                |p| p.eligible,
            ),
            (
                "pool_protected",
                "1 while the pool's protection threshold answers every candidate, healthy or not",
                |p| p.protected,
            ),
            (
                "pool_fail_open",
                "1 while the pool is not eligible and its fail mode answers every member",
                |p| p.fail_open,
            ),
        ];
        for (name, help, flag) in flags {
            let mut family = e.encode_descriptor(name, help, None, MetricType::Gauge)?;
            for pool in &self.pools {
                gauge_in(
                    &mut family,
                    &[("pool", pool.name.as_str())],
                    u64::from(flag(pool)),
                )?;
            }
        }
        let mut family = e.encode_descriptor(
            "location_quarantined",
            "1 while the location's results are set aside (its control checks fail, or it alone fails half its checks)",
            None,
            MetricType::Gauge,
        )?;
        for (location, quarantined) in &self.locations {
            let labels = [("location", location.as_str())];
            gauge_in(&mut family, &labels, u64::from(*quarantined))?;
        }
        Ok(())
    }
}

/// Encode one labelled gauge of a family.
fn gauge_in<const N: usize>(
    family: &mut prometheus_client::encoding::MetricEncoder,
    labels: &[(&str, &str); N],
    value: u64,
) -> std::fmt::Result {
    ConstGauge::new(i64::try_from(value).unwrap_or(i64::MAX)).encode(family.encode_family(labels)?)
}
