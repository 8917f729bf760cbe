//! Geo branches on MaxMind data: an edge started with `--geo-mmdb` (a City
//! file and an ASN file, written here with MaxMind's own writer) answers a
//! client subnet from the branch of its country, continent, subdivision or
//! AS, scopes the answer to the network that decided it, and follows the
//! files when they are replaced on disk. `gslbctl explain --client-ip`
//! places the address with the aggregator's copy of the files.

use std::path::Path;

use gslb_e2e::catalog::{ZONE, member, pool};
use gslb_e2e::dns::dig;
use gslb_e2e::mesh::{Aggregator, Edge};
use gslb_e2e::mmdb::{self, Network};
use gslb_e2e::wait::{temp_dir, wait_until};

/// Pools `de`, `na`, `tokyo`, `asn` and `rest`, one member each (no check:
/// up), and `www` branching on them in that order.
fn config() -> String {
    www(
        &[("de", 1), ("na", 2), ("tokyo", 3), ("asn", 4), ("rest", 5)],
        r#"
  { countries = ["DE"], pools = ["de"] },
  { continents = ["NA"], pools = ["na"] },
  { subdivisions = ["JP-13"], pools = ["tokyo"] },
  { asns = [64500], pools = ["asn"] },
"#,
    )
}

/// `pools` (name, last octet of its one member; no check: up) and `www`
/// answering from `rest` unless one of `branches` matches.
fn www(pools: &[(&str, u8)], branches: &str) -> String {
    let pools: String = pools
        .iter()
        .map(|(name, i)| {
            let addr = format!("127.0.30.{i}:80").parse().unwrap();
            pool(name, None, "", &[member(&format!("{name}-1"), addr, "")])
        })
        .collect();
    format!(
        r#"{ZONE}{pools}
[[record]]
zone = "example.test"
name = "www.example.test"
type = "A"
dynamic = {{ pools = ["rest"], geo = [{branches}] }}
"#
    )
}

fn city(path: &Path, berlin_country: &str) {
    let mut tokyo = Network::country("2001:db8:1::/48", "JP", "AS");
    tokyo.subdivision = Some("13".into());
    mmdb::write(
        path,
        "GeoLite2-City",
        &[
            Network::country("198.51.100.0/24", berlin_country, "EU"),
            Network::country("203.0.113.0/25", "US", "NA"),
            tokyo,
        ],
    );
}

fn asn(path: &Path) {
    mmdb::write(
        path,
        "GeoLite2-ASN",
        &[Network {
            cidr: "192.0.2.0/23".into(),
            asn: Some(64500),
            ..Network::default()
        }],
    );
}

/// The answer and the ECS scope the edge gave for client `subnet`.
fn ask(edge: &Edge, subnet: &str) -> (String, String) {
    let reply = dig(
        None,
        edge.dns(),
        &["www.example.test", "A", &format!("+subnet={subnet}")],
    );
    let answer = reply
        .lines()
        .find(|l| l.starts_with("www.example.test.") && l.contains("\tA\t"))
        .and_then(|l| l.split_whitespace().last())
        .unwrap_or("")
        .to_owned();
    // `; CLIENT-SUBNET: 198.51.100.0/24/24`: source, then scope.
    let scope = reply
        .lines()
        .find_map(|l| l.strip_prefix("; CLIENT-SUBNET: "))
        .and_then(|s| s.rsplit('/').next())
        .unwrap_or("")
        .to_owned();
    (answer, scope)
}

#[test]
fn branches_follow_country_continent_subdivision_and_asn_and_the_files_on_disk() {
    let dir = temp_dir("e2e-geo-mmdb");
    let (city_file, asn_file) = (dir.join("city.mmdb"), dir.join("asn.mmdb"));
    city(&city_file, "DE");
    asn(&asn_file);
    let files = format!("{},{}", city_file.display(), asn_file.display());
    let agg = Aggregator::start_with(
        None,
        &dir.join("store"),
        "127.0.0.1:0",
        &["--startup-window", "1s", "--geo-mmdb", &files],
    );
    let version = agg.apply(&config(), &dir);
    let edge = Edge::start(
        None,
        Some(&agg.url()),
        &dir.join("cache"),
        "127.0.0.1:0",
        &["--geo-mmdb", &files],
    );
    edge.wait_version(version);

    // The files' build time is exported for a staleness alert.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let built = edge.metric("gslb_edge_geo_db_build_timestamp_seconds");
    assert!(now.abs_diff(built) < 600, "built {built}, now {now}");
    let cases = [
        ("198.51.100.7/32", "127.0.30.1", "24"),   // DE
        ("203.0.113.9/32", "127.0.30.2", "25"),    // US: continent NA
        ("2001:db8:1::5/128", "127.0.30.3", "48"), // JP-13
        ("192.0.3.9/32", "127.0.30.4", "23"),      // AS 64500 (the ASN file)
        // Nowhere: neither file has data in 0.0.0.0/1, so the default
        // branch holds for all of it.
        ("100.64.0.1/32", "127.0.30.5", "1"),
    ];
    for (subnet, want, scope) in cases {
        assert_eq!(ask(&edge, subnet), (want.into(), scope.into()), "{subnet}");
    }
    // A /24 source is answered for the whole /24.
    assert_eq!(
        ask(&edge, "198.51.100.0/24"),
        ("127.0.30.1".into(), "24".into())
    );

    let explain = agg.ctl(&["explain", "www.example.test", "--client-ip", "198.51.100.7"]);
    assert!(explain.contains("country DE"), "{explain}");
    assert!(explain.contains("127.0.30.1"), "{explain}");

    // geoipupdate replaces the file: the edge follows without a restart.
    city(&city_file, "FR");
    wait_until(20, "the edge to read the new City file", || {
        ask(&edge, "198.51.100.7/32").0 == "127.0.30.5"
    });
    let explain = agg.ctl(&["explain", "www.example.test", "--client-ip", "198.51.100.7"]);
    assert!(explain.contains("country FR"), "{explain}");

    // A broken file is refused, and the last good one stays in use.
    std::fs::write(&city_file, b"not a MaxMind DB").unwrap();
    wait_until(20, "the edge to refuse the broken file", || {
        edge.metric("gslb_edge_geo_reload_failures_total") >= 1
    });
    assert_eq!(edge.metric("gslb_edge_geo_reloads_total"), 1);
    assert_eq!(
        ask(&edge, "203.0.113.9/32").0,
        "127.0.30.2",
        "the previous files stay in use"
    );
}

