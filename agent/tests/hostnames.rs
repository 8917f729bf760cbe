//! Hostname members: the agent resolves the name through a real resolver
//! (unbound on loopback, serving the origin zone from a zone file),
//! probes every address it resolved to, and passes only when all pass.
//! Every resolved address goes through the runtime checks and the
//! deny-list first.
#![allow(clippy::unwrap_used)]

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use gslb_agent::scheduler::ProbeContext;
use gslb_e2e::unbound::{Unbound, UnboundConf};
use gslb_e2e::wait::temp_dir;
use gslb_proto::link::resolve::Resolver;
use gslb_shared::{FailReason, HttpProbe, Probe, StreamProbe};
use support::*;
use tokio::net::TcpListener;

/// unbound serving `origin.test`: `both` at two loopback
/// addresses, `one` at one, `meta` at a link-local address, and `none`
/// with no address record.
fn origin(dir: &std::path::Path) -> Unbound {
    Unbound::start(
        dir,
        &UnboundConf {
            zones: vec![("origin.test".into(), ORIGIN.map(String::from).to_vec())],
            ready: "both.origin.test".into(),
            ..UnboundConf::default()
        },
    )
}

const ORIGIN: [&str; 7] = [
    "both.origin.test. 30 IN A 127.0.0.1",
    "both.origin.test. 30 IN A 127.0.0.2",
    "one.origin.test. 30 IN A 127.0.0.2",
    "meta.origin.test. 30 IN A 127.0.0.1",
    "meta.origin.test. 30 IN A 169.254.169.254",
    "none.origin.test. 30 IN TXT \"no address\"",
    "blocked.origin.test. 30 IN A 0.0.0.0",
];

/// A context whose resolver is `unbound`.
fn context_with(unbound: &Unbound) -> ProbeContext {
    let resolver = Resolver::server(unbound.addr, Duration::from_secs(2));
    Arc::into_inner(support::context_with(None, resolver)).unwrap()
}

/// A TCP listener on `ip` and `port` (0: any free one) that counts accepts.
async fn listener(ip: &str, port: u16) -> (u16, Arc<AtomicUsize>) {
    let l = TcpListener::bind((ip, port)).await.unwrap();
    let port = l.local_addr().unwrap().port();
    let count = Arc::new(AtomicUsize::new(0));
    let c = count.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = l.accept().await {
            c.fetch_add(1, Ordering::SeqCst);
            drop(stream);
        }
    });
    (port, count)
}

fn hostname_target(name: &str, probe: Probe, port: u16) -> gslb_agent::target::Target {
    let t = parse(&assignment(1, name, port, &check(probe, 1_500))).unwrap();
    assert_eq!(
        t.resolve.as_ref().map(ToString::to_string).as_deref(),
        Some(name)
    );
    t
}

fn tcp() -> Probe {
    Probe::Tcp(StreamProbe::default())
}

#[tokio::test]
async fn every_resolved_address_is_probed_and_all_must_pass() {
    let dir = temp_dir("agent-hostnames");
    let unbound = origin(&dir);
    let ctx = context_with(&unbound);
    let (port, first) = listener("127.0.0.1", 0).await;
    let (_, second) = listener("127.0.0.2", port).await;

    let both = hostname_target("both.origin.test", tcp(), port);
    assert_eq!(reason(probe(&ctx, &both).await), None);
    assert_eq!(first.load(Ordering::SeqCst), 1, "127.0.0.1 probed");
    assert_eq!(second.load(Ordering::SeqCst), 1, "127.0.0.2 probed");

    // Only 127.0.0.1 listens on this port: the name fails, and the
    // failure names the address that failed.
    let (lone, _) = listener("127.0.0.1", 0).await;
    let failure = probe(&ctx, &hostname_target("both.origin.test", tcp(), lone))
        .await
        .unwrap_err();
    assert_eq!(failure.reason, FailReason::Refused, "{failure:?}");
    assert!(failure.detail.starts_with("127.0.0.2:"), "{failure:?}");

    // The answer changes: the next probe follows it.
    let mut origin: Vec<&str> = ORIGIN.to_vec();
    origin.retain(|r| *r != "both.origin.test. 30 IN A 127.0.0.2");
    unbound.set_zone("origin.test", &origin);
    assert_eq!(
        reason(probe(&ctx, &hostname_target("both.origin.test", tcp(), lone)).await),
        None
    );
}

