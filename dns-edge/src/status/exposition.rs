//! The edge's metrics in Prometheus' text format, for `/metrics` on the
//! status listener: the workers' counters summed at scrape time, with the
//! feed's and the cache's state.

use std::sync::Arc;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::Registry;

use crate::answer::{QTYPES, RCODES};
use crate::metrics::{LATENCY_BUCKETS, XDP_OUTCOMES, load};
use crate::state::Shared;

/// The edge's state, and its own certificate (`--tls-cert`) if any.
#[derive(Debug)]
struct Collect(Arc<Shared>, Option<std::path::PathBuf>);

fn gauge(e: &mut DescriptorEncoder, name: &str, help: &str, v: i64) -> std::fmt::Result {
    let m = ConstGauge::new(v);
    m.encode(e.encode_descriptor(name, help, None, m.metric_type())?)
}

fn counter(e: &mut DescriptorEncoder, name: &str, help: &str, v: u64) -> std::fmt::Result {
    let m = ConstCounter::new(v);
    m.encode(e.encode_descriptor(name, help, None, m.metric_type())?)
}

impl Collector for Collect {
    fn encode(&self, mut e: DescriptorEncoder) -> std::fmt::Result {
        let shared = &self.0;
        let m = &shared.metrics;
        {
            let mut family = e.encode_descriptor(
                "gslb_edge_queries",
                "DNS queries answered, by query type and response code",
                None,
                MetricType::Counter,
            )?;
            for (t, qtype) in QTYPES.iter().enumerate() {
                for (r, rcode) in RCODES.iter().enumerate() {
                    let v = m.sum(|c| load(&c.queries[t][r]));
                    if v > 0 {
                        let labels = [("qtype", *qtype), ("rcode", *rcode)];
                        ConstCounter::new(v).encode(family.encode_family(&labels)?)?;
                    }
                }
            }
        }
        {
            // Per-bucket counts: the encoder accumulates them.
            let mut buckets = Vec::with_capacity(LATENCY_BUCKETS.len() + 1);
            let mut count = 0;
            for (i, bound) in LATENCY_BUCKETS
                .iter()
                .copied()
                .chain([f64::INFINITY])
                .enumerate()
            {
                let n = m.sum(|c| load(&c.latency[i]));
                count += n;
                buckets.push((bound, n));
            }
            let sum = m.sum(|c| load(&c.latency_sum_ns)) as f64 / 1e9;
            let mut h = e.encode_descriptor(
                "gslb_edge_query_duration_seconds",
                "Time from receiving a query to its response being ready",
                None,
                MetricType::Histogram,
            )?;
            h.encode_histogram::<NoLabelSet>(sum, count, &buckets, None)?;
        }
        counter(
            &mut e,
            "gslb_edge_truncated",
            "UDP responses sent with TC set",
            m.sum(|c| load(&c.truncated)),
        )?;
        counter(
            &mut e,
            "gslb_edge_dropped",
            "Messages not answered (responses, shorter than a header)",
            m.sum(|c| load(&c.dropped)),
        )?;
        {
            let mut family = e.encode_descriptor(
                "gslb_edge_xdp_frames",
                "Frames taken from the AF_XDP sockets, by outcome",
                None,
                MetricType::Counter,
            )?;
            for (i, outcome) in XDP_OUTCOMES.iter().enumerate() {
                let v = m.sum(|c| load(&c.xdp[i]));
                ConstCounter::new(v).encode(family.encode_family(&[("outcome", *outcome)])?)?;
            }
        }
        gauge(
            &mut e,
            "gslb_edge_xdp_attached",
            "1 while the XDP program is attached (--xdp), else 0",
            load(&m.xdp_attached) as i64,
        )?;
        gauge(
            &mut e,
            "gslb_edge_xdp_sockets",
            "AF_XDP sockets answering (one per interface queue)",
            load(&m.xdp_sockets) as i64,
        )?;
        gauge(
            &mut e,
            "gslb_edge_xdp_zero_copy_sockets",
            "AF_XDP sockets bound in zero-copy mode (the rest copy)",
            load(&m.xdp_zero_copy) as i64,
        )?;
        counter(
            &mut e,
            "gslb_edge_rrl_dropped",
            "Responses withheld by rate limiting",
            m.sum(|c| load(&c.rrl_dropped)),
        )?;
        counter(
            &mut e,
            "gslb_edge_rrl_slipped",
            "Rate-limited responses sent truncated instead",
            m.sum(|c| load(&c.rrl_slipped)),
        )?;
        counter(
            &mut e,
            "gslb_edge_prebuilt_answers",
            "Answers copied from a worker's prebuilt reply rather than encoded",
            m.sum(|c| load(&c.prebuilt)),
        )?;
        {
            let mut family = e.encode_descriptor(
                "gslb_edge_first_minute_answers",
                "Answers in the first minute after the DNS listeners were bound, by how they were made (a warm start answers from prebuilt replies)",
                None,
                MetricType::Counter,
            )?;
            for (i, how) in ["prebuilt", "encoded"].into_iter().enumerate() {
                let v = m.sum(|c| load(&c.first_minute[i]));
                ConstCounter::new(v).encode(family.encode_family(&[("answered", how)])?)?;
            }
        }
        {
            let mut applies = e.encode_descriptor(
                "gslb_edge_snapshot_applies",
                "Snapshots applied, by a full compile or by a health-only refresh of the pools a delta touched",
                None,
                MetricType::Counter,
            )?;
            for (i, how) in ["full", "refresh"].into_iter().enumerate() {
                let v = load(&m.applies[i]);
                ConstCounter::new(v).encode(applies.encode_family(&[("how", how)])?)?;
            }
        }
        {
            let mut last = e.encode_descriptor(
                "gslb_edge_last_apply_microseconds",
                "Time the last snapshot of each kind took from received to answering",
                None,
                MetricType::Gauge,
            )?;
            for (i, how) in ["full", "refresh"].into_iter().enumerate() {
                let v = load(&m.last_apply_us[i]) as i64;
                ConstGauge::new(v).encode(last.encode_family(&[("how", how)])?)?;
            }
        }
        let status = shared.status();
        gauge(
            &mut e,
            "gslb_edge_snapshot_version",
            "Version of the applied snapshot (0: none)",
            status.version as i64,
        )?;
        gauge(
            &mut e,
            "gslb_edge_snapshot_age_seconds",
            "Seconds since the applied snapshot was published",
            status.age_ms.map_or(-1, |a| (a / 1000) as i64),
        )?;
        for state in crate::state::FeedState::ALL {
            gauge(
                &mut e,
                &format!("gslb_edge_feed_state_{}", state.as_str()),
                "1 when the snapshot feed is in this state",
                i64::from(status.state == state),
            )?;
        }
        gauge(
            &mut e,
            "gslb_edge_tcp_connections",
            "Open DNS TCP connections",
            shared.tcp_open() as i64,
        )?;
        let [axfr, ixfr, ixfr_whole, refused, notified, unnotified] = shared.transfers.counts();
        for (name, help, v) in [
            ("gslb_edge_xfr_axfr", "AXFR transfers sent", axfr),
            (
                "gslb_edge_xfr_ixfr",
                "IXFR transfers sent as changes (or the SOA when current)",
                ixfr,
            ),
            (
                "gslb_edge_xfr_ixfr_whole",
                "IXFR requests answered with the whole zone (journal too short)",
                ixfr_whole,
            ),
            (
                "gslb_edge_xfr_refused",
                "Transfer requests refused (address, key or signature)",
                refused,
            ),
            (
                "gslb_edge_notify_answered",
                "NOTIFY messages a secondary answered",
                notified,
            ),
            (
                "gslb_edge_notify_unanswered",
                "NOTIFY messages given up on after every try",
                unnotified,
            ),
        ] {
            counter(&mut e, name, help, v)?;
        }
        if let Some(built) = shared.geo.oldest_build() {
            gauge(
                &mut e,
                "gslb_edge_geo_db_build_timestamp_seconds",
                "When the oldest MaxMind file in use was built (alert when it is weeks old)",
                i64::try_from(built).unwrap_or(i64::MAX),
            )?;
        }
        let (reloads, refused) = shared.geo.reloads();
        counter(
            &mut e,
            "gslb_edge_geo_reloads",
            "MaxMind files read again after they changed on disk",
            reloads,
        )?;
        counter(
            &mut e,
            "gslb_edge_geo_reload_failures",
            "Changed MaxMind files that could not be read (the previous ones stay in use)",
            refused,
        )?;
        counter(
            &mut e,
            "gslb_edge_tcp_write_timeouts",
            "DNS TCP connections closed because the client did not take its answer in time",
            shared.tcp_write_timeouts(),
        )?;
        gauge(
            &mut e,
            "gslb_edge_in_flight",
            "Queries being answered",
            m.in_flight() as i64,
        )?;
        gauge(
            &mut e,
            "gslb_edge_draining",
            "1 while draining",
            i64::from(shared.draining()),
        )?;
        let family = e.encode_descriptor(
            "gslb_edge_tls_cert_expiry_timestamp_seconds",
            gslb_proto::link::tls::EXPIRY_HELP,
            None,
            MetricType::Gauge,
        )?;
        // A file that does not read is no sample: TLS itself reports it.
        if let Some(at) = (self.1.as_deref()).and_then(|c| gslb_proto::link::tls::not_after(c).ok())
        {
            ConstGauge::new(at).encode(family)?;
        }
        Ok(())
    }
}

/// A registry that reads `shared` (and the certificate in `cert`) on every
/// scrape.
pub fn registry(shared: Arc<Shared>, cert: Option<std::path::PathBuf>) -> Registry {
    let mut r = Registry::default();
    r.register_collector(Box::new(Collect(shared, cert)));
    r
}
