//! Domain -> proto -> domain is the identity; bad peer input is refused with
//! the field named.
#![allow(clippy::unwrap_used)]

use std::net::IpAddr;
use std::time::Duration;

use gslb_proto::convert::fail_reason_from_pb;
use gslb_proto::pb;
use gslb_shared::*;
use proptest::prelude::*;

fn name() -> impl Strategy<Value = DnsName> {
    "[a-z][a-z0-9]{0,10}(\\.[a-z][a-z0-9]{0,10}){0,3}".prop_map(|s| DnsName::parse(&s).unwrap())
}

fn ms() -> impl Strategy<Value = Duration> {
    (1u64..10_000_000).prop_map(Duration::from_millis)
}

fn member() -> impl Strategy<Value = Member> {
    let kind = prop_oneof![
        Just(MemberKind::Persistent),
        (ms(), ms(), ms(), any::<bool>()).prop_map(|(i, h, d, expire)| MemberKind::Ephemeral(
            EphemeralPolicy {
                heartbeat_interval: i,
                heartbeat_timeout: h,
                delete_timeout: d,
                expire
            }
        )),
    ];
    (
        (
            any::<u64>(),
            any::<u64>(),
            "[a-z0-9 -]{1,20}",
            prop_oneof![
                any::<IpAddr>().prop_map(MemberAddress::Ip),
                "[a-z][a-z0-9-]{0,10}[a-z]\\.(example\\.)?[a-z]{2,6}"
                    .prop_map(|h| MemberAddress::parse(&h).unwrap()),
            ],
            any::<u16>(),
        ),
        (
            any::<u32>(),
            any::<u32>(),
            prop::option::of("[a-z]{1,8}"),
            any::<bool>(),
            any::<bool>(),
        ),
        (any::<u32>(), any::<bool>(), kind),
    )
        .prop_map(
            |(
                (id, pool, name, address, port),
                (weight, priority, region, enabled, backup),
                (wt, rewarm, kind),
            )| {
                Member {
                    id: MemberId(id),
                    pool: PoolId(pool),
                    name,
                    address,
                    port,
                    weight,
                    priority,
                    region: region.map(Region::new),
                    enabled,
                    backup,
                    warmup_threshold: wt,
                    rewarm_after_down: rewarm,
                    kind,
                }
            },
        )
}

fn http() -> impl Strategy<Value = HttpProbe> {
    (
        "GET|HEAD|POST",
        "/[a-z]{0,10}",
        prop::collection::vec(("[A-Za-z-]{1,10}", "[ -~]{0,10}"), 0..3),
        prop::collection::vec((100u16..600, 100u16..600), 0..3),
        prop::option::of("[a-z]{1,5}"),
        prop::option::of("[a-z]{1,5}\\.test"),
        any::<bool>(),
        (prop::option::of("[a-z ]{1,5}"), 0u8..6),
    )
        .prop_map(
            |(method, path, headers, status, body, sni, verify, (contains, redirects))| HttpProbe {
                method,
                path,
                headers: headers
                    .into_iter()
                    .map(|(name, value)| Header { name, value })
                    .collect(),
                expected_status: status
                    .into_iter()
                    .map(|(from, to)| StatusRange { from, to })
                    .collect(),
                body_regex: body,
                body_contains: contains,
                follow_redirects: redirects,
                tls_server_name: sni,
                tls_verify: verify,
            },
        )
}

fn dns() -> impl Strategy<Value = DnsProbe> {
    (
        "[a-z]{1,8}\\.test",
        "A|AAAA|TXT|SOA",
        any::<bool>(),
        prop::collection::vec("NOERROR|NXDOMAIN|SERVFAIL", 1..3),
        prop::option::of("[a-z0-9.:]{1,12}"),
        any::<bool>(),
    )
        .prop_map(
            |(query_name, query_type, tcp, rcodes, answer, rd)| DnsProbe {
                query_name,
                query_type,
                transport: if tcp {
                    DnsTransport::Tcp
                } else {
                    DnsTransport::Udp
                },
                expected_rcodes: rcodes,
                expect_answer: answer,
                recursion_desired: rd,
            },
        )
}

