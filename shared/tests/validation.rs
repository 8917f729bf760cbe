//! Every rejected input names its field and rule.
#![allow(clippy::unwrap_used)]

use std::time::Duration;

use gslb_shared::validate::{self, ValidationError};
use gslb_shared::*;

fn fails_on(result: Result<(), ValidationError>, field: &str, rule_fragment: &str) {
    let err = result.expect_err("expected a validation error");
    assert!(
        err.errors
            .iter()
            .any(|e| e.field == field && e.rule.contains(rule_fragment)),
        "expected {field}: ..{rule_fragment}.. in {err}"
    );
}

fn base_member() -> Member {
    Member::new(
        MemberId(1),
        PoolId(1),
        "web-01",
        "10.0.0.1".parse().unwrap(),
        80,
    )
}

fn base_check(probe: Probe) -> Check {
    Check::new(CheckId(1), "web", probe)
}

fn base_zone() -> Zone {
    Zone {
        id: ZoneId(1),
        apex: DnsName::parse("example.com").unwrap(),
        soa: Soa {
            mname: DnsName::parse("ns1.example.com").unwrap(),
            rname: DnsName::parse("hostmaster.example.com").unwrap(),
            refresh: 3600,
            retry: 600,
            expire: 604800,
            negative_ttl: 300,
        },
        ns: vec![DnsName::parse("ns1.example.com").unwrap()],
        default_ttl: 300,
        ns_ttl: None,
        transfer: Default::default(),
        dnssec: None,
    }
}

fn dynamic(pools: Vec<PoolId>) -> RecordSet {
    RecordSet {
        id: RecordSetId(1),
        zone: ZoneId(1),
        name: DnsName::parse("www.example.com").unwrap(),
        rtype: RecordType::A,
        ttl: 30,
        data: RecordData::Dynamic(DynamicRecord {
            steering: Steering::Weighted,
            pools,
            geo: vec![],
            first_n: 0,
            flatten: false,
            region_locations: Default::default(),
        }),
    }
}

#[test]
fn defaults_are_valid() {
    validate::member(&base_member()).unwrap();
    validate::check(&base_check(Probe::Http(HttpProbe::default()))).unwrap();
    validate::pool(&Pool::new(PoolId(1), "p")).unwrap();
    validate::zone(&base_zone()).unwrap();
    validate::record(&dynamic(vec![PoolId(1)]), &base_zone()).unwrap();
}

#[test]
fn an_http_probe_defaults_to_get_slash() {
    let probe: HttpProbe = serde_json::from_str("{}").unwrap();
    assert_eq!((probe.method.as_str(), probe.path.as_str()), ("GET", "/"));
    assert_eq!(probe, HttpProbe::default());
}

#[test]
fn address_text_must_be_a_plain_ip() {
    for (text, rule) in [
        ("10.0.0.1:80", "without a port"),
        ("user@10.0.0.1", "without user information"),
        ("10.0.0.1/x", "without a path"),
        ("10.0.0.1?q", "without a query"),
        ("10.0.0.1#f", "without a fragment"),
        ("web.example.com", "IPv4 or IPv6 address literal"),
    ] {
        let err = validate::plain_ip(text).unwrap_err();
        assert!(err.to_string().contains(rule), "{text}: {err}");
    }
    assert!(validate::plain_ip("2001:db8::5").is_ok());
}

#[test]
fn member_rules_name_their_fields() {
    let mut m = base_member();
    m.port = 0;
    fails_on(validate::member(&m), "port", "between 1 and 65535");
    let mut m = base_member();
    m.weight = validate::MAX_WEIGHT + 1;
    fails_on(validate::member(&m), "weight", "between 0 and");
    let mut m = base_member();
    m.warmup_threshold = 5000;
    fails_on(
        validate::member(&m),
        "warmupThreshold",
        "between 0 and 1000",
    );
    let mut m = base_member();
    m.name = String::new();
    fails_on(validate::member(&m), "name", "must not be empty");
    let mut m = base_member();
    m.region = Some(Region::new("EU West"));
    fails_on(validate::member(&m), "region", "lower-case");
    let mut m = base_member();
    m.address = "0.0.0.0".parse().unwrap();
    fails_on(validate::member(&m), "address", "unicast");
    let mut m = base_member();
    m.kind = MemberKind::Ephemeral(EphemeralPolicy {
        heartbeat_interval: Duration::from_secs(5),
        heartbeat_timeout: Duration::from_secs(20),
        delete_timeout: Duration::from_secs(10),
        expire: true,
    });
    fails_on(
        validate::member(&m),
        "kind.ephemeral.deleteTimeout",
        "heartbeatTimeout",
    );
}

#[test]
fn check_timing_rules() {
    let mut c = base_check(Probe::Icmp);
    c.timeout = c.interval;
    fails_on(validate::check(&c), "timeout", "shorter than interval");
    c.timeout = Duration::ZERO;
    fails_on(validate::check(&c), "timeout", "greater than 0");
    let mut c = base_check(Probe::Icmp);
    c.interval = Duration::from_millis(100);
    c.timeout = Duration::from_millis(50);
    validate::check(&c).unwrap();
    c.interval = Duration::from_millis(99);
    fails_on(validate::check(&c), "interval", "between 100ms and 1h");
    let mut c = base_check(Probe::Icmp);
    c.window = 0;
    fails_on(validate::check(&c), "window", "between 1 and 64");
}

#[test]
fn check_quorum_rules() {
    let mut c = base_check(Probe::Icmp);
    c.rise = 1.5;
    fails_on(validate::check(&c), "rise", "at most 1");
    let mut c = base_check(Probe::Icmp);
    c.fall = -0.1;
    fails_on(validate::check(&c), "fall", "at least 0");
    let mut c = base_check(Probe::Icmp);
    c.rise = 0.3;
    c.fall = 0.5;
    fails_on(validate::check(&c), "rise", "greater than fall");
    let mut c = base_check(Probe::Icmp);
    c.rise = f64::NAN;
    fails_on(validate::check(&c), "rise", "at most 1");
}