#[test]
fn an_edge_refuses_to_start_on_a_file_that_is_not_a_maxmind_db() {
    let dir = temp_dir("e2e-geo-mmdb-bad");
    let bad = dir.join("bad.mmdb");
    std::fs::write(&bad, b"nothing here").unwrap();
    let out = std::process::Command::new(gslb_e2e::bins::bin("gslb-edge"))
        .args([
            "--listen-dns",
            "127.0.0.1:0",
            "--listen-status",
            "127.0.0.1:0",
        ])
        .args(["--cache-dir", dir.join("cache").to_str().unwrap()])
        .args(["--geo-mmdb", bad.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.mmdb") && err.contains("not a MaxMind DB file"),
        "{err}"
    );
}

/// Explain places a client address with the same region table the edges
/// answer with (`--geo-file` on both), so its answer is the edge's; the
/// CLI, REST and the UI's page say where the client was placed, and an
/// aggregator without the table says it cannot place the address.
#[test]
fn explain_places_an_address_with_the_edges_region_table_and_answers_as_they_do() {
    let dir = temp_dir("e2e-geo-explain");
    let table = dir.join("geo.txt");
    std::fs::write(
        &table,
        "198.51.100.0/24 eu\n203.0.113.0/25 us\n2001:db8:1::/48 eu\n",
    )
    .unwrap();
    let table = table.to_str().unwrap();
    let config = www(
        &[("eu", 1), ("us", 2), ("rest", 5)],
        r#"
  { regions = ["eu"], pools = ["eu"] },
  { regions = ["us"], pools = ["us"] },
"#,
    );
    let agg = Aggregator::start_with(
        None,
        &dir.join("store"),
        "127.0.0.1:0",
        &["--startup-window", "1s", "--geo-file", table],
    );
    let version = agg.apply(&config, &dir);
    let edge = Edge::start(
        None,
        Some(&agg.url()),
        &dir.join("cache"),
        "127.0.0.1:0",
        &["--geo-file", table],
    );
    edge.wait_version(version);
    for (client, region) in [
        ("198.51.100.7", "eu"),
        ("203.0.113.9", "us"),
        ("203.0.113.200", ""),
        ("2001:db8:1::5", "eu"),
    ] {
        let prefix = if client.contains(':') { 128 } else { 32 };
        let (edge_answer, _) = ask(&edge, &format!("{client}/{prefix}"));
        let path = format!("/api/v1/explain?name=www.example.test&client={client}");
        let (code, explained) = agg.rest("GET", &path, "");
        assert_eq!(code, 200, "{explained}");
        assert_eq!(
            explained["answers"],
            serde_json::json!([edge_answer]),
            "{client}: {explained}"
        );
        assert_eq!(explained["client"]["region"], region, "{explained}");
        let from = if region.is_empty() { "" } else { "geo-file" };
        assert_eq!(explained["client"]["regionFrom"], from, "{explained}");
    }
    let text = agg.ctl(&["explain", "www.example.test", "--client-ip", "198.51.100.7"]);
    let said = format!("client       198.51.100.7: region eu from {table} (prefix /24)");
    assert!(text.contains(&said), "{text}");
    let cookie = gslb_e2e::dns::ui_session(agg.http, &agg.token);
    let (code, _, page) = gslb_e2e::dns::http_request(
        agg.http,
        "GET",
        "/ui/explain?name=www.example.test&client=198.51.100.0%2F24",
        &[("Cookie", &cookie)],
        "",
    );
    assert_eq!(code, 200);
    assert!(
        page.contains(&format!("region eu from {table} (prefix /24)")),
        "{page}"
    );

    // Without the table, explain says so instead of guessing a region.
    let bare = Aggregator::start(&dir.join("bare"));
    bare.apply(&config, &dir);
    let (_, explained) = bare.rest(
        "GET",
        "/api/v1/explain?name=www.example.test&client=198.51.100.7",
        "",
    );
    let note = explained["client"]["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("cannot place the address in a region"),
        "{explained}"
    );
    assert_eq!(explained["answers"], serde_json::json!(["127.0.30.5"]));
}