fn grpc() -> impl Strategy<Value = GrpcProbe> {
    (
        "[a-z.]{0,12}",
        any::<bool>(),
        prop::option::of("[a-z]{1,5}\\.test"),
        any::<bool>(),
    )
        .prop_map(|(service, tls, tls_server_name, tls_verify)| GrpcProbe {
            service,
            tls,
            tls_server_name,
            tls_verify,
        })
}

fn check() -> impl Strategy<Value = Check> {
    let stream = ("[ -~]{0,10}", prop::option::of("[a-z]{1,5}"))
        .prop_map(|(send, expect)| StreamProbe { send, expect });
    let probe = prop_oneof![
        Just(Probe::None),
        Just(Probe::Icmp),
        Just(Probe::Mysql),
        stream.clone().prop_map(Probe::Tcp),
        stream.prop_map(Probe::Udp),
        http().prop_map(Probe::Http),
        http().prop_map(Probe::Https),
        dns().prop_map(Probe::Dns),
        grpc().prop_map(Probe::Grpc),
    ];
    let damping =
        prop::option::of(
            (1.0f64..5000.0, ms()).prop_map(|(penalty, half_life)| FlapDamping {
                penalty,
                half_life,
                ..FlapDamping::default()
            }),
        );
    (
        (
            any::<u64>(),
            "[a-z]{1,10}",
            probe,
            prop::option::of(any::<u16>()),
            ms(),
            ms(),
        ),
        (
            0.0f64..1.0,
            0.0f64..1.0,
            1u32..64,
            prop::collection::vec("[a-z0-9]{1,6}", 0..4),
        ),
        (prop::option::of(any::<IpAddr>()), any::<bool>(), damping),
        (0u32..6, prop::option::of(ms()), any::<bool>()),
    )
        .prop_map(
            |(
                (id, name, probe, port, interval, timeout),
                (rise, fall, window, locations),
                (addr, control, damping),
                (retries, latency_threshold, inverted),
            )| {
                Check {
                    id: CheckId(id),
                    name,
                    probe,
                    port,
                    interval,
                    timeout,
                    rise,
                    fall,
                    window,
                    locations: locations.into_iter().map(LocationId::new).collect(),
                    probe_address: addr,
                    control,
                    damping,
                    retries,
                    latency_threshold,
                    inverted,
                }
            },
        )
}

fn pool() -> impl Strategy<Value = Pool> {
    (
        any::<u64>(),
        "[a-z]{1,10}",
        prop::option::of(any::<u64>()),
        any::<u32>(),
        0.0f64..1.0,
        prop_oneof![
            Just(FailMode::Open),
            Just(FailMode::Closed),
            Just(FailMode::Static)
        ],
        prop::collection::vec(any::<IpAddr>(), 0..3),
        prop::option::of(1u64..3_600_000),
    )
        .prop_map(
            |(id, name, check, min_healthy, protect, fail_mode, fallback, slow_start)| Pool {
                id: PoolId(id),
                name,
                check: check.map(CheckId),
                min_healthy,
                protect_threshold: protect,
                fail_mode,
                fallback,
                slow_start: slow_start.map(std::time::Duration::from_millis),
            },
        )
}

