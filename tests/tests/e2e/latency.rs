//! Latency steering across network namespaces: two probe locations, each
//! in its own namespace, measure two members; each member's backend
//! answers each location after its own delay (the kernel here has no
//! `netem`, so `gslb-demo-backend --delays` injects the path latency per
//! location). The edge answers a client region with the member fastest
//! from that region's location, keeps that answer while per-probe jitter
//! makes single samples overlap, follows a lasting change within a few
//! cycles, and explain shows the times it compared.

use std::path::Path;
use std::time::Instant;

use gslb_e2e::catalog::{http_check, member, pool};
use gslb_e2e::dns::short;
use gslb_e2e::netns::{self, Star};
use gslb_e2e::{Agent, Aggregator, Backend, Edge, ZONE, temp_dir, wait_until};

const AGGREGATOR: &str = "10.251.0.1";
const FRA: &str = "10.251.0.10";
const NYC: &str = "10.251.0.11";
/// Location i's uplink network is 10.201.i.0/24.
const LOCATIONS: [(&str, &str); 2] = [("loc-eu", "eu"), ("loc-us", "us")];

/// Delays of one backend: from the eu location, and from the us location
/// (milliseconds, ± jitter).
fn delays(file: &Path, eu: (u32, u32), us: (u32, u32)) {
    let text = format!(
        "10.201.1.0/24 {} {}\n10.201.2.0/24 {} {}\n",
        eu.0, eu.1, us.0, us.1
    );
    // Written whole and renamed: the backend reads it at every request.
    let tmp = file.with_extension("tmp");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, file).unwrap();
}

fn config() -> String {
    let at = |ip: &str| format!("{ip}:8080").parse().unwrap();
    format!(
        "{ZONE}{}{}{}",
        http_check("http", "1s", "500ms"),
        pool(
            "web",
            Some("http"),
            "",
            &[member("fra", at(FRA), ""), member("nyc", at(NYC), "")]
        ),
        r#"
[[record]]
zone = "example.test"
name = "www.example.test"
type = "A"
dynamic = { steering = "latency", pools = ["web"], regionLocations = { eu = ["loc-eu"], us = ["loc-us"] } }
"#
    )
}

