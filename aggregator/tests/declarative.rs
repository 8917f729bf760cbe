//! The declarative document: the example under deploy/examples parses and
//! applies; applying again changes nothing; edits and removals plan updates
//! and deletes; a document that fails changes nothing.
#![allow(clippy::unwrap_used)]

use gslb_aggregator::core::catalog::CatalogState;
use gslb_aggregator::core::declarative::{parse, plan};
use gslb_shared::*;

const EXAMPLE: &str = include_str!("../../deploy/examples/quickstart.toml");

fn applied(state: &mut CatalogState, text: &str) -> Vec<String> {
    let mut p = plan(state, &parse(text).unwrap()).unwrap();
    gslb_aggregator::core::catalog::fill_keys(&mut p.ops, gslb_aggregator::api::secrets::new_key);
    state.apply_all(p.ops).unwrap();
    p.lines
}

#[test]
fn the_example_applies_and_is_valid_as_a_whole() {
    let mut state = CatalogState::default();
    let lines = applied(&mut state, EXAMPLE);
    assert_eq!(
        lines.iter().filter(|l| l.starts_with('+')).count(),
        lines.len(),
        "first apply only creates: {lines:?}"
    );
    let c = &state.catalog;
    assert_eq!(
        (
            c.zones.len(),
            c.checks.len(),
            c.pools.len(),
            c.members.len(),
            c.records.len()
        ),
        (1, 2, 3, 6, 3)
    );
    validate::catalog(c).unwrap();
    let warm = c.members.values().find(|m| m.name == "web-eu-2").unwrap();
    assert_eq!(warm.warmup_threshold, 3);
    let www = c
        .records
        .values()
        .find(|r| r.name.as_str() == "www.example.test")
        .unwrap();
    let RecordData::Dynamic(d) = &www.data else {
        panic!()
    };
    assert_eq!(
        (d.first_n, d.geo.len(), d.steering),
        (2, 1, Steering::Weighted)
    );
}

#[test]
fn applying_the_same_document_again_changes_nothing() {
    let mut state = CatalogState::default();
    applied(&mut state, EXAMPLE);
    let version = state.version;
    assert!(applied(&mut state, EXAMPLE).is_empty());
    assert_eq!(state.version, version);
}

#[test]
fn edits_and_removals_plan_updates_and_deletes_in_dependency_order() {
    // The api pool and its record go; the api-tcp check stays in the document.
    let mut state = CatalogState::default();
    applied(&mut state, EXAMPLE);
    let edited = EXAMPLE.replace("weight = 200", "weight = 50");
    let cut = edited.find("[[pool]]\nname = \"api\"").unwrap();
    let end = edited.find("# www:").unwrap();
    let api_record = edited
        .find("[[record]]\nzone = \"example.test\"\nname = \"api.example.test\"")
        .unwrap();
    let txt = edited
        .find("[[record]]\nzone = \"example.test\"\nname = \"example.test\"")
        .unwrap();
    let text = format!(
        "{}{}{}",
        &edited[..cut],
        &edited[end..api_record],
        &edited[txt..]
    );
    let lines = applied(&mut state, &text);
    assert_eq!(
        lines,
        vec![
            "~ member web-us/web-us-1: weight 200 → 50",
            "- record api.example.test A",
            "- member api-1",
            "- pool api",
        ],
    );
    assert_eq!(state.catalog.pools.len(), 2);
}

#[test]
fn a_failing_document_changes_nothing_and_names_where() {
    let mut state = CatalogState::default();
    applied(&mut state, EXAMPLE);
    let before = state.clone();
    let bad = EXAMPLE.replace("address = \"127.0.0.12\"", "address = \"127.0.0.12:80\"");
    let p = plan(&state, &parse(&bad).unwrap());
    let err = match p {
        Err(e) => e.to_string(),
        Ok(p) => state.apply_all(p.ops).unwrap_err().to_string(),
    };
    assert!(err.contains("pool[0].member[1].address"), "{err}");
    assert_eq!(state, before);
    let dangling = EXAMPLE.replace("check = \"api-tcp\"", "check = \"missing\"");
    let err = plan(&state, &parse(&dangling).unwrap()).unwrap_err();
    assert_eq!(
        err.to_string(),
        "pool[2].check: no check named missing in this document"
    );
}

#[test]
fn ephemeral_members_are_left_to_their_heartbeats() {
    let mut state = CatalogState::default();
    applied(&mut state, EXAMPLE);
    let pool = state
        .catalog
        .pools
        .values()
        .find(|p| p.name == "api")
        .unwrap()
        .id;
    let mut eph = Member::new(
        MemberId(0),
        pool,
        "worker",
        "127.0.0.99".parse().unwrap(),
        80,
    );
    eph.kind = MemberKind::Ephemeral(EphemeralPolicy::default());
    state
        .apply(gslb_aggregator::core::catalog::Op::Create(
            gslb_aggregator::core::catalog::Object::Member(eph),
        ))
        .unwrap();
    assert!(applied(&mut state, EXAMPLE).is_empty());
}