fn rdata() -> impl Strategy<Value = Rdata> {
    prop_oneof![
        any::<std::net::Ipv4Addr>().prop_map(Rdata::A),
        any::<std::net::Ipv6Addr>().prop_map(Rdata::Aaaa),
        name().prop_map(Rdata::Cname),
        name().prop_map(Rdata::Ns),
        (any::<u16>(), name()).prop_map(|(preference, exchange)| Rdata::Mx {
            preference,
            exchange
        }),
        prop::collection::vec("[ -~]{0,20}", 1..3).prop_map(Rdata::Txt),
        (any::<u16>(), any::<u16>(), any::<u16>(), name()).prop_map(
            |(priority, weight, port, target)| Rdata::Srv {
                priority,
                weight,
                port,
                target
            }
        ),
        (any::<u8>(), "[a-z]{1,8}", "[ -~]{0,20}").prop_map(|(flags, tag, value)| Rdata::Caa {
            flags,
            tag,
            value
        }),
        name().prop_map(Rdata::Ptr),
        (
            any::<u16>(),
            any::<u16>(),
            "[A-Z]{0,2}",
            "[ -~]{0,10}",
            "[ -~]{0,10}",
            proptest::option::of(name())
        )
            .prop_map(
                |(order, preference, flags, services, regexp, replacement)| Rdata::Naptr {
                    order,
                    preference,
                    flags,
                    services,
                    regexp,
                    replacement
                }
            ),
        (any::<u8>(), any::<u8>(), any::<u8>(), "([0-9a-f]{2}){0,40}").prop_map(
            |(usage, selector, matching_type, data)| Rdata::Tlsa {
                usage,
                selector,
                matching_type,
                data
            }
        ),
        (any::<u8>(), any::<u8>(), "([0-9a-f]{2}){0,40}").prop_map(
            |(algorithm, fingerprint_type, fingerprint)| Rdata::Sshfp {
                algorithm,
                fingerprint_type,
                fingerprint
            }
        ),
        (
            any::<u16>(),
            any::<u8>(),
            any::<u8>(),
            "([0-9a-f]{2}){0,40}"
        )
            .prop_map(|(key_tag, algorithm, digest_type, digest)| Rdata::Ds {
                key_tag,
                algorithm,
                digest_type,
                digest
            }),
        (256u16..65_280, "([0-9a-f]{2}){0,40}")
            .prop_map(|(rtype, data)| Rdata::Generic { rtype, data }),
        (
            any::<u16>(),
            proptest::option::of(name()),
            "[ -~]{0,20}",
            any::<bool>()
        )
            .prop_map(|(priority, target, params, https)| {
                let b = ServiceBinding {
                    priority,
                    target,
                    params,
                };
                if https {
                    Rdata::Https(b)
                } else {
                    Rdata::Svcb(b)
                }
            }),
    ]
}

fn record() -> impl Strategy<Value = RecordSet> {
    let dynamic = (
        prop_oneof![
            Just(Steering::RoundRobin),
            Just(Steering::Weighted),
            Just(Steering::Sticky),
            Just(Steering::Latency)
        ],
        prop::collection::vec(any::<u64>(), 0..4),
        prop::collection::vec(
            (
                prop::collection::vec("[a-z]{1,4}", 1..3),
                prop::collection::vec(any::<u64>(), 1..3),
            ),
            0..3,
        ),
        (any::<u32>(), any::<bool>()),
        prop::collection::btree_map(
            "[a-z]{1,4}".prop_map(Region::new),
            prop::collection::vec("[a-z]{1,4}".prop_map(gslb_shared::LocationId::new), 1..3),
            0..3,
        ),
    )
        .prop_map(
            |(steering, pools, geo, (first_n, flatten), region_locations)| {
                RecordData::Dynamic(DynamicRecord {
                    steering,
                    pools: pools.into_iter().map(PoolId).collect(),
                    geo: geo
                        .into_iter()
                        .map(|(r, p)| {
                            GeoBranch::for_regions(
                                r.into_iter().map(Region::new).collect(),
                                p.into_iter().map(PoolId).collect(),
                            )
                        })
                        .collect(),
                    first_n,
                    flatten,
                    region_locations,
                })
            },
        );
    let data = prop_oneof![
        prop::collection::vec(rdata(), 1..4).prop_map(RecordData::Static),
        dynamic
    ];
    (any::<u64>(), any::<u64>(), name(), any::<u32>(), data).prop_map(
        |(id, zone, name, ttl, data)| {
            let rtype = match &data {
                RecordData::Static(r) => r[0].record_type(),
                RecordData::Dynamic(_) => RecordType::A,
            };
            RecordSet {
                id: RecordSetId(id),
                zone: ZoneId(zone),
                name,
                rtype,
                ttl,
                data,
            }
        },
    )
}