#[test]
fn http_check_target_rules() {
    let with = |f: &dyn Fn(&mut HttpProbe)| {
        let mut http = HttpProbe::default();
        f(&mut http);
        validate::check(&base_check(Probe::Http(http)))
    };
    fails_on(
        with(&|h| h.path = "http://evil/".into()),
        "probe.path",
        "scheme",
    );
    fails_on(
        with(&|h| h.path = "//evil/".into()),
        "probe.path",
        "authority",
    );
    fails_on(with(&|h| h.path = "/a#b".into()), "probe.path", "fragment");
    fails_on(
        with(&|h| h.path = "health".into()),
        "probe.path",
        "start with '/'",
    );
    fails_on(
        with(&|h| h.method = "TRACE".into()),
        "probe.method",
        "must be one of",
    );
    fails_on(
        with(&|h| {
            h.headers = vec![Header {
                name: "Bad Header".into(),
                value: "x".into(),
            }]
        }),
        "probe.headers[0]",
        "token",
    );
    fails_on(
        with(&|h| {
            h.headers = vec![Header {
                name: "Content-Length".into(),
                value: "5".into(),
            }]
        }),
        "probe.headers[0]",
        "frames the request",
    );
    fails_on(
        with(&|h| {
            h.headers = vec![Header {
                name: "Transfer-Encoding".into(),
                value: "chunked".into(),
            }]
        }),
        "probe.headers[0]",
        "frames the request",
    );
    fails_on(
        with(&|h| {
            h.headers = vec![Header {
                name: "X-Ok".into(),
                value: "a\nb".into(),
            }]
        }),
        "probe.headers[0]",
        "control characters",
    );
    fails_on(
        with(&|h| h.expected_status = vec![StatusRange { from: 99, to: 200 }]),
        "probe.expectedStatus[0]",
        "100 and 599",
    );
    fails_on(
        with(&|h| h.expected_status = vec![StatusRange { from: 300, to: 200 }]),
        "probe.expectedStatus[0]",
        "greater than to",
    );
    fails_on(
        with(&|h| h.body_regex = Some("(".into())),
        "probe.bodyRegex",
        "regular expression",
    );
    fails_on(
        with(&|h| h.tls_server_name = Some("bad name".into())),
        "probe.tlsServerName",
        "DNS name",
    );
    // Host and Authorization stay allowed; tab is allowed in values.
    with(&|h| {
        h.headers = vec![
            Header {
                name: "Host".into(),
                value: "api.example.com".into(),
            },
            Header {
                name: "Authorization".into(),
                value: "Basic\tx".into(),
            },
        ]
    })
    .unwrap();
}

#[test]
fn retries_threshold_and_inversion_rules() {
    let mut c = base_check(Probe::Icmp);
    c.interval = Duration::from_secs(1);
    c.timeout = Duration::from_millis(300);
    c.retries = 2;
    validate::check(&c).unwrap();
    c.retries = 3;
    fails_on(validate::check(&c), "retries", "(retries + 1) × timeout");
    c.retries = 6;
    fails_on(validate::check(&c), "retries", "between 0 and 5");
    let mut c = base_check(Probe::Icmp);
    c.latency_threshold = Some(c.timeout);
    fails_on(
        validate::check(&c),
        "latencyThreshold",
        "shorter than timeout",
    );
    c.latency_threshold = Some(Duration::ZERO);
    fails_on(validate::check(&c), "latencyThreshold", "greater than 0");
    let mut c = base_check(Probe::None);
    c.inverted = true;
    fails_on(validate::check(&c), "inverted", "actively probe");
    let mut c = base_check(Probe::Icmp);
    c.inverted = true;
    c.control = true;
    fails_on(validate::check(&c), "inverted", "control");
}

#[test]
fn http_redirect_and_body_text_rules() {
    let http = |f: &dyn Fn(&mut HttpProbe)| {
        let mut h = HttpProbe::default();
        f(&mut h);
        validate::check(&base_check(Probe::Http(h)))
    };
    http(&|h| h.follow_redirects = 5).unwrap();
    fails_on(
        http(&|h| h.follow_redirects = 6),
        "probe.followRedirects",
        "between 0 and 5",
    );
    fails_on(
        http(&|h| h.body_contains = Some(String::new())),
        "probe.bodyContains",
        "1 to 1024 bytes",
    );
    fails_on(
        http(&|h| h.body_contains = Some("x".repeat(1025))),
        "probe.bodyContains",
        "1 to 1024 bytes",
    );
}

#[test]
fn dns_check_rules() {
    let dns = |f: &dyn Fn(&mut DnsProbe)| {
        let mut d = DnsProbe::new("www.example.test");
        f(&mut d);
        validate::check(&base_check(Probe::Dns(d)))
    };
    dns(&|_| {}).unwrap();
    dns(&|d| d.query_type = "txt".into()).unwrap();
    fails_on(
        dns(&|d| d.query_name = "bad name".into()),
        "probe.queryName",
        "DNS name",
    );
    fails_on(
        dns(&|d| d.query_type = "AXFR".into()),
        "probe.queryType",
        "not a transfer",
    );
    fails_on(
        dns(&|d| d.query_type = "NOPE".into()),
        "probe.queryType",
        "record type",
    );
    fails_on(
        dns(&|d| d.expected_rcodes.clear()),
        "probe.expectedRcodes",
        "1 to 8",
    );
    fails_on(
        dns(&|d| d.expected_rcodes = vec!["NOERROR".into(), "FINE".into()]),
        "probe.expectedRcodes[1]",
        "response code",
    );
    fails_on(
        dns(&|d| d.expect_answer = Some(String::new())),
        "probe.expectAnswer",
        "1 to 1024",
    );
}

#[test]
fn grpc_check_rules() {
    let grpc = |f: &dyn Fn(&mut GrpcProbe)| {
        let mut g = GrpcProbe::default();
        f(&mut g);
        validate::check(&base_check(Probe::Grpc(g)))
    };
    grpc(&|g| g.service = "pkg.v1.Service".into()).unwrap();
    fails_on(
        grpc(&|g| g.service = "a b".into()),
        "probe.service",
        "letters, digits",
    );
    fails_on(
        grpc(&|g| g.tls_server_name = Some("api.test".into())),
        "probe.tlsServerName",
        "tls: true",
    );
    fails_on(
        grpc(&|g| {
            g.tls = true;
            g.tls_server_name = Some("bad name".into());
        }),
        "probe.tlsServerName",
        "DNS name",
    );
}

