//! The options every check has (retries, latency threshold, inversion),
//! HTTP redirects and body text, TCP/UDP hex payloads and silent UDP, and
//! gRPC health checks: each against real servers on loopback.
#![allow(clippy::unwrap_used)]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::Router;
use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::routing::get;
use gslb_agent::target::Target;
use gslb_shared::*;
use support::*;
use tokio::net::{TcpListener, UdpSocket};

fn with(probe: Probe, port: u16, configure: impl FnOnce(&mut Check)) -> Target {
    let mut c = check(probe, 500);
    configure(&mut c);
    validate::check(&c).unwrap();
    parse(&assignment(1, LOCAL, port, &c)).unwrap()
}

/// `/hop/N` redirects to `/hop/N-1` until `/hop/0`, which answers; `/away`
/// redirects to the metadata address; `/slow` answers after 300 ms;
/// `/flaky` fails every other request.
async fn server() -> u16 {
    let flaky = Arc::new(AtomicUsize::new(0));
    let listener = TcpListener::bind((LOCAL, 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let app = Router::new()
        .route(
            "/hop/{n}",
            get(move |Path(n): Path<u32>| async move {
                if n == 0 {
                    return (
                        StatusCode::OK,
                        [(header::LOCATION, String::new())],
                        "arrived",
                    );
                }
                // Alternate relative and absolute references.
                let to = if n.is_multiple_of(2) {
                    format!("{}", n - 1)
                } else {
                    format!("http://127.0.0.1:{port}/hop/{}", n - 1)
                };
                (StatusCode::FOUND, [(header::LOCATION, to)], "")
            }),
        )
        .route(
            "/away",
            get(|| async {
                let to = "http://169.254.169.254/latest/meta-data/";
                (StatusCode::TEMPORARY_REDIRECT, [(header::LOCATION, to)], "")
            }),
        )
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(Duration::from_millis(300)).await;
                "slow but fine"
            }),
        )
        .route(
            "/flaky",
            get(move || {
                let n = flaky.fetch_add(1, Ordering::SeqCst);
                async move {
                    if n.is_multiple_of(2) {
                        (StatusCode::SERVICE_UNAVAILABLE, "not now")
                    } else {
                        (StatusCode::OK, "fine")
                    }
                }
            }),
        );
    tokio::spawn(async move { axum::serve(listener, app).await });
    port
}

#[tokio::test]
async fn redirects_are_followed_up_to_the_limit() {
    let ctx = context(None);
    let port = server().await;
    let follow = |hops: u32, limit: u8| {
        http(&format!("/hop/{hops}"), |h| {
            h.follow_redirects = limit;
            h.body_contains = Some("arrived".into());
        })
    };
    assert_eq!(
        reason(probe(&ctx, &with(follow(5, 5), port, |_| {})).await),
        None
    );
    let failure = probe(&ctx, &with(follow(3, 2), port, |_| {}))
        .await
        .unwrap_err();
    assert_eq!(failure.reason, FailReason::Status);
    assert!(
        failure.detail.contains("more than 2 redirects"),
        "{failure:?}"
    );
    let failure = probe(&ctx, &with(follow(1, 0), port, |_| {}))
        .await
        .unwrap_err();
    assert!(failure.detail.contains("not followed"), "{failure:?}");
}

#[tokio::test]
async fn a_followed_redirect_to_a_denied_address_is_never_connected() {
    let ctx = context(None);
    let port = server().await;
    let failure = probe(
        &ctx,
        &with(http("/away", |h| h.follow_redirects = 3), port, |_| {}),
    )
    .await
    .unwrap_err();
    assert_eq!(failure.reason, FailReason::DeniedDestination);
    assert!(failure.detail.contains("169.254.0.0/16"), "{failure:?}");
}

#[tokio::test]
async fn body_text_must_be_contained() {
    let ctx = context(None);
    let port = server().await;
    let contains = |text: &str| http("/hop/0", |h| h.body_contains = Some(text.into()));
    assert_eq!(
        reason(probe(&ctx, &with(contains("rive"), port, |_| {})).await),
        None
    );
    assert_eq!(
        reason(probe(&ctx, &with(contains("departed"), port, |_| {})).await),
        Some(FailReason::BodyMismatch)
    );
}

#[tokio::test]
async fn a_pass_slower_than_the_threshold_fails_as_slow() {
    let ctx = context(None);
    let port = server().await;
    // The server takes 300 ms; the timeout leaves room for a loaded machine.
    let slow = |threshold: u64| {
        with(http("/slow", |_| {}), port, |c| {
            c.timeout = Duration::from_millis(1_900);
            c.latency_threshold = Some(Duration::from_millis(threshold))
        })
    };
    let failure = probe(&ctx, &slow(100)).await.unwrap_err();
    assert_eq!(failure.reason, FailReason::Slow);
    assert!(failure.detail.contains("over the threshold"), "{failure:?}");
    assert_eq!(reason(probe(&ctx, &slow(1_800)).await), None);
}

#[tokio::test]
async fn retries_let_the_first_pass_win() {
    let ctx = context(None);
    let port = server().await;
    let flaky = |retries: u32| with(http("/flaky", |_| {}), port, |c| c.retries = retries);
    // The server alternates fail, pass: without retries every other probe
    // fails; with one, each probe's second attempt passes.
    let mut without = Vec::new();
    for _ in 0..4 {
        without.push(reason(probe(&ctx, &flaky(0)).await));
    }
    assert!(without.contains(&Some(FailReason::Status)), "{without:?}");
    for _ in 0..4 {
        assert_eq!(reason(probe(&ctx, &flaky(1)).await), None);
    }
}