fn transfer() -> impl Strategy<Value = Transfer> {
    let peer = (any::<IpAddr>(), name()).prop_map(|(address, key)| TransferPeer { address, key });
    // Text carries an IPv6 address's scope but not its flow label: an
    // address as an operator writes it.
    let target =
        (any::<IpAddr>(), any::<u16>(), prop::option::of(name())).prop_map(|(ip, port, key)| {
            NotifyTarget {
                address: std::net::SocketAddr::new(ip, port),
                key,
            }
        });
    (
        prop::collection::vec(peer, 0..3),
        prop::collection::vec(target, 0..3),
    )
        .prop_map(|(allow, notify)| Transfer { allow, notify })
}

fn tsig_key() -> impl Strategy<Value = TsigKey> {
    (
        any::<u64>(),
        name(),
        prop::collection::vec(any::<u8>(), 0..70),
    )
        .prop_map(|(id, name, secret)| TsigKey {
            id: TsigKeyId(id),
            name,
            algorithm: TsigAlgorithm::HmacSha256,
            secret: Secret(secret),
        })
}

fn zone() -> impl Strategy<Value = Zone> {
    (
        any::<u64>(),
        name(),
        name(),
        name(),
        any::<[u32; 5]>(),
        prop::collection::vec(name(), 1..4),
        transfer(),
        prop::option::of(signing()),
    )
        .prop_map(|(id, apex, mname, rname, t, ns, transfer, dnssec)| Zone {
            id: ZoneId(id),
            apex,
            soa: Soa {
                mname,
                rname,
                refresh: t[0],
                retry: t[1],
                expire: t[2],
                negative_ttl: t[3],
            },
            ns,
            default_ttl: t[4],
            ns_ttl: None,
            transfer,
            dnssec,
        })
}

fn signing() -> impl Strategy<Value = ZoneSigning> {
    let key = (
        prop::sample::select(vec![KeyRole::Csk, KeyRole::Ksk, KeyRole::Zsk]),
        prop::collection::vec(any::<u8>(), 0..80),
        prop::collection::vec(any::<u8>(), 0..200),
        any::<u64>(),
        prop::sample::select(vec![
            KeyState::Pending,
            KeyState::Published,
            KeyState::Active,
            KeyState::Retired,
        ]),
        any::<u64>(),
        prop::option::of(1..u64::MAX),
    )
        .prop_map(
            |(role, public, private, created, state, since, ds_seen)| SigningKey {
                role,
                public_key: Secret(public),
                private_key: Secret(private),
                created,
                state,
                since,
                ds_seen,
            },
        );
    (
        prop::sample::select(vec![
            SigningAlgorithm::EcdsaP256Sha256,
            SigningAlgorithm::Ed25519,
        ]),
        prop::sample::select(vec![KeyScheme::Csk, KeyScheme::KskZsk]),
        any::<u32>(),
        any::<u32>(),
        any::<bool>(),
        prop::collection::vec(key, 0..3),
        any::<[u32; 3]>(),
    )
        .prop_map(
            |(algorithm, scheme, signature_validity, inception_offset, unsign, keys, t)| {
                ZoneSigning {
                    algorithm,
                    scheme,
                    signature_validity,
                    inception_offset,
                    propagation_delay: t[0],
                    parent_ds_ttl: t[1],
                    zsk_lifetime: t[2],
                    unsign,
                    keys,
                }
            },
        )
}