#[test]
fn stream_check_rules() {
    // A UDP check may send nothing (seed 002).
    validate::check(&base_check(Probe::Udp(StreamProbe::default()))).unwrap();
    let hex = |send: &str, expect: Option<&str>| {
        validate::check(&base_check(Probe::Tcp(StreamProbe {
            send: send.into(),
            expect: expect.map(Into::into),
        })))
    };
    hex("hex:00 ff 0a", Some("hex:ff00")).unwrap();
    fails_on(hex("hex:0g", None), "probe.send", "hexadecimal");
    fails_on(hex("hex:abc", None), "probe.send", "hexadecimal");
    fails_on(hex("x", Some("hex:")), "probe.expect", "at least one byte");
    fails_on(
        hex(&format!("hex:{}", "00".repeat(4097)), None),
        "probe.send",
        "at most 4096",
    );
    let bad = StreamProbe {
        send: "PING".into(),
        expect: Some("[".into()),
    };
    fails_on(
        validate::check(&base_check(Probe::Tcp(bad))),
        "probe.expect",
        "regular expression",
    );
    let big = StreamProbe {
        send: "x".repeat(5000),
        expect: None,
    };
    fails_on(
        validate::check(&base_check(Probe::Tcp(big))),
        "probe.send",
        "at most 4096",
    );
}

#[test]
fn check_locations_and_control_rules() {
    let mut c = base_check(Probe::Icmp);
    c.locations = vec![LocationId::new("fra1"), LocationId::new("fra1")];
    fails_on(validate::check(&c), "locations[1]", "twice");
    c.locations = vec![LocationId::new("FRA 1")];
    fails_on(validate::check(&c), "locations[0]", "lower-case");
    let mut c = base_check(Probe::None);
    c.control = true;
    fails_on(validate::check(&c), "control", "actively probe");
    let mut c = base_check(Probe::Icmp);
    c.damping = Some(FlapDamping {
        reuse: 3000.0,
        ..FlapDamping::default()
    });
    fails_on(
        validate::check(&c),
        "damping.suppress",
        "greater than reuse",
    );
}

#[test]
fn pool_rules() {
    let mut p = Pool::new(PoolId(1), "p");
    p.protect_threshold = 1.5;
    fails_on(
        validate::pool(&p),
        "protectThreshold",
        "between 0.0001 and 1.0",
    );
    for odd in [-0.0, 5e-324, 0.00009, f64::NAN] {
        let mut p = Pool::new(PoolId(1), "p");
        p.protect_threshold = odd;
        fails_on(
            validate::pool(&p),
            "protectThreshold",
            "not -0, not subnormal",
        );
    }
    for fine in [0.0, 0.0001, 0.5, 1.0] {
        let mut p = Pool::new(PoolId(1), "p");
        p.protect_threshold = fine;
        assert!(validate::pool(&p).is_ok(), "{fine} is a valid threshold");
    }
    let mut p = Pool::new(PoolId(1), "p");
    p.min_healthy = 0;
    fails_on(validate::pool(&p), "minHealthy", "between 1 and");
    let mut p = Pool::new(PoolId(1), "p");
    p.fail_mode = FailMode::Static;
    fails_on(validate::pool(&p), "fallback", "at least one address");
    let mut p = Pool::new(PoolId(1), "p");
    p.fallback = vec!["192.0.2.1".parse().unwrap()];
    fails_on(
        validate::pool(&p),
        "fallback",
        "only when failMode is static",
    );
    for bad in [Duration::from_millis(899), Duration::from_secs(3601)] {
        let mut p = Pool::new(PoolId(1), "p");
        p.slow_start = Some(bad);
        fails_on(validate::pool(&p), "slowStart", "between 900ms and 1h");
    }
    let mut p = Pool::new(PoolId(1), "p");
    p.slow_start = Some(Duration::from_secs(60));
    validate::pool(&p).unwrap();
}

#[test]
fn a_zone_lists_each_name_server_once() {
    let mut z = base_zone();
    z.ns.push(z.ns[0].clone());
    fails_on(
        validate::zone(&z),
        "ns[1]",
        "ns1.example.com is listed twice",
    );
}

#[test]
fn zone_rules() {
    let mut z = base_zone();
    z.ns.clear();
    fails_on(validate::zone(&z), "ns", "at least one");
    let mut z = base_zone();
    z.default_ttl = validate::MAX_TTL + 1;
    fails_on(validate::zone(&z), "defaultTtl", "between 0 and");
    let mut z = base_zone();
    z.soa.retry = z.soa.refresh + 1;
    fails_on(validate::zone(&z), "soa.retry", "refresh");
}

fn txt_set(records: usize, strings: usize, len: usize) -> RecordSet {
    let mut r = dynamic(vec![]);
    r.rtype = RecordType::Txt;
    r.data = RecordData::Static(
        (0..records)
            .map(|i| {
                Rdata::Txt(
                    (0..strings)
                        .map(|j| format!("{i:03}{j:03}{}", "x".repeat(len - 6)))
                        .collect(),
                )
            })
            .collect(),
    );
    r
}

#[test]
fn record_sets_must_fit_one_dns_message() {
    let zone = base_zone();
    // One TXT record of 280 strings of 255 bytes: over 65,535 bytes of
    // rdata, once accepted and then uncompilable on every edge.
    fails_on(
        validate::record(&txt_set(1, 280, 255), &zone),
        "data.static[0]",
        "does not fit a record",
    );
    // 64 records of 4 x 255 bytes: each fits, the set does not.
    fails_on(
        validate::record(&txt_set(64, 4, 255), &zone),
        "data.static",
        "does not fit one DNS message (65535 bytes over TCP",
    );
    // 60 records of about 1 KB fit, and so does one record of 250 strings.
    validate::record(&txt_set(60, 4, 250), &zone).unwrap();
    validate::record(&txt_set(1, 250, 255), &zone).unwrap();
}

