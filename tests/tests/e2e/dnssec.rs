//! DNSSEC end to end: a zone signed by the aggregator's keys, answered by
//! the edge with signatures made at compile time and while answering, and
//! validated by real resolvers: unbound (with the DS gslbctl prints as its
//! trust anchor) and delv. Every kind of answer comes back with AD, the
//! pool-backed name before and after a failover too; a wrong anchor makes
//! the same answers fail, which shows the checks can fail.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Command;

use gslb_e2e::catalog::{ZONE, http_check};
use gslb_e2e::dns::{dig, rcode, short};
use gslb_e2e::mesh::{Agent, Aggregator, Backend, Edge};
use gslb_e2e::unbound::{Unbound, UnboundConf};
use gslb_e2e::wait::{temp_dir, wait_until};

fn config(one: u16, two: u16, dnssec: &str) -> String {
    format!(
        r#"{ZONE}
[zone.dnssec]
{dnssec}
{check}
[[pool]]
name = "web"
check = "http"
[[pool.member]]
name = "web-1"
address = "127.0.5.1"
port = {one}
[[pool.member]]
name = "web-2"
address = "127.0.5.2"
port = {two}

[[record]]
zone = "example.test"
name = "app.example.test"
type = "A"
ttl = 1
dynamic = {{ steering = "roundrobin", pools = ["web"] }}

[[record]]
zone = "example.test"
name = "www.example.test"
type = "A"
ttl = 30
static = [{{ a = "127.0.0.10" }}, {{ a = "127.0.0.11" }}]

[[record]]
zone = "example.test"
name = "www.example.test"
type = "TXT"
ttl = 30
static = [{{ txt = ["v=spf1 -all"] }}]

[[record]]
zone = "example.test"
name = "*.wild.example.test"
type = "A"
ttl = 30
static = [{{ a = "127.0.0.12" }}]

[[record]]
zone = "example.test"
name = "alias.example.test"
type = "CNAME"
ttl = 30
static = [{{ cname = "www.example.test" }}]

[[record]]
zone = "example.test"
name = "dangling.example.test"
type = "CNAME"
ttl = 30
static = [{{ cname = "gone.example.test" }}]

[[record]]
zone = "example.test"
name = "a.b.deep.example.test"
type = "A"
ttl = 30
static = [{{ a = "127.0.0.13" }}]
"#,
        check = http_check("http", "1s", "500ms"),
    )
}

/// unbound answers `args` with AD set and `status`; the reply.
fn validated(unbound: SocketAddr, args: &[&str], status: &[&str]) -> String {
    let mut all = args.to_vec();
    all.push("+dnssec");
    let reply = dig(None, unbound, &all);
    let flags = reply
        .lines()
        .find(|l| l.contains(";; flags:"))
        .unwrap_or_default();
    assert!(flags.contains(" ad"), "{args:?}: no AD\n{reply}");
    assert!(status.contains(&rcode(&reply)), "{args:?}\n{reply}");
    reply
}