proptest! {
    #[test]
    fn member_round_trips(m in member()) {
        prop_assert_eq!(Member::try_from(pb::Member::from(&m)).unwrap(), m);
    }

    #[test]
    fn check_round_trips(c in check()) {
        prop_assert_eq!(Check::try_from(pb::Check::from(&c)).unwrap(), c);
    }

    #[test]
    fn pool_round_trips(p in pool()) {
        prop_assert_eq!(Pool::try_from(pb::Pool::from(&p)).unwrap(), p);
    }

    #[test]
    fn record_round_trips(r in record()) {
        prop_assert_eq!(RecordSet::try_from(pb::RecordSet::from(&r)).unwrap(), r);
    }

    #[test]
    fn zone_round_trips(z in zone()) {
        prop_assert_eq!(Zone::try_from(pb::Zone::from(&z)).unwrap(), z);
    }

    #[test]
    fn assignment_round_trips_with_its_key_and_cadence(c in check(), m in member()) {
        let a = gslb_shared::assignment::Assignment {
            member: m.id,
            address: m.address,
            port: m.port.max(1),
            check: std::sync::Arc::new(c.clone()),
        };
        let offered = gslb_shared::assignment::Offered::from(&pb::Assignment::from(&a));
        prop_assert_eq!(offered.key, a.key());
        prop_assert_eq!(offered.interval, c.interval);
        prop_assert_eq!(offered.assignment, Ok(a.clone()));
        let key = gslb_shared::assignment::TargetKey::from(&pb::AssignmentKey::from(a.key()));
        prop_assert_eq!(key, a.key());
    }

    #[test]
    fn assignments_by_id_carry_each_check_once_and_offer_what_inline_ones_do(
        c in check(), ms in prop::collection::vec(member(), 1..20),
    ) {
        let check = std::sync::Arc::new(c);
        let set: Vec<_> = ms
            .iter()
            .map(|m| gslb_shared::assignment::Assignment {
                member: m.id,
                address: m.address.clone(),
                port: m.port.max(1),
                check: check.clone(),
            })
            .collect();
        let (inline, none) = gslb_proto::convert::assignments_to_pb(&set, false);
        let (by_id, checks) = gslb_proto::convert::assignments_to_pb(&set, true);
        prop_assert!(none.is_empty() && inline.iter().all(|a| a.check.is_some()));
        prop_assert!(by_id.iter().all(|a| a.check.is_none()));
        prop_assert_eq!(checks.len(), 1);
        let offered = gslb_proto::convert::offers_from_pb(&by_id, &checks);
        prop_assert_eq!(&offered, &gslb_proto::convert::offers_from_pb(&inline, &[]));
        for (o, a) in offered.iter().zip(&set) {
            prop_assert_eq!(o.assignment.as_ref(), Ok(a));
        }
        // A check the message does not list: the target is offered, invalid.
        let orphan = gslb_proto::convert::offers_from_pb(&by_id, &[]);
        prop_assert!(orphan.iter().all(|o| o.assignment.as_ref().is_err_and(|e| e.errors[0].field == "check")));
    }

    #[test]
    fn probe_result_round_trips(id in any::<u64>(), cycle in any::<u64>(), reason in 0i32..12, latency in any::<u32>()) {
        let r = ProbeResult { member: MemberId(id), check: CheckId(7), cycle, failure: fail_reason_from_pb(reason).unwrap(), latency_us: latency };
        prop_assert_eq!(ProbeResult::try_from(&pb::ProbeResult::from(&r)).unwrap(), r);
    }
}

#[test]
fn a_bad_assignment_keeps_its_key_and_cadence_and_names_the_field() {
    use gslb_shared::assignment::Offered;
    let mut check = Check::new(CheckId(3), "c", Probe::Icmp);
    check.interval = Duration::from_secs(7);
    let good = pb::Assignment {
        member_id: 9,
        check_id: 3,
        address: "127.0.0.1".into(),
        port: 80,
        check: Some(pb::Check::from(&check)),
    };
    for (field, bad) in [
        (
            "address",
            pb::Assignment {
                address: "127.0.0.1:80".into(),
                ..good.clone()
            },
        ),
        (
            "port",
            pb::Assignment {
                port: 0,
                ..good.clone()
            },
        ),
        (
            "port",
            pb::Assignment {
                port: 65_536,
                ..good.clone()
            },
        ),
        (
            "check",
            pb::Assignment {
                check: None,
                ..good.clone()
            },
        ),
    ] {
        let offered = Offered::from(&bad);
        assert_eq!(
            (offered.key.member, offered.key.check),
            (MemberId(9), CheckId(3))
        );
        let error = offered.assignment.unwrap_err();
        assert_eq!(error.errors[0].field, field, "{error}");
        let cadence = if field == "check" { 10 } else { 7 };
        assert_eq!(offered.interval, Duration::from_secs(cadence), "{field}");
    }
}