#[test]
fn answers_follow_the_fastest_member_per_region_without_flapping() {
    if !netns::available() {
        eprintln!("SKIPPED: the latency-steering test needs root (network namespaces)");
        return;
    }
    // The core (aggregator, backends, edge) and one namespace per location.
    let topo = Star::create("lat", &[AGGREGATOR, FRA, NYC], LOCATIONS.len(), 201, 251);
    let core = topo.core.name.as_str();
    let dir = temp_dir("e2e-latency");
    let (fra_delays, nyc_delays) = (dir.join("fra.delays"), dir.join("nyc.delays"));
    delays(&fra_delays, (5, 1), (70, 1));
    delays(&nyc_delays, (70, 1), (5, 1));
    let agg = Aggregator::start_with(
        Some(core),
        &dir.join("store"),
        &format!("{AGGREGATOR}:7000"),
        &["--startup-window", "1s"],
    );
    agg.apply(&config(), &dir);
    let _backends = [
        Backend::start_with(
            Some(core),
            &format!("{FRA}:8080"),
            &["--delays", fra_delays.to_str().unwrap()],
        ),
        Backend::start_with(
            Some(core),
            &format!("{NYC}:8080"),
            &["--delays", nyc_delays.to_str().unwrap()],
        ),
    ];
    let url = agg.url();
    let _agents: Vec<Agent> = (topo.locations.iter().zip(LOCATIONS))
        .map(|(ns, (location, region))| Agent::start(Some(&ns.name), location, region, &url))
        .collect();
    let geo = dir.join("regions.txt");
    std::fs::write(&geo, "192.0.2.0/24 eu\n198.51.100.0/24 us\n").unwrap();
    let edge = Edge::start(
        Some(core),
        Some(&url),
        &dir.join("cache"),
        "127.0.0.1:0",
        &["--geo-file", geo.to_str().unwrap()],
    );
    let dns = edge.dns();
    let ask = |subnet: &str| {
        short(
            Some(core),
            dns,
            &["www.example.test", "A", &format!("+subnet={subnet}")],
        )
    };
    let eu = || ask("192.0.2.0/24");
    let us = || ask("198.51.100.0/24");
    let fra = vec![FRA.to_owned()];
    let nyc = vec![NYC.to_owned()];
    wait_until(60, "each region answered its nearest member", || {
        eu() == fra && us() == nyc
    });

    // Jitter large enough that single probes overlap (eu: fra 10–50 ms,
    // nyc 45–85 ms): the smoothed, hysteresis-published times keep fra
    // ahead, so the answer never moves.
    delays(&fra_delays, (30, 20), (70, 1));
    delays(&nyc_delays, (65, 20), (5, 1));
    let settle = Instant::now();
    let mut samples = 0;
    while settle.elapsed().as_secs() < 12 {
        assert_eq!(eu(), fra, "eu flapped after {:?}", settle.elapsed());
        assert_eq!(us(), nyc, "us moved after {:?}", settle.elapsed());
        samples += 1;
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert!(samples >= 20, "{samples} samples");

    // A lasting change: fra's path from eu slows to 150 ms. The answer
    // moves to nyc within a few cycles, and us is untouched.
    delays(&fra_delays, (150, 2), (70, 1));
    let changed = Instant::now();
    wait_until(30, "eu to move to nyc", || eu() == nyc);
    let took = changed.elapsed();
    eprintln!("latency steering followed a lasting change in {took:?}");
    assert_eq!(us(), nyc);

    // Explain shows the times compared for a region.
    let explain = agg.ctl(&["explain", "www.example.test", "--client", "eu"]);
    let latency = explain.lines().find(|l| l.starts_with("latency"));
    assert!(
        latency
            .is_some_and(|l| l.contains("region eu, times from loc-eu: fastest ")
                && l.contains(" ms (kept)")),
        "{explain}"
    );
    assert!(explain.contains(NYC), "{explain}");
    let raw = agg.ctl(&[
        "explain",
        "www.example.test",
        "--client",
        "eu",
        "-o",
        "json",
    ]);
    assert!(raw.contains(r#""rttMicros""#), "{raw}");

    // The member's status shows each location's published time.
    let status = agg.member("web", "fra");
    let from = |location: &str| {
        (status["status"]["locations"]
            .as_array()
            .into_iter()
            .flatten())
        .find(|l| l["location"] == location)
        .and_then(|l| l["rttUs"].as_u64())
        .unwrap_or_else(|| panic!("no rttUs from {location} in {status}"))
    };
    // eu moved to nyc only once fra's time from there (30 ms before the
    // change) passed nyc's band (nyc about 65 ms, + 20%); from us fra's
    // path is 70 ms.
    assert!(from("loc-eu") > 60_000, "{status}");
    assert!((60_000..85_000).contains(&from("loc-us")), "{status}");
}

/// Bad mappings are refused at the API, naming the field; nothing stored.
#[test]
fn region_locations_are_validated_at_the_api() {
    let dir = temp_dir("e2e-latency-api");
    let agg = Aggregator::start(&dir.join("store"));
    agg.apply(&config(), &dir);
    let (_, records) = agg.rest("GET", "/api/v1/records", "");
    let record = (records["items"].as_array().or(records.as_array()))
        .and_then(|all| all.iter().find(|r| r["name"] == "www.example.test"))
        .cloned()
        .unwrap_or_else(|| panic!("www in {records}"));
    let id = record["id"].as_u64().unwrap();
    let path = format!("/api/v1/records/{id}");
    let (_, before) = agg.rest("GET", &path, "");
    for (bad, field) in [
        (
            serde_json::json!({ "eu": ["loc-eu", "loc-eu"] }),
            "data.dynamic.regionLocations.eu[1]",
        ),
        (
            serde_json::json!({ "eu": [] }),
            "data.dynamic.regionLocations.eu",
        ),
    ] {
        let mut body = before.clone();
        body["data"]["dynamic"]["regionLocations"] = bad;
        let (status, reply) = agg.rest("PUT", &path, &body.to_string());
        assert_eq!(status, 400, "{reply}");
        assert!(reply.to_string().contains(field), "{field}: {reply}");
    }
    let mut weighted = before.clone();
    weighted["data"]["dynamic"]["steering"] = "weighted".into();
    let (status, reply) = agg.rest("PUT", &path, &weighted.to_string());
    assert_eq!(status, 400, "{reply}");
    assert!(
        reply.to_string().contains("only for steering: latency"),
        "{reply}"
    );
    assert_eq!(agg.rest("GET", &path, "").1, before, "nothing stored");
}