#[tokio::test]
async fn a_name_that_leads_to_a_denied_address_is_never_probed_anywhere() {
    let dir = temp_dir("agent-hostnames-deny");
    let unbound = origin(&dir);
    let ctx = context_with(&unbound);
    let (port, accepted) = listener("127.0.0.1", 0).await;
    let failure = probe(&ctx, &hostname_target("meta.origin.test", tcp(), port))
        .await
        .unwrap_err();
    assert_eq!(failure.reason, FailReason::DeniedDestination, "{failure:?}");
    assert!(failure.detail.contains("169.254.169.254"), "{failure:?}");
    // Checked before anything is sent: not even the allowed address.
    assert_eq!(accepted.load(Ordering::SeqCst), 0);
}

#[tokio::test]
async fn names_without_addresses_fail_as_resolve() {
    let dir = temp_dir("agent-hostnames-none");
    let unbound = origin(&dir);
    let ctx = context_with(&unbound);
    for (name, says) in [
        ("none.origin.test", "no address records"),
        // What a blocking resolver answers is no address either.
        ("blocked.origin.test", "none with a unicast address"),
        ("missing.origin.test", "no such name"),
    ] {
        let failure = probe(&ctx, &hostname_target(name, tcp(), 80))
            .await
            .unwrap_err();
        assert_eq!(failure.reason, FailReason::Resolve, "{name}: {failure:?}");
        assert!(failure.detail.contains(says), "{name}: {failure:?}");
    }
    // A resolver that never answers fails the probe within its timeout.
    let silent = ProbeContext {
        resolver: no_resolver(),
        ..Arc::into_inner(context(None)).unwrap()
    };
    let failure = probe(&silent, &hostname_target("one.origin.test", tcp(), 80))
        .await
        .unwrap_err();
    assert!(
        matches!(failure.reason, FailReason::Resolve | FailReason::Timeout),
        "{failure:?}"
    );
}

#[tokio::test]
async fn http_checks_of_a_hostname_send_it_as_the_host() {
    let dir = temp_dir("agent-hostnames-http");
    let unbound = origin(&dir);
    let ctx = context_with(&unbound);
    let port = http_server_echoing_host().await;
    let probe_host = Probe::Http(HttpProbe {
        path: "/".into(),
        body_regex: Some(format!("^host=one.origin.test:{port}$")),
        ..HttpProbe::default()
    });
    // one.origin.test is 127.0.0.2: bind the server there.
    assert_eq!(
        reason(probe(&ctx, &hostname_target("one.origin.test", probe_host, port)).await),
        None
    );
}

/// An HTTP server on 127.0.0.2 answering `host=<Host header>`.
async fn http_server_echoing_host() -> u16 {
    use axum::Router;
    use axum::http::HeaderMap;
    use axum::routing::get;
    let app = Router::new().route(
        "/",
        get(|h: HeaderMap| async move {
            let host = h.get("host").and_then(|v| v.to_str().ok()).unwrap_or("");
            format!("host={host}")
        }),
    );
    let listener = TcpListener::bind(("127.0.0.2", 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    port
}

/// A server on 127.0.0.1 redirecting `/to/NAME` to `http://NAME:PORT/`.
async fn redirecting_server(to_port: u16) -> u16 {
    use axum::Router;
    use axum::extract::Path;
    use axum::http::{StatusCode, header};
    use axum::routing::get;
    let app = Router::new().route(
        "/to/{name}",
        get(move |Path(name): Path<String>| async move {
            let to = format!("http://{name}:{to_port}/");
            (StatusCode::FOUND, [(header::LOCATION, to)], "")
        }),
    );
    let listener = TcpListener::bind(("127.0.0.1", 0)).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await });
    port
}