#[test]
fn member_address_with_a_port_is_refused_naming_the_field() {
    let mut m = pb::Member::from(&Member::new(
        MemberId(1),
        PoolId(1),
        "a",
        "10.0.0.1".parse().unwrap(),
        80,
    ));
    m.address = "10.0.0.1:8080".into();
    let err = Member::try_from(m).unwrap_err();
    assert_eq!(
        err.to_string(),
        "address: must be an IP address or a hostname without a port"
    );
}

#[test]
fn out_of_range_port_and_unknown_enums_are_refused() {
    let mut m = pb::Member::from(&Member::new(
        MemberId(1),
        PoolId(1),
        "a",
        "10.0.0.1".parse().unwrap(),
        80,
    ));
    m.port = 70_000;
    assert!(Member::try_from(m).unwrap_err().names("port"));
    let mut p = pb::Pool::from(&Pool::new(PoolId(1), "p"));
    p.fail_mode = 42;
    assert!(Pool::try_from(p).unwrap_err().names("failMode"));
    assert!(fail_reason_from_pb(99).unwrap_err().names("failure"));
    let c = pb::Check {
        probe: None,
        ..pb::Check::default()
    };
    assert!(Check::try_from(c).unwrap_err().names("probe"));
    let mut r = pb::RecordSet::from(&RecordSet {
        id: RecordSetId(1),
        zone: ZoneId(1),
        name: DnsName::parse("www.example.com").unwrap(),
        rtype: RecordType::A,
        ttl: 30,
        data: RecordData::Static(vec![Rdata::A("192.0.2.1".parse().unwrap())]),
    });
    r.data = Some(pb::record_set::Data::StaticData(pb::StaticData {
        rdata: vec![pb::Rdata {
            data: Some(pb::rdata::Data::A("2001:db8::1".into())),
        }],
    }));
    assert!(RecordSet::try_from(r).unwrap_err().names("data.static[0]"));
}

#[test]
fn descriptor_set_lists_every_service() {
    use prost::Message;
    let fds = prost_types_free_decode(gslb_proto::FILE_DESCRIPTOR_SET);
    for service in ["AgentService", "EdgeFeed", "AdminService"] {
        assert!(
            fds.iter().any(|s| s == service),
            "{service} missing from {fds:?}"
        );
    }

    /// Decode service names from the descriptor bytes without prost-types:
    /// FileDescriptorSet.file (1) -> FileDescriptorProto.service (6) -> name (1).
    fn prost_types_free_decode(bytes: &[u8]) -> Vec<String> {
        #[derive(Clone, PartialEq, Message)]
        struct Set {
            #[prost(message, repeated, tag = "1")]
            file: Vec<File>,
        }
        #[derive(Clone, PartialEq, Message)]
        struct File {
            #[prost(message, repeated, tag = "6")]
            service: Vec<Service>,
        }
        #[derive(Clone, PartialEq, Message)]
        struct Service {
            #[prost(string, tag = "1")]
            name: String,
        }
        Set::decode(bytes)
            .unwrap()
            .file
            .into_iter()
            .flat_map(|f| f.service)
            .map(|s| s.name)
            .collect()
    }
}

mod snapshots {
    use super::*;
    use gslb_proto::convert::{delta_from_pb, snapshot_from_pb};

    fn facts() -> impl Strategy<Value = Vec<(MemberId, MemberFacts)>> {
        prop::collection::vec(
            (
                any::<u64>(),
                prop_oneof![Just(Health::Up), Just(Health::Down), Just(Health::Unknown)],
                any::<bool>(),
                prop::option::of(1u8..100),
            )
                .prop_map(|(id, health, warming, ramp)| {
                    (
                        MemberId(id),
                        MemberFacts {
                            health,
                            warming,
                            ramp,
                        },
                    )
                }),
            0..4,
        )
    }