#[test]
fn record_rules() {
    let zone = base_zone();
    let mut r = dynamic(vec![PoolId(1)]);
    r.name = DnsName::parse("www.example.org").unwrap();
    fails_on(
        validate::record(&r, &zone),
        "name",
        "inside zone example.com",
    );
    let mut r = dynamic(vec![PoolId(1)]);
    r.rtype = RecordType::Txt;
    fails_on(validate::record(&r, &zone), "type", "A, AAAA or CNAME");
    let mut r = dynamic(vec![]);
    r.ttl = validate::MAX_TTL + 1;
    let err = validate::record(&r, &zone).unwrap_err();
    assert!(err.names("ttl") && err.names("data.dynamic.pools"), "{err}");
    let mut r = dynamic(vec![PoolId(1), PoolId(1)]);
    fails_on(validate::record(&r, &zone), "data.dynamic.pools", "twice");
    if let RecordData::Dynamic(d) = &mut r.data {
        d.pools = vec![PoolId(1)];
        d.first_n = 1000;
    }
    fails_on(
        validate::record(&r, &zone),
        "data.dynamic.firstN",
        "between 0 and 64",
    );
    let mut r = dynamic(vec![PoolId(1)]);
    if let RecordData::Dynamic(d) = &mut r.data {
        d.geo = vec![
            GeoBranch::for_regions(vec![Region::new("eu")], vec![PoolId(1)]),
            GeoBranch::for_regions(vec![Region::new("eu")], vec![PoolId(2)]),
        ];
    }
    fails_on(
        validate::record(&r, &zone),
        "data.dynamic.geo[1].regions[0]",
        "more than one branch",
    );
    // Branches on MaxMind data: each key is checked and named.
    let branch = |configure: &dyn Fn(&mut GeoBranch)| {
        let mut b = GeoBranch::for_regions(vec![], vec![PoolId(1)]);
        configure(&mut b);
        let mut r = dynamic(vec![PoolId(1)]);
        if let RecordData::Dynamic(d) = &mut r.data {
            d.geo = vec![b];
        }
        validate::record(&r, &zone)
    };
    branch(&|b| {
        b.countries = vec!["DE".into()];
        b.continents = vec!["EU".into()];
        b.subdivisions = vec!["US-CA".into(), "JP-13".into()];
        b.asns = vec![64500];
    })
    .unwrap();
    fails_on(
        branch(&|_| {}),
        "data.dynamic.geo[0]",
        "at least one region, country",
    );
    type Edit<'a> = &'a dyn Fn(&mut GeoBranch);
    let bad: [(Edit<'_>, &str, &str); 5] = [
        (
            &|b| b.countries = vec!["de".into()],
            "countries[0]",
            "alpha-2",
        ),
        (
            &|b| b.countries = vec!["DEU".into()],
            "countries[0]",
            "alpha-2",
        ),
        (
            &|b| b.continents = vec!["XX".into()],
            "continents[0]",
            "one of AF",
        ),
        (
            &|b| b.subdivisions = vec!["DE".into()],
            "subdivisions[0]",
            "DE-BE",
        ),
        (&|b| b.asns = vec![0], "asns[0]", "AS number"),
    ];
    for (configure, field, rule) in bad {
        fails_on(
            branch(configure),
            &format!("data.dynamic.geo[0].{field}"),
            rule,
        );
    }
    fails_on(
        branch(&|b| b.asns = (1..=257).collect()),
        "data.dynamic.geo[0].asns",
        "at most 256",
    );
    let mut r = dynamic(vec![PoolId(1)]);
    if let RecordData::Dynamic(d) = &mut r.data {
        let mut a = GeoBranch::for_regions(vec![], vec![PoolId(1)]);
        a.countries = vec!["DE".into(), "FR".into()];
        let mut b = GeoBranch::for_regions(vec![], vec![PoolId(2)]);
        b.countries = vec!["FR".into()];
        b.continents = vec!["EU".into()];
        d.geo = vec![a, b];
    }
    fails_on(
        validate::record(&r, &zone),
        "data.dynamic.geo[1].countries[0]",
        "FR appears in more than one branch",
    );
    let cname = RecordSet {
        rtype: RecordType::Cname,
        name: zone.apex.clone(),
        data: RecordData::Static(vec![Rdata::Cname(DnsName::parse("x.example.net").unwrap())]),
        ..dynamic(vec![])
    };
    fails_on(validate::record(&cname, &zone), "name", "apex");
    let mismatched = RecordSet {
        data: RecordData::Static(vec![Rdata::Aaaa("2001:db8::1".parse().unwrap())]),
        ..dynamic(vec![])
    };
    fails_on(
        validate::record(&mismatched, &zone),
        "data.static[0]",
        "Aaaa data in a A set",
    );
    let long_txt = RecordSet {
        rtype: RecordType::Txt,
        data: RecordData::Static(vec![Rdata::Txt(vec!["x".repeat(256)])]),
        ..dynamic(vec![])
    };
    fails_on(
        validate::record(&long_txt, &zone),
        "data.static[0][0]",
        "255 bytes",
    );
}

#[test]
fn region_locations_rules() {
    let zone = base_zone();
    let with = |steering: Steering, map: &[(&str, &[&str])]| {
        let mut r = dynamic(vec![PoolId(1)]);
        if let RecordData::Dynamic(d) = &mut r.data {
            d.steering = steering;
            d.region_locations = (map.iter())
                .map(|(region, locations)| {
                    let locations = locations.iter().map(|l| LocationId::new(*l)).collect();
                    (Region::new(*region), locations)
                })
                .collect();
        }
        validate::record(&r, &zone)
    };
    with(
        Steering::Latency,
        &[("eu", &["fra", "ams"]), ("us", &["nyc"])],
    )
    .unwrap();
    with(Steering::Latency, &[]).unwrap();
    let at = "data.dynamic.regionLocations";
    fails_on(
        with(Steering::Weighted, &[("eu", &["fra"])]),
        at,
        "only for steering: latency",
    );
    fails_on(
        with(Steering::Latency, &[("eu", &[])]),
        &format!("{at}.eu"),
        "1 to 16 locations",
    );
    fails_on(
        with(Steering::Latency, &[("eu", &["fra", "fra"])]),
        &format!("{at}.eu[1]"),
        "listed twice",
    );
    fails_on(
        with(Steering::Latency, &[("eu", &["Frankfurt"])]),
        &format!("{at}.eu[0]"),
        "lower-case",
    );
    fails_on(
        with(Steering::Latency, &[("EU", &["fra"])]),
        &format!("{at}.EU"),
        "region name",
    );
    let many: Vec<String> = (0..17).map(|i| format!("l{i}")).collect();
    let many: Vec<&str> = many.iter().map(String::as_str).collect();
    fails_on(
        with(Steering::Latency, &[("eu", &many)]),
        &format!("{at}.eu"),
        "1 to 16 locations",
    );
}

#[test]
fn catalog_rules_check_references_and_cname_exclusivity() {
    let mut c = Catalog::default();
    c.zones.insert(ZoneId(1), base_zone());
    let mut pool = Pool::new(PoolId(1), "web");
    pool.check = Some(CheckId(9));
    c.pools.insert(PoolId(1), pool);
    let mut m = base_member();
    m.pool = PoolId(5);
    c.members.insert(m.id, m);
    c.records
        .insert(RecordSetId(1), dynamic(vec![PoolId(1), PoolId(7)]));
    let cname = RecordSet {
        id: RecordSetId(2),
        rtype: RecordType::Cname,
        data: RecordData::Static(vec![Rdata::Cname(DnsName::parse("x.example.net").unwrap())]),
        ..dynamic(vec![])
    };
    c.records.insert(RecordSetId(2), cname);
    let err = validate::catalog(&c).unwrap_err();
    for (field, rule) in [
        ("pools[1].check", "check 9 does not exist"),
        ("members[1].pool", "pool 5 does not exist"),
        ("records[1].data.dynamic.pools", "pool 7 does not exist"),
        ("records[2].type", "CNAME"),
    ] {
        assert!(
            err.errors
                .iter()
                .any(|e| e.field == field && e.rule.contains(rule)),
            "{field} in {err}"
        );
    }
}

#[test]
fn error_display_lists_field_and_rule() {
    let mut m = base_member();
    m.port = 0;
    m.weight = u32::MAX;
    let text = validate::member(&m).unwrap_err().to_string();
    assert!(
        text.starts_with("port: must be between 1 and 65535; weight: must be between"),
        "{text}"
    );
}

mod properties {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn every_ip_literal_round_trips(ip in any::<std::net::IpAddr>()) {
            prop_assert_eq!(validate::plain_ip(&ip.to_string()), Ok(ip));
        }

        #[test]
        fn an_ip_with_any_url_decoration_is_refused(
            ip in any::<std::net::Ipv4Addr>(),
            decoration in prop_oneof![
                Just(":80"), Just("/path"), Just("?q=1"), Just("#f"), Just(" "),
            ],
            user in prop::bool::ANY,
        ) {
            let text = if user { format!("u@{ip}") } else { format!("{ip}{decoration}") };
            prop_assert!(validate::plain_ip(&text).is_err(), "{}", text);
        }

        #[test]
        fn plain_ip_never_panics(text in ".{0,64}") {
            let _ = validate::plain_ip(&text);
        }

        #[test]
        fn accepted_paths_are_origin_form(path in "[ -~\\t\\n]{0,40}") {
            if validate::http_path(&path).is_ok() {
                prop_assert!(path.starts_with('/') && !path.starts_with("//"));
                prop_assert!(!path.contains('#') && !path.contains(' ') && !path.contains('\n'));
            }
        }

        #[test]
        fn accepted_header_values_have_no_control_but_tab(value in "[\\x00-\\x7f]{0,20}") {
            if validate::header("X-Probe", &value).is_ok() {
                prop_assert!(value.chars().all(|c| c == '\t' || !c.is_control()));
            }
        }
    }
}