#[tokio::test]
async fn an_inverted_check_passes_when_the_probe_fails() {
    let ctx = context(None);
    let closed = closed_tcp_port().await;
    let (open, _) = tcp_server(None).await;
    let inverted = |port| with(Probe::Tcp(stream("", None)), port, |c| c.inverted = true);
    assert_eq!(reason(probe(&ctx, &inverted(closed)).await), None);
    assert_eq!(
        reason(probe(&ctx, &inverted(open)).await),
        Some(FailReason::Inverted)
    );
}

#[tokio::test]
async fn hex_payloads_are_sent_and_matched_as_bytes() {
    let ctx = context(None);
    let (port, _) = tcp_server(Some(b"\x00\x01\xffOK")).await;
    let tcp = |expect: &str| {
        with(
            Probe::Tcp(stream("hex:de ad be ef", Some(expect))),
            port,
            |_| {},
        )
    };
    assert_eq!(reason(probe(&ctx, &tcp("hex:01ff4f")).await), None);
    assert_eq!(
        reason(probe(&ctx, &tcp("hex:0102")).await),
        Some(FailReason::Timeout),
        "the server holds the connection open without the bytes"
    );
    // The UDP echo server prefixes "ECHO ": the hex payload comes back.
    let udp = udp_echo().await;
    let echo = with(
        Probe::Udp(stream("hex:00ff10", Some("hex:4f2000ff10"))),
        udp,
        |_| {},
    );
    assert_eq!(
        reason(
            probe(
                &ctx,
                &with(Probe::Udp(stream("x", Some("hex:4f00ff10"))), udp, |_| {})
            )
            .await
        ),
        Some(FailReason::BodyMismatch)
    );
    assert_eq!(reason(probe(&ctx, &echo).await), None);
}

#[tokio::test]
async fn a_udp_check_with_nothing_to_send_passes_on_silence_or_a_reply() {
    let ctx = context(None);
    let silent = UdpSocket::bind((LOCAL, 0)).await.unwrap();
    let silent_port = silent.local_addr().unwrap().port();
    let empty = |port| with(Probe::Udp(stream("", None)), port, |_| {});
    assert_eq!(reason(probe(&ctx, &empty(silent_port)).await), None);
    let mut buf = [0u8; 16];
    let (n, _) = silent.recv_from(&mut buf).await.unwrap();
    assert_eq!(n, 0, "an empty datagram was sent");
    assert_eq!(reason(probe(&ctx, &empty(udp_echo().await)).await), None);
    assert_eq!(
        reason(probe(&ctx, &empty(closed_udp_port().await)).await),
        Some(FailReason::Refused)
    );
}

mod grpc {
    use super::*;
    use tonic_health::ServingStatus;

    /// A tonic server with the standard health service; `app` starts
    /// serving, `down` starts not serving.
    async fn health_server() -> (u16, tonic_health::server::HealthReporter) {
        let (reporter, service) = tonic_health::server::health_reporter();
        reporter
            .set_service_status("app", ServingStatus::Serving)
            .await;
        reporter
            .set_service_status("down", ServingStatus::NotServing)
            .await;
        let listener = TcpListener::bind((LOCAL, 0)).await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(service)
                .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
        );
        (port, reporter)
    }

    fn grpc(service: &str) -> Probe {
        Probe::Grpc(GrpcProbe {
            service: service.into(),
            ..GrpcProbe::default()
        })
    }

    #[tokio::test]
    async fn the_health_status_decides() {
        let ctx = context(None);
        let (port, reporter) = health_server().await;
        let t = |service: &str| with(grpc(service), port, |_| {});
        assert_eq!(
            reason(probe(&ctx, &t("")).await),
            None,
            "the server as a whole"
        );
        assert_eq!(reason(probe(&ctx, &t("app")).await), None);
        let down = probe(&ctx, &t("down")).await.unwrap_err();
        assert_eq!(down.reason, FailReason::Status);
        assert!(down.detail.contains("NOT_SERVING"), "{down:?}");
        let unknown = probe(&ctx, &t("nope")).await.unwrap_err();
        assert_eq!(unknown.reason, FailReason::Status);
        assert!(unknown.detail.contains("unknown"), "{unknown:?}");
        reporter
            .set_service_status("app", ServingStatus::NotServing)
            .await;
        assert_eq!(
            reason(probe(&ctx, &t("app")).await),
            Some(FailReason::Status)
        );
    }

    #[tokio::test]
    async fn a_server_without_grpc_fails_and_a_closed_port_is_refused() {
        let ctx = context(None);
        let (http_port, _) = tcp_server(Some(b"HTTP/1.1 200 OK\r\n\r\n")).await;
        let failure = probe(&ctx, &with(grpc(""), http_port, |_| {}))
            .await
            .unwrap_err();
        assert!(
            matches!(
                failure.reason,
                FailReason::Protocol | FailReason::Reset | FailReason::Status
            ),
            "{failure:?}"
        );
        assert_eq!(
            reason(probe(&ctx, &with(grpc(""), closed_tcp_port().await, |_| {})).await),
            Some(FailReason::Refused)
        );
    }
}
