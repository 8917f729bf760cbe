//! Hostname members end to end: a pool of two load balancers given by
//! name backs a CNAME record. unbound on loopback is both the origin of
//! those names (a zone it serves) and a real resolver in front of the edge. The
//! agent resolves each name through it and probes the address; the edge
//! answers the CNAME of the healthy member; a resolver follows it to the
//! address; a failed load balancer moves the CNAME to the other; a name
//! that resolves to nothing fails its checks.

use gslb_e2e::catalog::{ZONE, http_check};
use gslb_e2e::dns::{dig, short};
use gslb_e2e::mesh::{Agent, Aggregator, Backend, Edge};
use gslb_e2e::unbound::{Unbound, UnboundConf};
use gslb_e2e::wait::{temp_dir, wait_until};

const LB1: &str = "lb1.origin.test. 1 IN A 127.0.3.1";

fn config(one: u16, two: u16) -> String {
    format!(
        r#"{ZONE}{check}
[[pool]]
name = "lbs"
check = "http"
[[pool.member]]
name = "lb-1"
address = "lb1.origin.test"
port = {one}
[[pool.member]]
name = "lb-2"
address = "lb2.origin.test"
port = {two}
priority = 1

[[record]]
zone = "example.test"
name = "app.example.test"
type = "CNAME"
ttl = 1
dynamic = {{ steering = "roundrobin", pools = ["lbs"] }}
"#,
        check = http_check("http", "1s", "500ms"),
    )
}

#[test]
fn a_cname_pool_of_hostnames_fails_over_through_a_real_resolver() {
    let dir = temp_dir("hostnames");
    let mut one = Backend::start(None, "127.0.3.1:0");
    let two = Backend::start(None, "127.0.3.2:0");
    let agg = Aggregator::start(&dir.join("store"));
    let version = agg.apply(&config(one.addr.port(), two.addr.port()), &dir);
    let url = agg.url();
    let edge = Edge::start(None, Some(&url), &dir.join("cache"), "127.0.0.1:0", &[]);
    edge.wait_version(version);
    let unbound = Unbound::start(
        &dir,
        &UnboundConf {
            stubs: vec![("example.test".into(), edge.dns())],
            zones: vec![(
                "origin.test".into(),
                vec![LB1.into(), "lb2.origin.test. 1 IN A 127.0.3.2".into()],
            )],
            ready: "lb1.origin.test".into(),
            trust_anchors: Vec::new(),
        },
    );
    let resolver = unbound.addr.to_string();
    let _agent = Agent::start_with(None, "fra1", "eu", &url, &["--resolver", &resolver]);

    // Both names resolve and pass: the first tier's name is answered, and
    // a resolver follows it to the load balancer's address.
    wait_until(30, "lb-1 healthy", || {
        agg.try_health("lbs", "lb-1").as_deref() == Some("up")
    });
    assert_eq!(
        short(None, edge.dns(), &["app.example.test", "A"]),
        ["lb1.origin.test."]
    );
    let via = dig(None, unbound.addr, &["app.example.test", "A"]);
    assert!(
        via.contains("CNAME\tlb1.origin.test.") && via.contains("127.0.3.1"),
        "{via}"
    );
    let pool = agg.pool_id("lbs").to_string();
    let members = agg.ctl(&["members", "list", "--pool", &pool]);
    assert!(members.contains("lb1.origin.test"), "{members}");

    // lb-1 fails: the CNAME moves to lb-2, for the edge and the resolver.
    one.kill();
    wait_until(30, "the CNAME on lb2", || {
        short(None, edge.dns(), &["app.example.test", "A"]) == ["lb2.origin.test."]
    });
    wait_until(10, "the resolver on lb2", || {
        short(None, unbound.addr, &["app.example.test", "A"]) == ["127.0.3.2", "lb2.origin.test."]
    });

    // lb2's name stops resolving: its checks fail as `resolve`, and with
    // no healthy member the pool fails open to its first tier.
    unbound.set_zone("origin.test", &[LB1]);
    wait_until(30, "lb-2 down", || {
        agg.try_health("lbs", "lb-2").as_deref() == Some("down")
    });
    let id = agg.member("lbs", "lb-2")["id"]
        .as_u64()
        .unwrap()
        .to_string();
    let log = agg.ctl(&["logs", &id]);
    assert!(log.contains("resolve"), "{log}");
}

fn flattened(port: u16) -> String {
    format!(
        r#"{ZONE}{check}
[[pool]]
name = "apex"
check = "http"
[[pool.member]]
name = "cdn"
address = "cdn.origin.test"
port = {port}

[[record]]
zone = "example.test"
name = "example.test"
type = "A"
ttl = 30
dynamic = {{ steering = "roundrobin", pools = ["apex"], flatten = true }}
"#,
        check = http_check("http", "1s", "500ms"),
    )
}

#[test]
fn a_flattened_apex_answers_what_its_hostname_resolves_to_and_follows_it() {
    let dir = temp_dir("flatten");
    // The load balancer's name has two addresses; both serve on one port.
    let one = Backend::start(None, "127.0.4.1:0");
    let port = one.addr.port();
    let two = Backend::start(None, &format!("127.0.4.2:{port}"));
    let three = Backend::start(None, &format!("127.0.4.3:{port}"));
    let origin = |addresses: &[&str]| -> Vec<String> {
        addresses
            .iter()
            .map(|a| format!("cdn.origin.test. 7 IN A {a}"))
            .collect()
    };
    let unbound = Unbound::start(
        &dir,
        &UnboundConf {
            zones: vec![("origin.test".into(), origin(&["127.0.4.1", "127.0.4.2"]))],
            ready: "cdn.origin.test".into(),
            trust_anchors: Vec::new(),
            ..UnboundConf::default()
        },
    );
    let resolver = unbound.addr.to_string();
    let agg = Aggregator::start_with(
        None,
        &dir.join("store"),
        "127.0.0.1:0",
        &["--startup-window", "1s", "--resolver", &resolver],
    );
    let version = agg.apply(&flattened(port), &dir);
    let url = agg.url();
    let edge = Edge::start(None, Some(&url), &dir.join("cache"), "127.0.0.1:0", &[]);
    edge.wait_version(version);
    let _agent = Agent::start_with(None, "fra1", "eu", &url, &["--resolver", &resolver]);

    // Probed at both addresses and healthy: the apex answers both, with
    // the TTL of the records they came from (7 s, not the record's 30).
    wait_until(30, "the apex flattened", || {
        short(None, edge.dns(), &["example.test", "A"]) == ["127.0.4.1", "127.0.4.2"]
    });
    let reply = dig(None, edge.dns(), &["example.test", "A"]);
    assert!(
        reply.contains("example.test.\t\t7\tIN\tA\t127.0.4.1"),
        "{reply}"
    );
    assert!(reply.contains("flags: qr aa"), "{reply}");

    // The name moves to other addresses: the aggregator resolves it again
    // when its TTL has run out, and the edge follows.
    unbound.set_zone("origin.test", &["cdn.origin.test. 7 IN A 127.0.4.3"]);
    wait_until(30, "the apex on the new address", || {
        short(None, edge.dns(), &["example.test", "A"]) == ["127.0.4.3"]
    });
    // A zone transfer or export carries the same current answer.
    let export = agg.ctl(&["zone", "export", "example.test"]);
    assert!(export.contains("127.0.4.3"), "{export}");
    drop((two, three));
}