#[test]
fn notification_urls_that_carry_a_denied_or_shorthand_ipv4_address_are_refused() {
    for (url, rule) in [
        (
            "http://[::a9fe:a9fe]/",
            "169.254.169.254 is in the denied range",
        ),
        (
            "http://[64:ff9b::a9fe:a9fe]/",
            "169.254.169.254 is in the denied range",
        ),
        (
            "http://[2002:a9fe:a9fe::1]/",
            "169.254.169.254 is in the denied range",
        ),
        ("http://255.255.255.255/", "not a unicast address"),
        ("http://0.0.0.0:8080/", "not a unicast address"),
        ("http://0:8080/", "numeric shorthand"),
        ("http://2130706433/", "numeric shorthand"),
        ("http://0x7f.1/", "numeric shorthand"),
        ("http://127.1:9/", "numeric shorthand"),
        ("http://hooks.0x10/", "numeric shorthand"),
    ] {
        let err = validate::url(url).unwrap_err();
        assert!(err.contains(rule), "{url}: {err}");
    }
    for url in [
        "http://127.0.0.1:9/",
        "https://hooks.example.com/x",
        "http://[64:ff9b::c000:201]/",
        "http://a1.example/",
    ] {
        assert!(validate::url(url).is_ok(), "{url}");
    }
}

#[test]
fn addresses_names_and_timeouts_that_cannot_be_served_are_refused() {
    let mut m = base_member();
    for (addr, rule) in [
        ("255.255.255.255", "broadcast"),
        ("::ffff:192.0.2.1", "IPv4-mapped"),
        ("::a9fe:a9fe", "IPv4-compatible"),
        ("0.0.0.0", "unicast"),
        ("224.0.0.1", "unicast"),
    ] {
        m.address = addr.parse().unwrap();
        fails_on(validate::member(&m), "address", rule);
    }
    let mut m = base_member();
    m.name = "web\u{202e}1".into();
    fails_on(validate::member(&m), "name", "bidirectional");
    m.name = "web\u{200b}1".into();
    fails_on(validate::member(&m), "name", "zero-width");
    let mut m = base_member();
    m.kind = MemberKind::Ephemeral(EphemeralPolicy {
        heartbeat_timeout: Duration::from_millis(u64::MAX),
        ..EphemeralPolicy::default()
    });
    fails_on(
        validate::member(&m),
        "kind.ephemeral.heartbeatTimeout",
        "7 days",
    );
    let mut p = Pool::new(PoolId(1), "p");
    p.fail_mode = FailMode::Static;
    p.fallback = vec![
        "0.0.0.0".parse().unwrap(),
        "255.255.255.255".parse().unwrap(),
        "239.1.1.1".parse().unwrap(),
    ];
    let err = validate::pool(&p).unwrap_err();
    assert!(
        err.names("fallback[0]") && err.names("fallback[1]") && err.names("fallback[2]"),
        "{err}"
    );
}

