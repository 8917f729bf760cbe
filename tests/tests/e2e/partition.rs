//! A network partition of the Raft leader. Each aggregator node sits in a
//! network namespace of its own, linked to a hub namespace (agents, edge,
//! backends) that routes between them; nftables inside the leader's
//! namespace then drops everything but its loopback. The old leader stops
//! acknowledging, the other two elect a leader and take writes, and after
//! the heal the logs converge; the edge answers every query throughout,
//! its version never goes down, and no member's health flips.

use gslb_e2e::catalog::web_pair;
use gslb_e2e::cluster::Cluster;
use gslb_e2e::dns::short;
use gslb_e2e::netns::{self, Netns};
use gslb_e2e::{Agent, Aggregator, Backend, Edge, Watcher, temp_dir, wait_until};

const NODES: u64 = 3;
const WEB_1: &str = "10.251.0.10";
const WEB_2: &str = "10.251.0.11";

/// The hub and one namespace per node.
struct Topology {
    hub: Netns,
    nodes: Vec<Netns>,
}

impl Topology {
    fn create() -> Topology {
        let tag = std::process::id();
        let hub = Netns::create(&format!("gslb{tag}hub"));
        // The hub routes between the nodes (forwarding is per namespace).
        hub.exec(&["sh", "-c", "echo 1 > /proc/sys/net/ipv4/ip_forward"]);
        for addr in [WEB_1, WEB_2] {
            hub.ip(&["addr", "add", &format!("{addr}/32"), "dev", "lo"]);
        }
        let nodes = (1..=NODES)
            .map(|i| {
                let ns = Netns::create(&format!("gslb{tag}raft{i}"));
                ns.veth(
                    "uplink",
                    &format!("10.201.{i}.2/24"),
                    &hub,
                    &format!("raft{i}"),
                    &format!("10.201.{i}.1/24"),
                );
                ns.ip(&["route", "add", "default", "via", &format!("10.201.{i}.1")]);
                ns
            })
            .collect();
        Topology { hub, nodes }
    }

    /// Node `id`'s gRPC address.
    fn addr(id: u64) -> String {
        format!("10.201.{id}.2:7000")
    }

    /// Drop every packet in or out of node `id`'s namespace but loopback.
    fn isolate(&self, id: u64) {
        let ns = &self.nodes[(id - 1) as usize];
        ns.exec(&["nft", "add", "table", "inet", "gslbpart"]);
        for (chain, hook, iface) in [("in", "input", "iif"), ("out", "output", "oif")] {
            ns.exec(&[
                "nft",
                &format!("add chain inet gslbpart {chain} {{ type filter hook {hook} priority 0 ; policy drop ; }}"),
            ]);
            ns.exec(&[
                "nft",
                &format!("add rule inet gslbpart {chain} {iface} lo accept"),
            ]);
        }
    }

    /// Lift the partition.
    fn heal(&self, id: u64) {
        self.nodes[(id - 1) as usize].exec(&["nft", "delete", "table", "inet", "gslbpart"]);
    }
}

/// Names of the `p*` record sets on a node, read locally.
fn written(node: &Aggregator) -> Vec<String> {
    let list = node.ctl_json(&["--stale", "records", "list"]);
    let mut names: Vec<String> = list
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["name"].as_str())
        .filter(|n| n.starts_with('p'))
        .map(str::to_owned)
        .collect();
    names.sort();
    names
}

