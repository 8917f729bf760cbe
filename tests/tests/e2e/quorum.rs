//! Location quorum across five network namespaces: each agent sits in its
//! own namespace and reaches the backend through a veth link; an nftables
//! rule inside a namespace cuts that location off the backend. The member's
//! health and the edge's answers must follow the 85% / 20% hysteresis
//! exactly. Location quarantine is turned off: a lone dissenting location is
//! exactly what it would (rightly) set aside, and this test is about the
//! hysteresis.

use gslb_e2e::catalog::{a_record, member, pool, tcp_check};
use gslb_e2e::dns::short;
use gslb_e2e::netns::{self, Netns, Star};
use gslb_e2e::{Agent, Aggregator, Backend, Edge, ZONE, temp_dir, wait_until};

const AGGREGATOR: &str = "10.250.0.1";
const CUT: &str = "10.250.0.10";
const KEPT: &str = "10.250.0.11";
const LOCATIONS: usize = 5;

/// The core namespace (aggregator, backends, edge) and one per location.
struct Topology {
    core: Netns,
    locations: Vec<Netns>,
}

impl Topology {
    fn create() -> Topology {
        let Star { core, locations } =
            Star::create("loc", &[AGGREGATOR, CUT, KEPT], LOCATIONS, 200, 250);
        Topology { core, locations }
    }

    /// Reject this location's connections to the cut backend.
    fn cut(&self, i: usize) {
        let ns = &self.locations[i];
        ns.exec(&["nft", "add", "table", "inet", "gslbcut"]);
        ns.exec(&[
            "nft",
            "add chain inet gslbcut out { type filter hook output priority 0 ; }",
        ]);
        ns.exec(&[
            "nft",
            &format!(
                "add rule inet gslbcut out ip daddr {CUT} tcp dport 8080 reject with tcp reset"
            ),
        ]);
    }

    /// Remove the cut again.
    fn restore(&self, i: usize) {
        self.locations[i].exec(&["nft", "delete", "table", "inet", "gslbcut"]);
    }
}

fn config() -> String {
    let at = |ip: &str| format!("{ip}:8080").parse().unwrap();
    format!(
        "{ZONE}{}{}{}",
        tcp_check("tcp", "1s", "500ms"),
        pool(
            "web",
            Some("tcp"),
            "",
            &[member("cut", at(CUT), ""), member("kept", at(KEPT), "")]
        ),
        a_record("www.example.test", &["web"])
    )
}

#[test]
fn member_health_follows_the_location_quorum_hysteresis() {
    if !netns::available() {
        eprintln!("SKIPPED: the location-quorum test needs root (network namespaces)");
        return;
    }
    assert!(
        std::process::Command::new("nft")
            .arg("--version")
            .output()
            .is_ok(),
        "nft not installed: apt-get install nftables"
    );
    let topo = Topology::create();
    let core = topo.core.name.as_str();
    let dir = temp_dir("quorum");
    let agg = Aggregator::start_with(
        Some(core),
        &dir.join("store"),
        &format!("{AGGREGATOR}:7000"),
        &["--no-quarantine", "--startup-window", "1s"],
    );
    agg.apply(&config(), &dir);
    let _backends = [
        Backend::start(Some(core), &format!("{CUT}:8080")),
        Backend::start(Some(core), &format!("{KEPT}:8080")),
    ];
    let url = agg.url();
    let _agents: Vec<Agent> = topo
        .locations
        .iter()
        .enumerate()
        .map(|(i, ns)| Agent::start(Some(&ns.name), &format!("loc{}", i + 1), "eu", &url))
        .collect();
    let edge = Edge::start(
        Some(core),
        Some(&url),
        &dir.join("cache"),
        "127.0.0.1:0",
        &[],
    );
    let dns = edge.dns();
    wait_until(30, "the edge serving the catalog", || {
        !short(Some(core), dns, &["www.example.test", "A"]).is_empty()
    });
    let answers = || short(Some(core), dns, &["www.example.test", "A"]);
    let both = vec![CUT.to_owned(), KEPT.to_owned()];
    let kept_only = vec![KEPT.to_owned()];

    let score = || agg.member("web", "cut")["status"]["score"].as_f64();
    let health = || agg.health("web", "cut");
    // Wait until the last closed cycle has `passing` of five locations,
    // then check the health the hysteresis demands and the edge's answer.
    let expect = |passing: usize, want_health: &str, want_dns: &Vec<String>| {
        let want = passing as f64 / LOCATIONS as f64;
        wait_until(20, &format!("score {want}"), || {
            score().is_some_and(|s| (s - want).abs() < 1e-9)
        });
        assert_eq!(health(), want_health, "at {passing}/5 passing");
        wait_until(10, &format!("answers {want_dns:?} at {passing}/5"), || {
            answers() == *want_dns
        });
    };

    wait_until(30, "the member up from all five locations", || {
        health() == "up"
    });
    expect(5, "up", &both);

    // One location cut off: 80%, stays up.
    topo.cut(0);
    expect(4, "up", &both);
    // Four cut off: 20% is not below fall (0.20): still up.
    for i in 1..4 {
        topo.cut(i);
    }
    expect(1, "up", &both);
    // All five: down, out of the answer.
    topo.cut(4);
    expect(0, "down", &kept_only);

    // Restored one by one: below rise (0.85) it stays down, even at 80%.
    for i in 0..4 {
        topo.restore(i);
        expect(i + 1, "down", &kept_only);
    }
    topo.restore(4);
    expect(5, "up", &both);
    let _ = std::fs::remove_dir_all(&dir);
}
