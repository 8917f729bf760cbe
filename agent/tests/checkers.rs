//! Every checker against real servers on loopback.
#![allow(clippy::unwrap_used)]

mod support;

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::IntoResponse;
use axum::routing::get;
use gslb_agent::buffer::ResultBuffer;
use gslb_agent::checker::Registry;
use gslb_agent::checker::destination::DenyList;
use gslb_agent::checker::tls::ProbeTls;
use gslb_agent::clock::Clock;
use gslb_agent::metrics::Metrics;
use gslb_agent::scheduler::{ProbeContext, probe_once};
use gslb_shared::*;
use support::*;

#[tokio::test]
async fn tcp_connect_passes_on_an_accepting_listener() {
    let ctx = context(None);
    let (port, accepted) = tcp_server(None).await;
    assert_eq!(
        reason(probe(&ctx, &target(Probe::Tcp(stream("", None)), port)).await),
        None
    );
    assert!(
        eventually(Duration::from_secs(2), || accepted.load(Ordering::SeqCst)
            == 1)
        .await
    );
}

#[tokio::test]
async fn tcp_connect_to_a_closed_port_is_refused() {
    let ctx = context(None);
    let port = closed_tcp_port().await;
    assert_eq!(
        reason(probe(&ctx, &target(Probe::Tcp(stream("", None)), port)).await),
        Some(FailReason::Refused)
    );
}

#[tokio::test]
async fn tcp_send_and_expect_match_and_mismatch() {
    let ctx = context(None);
    let (port, _) = tcp_server(Some(b"+PONG\r\n")).await;
    assert_eq!(
        reason(
            probe(
                &ctx,
                &target(Probe::Tcp(stream("PING\r\n", Some("^\\+PONG"))), port)
            )
            .await
        ),
        None
    );
    assert_eq!(
        reason(
            probe(
                &ctx,
                &target(Probe::Tcp(stream("PING\r\n", Some("READY"))), port)
            )
            .await
        ),
        Some(FailReason::Timeout),
        "the server holds the connection open without the expected reply"
    );
}

#[tokio::test]
async fn tcp_server_that_never_answers_times_out_within_the_check_timeout() {
    let ctx = context(None);
    let (port, _) = tcp_server(None).await;
    let t = parse(&assignment(
        1,
        LOCAL,
        port,
        &check(Probe::Tcp(stream("HELLO", Some("x"))), 300),
    ))
    .unwrap();
    let started = std::time::Instant::now();
    let (outcome, latency, _) = gslb_agent::scheduler::probe_once(&t, &ctx).await;
    assert_eq!(reason(outcome), Some(FailReason::Timeout));
    assert!(
        latency >= Duration::from_millis(300) && started.elapsed() < Duration::from_secs(2),
        "{latency:?}"
    );
}

#[tokio::test]
async fn udp_echo_passes_and_mismatch_fails() {
    let ctx = context(None);
    let port = udp_echo().await;
    assert_eq!(
        reason(
            probe(
                &ctx,
                &target(Probe::Udp(stream("ping", Some("^ECHO ping$"))), port)
            )
            .await
        ),
        None
    );
    assert_eq!(
        reason(
            probe(
                &ctx,
                &target(Probe::Udp(stream("ping", Some("^PONG"))), port)
            )
            .await
        ),
        Some(FailReason::BodyMismatch)
    );
}

#[tokio::test]
async fn udp_to_a_closed_port_is_refused() {
    let ctx = context(None);
    let port = closed_udp_port().await;
    assert_eq!(
        reason(probe(&ctx, &target(Probe::Udp(stream("ping", None)), port)).await),
        Some(FailReason::Refused)
    );
}