/// Create TXT record set `p{n}` through `node` (gslbctl follows hints).
fn write(node: &Aggregator, dir: &std::path::Path, n: u32) -> (bool, String) {
    let file = dir.join(format!("p{n}.json"));
    std::fs::write(
        &file,
        format!(r#"{{"zone": 1, "name": "p{n}.example.test", "type": "TXT", "data": {{"static": [{{"txt": ["{n}"]}}]}}}}"#),
    )
    .unwrap();
    let (ok, out, err) = node.try_ctl(&["records", "create", "-f", file.to_str().unwrap()]);
    (ok, out + &err)
}

#[test]
fn a_partitioned_leader_stops_acknowledging_and_converges_after_the_heal() {
    if !netns::available() {
        eprintln!("SKIPPED: the partition test needs root (network namespaces)");
        return;
    }
    let topo = Topology::create();
    let hub = topo.hub.name.as_str();
    let dir = temp_dir("partition");
    let places = (1..=NODES)
        .map(|i| {
            (
                Some(topo.nodes[(i - 1) as usize].name.clone()),
                Topology::addr(i),
            )
        })
        .collect();
    let cluster = Cluster::start_at(&dir, places, &["--startup-window", "2s"]);
    let leader = cluster.leader(30);
    let at = |ip: &str| format!("{ip}:8080").parse().unwrap();
    let _backends = [
        Backend::start(Some(hub), &format!("{WEB_1}:8080")),
        Backend::start(Some(hub), &format!("{WEB_2}:8080")),
    ];
    cluster
        .node(leader)
        .apply(&web_pair(at(WEB_1), at(WEB_2)), &dir);
    let urls = cluster.urls();
    let _agents: Vec<Agent> = [("fra1", "eu"), ("iad1", "us"), ("sin1", "ap")]
        .iter()
        .map(|(loc, region)| Agent::start(Some(hub), loc, region, &urls))
        .collect();
    let edge = Edge::start(
        Some(hub),
        Some(&urls),
        &dir.join("cache"),
        "127.0.0.1:0",
        &[],
    );
    let dns = edge.dns();
    let want = vec![WEB_1.to_owned(), WEB_2.to_owned()];
    wait_until(30, "the edge answering both members", || {
        let mut got = short(Some(hub), dns, &["www.example.test", "A"]);
        got.sort();
        got == want
    });
    let l = cluster.node(leader);
    wait_until(30, "both members up", || {
        l.try_health("web", "web-1").as_deref() == Some("up")
            && l.try_health("web", "web-2").as_deref() == Some("up")
    });
    let logs = |node: &Aggregator| (node.log_len("web", "web-1"), node.log_len("web", "web-2"));
    let before = logs(l);
    let watcher = Watcher::start(
        &edge,
        dns,
        vec![WEB_1.parse().unwrap(), WEB_2.parse().unwrap()],
    );

    topo.isolate(leader);
    // The majority elects a leader of its own and takes writes.
    let mut next = 0;
    wait_until(30, "a leader on the majority side", || {
        next = cluster
            .running()
            .into_iter()
            .filter(|id| *id != leader)
            .find(|id| cluster.status(*id)["role"] == "leader")
            .unwrap_or(0);
        next != 0
    });
    for n in 0..20 {
        let (ok, out) = write(cluster.node(next), &dir, n);
        assert!(ok, "write {n} on the majority: {out}");
    }
    // The old leader, cut off, acknowledges nothing.
    wait_until(10, "the old leader to give up deciding", || {
        cluster.status(leader)["role"] != "leader"
    });
    let (ok, out) = write(l, &dir, 100);
    assert!(
        !ok,
        "the partitioned old leader acknowledged a write: {out}"
    );
    assert_eq!(
        written(l),
        Vec::<String>::new(),
        "the old leader holds writes it could not have"
    );

    topo.heal(leader);
    let applied = cluster.status(next)["appliedIndex"].as_u64().unwrap();
    cluster.converged(applied, 60);
    let expected: Vec<String> = {
        let mut e: Vec<String> = (0..20).map(|n| format!("p{n}.example.test")).collect();
        e.sort();
        e
    };
    for id in 1..=NODES {
        assert_eq!(
            written(cluster.node(id)),
            expected,
            "node {id} after the heal"
        );
    }
    let now_leader = cluster.leader(30);
    assert_eq!(
        logs(cluster.node(now_leader)),
        before,
        "health changed across the partition"
    );
    let watched = watcher.finish();
    assert!(watched.queries > 50, "only {} queries", watched.queries);
    assert_eq!(watched.failures, 0, "{watched:?}");
    assert_eq!(watched.decreases, 0, "{watched:?}");
    println!(
        "old leader {leader} refused the write: {}; {watched:?}",
        out.trim()
    );
    drop(cluster);
    let _ = std::fs::remove_dir_all(&dir);
}