fn static_set(name: &str, rtype: RecordType, data: Vec<Rdata>) -> RecordSet {
    RecordSet {
        id: RecordSetId(1),
        zone: ZoneId(1),
        name: DnsName::parse(name).unwrap(),
        rtype,
        ttl: 300,
        data: RecordData::Static(data),
    }
}

const SHA256: &str = "d2abde240d7cd3ee6b4b28c54df034b97983a1d16e8a410e4561cb106618e971";

#[test]
fn record_type_names_and_codes() {
    for (text, t, code) in [
        ("PTR", RecordType::Ptr, 12),
        ("naptr", RecordType::Naptr, 35),
        ("TLSA", RecordType::Tlsa, 52),
        ("SSHFP", RecordType::Sshfp, 44),
        ("DS", RecordType::Ds, 43),
        ("TYPE65534", RecordType::Generic(65534), 65534),
        ("TYPE1", RecordType::A, 1),
    ] {
        let parsed: RecordType = text.parse().unwrap();
        assert_eq!(parsed, t, "{text}");
        assert_eq!(parsed.code(), code);
        assert_eq!(RecordType::from_code(code), Some(t));
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(serde_json::from_str::<RecordType>(&json).unwrap(), t);
    }
    assert_eq!(RecordType::Generic(65534).to_string(), "TYPE65534");
    for refused in [
        "TYPE6", "TYPE41", "TYPE46", "TYPE48", "TYPE255", "TYPE252", "TYPE0", "SPF1", "TYPEx",
    ] {
        assert!(refused.parse::<RecordType>().is_err(), "{refused} accepted");
    }
}

#[test]
fn every_type_is_validated_naming_its_field() {
    let zone = base_zone();
    let ok = [
        static_set(
            "1.2.0.192.in-addr.arpa",
            RecordType::Ptr,
            vec![Rdata::Ptr(DnsName::parse("host.example.com").unwrap())],
        ),
        static_set(
            "sip.example.com",
            RecordType::Naptr,
            vec![Rdata::Naptr {
                order: 100,
                preference: 10,
                flags: "S".into(),
                services: "SIP+D2U".into(),
                regexp: String::new(),
                replacement: Some(DnsName::parse("_sip._udp.example.com").unwrap()),
            }],
        ),
        static_set(
            "_443._tcp.www.example.com",
            RecordType::Tlsa,
            vec![Rdata::Tlsa {
                usage: 3,
                selector: 1,
                matching_type: 1,
                data: SHA256.into(),
            }],
        ),
        static_set(
            "www.example.com",
            RecordType::Sshfp,
            vec![Rdata::Sshfp {
                algorithm: 4,
                fingerprint_type: 2,
                fingerprint: SHA256.into(),
            }],
        ),
        static_set(
            "sub.example.com",
            RecordType::Ds,
            vec![Rdata::Ds {
                key_tag: 12345,
                algorithm: 13,
                digest_type: 2,
                digest: SHA256.into(),
            }],
        ),
        static_set(
            "x.example.com",
            RecordType::Generic(65534),
            vec![Rdata::Generic {
                rtype: 65534,
                data: "0a000001".into(),
            }],
        ),
    ];
    for set in &ok[1..] {
        validate::record(set, &zone).unwrap_or_else(|e| panic!("{e}"));
    }
    let mut reverse = base_zone();
    reverse.apex = DnsName::parse("2.0.192.in-addr.arpa").unwrap();
    validate::record(&ok[0], &reverse).unwrap();

    let with = |set: &RecordSet, data: Rdata| {
        let mut s = set.clone();
        s.data = RecordData::Static(vec![data]);
        s
    };
    let naptr = |flags: &str, regexp: &str, replacement: Option<&str>| Rdata::Naptr {
        order: 1,
        preference: 1,
        flags: flags.into(),
        services: "x".into(),
        regexp: regexp.into(),
        replacement: replacement.map(|r| DnsName::parse(r).unwrap()),
    };
    fails_on(
        validate::record(&with(&ok[1], naptr("S!", "", Some("a.example.com"))), &zone),
        "data.static[0].flags",
        "letters and digits",
    );
    fails_on(
        validate::record(
            &with(&ok[1], naptr("S", "!x!y!", Some("a.example.com"))),
            &zone,
        ),
        "data.static[0].replacement",
        "exactly one",
    );
    fails_on(
        validate::record(&with(&ok[1], naptr("S", "", None)), &zone),
        "data.static[0].replacement",
        "exactly one",
    );
    fails_on(
        validate::record(
            &with(
                &ok[2],
                Rdata::Tlsa {
                    usage: 4,
                    selector: 1,
                    matching_type: 1,
                    data: SHA256.into(),
                },
            ),
            &zone,
        ),
        "data.static[0].usage",
        "0 to 3",
    );
    fails_on(
        validate::record(
            &with(
                &ok[2],
                Rdata::Tlsa {
                    usage: 3,
                    selector: 1,
                    matching_type: 2,
                    data: SHA256.into(),
                },
            ),
            &zone,
        ),
        "data.static[0].data",
        "64 bytes",
    );
    fails_on(
        validate::record(
            &with(
                &ok[2],
                Rdata::Tlsa {
                    usage: 3,
                    selector: 1,
                    matching_type: 0,
                    data: "zz".into(),
                },
            ),
            &zone,
        ),
        "data.static[0].data",
        "hex",
    );
    fails_on(
        validate::record(
            &with(
                &ok[3],
                Rdata::Sshfp {
                    algorithm: 5,
                    fingerprint_type: 2,
                    fingerprint: SHA256.into(),
                },
            ),
            &zone,
        ),
        "data.static[0].algorithm",
        "Ed25519",
    );
    fails_on(
        validate::record(
            &with(
                &ok[3],
                Rdata::Sshfp {
                    algorithm: 4,
                    fingerprint_type: 1,
                    fingerprint: SHA256.into(),
                },
            ),
            &zone,
        ),
        "data.static[0].fingerprint",
        "20 bytes",
    );
    fails_on(
        validate::record(
            &with(
                &ok[4],
                Rdata::Ds {
                    key_tag: 1,
                    algorithm: 13,
                    digest_type: 3,
                    digest: SHA256.into(),
                },
            ),
            &zone,
        ),
        "data.static[0].digestType",
        "SHA-384",
    );
    fails_on(
        validate::record(
            &with(
                &ok[4],
                Rdata::Ds {
                    key_tag: 1,
                    algorithm: 0,
                    digest_type: 2,
                    digest: SHA256.into(),
                },
            ),
            &zone,
        ),
        "data.static[0].algorithm",
        "DNSSEC algorithm",
    );
    fails_on(
        validate::record(
            &with(
                &ok[5],
                Rdata::Generic {
                    rtype: 65534,
                    data: "0a0".into(),
                },
            ),
            &zone,
        ),
        "data.static[0].data",
        "odd",
    );
    let mut a_as_generic = static_set(
        "x.example.com",
        RecordType::Generic(1),
        vec![Rdata::Generic {
            rtype: 1,
            data: "0a000001".into(),
        }],
    );
    fails_on(
        validate::record(&a_as_generic, &zone),
        "data.static[0].rtype",
        "form of its own",
    );
    a_as_generic.rtype = RecordType::Generic(65534);
    fails_on(
        validate::record(&a_as_generic, &zone),
        "data.static[0]",
        "in a",
    );
}