    /// Resolutions: unicast addresses (never IPv4-mapped), at most 8.
    fn resolved() -> impl Strategy<Value = Vec<(MemberId, Resolved)>> {
        let address = prop_oneof![
            any::<[u8; 4]>().prop_map(|o| std::net::IpAddr::from([10, o[1], o[2], o[3].max(1)])),
            any::<[u16; 8]>().prop_map(|s| std::net::IpAddr::from([
                0x2001,
                0xdb8,
                s[2],
                s[3],
                s[4],
                s[5],
                s[6],
                s[7].max(1)
            ])),
        ];
        prop::collection::vec(
            (
                any::<u64>(),
                prop::collection::vec(address, 0..=8),
                any::<u32>(),
            )
                .prop_map(|(id, addresses, ttl)| (MemberId(id), Resolved { addresses, ttl })),
            0..3,
        )
    }

    fn rtt() -> impl Strategy<Value = Vec<(MemberId, gslb_shared::Rtts)>> {
        let table = prop::collection::btree_map("[a-z][a-z0-9-]{0,6}", any::<u32>(), 0..4)
            .prop_map(|m| {
                gslb_shared::Rtts::new(
                    m.into_iter()
                        .map(|(location, micros)| gslb_shared::LocationRtt {
                            location: gslb_shared::LocationId::new(location),
                            micros,
                        })
                        .collect(),
                )
            });
        prop::collection::vec((any::<u64>().prop_map(MemberId), table), 0..3)
    }

    proptest! {
        #[test]
        fn snapshot_round_trips(
            zones in prop::collection::vec(zone(), 0..3), records in prop::collection::vec(record(), 0..3),
            pools in prop::collection::vec(pool(), 0..3), members in prop::collection::vec(member(), 0..3),
            facts in facts(), version in any::<u64>(), at in any::<u64>(),
            keys in prop::collection::vec(tsig_key(), 0..3), resolved in resolved(), rtt in rtt(),
        ) {
            let mut s = Snapshot { version, published_at_ms: at, epoch: version / 3, ..Snapshot::default() };
            for k in keys { s.catalog.tsig_keys.insert(k.id, k); }
            for z in zones { s.catalog.zones.insert(z.id, z); }
            for r in records { s.catalog.records.insert(r.id, r); }
            for p in pools { s.catalog.pools.insert(p.id, p); }
            for m in members { s.catalog.members.insert(m.id, m); }
            s.facts = facts.into_iter().collect();
            s.resolved = resolved.into_iter().collect();
            s.rtt = rtt.into_iter().collect();
            prop_assert_eq!(snapshot_from_pb(pb::Snapshot::from(&s), at).unwrap(), s);
        }

        #[test]
        fn delta_round_trips(
            zones in prop::collection::vec(zone(), 0..2), records in prop::collection::vec(record(), 0..2),
            pools in prop::collection::vec(pool(), 0..2), members in prop::collection::vec(member(), 0..2),
            removed in prop::collection::vec(any::<u64>(), 0..3), facts in facts(), base in any::<u64>(), at in any::<u64>(),
            epoch in any::<u64>(), tsig_keys in prop::collection::vec(tsig_key(), 0..2),
            resolved in resolved(), rtt in rtt(),
        ) {
            let d = Delta {
                base_version: base, version: base.wrapping_add(1), published_at_ms: at, epoch,
                zones, records, pools, members,
                removed_zones: removed.iter().copied().map(ZoneId).collect(),
                removed_records: removed.iter().copied().map(RecordSetId).collect(),
                removed_pools: removed.iter().copied().map(PoolId).collect(),
                removed_members: removed.iter().copied().map(MemberId).collect(),
                facts,
                tsig_keys,
                removed_tsig_keys: removed.iter().copied().map(TsigKeyId).collect(),
                resolved,
                unresolved: removed.iter().copied().map(MemberId).collect(),
                rtt,
                unmeasured: removed.iter().copied().map(MemberId).collect(),
            };
            prop_assert_eq!(delta_from_pb(pb::SnapshotDelta::from(&d), at).unwrap(), d);
        }
    }