#[test]
fn one_document_turns_a_name_from_cname_into_another_type_and_back() {
    // Creates used to run before deletes, so the new type met the old one.
    let zone = "[[zone]]\napex = \"example.test\"\nns = [\"ns1.example.test\"]\ndefaultTtl = 60\n[zone.soa]\nmname = \"ns1.example.test\"\nrname = \"h.example.test\"\nrefresh = 3600\nretry = 600\nexpire = 604800\nnegativeTtl = 5\n";
    let cname = format!(
        "{zone}[[record]]\nzone = \"example.test\"\nname = \"x.example.test\"\ntype = \"CNAME\"\nstatic = [{{ cname = \"y.example.test\" }}]\n"
    );
    let a = format!(
        "{zone}[[record]]\nzone = \"example.test\"\nname = \"x.example.test\"\ntype = \"A\"\nstatic = [{{ a = \"192.0.2.1\" }}]\n"
    );
    let mut state = CatalogState::default();
    applied(&mut state, &cname);
    let lines = applied(&mut state, &a);
    assert_eq!(
        lines,
        ["- record x.example.test CNAME", "+ record x.example.test A"]
    );
    let lines = applied(&mut state, &cname);
    assert_eq!(
        lines,
        ["- record x.example.test A", "+ record x.example.test CNAME"]
    );
    assert_eq!(state.catalog.records.len(), 1);
}

/// More than the quickstart: a signed zone with its own NS TTL, a check
/// per probe kind, a pool that fails to a static fallback and slow
/// start, hostname, backup, disabled and weight-0 members, static sets of
/// several types, and geo, latency and flattened dynamic sets.
const RICH: &str = r#"
[[zone]]
apex = "other.test"
ns = ["ns1.other.test", "ns2.other.test"]
defaultTtl = 120
nsTtl = 86400
[zone.soa]
mname = "ns1.other.test"
rname = "hostmaster.other.test"
refresh = 3600
retry = 600
expire = 604800
negativeTtl = 60
[zone.dnssec]
scheme = "ksk-zsk"
zskLifetime = 2592000

[[check]]
name = "tls-only"
interval = "5s"
timeout = "2s"
probe = { type = "tcp" }

[[pool]]
name = "strict"
check = "tls-only"
minHealthy = 2
failMode = "static"
fallback = ["192.0.2.99"]
slowStart = "30s"
[[pool.member]]
name = "by-name"
address = "origin.other.test"
port = 443
[[pool.member]]
name = "spare"
address = "192.0.2.20"
port = 443
backup = true
[[pool.member]]
name = "off"
address = "2001:db8::20"
port = 443
enabled = false
weight = 0

[[record]]
zone = "other.test"
name = "other.test"
type = "MX"
static = [{ mx = { preference = 10, exchange = "mail.other.test" } }]

[[record]]
zone = "other.test"
name = "mail.other.test"
type = "AAAA"
ttl = 900
static = [{ aaaa = "2001:db8::25" }]

[[record]]
zone = "other.test"
name = "geo.other.test"
type = "A"
dynamic = { pools = ["web-us"], firstN = 1, geo = [{ countries = ["DE"], asns = [64500], pools = ["web-eu"] }] }

[[record]]
zone = "other.test"
name = "near.other.test"
type = "A"
dynamic = { steering = "latency", pools = ["web-us"], regionLocations = { eu = ["fra1"] } }

[[record]]
zone = "other.test"
name = "flat.other.test"
type = "A"
dynamic = { pools = ["strict"], flatten = true }
"#;

/// Issue 44 item 15: the export is the document apply takes, and applying
/// it (as JSON or as TOML) plans no change.
#[test]
fn the_export_applies_back_unchanged_as_json_and_as_toml() {
    use gslb_aggregator::core::declarative::export;
    let mut state = CatalogState::default();
    applied(&mut state, &format!("{EXAMPLE}\n{RICH}"));
    validate::catalog(&state.catalog).unwrap();
    let document = export::document(&state.catalog);
    let json = serde_json::to_string_pretty(&document).unwrap();
    let toml = export::toml(&document).unwrap();
    for (format, text) in [("json", &json), ("toml", &toml)] {
        let p = plan(
            &state,
            &parse(text).unwrap_or_else(|e| panic!("{format}: {e}\n{text}")),
        )
        .unwrap_or_else(|e| panic!("{format}: {e}\n{text}"));
        assert!(p.lines.is_empty(), "{format} plans {:?}\n{text}", p.lines);
    }
    // Into an empty catalog, it makes the same objects.
    let mut fresh = CatalogState::default();
    applied(&mut fresh, &toml);
    assert_eq!(export::document(&fresh.catalog), document);
    assert!(
        !json.contains("privateKey") && !json.contains("\"id\""),
        "{json}"
    );
}