/// delv, asking the edge itself, with `ds` as the only trust anchor.
fn delv(dir: &Path, edge: SocketAddr, ds: &str, name: &str, rtype: &str) -> String {
    let fields: Vec<&str> = ds.split_whitespace().collect();
    let anchors = dir.join("anchors.conf");
    std::fs::write(
        &anchors,
        format!(
            "trust-anchors {{ \"{}\" static-ds {} {} {} \"{}\"; }};\n",
            fields[0], fields[3], fields[4], fields[5], fields[6]
        ),
    )
    .unwrap();
    let out = Command::new("delv")
        .arg(format!("@{}", edge.ip()))
        .args(["-p", &edge.port().to_string(), "-a"])
        .arg(&anchors)
        .args(["+root=example.test", "+tcp", name, rtype])
        .output()
        .unwrap_or_else(|e| panic!("delv not runnable ({e}): apt-get install bind9-dnsutils"));
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn real_resolvers_validate_every_kind_of_signed_answer() {
    let dir = temp_dir("dnssec");
    let mut one = Backend::start(None, "127.0.5.1:0");
    let two = Backend::start(None, "127.0.5.2:0");
    let agg = Aggregator::start(&dir.join("store"));
    let version = agg.apply(
        &config(
            one.addr.port(),
            two.addr.port(),
            "algorithm = \"ecdsap256sha256\"",
        ),
        &dir,
    );
    let url = agg.url();
    let edge = Edge::start(None, Some(&url), &dir.join("cache"), "127.0.0.1:0", &[]);
    edge.wait_version(version);
    let _agent = Agent::start(None, "fra1", "eu", &url);

    // The DS for the registrar; the private keys never show.
    let ds = agg.ctl(&["dnssec", "ds", "example.test"]);
    let ds = ds.trim().to_owned();
    assert!(ds.starts_with("example.test. IN DS "), "{ds}");
    let status = agg.ctl(&["dnssec", "status", "example.test"]);
    assert!(
        status.contains("csk") && status.contains("ecdsap256sha256"),
        "{status}"
    );
    let (_, zones) = agg.rest("GET", "/api/v1/zones", "");
    assert!(!zones.to_string().contains("privateKey"), "{zones}");
    assert!(zones.to_string().contains("publicKey"), "{zones}");
    // Bad settings are refused naming the field; nothing is stored.
    let zone = |dnssec: &str| {
        format!(
            r#"{{"apex": "other.test", "ns": ["ns1.other.test"], "defaultTtl": 60,
                "soa": {{"mname": "ns1.other.test", "rname": "h.other.test", "refresh": 3600,
                "retry": 600, "expire": 604800, "negativeTtl": 5}}, "dnssec": {dnssec}}}"#
        )
    };
    for (dnssec, field) in [
        (r#"{"algorithm": "rsasha1"}"#, "dnssec.algorithm"),
        (r#"{"signatureValidity": 10}"#, "dnssec.signatureValidity"),
        (r#"{"zskLifetime": 86400}"#, "dnssec.zskLifetime"),
    ] {
        let (code, body) = agg.rest("POST", "/api/v1/zones", &zone(dnssec));
        assert_eq!(code, 400, "{dnssec}: {body}");
        assert!(body.to_string().contains(field), "{dnssec}: {body}");
    }
    let (code, created) = agg.rest(
        "POST",
        "/api/v1/zones",
        &zone(r#"{"algorithm": "ed25519"}"#),
    );
    assert_eq!(code, 201, "{created}");
    assert!(!created.to_string().contains("privateKey"), "{created}");
    assert_eq!(created["dnssec"]["keys"][0]["role"], "csk", "{created}");

    // The edge answers DNSKEY at the apex with or without DO; RRSIGs only with.
    let plain = dig(None, edge.dns(), &["example.test", "DNSKEY"]);
    assert!(plain.contains("DNSKEY\t257 3 13"), "{plain}");
    assert!(!plain.contains("RRSIG"), "{plain}");
    let signed = dig(None, edge.dns(), &["example.test", "DNSKEY", "+dnssec"]);
    assert!(signed.contains("RRSIG\tDNSKEY 13 2"), "{signed}");

    wait_until(30, "web-1 and web-2 up", || {
        agg.try_health("web", "web-1").as_deref() == Some("up")
            && agg.try_health("web", "web-2").as_deref() == Some("up")
    });
    let unbound = Unbound::start(
        &dir,
        &UnboundConf {
            stubs: vec![("example.test".into(), edge.dns())],
            ready: "www.example.test".into(),
            trust_anchors: vec![ds.clone()],
            ..Default::default()
        },
    );
    let u = unbound.addr;
    let www = validated(u, &["www.example.test", "A"], &["NOERROR"]);
    assert!(www.contains("127.0.0.10"), "{www}");
    validated(u, &["www.example.test", "TXT"], &["NOERROR"]);
    // NODATA: the name exists, the type does not.
    let nodata = validated(u, &["www.example.test", "MX"], &["NOERROR"]);
    assert!(!nodata.contains("ANSWER: 1"), "{nodata}");
    // No such name (compact denial: an NSEC at the name saying NXNAME).
    validated(u, &["nothere.example.test", "A"], &["NXDOMAIN", "NOERROR"]);
    // An empty non-terminal.
    validated(u, &["b.deep.example.test", "A"], &["NOERROR"]);
    // A wildcard answer, signed as the name asked.
    let wild = validated(u, &["x.wild.example.test", "A"], &["NOERROR"]);
    assert!(wild.contains("127.0.0.12"), "{wild}");
    // A CNAME chain, and one that ends at a name that does not exist.
    let alias = validated(u, &["alias.example.test", "A"], &["NOERROR"]);
    assert!(alias.contains("127.0.0.10"), "{alias}");
    validated(u, &["dangling.example.test", "A"], &["NXDOMAIN", "NOERROR"]);
    // The pool-backed name, before and after a failover.
    wait_until(10, "both members answered", || {
        short(None, edge.dns(), &["app.example.test", "A"]) == ["127.0.5.1", "127.0.5.2"]
    });
    let app = validated(u, &["app.example.test", "A"], &["NOERROR"]);
    assert!(
        app.contains("127.0.5.1") && app.contains("127.0.5.2"),
        "{app}"
    );
    one.kill();
    wait_until(30, "the edge answers web-2 alone", || {
        short(None, edge.dns(), &["app.example.test", "A"]) == ["127.0.5.2"]
    });
    wait_until(10, "the resolver follows, validated", || {
        let reply = validated(u, &["app.example.test", "A"], &["NOERROR"]);
        reply.contains("127.0.5.2") && !reply.contains("127.0.5.1")
    });

    // delv, with nothing but the DS, asking the edge directly.
    for (name, rtype) in [
        ("www.example.test", "A"),
        ("app.example.test", "A"),
        ("x.wild.example.test", "A"),
        ("nothere.example.test", "A"),
        ("www.example.test", "MX"),
    ] {
        let out = delv(&dir, edge.dns(), &ds, name, rtype);
        assert!(
            out.contains("; fully validated")
                || out.contains("; negative response, fully validated"),
            "{name} {rtype}: {out}"
        );
    }

    // A wrong anchor (another digest): the same answers fail.
    let mut bogus: Vec<String> = ds.split_whitespace().map(str::to_owned).collect();
    let digest = bogus.last_mut().unwrap();
    let flipped = if digest.starts_with('0') { "1" } else { "0" };
    digest.replace_range(0..1, flipped);
    let bad_dir = dir.join("bogus");
    std::fs::create_dir_all(&bad_dir).unwrap();
    let bad = Unbound::start(
        &bad_dir,
        &UnboundConf {
            stubs: vec![("example.test".into(), edge.dns())],
            ready: "ready.origin.test".into(),
            zones: vec![(
                "origin.test".into(),
                vec!["ready.origin.test. 1 IN A 127.0.0.1".into()],
            )],
            trust_anchors: vec![bogus.join(" ")],
        },
    );
    for name in [
        "www.example.test",
        "app.example.test",
        "nothere.example.test",
    ] {
        let reply = dig(None, bad.addr, &[name, "A", "+dnssec"]);
        assert_eq!(rcode(&reply), "SERVFAIL", "{name}\n{reply}");
    }
}

#[test]
fn a_zone_signed_with_ed25519_and_a_ksk_zsk_split_validates_too() {
    let dir = temp_dir("dnssec-ed25519");
    let agg = Aggregator::start(&dir.join("store"));
    let version = agg.apply(
        &config(1, 2, "algorithm = \"ed25519\"\nscheme = \"ksk-zsk\""),
        &dir,
    );
    let url = agg.url();
    let edge = Edge::start(None, Some(&url), &dir.join("cache"), "127.0.0.1:0", &[]);
    edge.wait_version(version);
    let ds = agg.ctl(&["dnssec", "ds", "example.test"]).trim().to_owned();
    assert_eq!(ds.lines().count(), 1, "the KSK's DS alone: {ds}");
    assert!(ds.contains(" DS ") && ds.contains(" 15 2 "), "{ds}");
    let status = agg.ctl(&["dnssec", "status", "example.test"]);
    assert!(status.contains("ksk") && status.contains("zsk"), "{status}");
    let unbound = Unbound::start(
        &dir,
        &UnboundConf {
            stubs: vec![("example.test".into(), edge.dns())],
            ready: "www.example.test".into(),
            trust_anchors: vec![ds.clone()],
            ..Default::default()
        },
    );
    let u = unbound.addr;
    validated(u, &["www.example.test", "A"], &["NOERROR"]);
    validated(u, &["www.example.test", "MX"], &["NOERROR"]);
    validated(u, &["nothere.example.test", "A"], &["NXDOMAIN", "NOERROR"]);
    validated(u, &["x.wild.example.test", "A"], &["NOERROR"]);
    validated(u, &["alias.example.test", "A"], &["NOERROR"]);
    let out = delv(&dir, edge.dns(), &ds, "www.example.test", "A");
    assert!(out.contains("; fully validated"), "{out}");
}

#[test]
fn a_key_swapped_in_an_edges_cache_makes_resolvers_fail_the_zone() {
    let dir = temp_dir("dnssec-tamper");
    let agg = Aggregator::start(&dir.join("store"));
    let version = agg.apply(&config(1, 2, "algorithm = \"ecdsap256sha256\""), &dir);
    let cache = dir.join("cache");
    let mut edge = Edge::start(None, Some(&agg.url()), &cache, "127.0.0.1:0", &[]);
    edge.wait_version(version);
    edge.stop();
    let ds = agg.ctl(&["dnssec", "ds", "example.test"]).trim().to_owned();
    // Another key pair, whole and well formed, in place of the zone's:
    // what an attacker who can write the cache (or forge the feed) does.
    let mut snapshot = gslb_edge::cache::load(&cache).unwrap().unwrap();
    let id = *snapshot.catalog.zones.keys().next().unwrap();
    let mut zone = snapshot.catalog.zones[&id].clone();
    let key =
        gslb_shared::dnssec::ZoneKey::generate(gslb_shared::SigningAlgorithm::EcdsaP256Sha256, 257)
            .unwrap();
    let settings = zone.dnssec.as_mut().unwrap();
    settings.keys = vec![gslb_shared::SigningKey::new(
        gslb_shared::KeyRole::Csk,
        gslb_shared::Secret(key.dnskey.public_key().clone()),
        key.secret,
        1,
    )];
    snapshot.catalog.zones.insert(id, zone);
    gslb_edge::cache::store(&cache, &gslb_edge::cache::encode(&snapshot)).unwrap();
    let forged = Edge::start(None, None, &cache, "127.0.0.1:0", &[]);
    let answer = dig(None, forged.dns(), &["www.example.test", "A", "+dnssec"]);
    assert!(answer.contains("RRSIG"), "the forged edge signs: {answer}");
    let unbound = Unbound::start(
        &dir,
        &UnboundConf {
            stubs: vec![("example.test".into(), forged.dns())],
            ready: "ready.origin.test".into(),
            zones: vec![(
                "origin.test".into(),
                vec!["ready.origin.test. 1 IN A 127.0.0.1".into()],
            )],
            trust_anchors: vec![ds],
        },
    );
    for name in ["www.example.test", "nothere.example.test"] {
        let reply = dig(None, unbound.addr, &[name, "A", "+dnssec"]);
        assert_eq!(rcode(&reply), "SERVFAIL", "{name}\n{reply}");
    }
}