    #[test]
    fn resolutions_from_the_wire_are_bounded_and_unicast() {
        let with = |addresses: Vec<String>| pb::Snapshot {
            version: 3,
            resolved: vec![pb::Resolution {
                member_id: 1,
                addresses,
                ttl: 30,
            }],
            ..pb::Snapshot::default()
        };
        let nine: Vec<String> = (1..=9).map(|i| format!("10.0.0.{i}")).collect();
        for (addresses, says) in [
            (nine, "at most 8"),
            (vec!["224.0.0.1".into()], "unicast"),
            (vec!["lb.example.com".into()], "IPv4 or IPv6"),
        ] {
            let err = snapshot_from_pb(with(addresses), 0).unwrap_err();
            assert!(
                err.names("resolved[0].addresses") && err.to_string().contains(says),
                "{err}"
            );
        }
    }

    #[test]
    fn a_bad_member_in_a_snapshot_is_refused_naming_where() {
        let mut m = pb::Member::from(&Member::new(
            MemberId(1),
            PoolId(1),
            "a",
            "10.0.0.1".parse().unwrap(),
            80,
        ));
        m.address = "10.0.0.1:80".into();
        let s = pb::Snapshot {
            version: 3,
            members: vec![m],
            ..pb::Snapshot::default()
        };
        let err = snapshot_from_pb(s, 0).unwrap_err();
        assert!(err.names("members[0].address"), "{err}");
    }
}

fn health() -> impl Strategy<Value = Health> {
    prop_oneof![Just(Health::Up), Just(Health::Down), Just(Health::Unknown)]
}

fn failure() -> impl Strategy<Value = Option<FailReason>> {
    prop::option::of(prop_oneof![
        Just(FailReason::Timeout),
        Just(FailReason::Refused),
        Just(FailReason::Tls),
        Just(FailReason::BodyMismatch),
        Just(FailReason::Resolve),
        Just(FailReason::Slow),
        Just(FailReason::Inverted),
        Just(FailReason::Other),
    ])
}

fn member_status() -> impl Strategy<Value = status::MemberStatusView> {
    let location = (
        "[a-z]{1,8}",
        any::<u64>(),
        failure(),
        any::<u32>(),
        any::<bool>(),
        any::<bool>(),
        prop::option::of(1u32..),
        prop::option::of(1u64..),
    )
        .prop_map(
            |(location, cycle, failure, latency_us, stale, quarantined, rtt_us, received_ms)| {
                status::LocationStatusView {
                    location,
                    cycle,
                    passed: failure.is_none(),
                    failure,
                    latency_us,
                    received_ms,
                    rtt_us,
                    stale,
                    quarantined,
                }
            },
        );
    (
        (
            any::<u64>(),
            health(),
            prop::option::of(0.0f64..=1.0),
            any::<bool>(),
            any::<u32>(),
            any::<u32>(),
        ),
        (
            any::<bool>(),
            any::<bool>(),
            prop::option::of(health()),
            any::<bool>(),
            any::<u64>(),
            any::<bool>(),
        ),
        prop::collection::vec(location, 0..4),
        prop::option::of(1u8..100),
        any::<bool>(),
    )
        .prop_map(
            |(
                (member_id, health, score, warming, warmup_passes, warmup_threshold),
                (protected, fail_open, manual, suppressed, since_ms, decisions_paused),
                locations,
                ramp,
                enabled,
            )| {
                status::MemberStatusView {
                    member_id,
                    enabled,
                    state: status::MemberState::Unknown,
                    label: String::new(),
                    gate: None,
                    healthy: health == Health::Up,
                    health,
                    score,
                    warming,
                    warmup_passes,
                    warmup_threshold,
                    protected,
                    fail_open,
                    manual,
                    suppressed,
                    since_ms,
                    decisions_paused,
                    ramp,
                    locations,
                }
                .name_state()
            },
        )
}

proptest! {
    #[test]
    fn status_views_round_trip_through_protobuf(
        members in prop::collection::vec(member_status(), 0..4),
        flags in (any::<u64>(), any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
    ) {
        let (pool_id, eligible, protected, fail_open, decisions_paused) = flags;
        let view = status::PoolStatusView { pool_id, eligible, protected, fail_open, decisions_paused, members };
        let wire = pb::PoolStatus::from(&view);
        prop_assert_eq!(status::PoolStatusView::try_from(&wire).unwrap(), view);
    }
}
