//! Notification gauges and counters: the outbox, and each target's
//! pending events, deliveries, failed tries and events given up. Read at
//! scrape from the store (off the runtime's workers) and the delivery
//! board; a follower shows the replicated outbox and no deliveries.

use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;

use super::{counter, gauge};
use crate::api::service::deliveries::{StatusView, TargetView};

/// Reads one figure of a target.
type Figure = fn(&TargetView) -> u64;

/// Encode the figures of `view`.
pub(super) fn encode(view: &StatusView, e: &mut DescriptorEncoder) -> std::fmt::Result {
    gauge(
        e,
        "notification_outbox_events",
        "Notification events kept in the outbox (not yet past every target)",
        view.outbox,
    )?;
    counter(
        e,
        "notification_dropped_events",
        "Notification events dropped unsent because the outbox was full",
        view.dropped,
    )?;
    let gauges: [(&str, &str, Figure); 2] = [
        (
            "notification_pending_events",
            "Events after the target's position (an upper bound: not all may be for it)",
            |t| t.pending,
        ),
        (
            "notification_retrying",
            "1 while the target's head event is waiting for another try",
            |t| u64::from(t.status.attempts > 0),
        ),
    ];
    for (name, help, figure) in gauges {
        let mut family = e.encode_descriptor(name, help, None, MetricType::Gauge)?;
        for t in &view.targets {
            let labels = [("target", t.name.as_str()), ("kind", t.kind.as_str())];
            ConstGauge::new(i64::try_from(figure(t)).unwrap_or(i64::MAX))
                .encode(family.encode_family(&labels)?)?;
        }
    }
    let counters: [(&str, &str, Figure); 3] = [
        (
            "notification_delivered",
            "Events delivered to the target by this node",
            |t| t.status.delivered,
        ),
        (
            "notification_failures",
            "Failed tries to deliver to the target on this node",
            |t| t.status.failures,
        ),
        (
            "notification_given_up",
            "Events given up for the target after a day of retries, on this node",
            |t| t.status.given_up,
        ),
    ];
    for (name, help, figure) in counters {
        let mut family = e.encode_descriptor(name, help, None, MetricType::Counter)?;
        for t in &view.targets {
            let labels = [("target", t.name.as_str()), ("kind", t.kind.as_str())];
            ConstCounter::new(figure(t)).encode(family.encode_family(&labels)?)?;
        }
    }
    Ok(())
}