#[tokio::test]
async fn mysql_greeting_passes_and_error_packet_fails() {
    let ctx = context(None);
    let ok = mysql_server(b"\x0a8.0.36-test\0\x01\x00\x00\x00abcdefgh\0").await;
    assert_eq!(reason(probe(&ctx, &target(Probe::Mysql, ok)).await), None);
    let blocked = mysql_server(b"\xff\x69\x04Host '127.0.0.1' is blocked").await;
    let failure = probe(&ctx, &target(Probe::Mysql, blocked))
        .await
        .unwrap_err();
    assert_eq!(failure.reason, FailReason::Protocol);
    assert!(failure.detail.contains("is blocked"), "{}", failure.detail);
    let http = {
        let (port, _) = tcp_server(Some(b"HTTP/1.1 400 Bad Request\r\n\r\n")).await;
        port
    };
    assert!(
        probe(&ctx, &target(Probe::Mysql, http)).await.is_err(),
        "a non-MySQL server fails"
    );
}

#[tokio::test]
async fn icmp_echo_to_loopback_passes() {
    let ctx = context(None);
    for addr in ["127.0.0.1", "::1"] {
        let t = parse(&assignment(1, addr, 1, &check(Probe::Icmp, 1_000))).unwrap();
        let outcome = probe(&ctx, &t).await;
        assert_eq!(reason(outcome.clone()), None, "{addr}: {outcome:?}");
    }
}

#[tokio::test]
async fn none_passes_without_traffic() {
    let ctx = context(None);
    let port = closed_tcp_port().await;
    assert_eq!(reason(probe(&ctx, &target(Probe::None, port)).await), None);
}

