//! Every check type and option through the real binaries: the aggregator
//! decides each member's health from a real agent's probes of real servers
//! on loopback, the DNS check probing our own edge.

use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::http::{StatusCode, header};
use axum::routing::get;
use gslb_e2e::catalog::{ZONE, a_record, member, pool};
use gslb_e2e::local::LocalMesh;
use gslb_e2e::wait::wait_until;
use tonic_health::ServingStatus;
use tonic_health::server::HealthReporter;

/// The servers the checks probe, run on one runtime in this process.
struct Backends {
    rt: tokio::runtime::Runtime,
    http: SocketAddr,
    grpc: SocketAddr,
    health: HealthReporter,
    silent_udp: std::net::UdpSocket,
    closed_tcp: SocketAddr,
}

fn backends() -> Backends {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (http, grpc, health) = rt.block_on(async {
        let app = Router::new()
            .route("/ok", get(|| async { "service healthy" }))
            .route(
                "/slow",
                get(|| async {
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    "service healthy, slowly"
                }),
            )
            .route(
                "/moved",
                get(|| async { (StatusCode::FOUND, [(header::LOCATION, "/ok")], "") }),
            )
            .route(
                "/metadata",
                get(|| async {
                    let to = "http://169.254.169.254/latest/meta-data/";
                    (StatusCode::FOUND, [(header::LOCATION, to)], "")
                }),
            );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let http = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await });
        let (health, service) = tonic_health::server::health_reporter();
        health
            .set_service_status("app", ServingStatus::Serving)
            .await;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let grpc = listener.local_addr().unwrap();
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(service)
                .serve_with_incoming(tokio_stream::wrappers::TcpListenerStream::new(listener)),
        );
        (http, grpc, health)
    });
    let silent_udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let closed_tcp = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    Backends {
        rt,
        http,
        grpc,
        health,
        silent_udp,
        closed_tcp,
    }
}

/// A check every 200 ms (timeout 150 ms) unless `extra` sets its timing.
fn check(name: &str, probe: &str, extra: &str) -> String {
    let timing = if extra.contains("interval") {
        ""
    } else {
        "interval = \"200ms\"\ntimeout = \"150ms\"\n"
    };
    format!("\n[[check]]\nname = \"{name}\"\nprobe = {probe}\n{timing}{extra}\n")
}

/// One pool per check, with one member `m` at `addr`.
fn checked(name: &str, addr: SocketAddr, probe: &str, extra: &str) -> String {
    format!(
        "{}{}",
        check(name, probe, extra),
        pool(name, Some(name), "", &[member("m", addr, "")])
    )
}

