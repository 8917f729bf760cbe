//! Health checks.

use std::time::Duration;

use gslb_shared::validate::ValidationError;
use gslb_shared::{
    Check, CheckId, DnsProbe, DnsTransport, FlapDamping, GrpcProbe, Header, HttpProbe, LocationId,
    Probe, StatusRange, StreamProbe,
};

use super::{bad, ip, millis, u16_field};
use crate::pb;

fn http_to_pb(h: &HttpProbe) -> pb::HttpProbe {
    pb::HttpProbe {
        method: h.method.clone(),
        path: h.path.clone(),
        headers: h
            .headers
            .iter()
            .map(|x| pb::Header {
                name: x.name.clone(),
                value: x.value.clone(),
            })
            .collect(),
        expected_status: h
            .expected_status
            .iter()
            .map(|r| pb::StatusRange {
                from: u32::from(r.from),
                to: u32::from(r.to),
            })
            .collect(),
        body_regex: h.body_regex.clone(),
        tls_server_name: h.tls_server_name.clone(),
        tls_verify: h.tls_verify,
        body_contains: h.body_contains.clone(),
        follow_redirects: u32::from(h.follow_redirects),
    }
}

fn http_from_pb(h: pb::HttpProbe) -> Result<HttpProbe, ValidationError> {
    Ok(HttpProbe {
        method: h.method,
        path: h.path,
        headers: h
            .headers
            .into_iter()
            .map(|x| Header {
                name: x.name,
                value: x.value,
            })
            .collect(),
        expected_status: h
            .expected_status
            .into_iter()
            .enumerate()
            .map(|(i, r)| {
                let at = format!("probe.expectedStatus[{i}]");
                Ok(StatusRange {
                    from: u16_field(&at, r.from)?,
                    to: u16_field(&at, r.to)?,
                })
            })
            .collect::<Result<_, ValidationError>>()?,
        body_regex: h.body_regex,
        body_contains: h.body_contains,
        // Out of range saturates, and validation then names the field.
        follow_redirects: u8::try_from(h.follow_redirects).unwrap_or(u8::MAX),
        tls_server_name: h.tls_server_name,
        tls_verify: h.tls_verify,
    })
}

fn dns_to_pb(d: &DnsProbe) -> pb::DnsProbe {
    pb::DnsProbe {
        query_name: d.query_name.clone(),
        query_type: d.query_type.clone(),
        tcp: d.transport == DnsTransport::Tcp,
        expected_rcodes: d.expected_rcodes.clone(),
        expect_answer: d.expect_answer.clone(),
        recursion_desired: d.recursion_desired,
    }
}

fn dns_from_pb(d: pb::DnsProbe) -> DnsProbe {
    DnsProbe {
        query_name: d.query_name,
        query_type: d.query_type,
        transport: if d.tcp {
            DnsTransport::Tcp
        } else {
            DnsTransport::Udp
        },
        expected_rcodes: d.expected_rcodes,
        expect_answer: d.expect_answer,
        recursion_desired: d.recursion_desired,
    }
}

fn grpc_to_pb(g: &GrpcProbe) -> pb::GrpcProbe {
    pb::GrpcProbe {
        service: g.service.clone(),
        tls: g.tls,
        tls_server_name: g.tls_server_name.clone(),
        tls_verify: g.tls_verify,
    }
}

fn grpc_from_pb(g: pb::GrpcProbe) -> GrpcProbe {
    GrpcProbe {
        service: g.service,
        tls: g.tls,
        tls_server_name: g.tls_server_name,
        tls_verify: g.tls_verify,
    }
}

fn stream_to_pb(s: &StreamProbe) -> pb::StreamProbe {
    pb::StreamProbe {
        send: s.send.clone(),
        expect: s.expect.clone(),
    }
}

fn stream_from_pb(s: pb::StreamProbe) -> StreamProbe {
    StreamProbe {
        send: s.send,
        expect: s.expect,
    }
}

impl From<&Check> for pb::Check {
    fn from(c: &Check) -> Self {
        use pb::check::Probe as P;
        let probe = match &c.probe {
            Probe::None => P::None(pb::Empty {}),
            Probe::Icmp => P::Icmp(pb::Empty {}),
            Probe::Tcp(s) => P::Tcp(stream_to_pb(s)),
            Probe::Udp(s) => P::Udp(stream_to_pb(s)),
            Probe::Http(h) => P::Http(http_to_pb(h)),
            Probe::Https(h) => P::Https(http_to_pb(h)),
            Probe::Mysql => P::Mysql(pb::Empty {}),
            Probe::Dns(d) => P::Dns(dns_to_pb(d)),
            Probe::Grpc(g) => P::Grpc(grpc_to_pb(g)),
        };
        pb::Check {
            // Views set the revision; requests read the precondition and mask.
            revision: 0,
            expected_revision: 0,
            update_mask: None,
            id: c.id.0,
            name: c.name.clone(),
            probe: Some(probe),
            port: c.port.map(u32::from),
            interval_ms: millis(c.interval),
            timeout_ms: millis(c.timeout),
            rise: c.rise,
            fall: c.fall,
            window: c.window,
            locations: c.locations.iter().map(ToString::to_string).collect(),
            probe_address: c.probe_address.map(|a| a.to_string()),
            control: c.control,
            damping: c.damping.map(|d| pb::FlapDamping {
                penalty: d.penalty,
                suppress: d.suppress,
                reuse: d.reuse,
                half_life_ms: millis(d.half_life),
                max_penalty: d.max_penalty,
            }),
            retries: c.retries,
            latency_threshold_ms: c.latency_threshold.map(millis),
            inverted: c.inverted,
        }
    }
}

impl TryFrom<pb::Check> for Check {
    type Error = ValidationError;

    fn try_from(c: pb::Check) -> Result<Self, Self::Error> {
        use pb::check::Probe as P;
        let probe = match c
            .probe
            .ok_or_else(|| bad("probe", "must name a protocol"))?
        {
            P::None(_) => Probe::None,
            P::Icmp(_) => Probe::Icmp,
            P::Tcp(s) => Probe::Tcp(stream_from_pb(s)),
            P::Udp(s) => Probe::Udp(stream_from_pb(s)),
            P::Http(h) => Probe::Http(http_from_pb(h)?),
            P::Https(h) => Probe::Https(http_from_pb(h)?),
            P::Mysql(_) => Probe::Mysql,
            P::Dns(d) => Probe::Dns(dns_from_pb(d)),
            P::Grpc(g) => Probe::Grpc(grpc_from_pb(g)),
        };
        Ok(Check {
            id: CheckId(c.id),
            name: c.name,
            probe,
            port: c.port.map(|p| u16_field("port", p)).transpose()?,
            interval: Duration::from_millis(c.interval_ms),
            timeout: Duration::from_millis(c.timeout_ms),
            rise: c.rise,
            fall: c.fall,
            window: c.window,
            locations: c.locations.into_iter().map(LocationId::new).collect(),
            probe_address: c
                .probe_address
                .map(|a| ip("probeAddress", &a))
                .transpose()?,
            control: c.control,
            damping: c.damping.map(|d| FlapDamping {
                penalty: d.penalty,
                suppress: d.suppress,
                reuse: d.reuse,
                half_life: Duration::from_millis(d.half_life_ms),
                max_penalty: d.max_penalty,
            }),
            retries: c.retries,
            latency_threshold: c.latency_threshold_ms.map(Duration::from_millis),
            inverted: c.inverted,
        })
    }
}