#[tokio::test]
async fn a_followed_redirect_resolves_its_host_and_checks_every_address() {
    let dir = temp_dir("agent-hostnames-redirect");
    let unbound = origin(&dir);
    let ctx = context_with(&unbound);
    let echo = http_server_echoing_host().await;
    let from = redirecting_server(echo).await;
    let follow = |name: &str, expect: Option<String>| {
        Probe::Http(HttpProbe {
            path: format!("/to/{name}"),
            follow_redirects: 1,
            body_regex: expect,
            ..HttpProbe::default()
        })
    };
    // one.origin.test is 127.0.0.2, where the echo server listens; the
    // hop carries the name as Host.
    let to_one = follow(
        "one.origin.test",
        Some(format!("^host=one.origin.test:{echo}$")),
    );
    let outcome = probe(&ctx, &target(to_one, from)).await;
    assert_eq!(reason(outcome.clone()), None, "{outcome:?}");
    // meta.origin.test has a link-local address beside a loopback one:
    // the hop is refused before connecting anywhere.
    let failure = probe(&ctx, &target(follow("meta.origin.test", None), from))
        .await
        .unwrap_err();
    assert_eq!(failure.reason, FailReason::DeniedDestination, "{failure:?}");
    assert!(
        failure.detail.contains("redirect 1") && failure.detail.contains("169.254.0.0/16"),
        "{failure:?}"
    );
    // A name without an address fails as resolve.
    let failure = probe(&ctx, &target(follow("none.origin.test", None), from))
        .await
        .unwrap_err();
    assert_eq!(failure.reason, FailReason::Resolve, "{failure:?}");
}

mod dns_checks {
    use super::*;
    use gslb_shared::{DnsProbe, DnsTransport};

    fn dns(name: &str, configure: impl FnOnce(&mut DnsProbe)) -> Probe {
        let mut d = DnsProbe::new(name);
        d.recursion_desired = true;
        configure(&mut d);
        Probe::Dns(d)
    }

    /// The DNS check against a real server (unbound serving origin.test),
    /// over UDP and TCP, on rcode and answer.
    #[tokio::test]
    async fn dns_checks_judge_rcode_and_answer_over_udp_and_tcp() {
        let dir = temp_dir("agent-dns-check");
        let unbound = origin(&dir);
        let ctx = context(None);
        let port = unbound.addr.port();
        for transport in [DnsTransport::Udp, DnsTransport::Tcp] {
            let cases: [(Probe, Option<FailReason>); 7] = [
                (dns("one.origin.test", |_| {}), None),
                (
                    dns("one.origin.test", |d| {
                        d.expect_answer = Some("127.0.0.2".into())
                    }),
                    None,
                ),
                (
                    dns("one.origin.test", |d| {
                        d.expect_answer = Some("127.0.0.9".into())
                    }),
                    Some(FailReason::BodyMismatch),
                ),
                (
                    dns("none.origin.test", |d| {
                        d.query_type = "TXT".into();
                        d.expect_answer = Some("no address".into());
                    }),
                    None,
                ),
                (dns("missing.origin.test", |_| {}), Some(FailReason::Status)),
                (
                    dns("missing.origin.test", |d| {
                        d.expected_rcodes = vec!["NXDOMAIN".into()]
                    }),
                    None,
                ),
                (
                    dns("both.origin.test", |d| {
                        d.query_type = "AAAA".into();
                        d.expect_answer = Some("::1".into());
                    }),
                    Some(FailReason::BodyMismatch),
                ),
            ];
            for (probe_def, expected) in cases {
                let probe_def = match probe_def {
                    Probe::Dns(mut d) => {
                        d.transport = transport;
                        Probe::Dns(d)
                    }
                    other => other,
                };
                let t = target(probe_def.clone(), port);
                let outcome = probe(&ctx, &t).await;
                assert_eq!(
                    reason(outcome.clone()),
                    expected,
                    "{probe_def:?}: {outcome:?}"
                );
            }
        }
    }

    #[tokio::test]
    async fn a_dns_check_of_a_closed_port_is_refused() {
        let ctx = context(None);
        let udp = closed_udp_port().await;
        assert_eq!(
            reason(probe(&ctx, &target(dns("x.test", |_| {}), udp)).await),
            Some(FailReason::Refused)
        );
        let tcp = closed_tcp_port().await;
        let over_tcp = dns("x.test", |d| d.transport = DnsTransport::Tcp);
        assert_eq!(
            reason(probe(&ctx, &target(over_tcp, tcp)).await),
            Some(FailReason::Refused)
        );
    }
}