fn catalog(b: &Backends, edge_dns: SocketAddr, static_ip: &str) -> String {
    let http = |path: &str, more: &str| format!("{{ type = \"http\", path = \"{path}\"{more} }}");
    let mut c = String::from(ZONE);
    c += &format!(
        "\n[[record]]\nzone = \"example.test\"\nname = \"static.example.test\"\ntype = \"A\"\nttl = 5\nstatic = [{{ a = \"{static_ip}\" }}]\n"
    );
    c += &checked(
        "dns",
        edge_dns,
        r#"{ type = "dns", queryName = "static.example.test", expectAnswer = "192.0.2.1" }"#,
        "",
    );
    c += &checked(
        "dns-tcp",
        edge_dns,
        r#"{ type = "dns", queryName = "nowhere.example.test", transport = "tcp", expectedRcodes = ["NXDOMAIN"] }"#,
        "",
    );
    c += &checked("grpc", b.grpc, r#"{ type = "grpc", service = "app" }"#, "");
    c += &checked(
        "redirect",
        b.http,
        &http(
            "/moved",
            ", followRedirects = 1, bodyContains = \"healthy\"",
        ),
        "",
    );
    c += &checked("redirect-off", b.http, &http("/moved", ""), "");
    c += &checked(
        "metadata",
        b.http,
        &http("/metadata", ", followRedirects = 3"),
        "",
    );
    c += &checked(
        "slow",
        b.http,
        &http("/slow", ""),
        "timeout = \"400ms\"\ninterval = \"1s\"\nlatencyThreshold = \"100ms\"",
    );
    c += &checked(
        "inverted",
        b.closed_tcp,
        r#"{ type = "tcp" }"#,
        "inverted = true",
    );
    c += &checked(
        "udp-silent",
        b.silent_udp.local_addr().unwrap(),
        r#"{ type = "udp" }"#,
        "",
    );
    c += &checked(
        "retries",
        b.closed_tcp,
        r#"{ type = "tcp", send = "hex:50494e470d0a" }"#,
        "retries = 1\ninterval = \"1s\"\ntimeout = \"300ms\"",
    );
    c += &a_record("www.example.test", &["grpc"]);
    c
}

/// The reason the first location reported for `pool`'s member.
fn failure(mesh: &LocalMesh, pool: &str) -> String {
    let m = mesh.agg.member(pool, "m");
    m["status"]["locations"][0]["failure"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

fn wait_health(mesh: &LocalMesh, pool: &str, want: &str, reason: Option<&str>) {
    wait_until(30, &format!("{pool} to be {want} ({reason:?})"), || {
        mesh.agg.health(pool, "m") == want && reason.is_none_or(|r| failure(mesh, pool) == r)
    });
}

#[test]
fn each_check_type_and_option_decides_health_through_the_mesh() {
    let b = backends();
    // The DNS checks probe the mesh's own edge, whose port is known once
    // it runs: start on the zone alone, then apply the checks.
    let mesh = LocalMesh::start("e2e-checks", ZONE, &[("fra1", "eu")]);
    mesh.apply(&catalog(&b, mesh.dns, "192.0.2.1"));
    for pool in [
        "dns",
        "dns-tcp",
        "grpc",
        "redirect",
        "inverted",
        "udp-silent",
    ] {
        wait_health(&mesh, pool, "up", None);
    }
    wait_health(&mesh, "redirect-off", "down", Some("status"));
    wait_health(&mesh, "metadata", "down", Some("denied-destination"));
    wait_health(&mesh, "slow", "down", Some("slow"));
    wait_health(&mesh, "retries", "down", Some("refused"));
    // The DNS check follows what the edge answers.
    mesh.apply(&catalog(&b, mesh.dns, "192.0.2.2"));
    wait_health(&mesh, "dns", "down", Some("body-mismatch"));
    mesh.apply(&catalog(&b, mesh.dns, "192.0.2.1"));
    wait_health(&mesh, "dns", "up", None);
    // gRPC health follows the server's status, and the answer follows it.
    assert_eq!(
        mesh.answers("www.example.test"),
        vec![b.grpc.ip().to_string()]
    );
    b.rt.block_on(
        b.health
            .set_service_status("app", ServingStatus::NotServing),
    );
    wait_health(&mesh, "grpc", "down", Some("status"));
    // Each new option is refused at the API with its field named, and
    // nothing is stored.
    for (probe, extra, field) in [
        (
            r#"{"type": "http", "followRedirects": 6}"#,
            "",
            "probe.followRedirects",
        ),
        (
            r#"{"type": "dns", "queryName": "x.test", "queryType": "AXFR"}"#,
            "",
            "probe.queryType",
        ),
        (r#"{"type": "grpc", "service": "a b"}"#, "", "probe.service"),
        (r#"{"type": "tcp", "send": "hex:zz"}"#, "", "probe.send"),
        (r#"{"type": "tcp"}"#, r#", "retries": 9"#, "retries"),
        (
            r#"{"type": "tcp"}"#,
            r#", "latencyThreshold": "2s""#,
            "latencyThreshold",
        ),
        (r#"{"type": "none"}"#, r#", "inverted": true"#, "inverted"),
    ] {
        let body = format!(
            r#"{{"name": "bad", "probe": {probe}, "interval": "1s", "timeout": "500ms", "rise": 0.85, "fall": 0.2, "window": 1{extra}}}"#
        );
        let (status, reply) = mesh.agg.rest("POST", "/api/v1/checks", &body);
        assert_eq!(status, 400, "{body}: {reply}");
        assert!(reply.to_string().contains(field), "{field}: {reply}");
    }
    let (_, checks) = mesh.agg.rest("GET", "/api/v1/checks", "");
    assert!(!checks.to_string().contains("\"bad\""), "{checks}");
    // The inverted check turns down when its port starts accepting.
    let listener = std::net::TcpListener::bind(b.closed_tcp);
    if let Ok(_open) = listener {
        wait_health(&mesh, "inverted", "down", Some("inverted"));
    }
}
