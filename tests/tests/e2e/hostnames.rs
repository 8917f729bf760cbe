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