#[test]
fn every_type_encodes_with_domain_and_parses_back() {
    use domain::base::ParsedRecord;
    let owner = DnsName::parse("x.example.com").unwrap();
    for (rtype, rdata) in [
        (
            RecordType::Ptr,
            Rdata::Ptr(DnsName::parse("host.example.com").unwrap()),
        ),
        (
            RecordType::Naptr,
            Rdata::Naptr {
                order: 1,
                preference: 2,
                flags: "U".into(),
                services: "E2U+sip".into(),
                regexp: "!^.*$!sip:a@b!".into(),
                replacement: None,
            },
        ),
        (
            RecordType::Tlsa,
            Rdata::Tlsa {
                usage: 3,
                selector: 1,
                matching_type: 1,
                data: SHA256.into(),
            },
        ),
        (
            RecordType::Sshfp,
            Rdata::Sshfp {
                algorithm: 4,
                fingerprint_type: 2,
                fingerprint: SHA256.into(),
            },
        ),
        (
            RecordType::Ds,
            Rdata::Ds {
                key_tag: 1,
                algorithm: 13,
                digest_type: 2,
                digest: SHA256.into(),
            },
        ),
        (
            RecordType::Generic(65534),
            Rdata::Generic {
                rtype: 65534,
                data: "0a000001".into(),
            },
        ),
        (
            RecordType::Mx,
            Rdata::Mx {
                preference: 10,
                exchange: DnsName::parse("mail.example.com").unwrap(),
            },
        ),
        (
            RecordType::Txt,
            Rdata::Txt(vec!["v=spf1 -all".into(), "two \"quoted\"".into()]),
        ),
        (
            RecordType::Caa,
            Rdata::Caa {
                flags: 128,
                tag: "issue".into(),
                value: "ca.example; account=1".into(),
            },
        ),
        (
            RecordType::Https,
            Rdata::Https(ServiceBinding {
                priority: 1,
                target: None,
                params: "alpn=h2,h3 port=8443".into(),
            }),
        ),
    ] {
        let data = wire::data(&rdata).unwrap();
        // And back to the model, as a zone file import reads it.
        assert_eq!(wire::rdata(&data).unwrap(), rdata, "{rtype}");
        let size = wire::answer_size(&owner, rtype, std::slice::from_ref(&data)).unwrap();
        assert!(size > 12, "{rtype}");
        // The encoded record parses back as the same type and data.
        let mut message = domain::base::MessageBuilder::new_vec().question();
        message
            .push((wire::wire_name(&owner).unwrap(), wire::rtype(rtype)))
            .unwrap();
        let mut answer = message.answer();
        answer
            .push((wire::wire_name(&owner).unwrap(), 300, &data))
            .unwrap();
        let bytes = answer.finish();
        let parsed = domain::base::Message::from_octets(bytes).unwrap();
        let record: ParsedRecord<'_, _> = parsed.answer().unwrap().next().unwrap().unwrap();
        assert_eq!(record.rtype().to_int(), rtype.code(), "{rtype}");
        let back = record
            .to_record::<domain::rdata::ZoneRecordData<_, domain::base::ParsedName<_>>>()
            .unwrap()
            .unwrap();
        assert!(*back.data() == data, "{rtype}: {} != {data}", back.data());
    }
}