async fn http_server() -> u16 {
    let app = Router::new()
        .route("/ok", get(|| async { "service healthy" }))
        .route(
            "/fail",
            get(|| async { (StatusCode::SERVICE_UNAVAILABLE, "down") }),
        )
        .route(
            "/redirect",
            get(|| async { (StatusCode::FOUND, [(header::LOCATION, "/ok")], "") }),
        )
        .route(
            "/to-metadata",
            get(|| async {
                let to = "http://169.254.169.254/latest/meta-data/";
                (StatusCode::FOUND, [(header::LOCATION, to)], "")
            }),
        )
        .route(
            "/to-mapped",
            get(|| async {
                let to = "http://[::ffff:169.254.169.254]/";
                (StatusCode::MOVED_PERMANENTLY, [(header::LOCATION, to)], "")
            }),
        )
        .route(
            "/headers",
            get(|h: HeaderMap| async move {
                let host = h
                    .get("host")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_owned();
                let token = h
                    .get("x-token")
                    .and_then(|v| v.to_str().ok())
                    .unwrap_or("")
                    .to_owned();
                format!("host={host} token={token}")
            }),
        )
        .route(
            "/slow-body",
            get(|| async {
                let chunks = futures_like_stream();
                axum::body::Body::from_stream(chunks).into_response()
            }),
        );
    let listener = tokio::net::TcpListener::bind((LOCAL, 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    port
}

/// Headers at once, then one byte every 200 ms for ten seconds.
fn futures_like_stream() -> tokio_stream::wrappers::ReceiverStream<Result<Vec<u8>, Infallible>> {
    let (tx, rx) = tokio::sync::mpsc::channel(1);
    tokio::spawn(async move {
        for _ in 0..50 {
            if tx.send(Ok(b"x".to_vec())).await.is_err() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    });
    tokio_stream::wrappers::ReceiverStream::new(rx)
}

#[tokio::test]
async fn http_status_codes_decide() {
    let ctx = context(None);
    let port = http_server().await;
    assert_eq!(
        reason(probe(&ctx, &target(http("/ok", |_| {}), port)).await),
        None
    );
    assert_eq!(
        reason(probe(&ctx, &target(http("/fail", |_| {}), port)).await),
        Some(FailReason::Status)
    );
    let accept_5xx = http("/fail", |h| {
        h.expected_status = vec![StatusRange { from: 500, to: 599 }]
    });
    assert_eq!(reason(probe(&ctx, &target(accept_5xx, port)).await), None);
    assert_eq!(
        reason(probe(&ctx, &target(http("/missing", |_| {}), port)).await),
        Some(FailReason::Status)
    );
}

#[tokio::test]
async fn http_redirect_fails_and_is_not_followed() {
    let ctx = context(None);
    let port = http_server().await;
    let failure = probe(&ctx, &target(http("/redirect", |_| {}), port))
        .await
        .unwrap_err();
    assert_eq!(failure.reason, FailReason::Status);
    assert!(
        failure.detail.contains("302") && failure.detail.contains("not followed"),
        "{}",
        failure.detail
    );
}

#[tokio::test]
async fn a_redirect_to_a_denied_address_is_a_denied_destination() {
    let ctx = context(None);
    let port = http_server().await;
    for path in ["/to-metadata", "/to-mapped"] {
        let failure = probe(&ctx, &target(http(path, |_| {}), port))
            .await
            .unwrap_err();
        assert_eq!(failure.reason, FailReason::DeniedDestination, "{path}");
        assert!(
            failure
                .detail
                .contains("169.254.169.254 is in the denied range 169.254.0.0/16")
                && failure.detail.contains("not followed"),
            "{}",
            failure.detail
        );
    }
}

/// A target on a denied address: refused before any packet is sent (the
/// address is never contacted; the probe takes no time).
#[tokio::test]
async fn denied_targets_are_refused_before_sending_anything() {
    let ctx = context(None);
    for address in ["169.254.169.254", "::ffff:169.254.169.254", "fe80::1"] {
        for probe_kind in [
            http("/", |_| {}),
            Probe::Tcp(StreamProbe::default()),
            Probe::Udp(stream("x", None)),
            Probe::Icmp,
        ] {
            let t = parse(&assignment(1, address, 80, &check(probe_kind, 1_000))).unwrap();
            let (outcome, latency, _) = probe_once(&t, &ctx).await;
            let failure = outcome.unwrap_err();
            assert_eq!(failure.reason, FailReason::DeniedDestination, "{address}");
            assert_eq!(latency, Duration::ZERO);
        }
    }
}

/// The aggregator's listener is denied exactly; the server sees no connection.
#[tokio::test]
async fn the_aggregator_listener_is_never_probed() {
    let (port, connections) = tcp_server(None).await;
    let deny = DenyList::new(vec![]);
    deny.deny_exact([addr(port)]);
    let ctx = ProbeContext {
        registry: Registry::builtin(
            ProbeTls::new(None, true).unwrap(),
            Arc::new(deny),
            no_resolver(),
            Default::default(),
        ),
        limit: tokio::sync::Semaphore::new(4),
        buffer: Arc::new(ResultBuffer::new(100, 10)),
        clock: Clock::system(),
        metrics: Metrics::new(),
        resolver: no_resolver(),
    };
    let failure = probe(&ctx, &target(Probe::Tcp(StreamProbe::default()), port))
        .await
        .unwrap_err();
    assert_eq!(failure.reason, FailReason::DeniedDestination);
    assert!(
        failure.detail.contains("aggregator's own listener"),
        "{}",
        failure.detail
    );
    assert_eq!(connections.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn http_body_regex_matches_or_fails() {
    let ctx = context(None);
    let port = http_server().await;
    assert_eq!(
        reason(
            probe(
                &ctx,
                &target(
                    http("/ok", |h| h.body_regex = Some("healthy$".into())),
                    port
                )
            )
            .await
        ),
        None
    );
    assert_eq!(
        reason(
            probe(
                &ctx,
                &target(
                    http("/ok", |h| h.body_regex = Some("^degraded".into())),
                    port
                )
            )
            .await
        ),
        Some(FailReason::BodyMismatch)
    );
}

#[tokio::test]
async fn http_slow_body_times_out() {
    let ctx = context(None);
    let port = http_server().await;
    let probe_def = http("/slow-body", |h| h.body_regex = Some("never".into()));
    let t = parse(&assignment(1, LOCAL, port, &check(probe_def, 500))).unwrap();
    assert_eq!(reason(probe(&ctx, &t).await), Some(FailReason::Timeout));
}

#[tokio::test]
async fn http_sends_host_and_custom_headers() {
    let ctx = context(None);
    let port = http_server().await;
    let with_headers = http("/headers", |h| {
        h.headers = vec![
            Header {
                name: "Host".into(),
                value: "api.example.test".into(),
            },
            Header {
                name: "X-Token".into(),
                value: "s3cret".into(),
            },
        ];
        h.body_regex = Some("^host=api.example.test token=s3cret$".into());
    });
    assert_eq!(reason(probe(&ctx, &target(with_headers, port)).await), None);
    let default_host = http("/headers", |h| {
        h.body_regex = Some(format!("^host=127.0.0.1:{port} "))
    });
    assert_eq!(reason(probe(&ctx, &target(default_host, port)).await), None);
}

#[tokio::test]
async fn http_opens_a_new_connection_per_probe() {
    let ctx = context(None);
    let (port, accepted) =
        tcp_server(Some(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")).await;
    for _ in 0..3 {
        assert_eq!(
            reason(probe(&ctx, &target(http("/", |_| {}), port)).await),
            None
        );
    }
    assert!(
        eventually(Duration::from_secs(2), || accepted.load(Ordering::SeqCst)
            == 3)
        .await
    );
}

mod https {
    use super::*;
    use hyper::server::conn::http1;
    use hyper::service::service_fn;
    use hyper_util::rt::TokioIo;
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

    struct Pki {
        ca_file: std::path::PathBuf,
        chain: Vec<CertificateDer<'static>>,
        key: PrivateKeyDer<'static>,
        cert_pem: String,
        key_pem: String,
    }

    /// The leaf certificates' expiry: 2030-01-01T00:00:00Z.
    const NOT_AFTER_EPOCH: i64 = 1_893_456_000;

    fn pki(name: &str) -> Pki {
        let ca_key = KeyPair::generate().unwrap();
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "gslb test CA");
        let ca_cert = ca_params.self_signed(&ca_key).unwrap();
        let issuer = Issuer::new(ca_params, ca_key);
        let leaf_key = KeyPair::generate().unwrap();
        let mut leaf_params = CertificateParams::new(vec![name.to_owned()]).unwrap();
        leaf_params.not_after = rcgen::date_time_ymd(2030, 1, 1);
        let leaf = leaf_params.signed_by(&leaf_key, &issuer).unwrap();
        let dir =
            std::env::temp_dir().join(format!("gslb-agent-pki-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ca_file = dir.join("ca.pem");
        std::fs::write(&ca_file, ca_cert.pem()).unwrap();
        Pki {
            ca_file,
            chain: vec![leaf.der().clone()],
            key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der())),
            cert_pem: leaf.pem(),
            key_pem: leaf_key.serialize_pem(),
        }
    }

    async fn https_server(pki: &Pki) -> u16 {
        let _ = rustls::crypto::ring::default_provider().install_default();
        let config = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(pki.chain.clone(), pki.key.clone_key())
        .unwrap();
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind((LOCAL, 0)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move {
            loop {
                let Ok((tcp, _)) = listener.accept().await else {
                    return;
                };
                let acceptor = acceptor.clone();
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let service = service_fn(|_req| async {
                        Ok::<_, Infallible>(hyper::Response::new(http_body_util::Full::new(
                            bytes::Bytes::from_static(b"secure ok"),
                        )))
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(tls), service)
                        .await;
                });
            }
        });
        port
    }

    fn https(sni: &str, verify: bool) -> Probe {
        Probe::Https(HttpProbe {
            path: "/".into(),
            tls_server_name: Some(sni.into()),
            tls_verify: verify,
            body_regex: Some("secure ok".into()),
            ..HttpProbe::default()
        })
    }

    #[tokio::test]
    async fn https_with_the_test_ca_and_the_right_name_passes() {
        let pki = pki("backend.test");
        let port = https_server(&pki).await;
        let ctx = context(Some(ProbeTls::new(Some(&pki.ca_file), false).unwrap()));
        let outcome = probe(&ctx, &target(https("backend.test", true), port)).await;
        assert_eq!(reason(outcome.clone()), None, "{outcome:?}");
    }

    #[tokio::test]
    async fn https_with_a_wrong_name_fails_tls_unless_verification_is_off() {
        let pki = pki("backend.test");
        let port = https_server(&pki).await;
        let ctx = context(Some(ProbeTls::new(Some(&pki.ca_file), false).unwrap()));
        let failure = probe(&ctx, &target(https("other.test", true), port))
            .await
            .unwrap_err();
        assert_eq!(failure.reason, FailReason::Tls, "{}", failure.detail);
        assert_eq!(
            reason(probe(&ctx, &target(https("other.test", false), port)).await),
            None
        );
    }

    fn expected_days() -> f64 {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64;
        (NOT_AFTER_EPOCH - now) as f64 / 86_400.0
    }

    #[tokio::test]
    async fn https_probes_export_the_days_left_on_the_certificate() {
        let pki = pki("backend.test");
        let port = https_server(&pki).await;
        let ctx = context(Some(ProbeTls::new(Some(&pki.ca_file), false).unwrap()));
        let t = target(https("backend.test", true), port);
        assert_eq!(ctx.metrics.cert_expiry.days(t.key), None);
        assert_eq!(reason(probe(&ctx, &t).await), None);
        let days = ctx.metrics.cert_expiry.days(t.key).unwrap();
        assert!((days - expected_days()).abs() < 0.01, "{days}");
        assert!(
            ctx.metrics
                .encode()
                .contains("gslb_agent_tls_cert_expiry_days{member=\"1\",check=\"1\"}"),
            "{}",
            ctx.metrics.encode()
        );
    }

    /// gRPC health over TLS: verified against the test CA with the right
    /// name, refused with the wrong one, and the certificate's days left
    /// exported.
    #[tokio::test]
    async fn grpc_over_tls_verifies_and_exports_the_days_left() {
        let pki = pki("grpc.test");
        let identity = tonic::transport::Identity::from_pem(&pki.cert_pem, &pki.key_pem);
        let (_reporter, service) = tonic_health::server::health_reporter();
        let listener = tokio::net::TcpListener::bind((LOCAL, 0)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(
            tonic::transport::Server::builder()
                .tls_config(tonic::transport::ServerTlsConfig::new().identity(identity))
                .unwrap()
                .add_service(service)
                .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
        );
        let ctx = context(Some(ProbeTls::new(Some(&pki.ca_file), false).unwrap()));
        let grpc = |name: &str| {
            Probe::Grpc(GrpcProbe {
                tls: true,
                tls_server_name: Some(name.into()),
                ..GrpcProbe::default()
            })
        };
        let t = target(grpc("grpc.test"), port);
        let outcome = probe(&ctx, &t).await;
        assert_eq!(reason(outcome.clone()), None, "{outcome:?}");
        let days = ctx.metrics.cert_expiry.days(t.key).unwrap();
        assert!((days - expected_days()).abs() < 0.01, "{days}");
        assert_eq!(
            reason(probe(&ctx, &target(grpc("other.test"), port)).await),
            Some(FailReason::Tls)
        );
    }

    #[tokio::test]
    async fn https_with_an_untrusted_ca_fails_tls() {
        let pki = pki("backend.test");
        let port = https_server(&pki).await;
        let other = self::pki("unrelated.test");
        let ctx = context(Some(ProbeTls::new(Some(&other.ca_file), false).unwrap()));
        assert_eq!(
            reason(probe(&ctx, &target(https("backend.test", true), port)).await),
            Some(FailReason::Tls)
        );
    }
}

#[tokio::test]
async fn tcp_connect_to_a_listener_that_never_accepts_times_out() {
    // Backlog 0 and nobody accepting: once the queue holds a connection, the
    // kernel drops further SYNs, so a connect neither succeeds nor is refused.
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    socket.bind(&addr(0).into()).unwrap();
    socket.listen(0).unwrap();
    let port = socket.local_addr().unwrap().as_socket().unwrap().port();
    let mut fillers = Vec::new();
    loop {
        match tokio::time::timeout(
            Duration::from_millis(200),
            tokio::net::TcpStream::connect(addr(port)),
        )
        .await
        {
            Ok(Ok(stream)) => fillers.push(stream),
            Ok(Err(e)) => panic!("unexpected connect error {e}"),
            Err(_) => break, // the queue is full: SYNs are now dropped
        }
        assert!(fillers.len() < 16, "the accept queue never filled");
    }
    let ctx = context(None);
    let t = parse(&assignment(
        1,
        LOCAL,
        port,
        &check(Probe::Tcp(stream("", None)), 300),
    ))
    .unwrap();
    assert_eq!(reason(probe(&ctx, &t).await), Some(FailReason::Timeout));
    drop(socket);
}