#[test]
fn delegations_refuse_what_would_never_be_served() {
    let ns = |n: &str| Rdata::Ns(DnsName::parse(n).unwrap());
    let ds = Rdata::Ds {
        key_tag: 1,
        algorithm: 13,
        digest_type: 2,
        digest: SHA256.into(),
    };
    let sets = [
        static_set(
            "sub.example.com",
            RecordType::Ns,
            vec![ns("ns1.sub.example.com")],
        ),
        static_set("sub.example.com", RecordType::Ds, vec![ds.clone()]),
        static_set(
            "ns1.sub.example.com",
            RecordType::A,
            vec![Rdata::A("192.0.2.1".parse().unwrap())],
        ),
        static_set(
            "sub.example.com",
            RecordType::A,
            vec![Rdata::A("192.0.2.2".parse().unwrap())],
        ),
    ];
    let catalog_of = |sets: &[RecordSet]| {
        let mut c = Catalog::default();
        c.zones.insert(ZoneId(1), base_zone());
        for (i, s) in sets.iter().enumerate() {
            let id = RecordSetId(i as u64 + 1);
            c.records.insert(id, RecordSet { id, ..s.clone() });
        }
        c
    };
    validate::catalog(&catalog_of(&sets)).expect("a cut with DS and glue is valid");

    let bad = [
        (
            static_set(
                "sub.example.com",
                RecordType::Cname,
                vec![Rdata::Cname(DnsName::parse("x.example.net").unwrap())],
            ),
            "records[2].type",
            "a CNAME cannot be at the delegation point sub.example.com",
        ),
        (
            RecordSet {
                name: DnsName::parse("sub.example.com").unwrap(),
                rtype: RecordType::Aaaa,
                ..dynamic(vec![])
            },
            "records[2].data.dynamic",
            "a dynamic (pool-backed) record cannot be at the delegation point",
        ),
        (
            static_set(
                "sub.example.com",
                RecordType::Txt,
                vec![Rdata::Txt(vec!["x".into()])],
            ),
            "records[2].type",
            "TXT data at the delegation point sub.example.com would never be served",
        ),
        (
            static_set(
                "www.sub.example.com",
                RecordType::Txt,
                vec![Rdata::Txt(vec!["x".into()])],
            ),
            "records[2].name",
            "is below the delegation point sub.example.com: only glue",
        ),
        (
            RecordSet {
                name: DnsName::parse("www.sub.example.com").unwrap(),
                ..dynamic(vec![])
            },
            "records[2].name",
            "only glue (static A or AAAA)",
        ),
        (
            static_set("www.example.com", RecordType::Ds, vec![ds.clone()]),
            "records[2].type",
            "a DS set belongs at a delegation point",
        ),
        (
            static_set("example.com", RecordType::Ns, vec![ns("ns2.example.com")]),
            "records[2].type",
            "the apex NS set is the zone's ns list",
        ),
    ];
    for (set, field, rule) in bad {
        // Any other type but the one under test may follow the NS set.
        let c = catalog_of(&[sets[0].clone(), set]);
        fails_on(validate::catalog(&c), field, rule);
    }
}

#[test]
fn service_bindings_are_read_by_domain_and_refused_with_its_reason() {
    let binding = |priority, target: Option<&str>, params: &str| ServiceBinding {
        priority,
        target: target.map(|t| DnsName::parse(t).unwrap()),
        params: params.into(),
    };
    let zone = base_zone();
    for (rtype, wrap) in [
        (RecordType::Svcb, Rdata::Svcb as fn(ServiceBinding) -> Rdata),
        (RecordType::Https, Rdata::Https),
    ] {
        let set = |b| static_set("svc.example.com", rtype, vec![wrap(b)]);
        for ok in [
            binding(1, None, "alpn=h2,h3 port=8443"),
            binding(0, Some("pool.example.net"), ""),
            binding(
                2,
                Some("x.example.com"),
                "mandatory=alpn alpn=h3 ipv4hint=192.0.2.1,192.0.2.2 ipv6hint=2001:db8::1 key65000=abc",
            ),
        ] {
            validate::record(&set(ok.clone()), &zone).unwrap_or_else(|e| panic!("{ok:?}: {e}"));
            let data = wire::data(&wrap(ok)).unwrap();
            assert_eq!(
                domain::base::RecordData::rtype(&data).to_int(),
                rtype.code()
            );
        }
        for (bad, rule) in [
            (binding(1, None, "port=http"), ""),
            (binding(1, None, "nosuchkey=1"), ""),
            (binding(1, None, "alpn=h2 ; comment"), "is not allowed"),
            (
                binding(1, None, "alpn=h2\nx. 1 IN A 192.0.2.1"),
                "is not allowed",
            ),
            (
                binding(0, Some("x.example.net"), "alpn=h2"),
                "must be empty in alias mode",
            ),
            (binding(1, None, "ipv4hint=2001:db8::1"), ""),
        ] {
            fails_on(
                validate::record(&set(bad), &zone),
                "data.static[0].params",
                rule,
            );
        }
    }
}

#[test]
fn transfer_settings_name_the_entry_and_the_rule() {
    let mut z = base_zone();
    let key = DnsName::parse("xfr.example.com").unwrap();
    z.transfer.allow = vec![
        TransferPeer {
            address: "224.0.0.1".parse().unwrap(),
            key: key.clone(),
        },
        TransferPeer {
            address: "192.0.2.1".parse().unwrap(),
            key: key.clone(),
        },
        TransferPeer {
            address: "192.0.2.1".parse().unwrap(),
            key: key.clone(),
        },
    ];
    z.transfer.notify = vec![NotifyTarget {
        address: "192.0.2.1:0".parse().unwrap(),
        key: None,
    }];
    let err = validate::zone(&z).unwrap_err();
    assert!(err.names("transfer.allow[0].address"), "{err}");
    assert!(err.names("transfer.allow[2].address"), "{err}");
    assert!(!err.names("transfer.allow[1].address"), "{err}");
    assert!(err.names("transfer.notify[0].address"), "{err}");
    z.transfer.allow.truncate(2);
    z.transfer.allow.remove(0);
    z.transfer.notify[0].address = "192.0.2.1:53".parse().unwrap();
    validate::zone(&z).unwrap();
}

#[test]
fn a_tsig_key_needs_a_secret_of_16_to_64_bytes() {
    let mut k = TsigKey {
        id: TsigKeyId(1),
        name: DnsName::parse("xfr.example.com").unwrap(),
        algorithm: TsigAlgorithm::HmacSha256,
        secret: Secret(vec![1; 15]),
    };
    assert!(validate::tsig_key(&k).unwrap_err().names("secret"));
    k.secret = Secret(vec![1; 65]);
    assert!(validate::tsig_key(&k).unwrap_err().names("secret"));
    k.secret = Secret(vec![1; 32]);
    validate::tsig_key(&k).unwrap();
    assert_eq!(format!("{:?}", k.secret), "Secret(<32 bytes, redacted>)");
    let json = serde_json::to_string(&k).unwrap();
    let back: TsigKey = serde_json::from_str(&json).unwrap();
    assert_eq!(back, k);
    let bad = json.replace(&k.secret.to_base64(), "not base64!");
    assert!(
        serde_json::from_str::<TsigKey>(&bad)
            .unwrap_err()
            .to_string()
            .contains("base64")
    );
}
