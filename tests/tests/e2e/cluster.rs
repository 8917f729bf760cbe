//! A three-node aggregator cluster (real processes on loopback) with agents
//! and an edge given every node's address: the leader is killed with
//! SIGKILL under 1,000 numbered config writes, then all three are killed
//! right after an acknowledged write. Nothing acknowledged is lost or
//! doubled, writes resume after the election, the edge answers every
//! query with versions that never go down, and no member's health flips.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use clap::Parser;
use gslb_ctl::{Cli, CtlError, run};
use gslb_e2e::catalog::web_pair;
use gslb_e2e::cluster::Cluster;
use gslb_e2e::dns::http_request;
use gslb_e2e::{Agent, Aggregator, Backend, Edge, Watcher, ZONE, temp_dir, wait_until};

const WRITES: usize = 1_000;

/// How a numbered write ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    /// The cluster acknowledged it.
    Acknowledged,
    /// A retry found it already there: an earlier attempt was committed
    /// although its acknowledgement was lost with the leader.
    FoundOnRetry,
}

/// Create TXT record set `n{n}` through in-process gslbctl (which follows
/// leader hints), trying the next node when one is unreachable and again
/// while there is no leader; gives up after 30 s.
fn write(servers: &[String], token: &str, next: &mut usize, n: usize, dir: &Path) -> Outcome {
    let file = dir.join(format!("write-{n}.json"));
    let body = format!(
        r#"{{"zone": 1, "name": "n{n}.example.test", "type": "TXT", "data": {{"static": [{{"txt": ["write {n}"]}}]}}}}"#
    );
    std::fs::write(&file, body).unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut retried = false;
    loop {
        let server = &servers[*next % servers.len()];
        let cli = Cli::try_parse_from([
            "gslbctl",
            "--server",
            server,
            "--token",
            token,
            "records",
            "create",
            "-f",
            file.to_str().unwrap(),
        ])
        .unwrap();
        match runtime.block_on(run(cli)) {
            Ok(_) => return Outcome::Acknowledged,
            Err(CtlError::Server(s)) if s.message().contains("already has") && retried => {
                return Outcome::FoundOnRetry;
            }
            Err(CtlError::Connect { .. }) => *next += 1,
            Err(e) => {
                // No leader yet, or a quorum not reached: the same write again.
                assert!(
                    !e.to_string().contains("already has"),
                    "write {n} was refused on its first attempt: {e}"
                );
            }
        }
        retried = true;
        assert!(
            Instant::now() < deadline,
            "write {n} not acknowledged in 30 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The numbered record names a node holds (a local, stale read of it).
fn numbered(node: &Aggregator) -> Vec<String> {
    let list = node.ctl_json(&["--stale", "records", "list"]);
    list.as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["name"].as_str())
        .filter(|n| n.starts_with('n') && n.ends_with(".example.test"))
        .map(str::to_owned)
        .collect()
}

#[test]
fn killing_the_leader_under_numbered_writes_loses_nothing_and_flips_nothing() {
    let dir = temp_dir("cluster-kill");
    let a = Backend::start(None, "127.0.8.101:0");
    let b = Backend::start(None, "127.0.8.102:0");
    // Snapshots every 100 entries keeping 10: the old leader, away for
    // some 700 writes, must catch up from a snapshot.
    let mut cluster = Cluster::start(
        &dir,
        8,
        3,
        &["--startup-window", "2s", "--snapshot-every", "100"],
    );
    let leader = cluster.leader(30);
    let version = cluster.node(leader).apply(&web_pair(a.addr, b.addr), &dir);
    let urls = cluster.urls();
    let _agents: Vec<Agent> = [("fra1", "eu"), ("iad1", "us"), ("sin1", "ap")]
        .iter()
        .map(|(loc, region)| Agent::start(None, loc, region, &urls))
        .collect();
    let edge = Edge::start(None, Some(&urls), &dir.join("cache"), "127.0.0.1:0", &[]);
    let dns = edge.dns();
    edge.wait_version(version);
    wait_until(30, "both members up", || {
        let l = cluster.node(leader);
        l.try_health("web", "web-1").as_deref() == Some("up")
            && l.try_health("web", "web-2").as_deref() == Some("up")
    });
    let logs = |node: &Aggregator| (node.log_len("web", "web-1"), node.log_len("web", "web-2"));
    let before = logs(cluster.node(leader));
    let watcher = Watcher::start(
        &edge,
        dns,
        vec![
            "127.0.8.101".parse().unwrap(),
            "127.0.8.102".parse().unwrap(),
        ],
    );

    // The writer: 1,000 numbered writes, each until acknowledged.
    let servers: Vec<String> = urls.split(',').map(str::to_owned).collect();
    let token = cluster.token();
    let done = Arc::new(AtomicUsize::new(0));
    let killed = Arc::new(AtomicBool::new(false));
    let (d, k, scratch) = (done.clone(), killed.clone(), dir.clone());
    let writer = std::thread::spawn(move || {
        let mut next = 0;
        let mut outcomes = Vec::with_capacity(WRITES);
        let mut after_kill = 0;
        for n in 0..WRITES {
            outcomes.push(write(&servers, &token, &mut next, n, &scratch));
            if k.load(Ordering::Relaxed) {
                after_kill += 1;
            }
            d.store(n + 1, Ordering::Relaxed);
        }
        (outcomes, after_kill)
    });
    wait_until(120, "300 writes acknowledged", || {
        done.load(Ordering::Relaxed) >= 300
    });
    let kill_at = Instant::now();
    cluster.kill(leader);
    killed.store(true, Ordering::Relaxed);
    let new_leader = cluster.leader(30);
    let elected = kill_at.elapsed();
    assert_ne!(new_leader, leader);
    let (outcomes, after_kill) = writer.join().unwrap();
    assert!(after_kill > 500, "only {after_kill} writes after the kill");

    // Every write is on both survivors, each exactly once.
    let applied = cluster.converged(0, 30);
    for id in cluster.running() {
        let names = numbered(cluster.node(id));
        let unique: BTreeSet<&String> = names.iter().collect();
        assert_eq!(names.len(), unique.len(), "node {id} holds a write twice");
        for (n, outcome) in outcomes.iter().enumerate() {
            assert!(
                unique.contains(&format!("n{n}.example.test")),
                "node {id} lacks write {n} ({outcome:?})"
            );
        }
        assert_eq!(unique.len(), WRITES, "node {id} holds writes never made");
    }

    // The new leader decides only after its startup gate, and nothing flipped.
    let now_leader = cluster.node(new_leader);
    wait_until(30, "the new leader's startup gate to open", || {
        now_leader.metric("gslb_aggregator_decisions_enabled") == 1
    });
    let accepted = now_leader.metric("gslb_aggregator_results_accepted");
    wait_until(20, "two cycles of results after the gate", || {
        now_leader.metric("gslb_aggregator_results_accepted") >= accepted + 12
    });
    assert_eq!(
        logs(now_leader),
        before,
        "health changed across the failover"
    );
    assert_eq!(now_leader.health("web", "web-1"), "up");

    // The old leader comes back and catches up (from a snapshot).
    cluster.start_node(leader);
    cluster.converged(applied, 60);
    let back: BTreeSet<String> = numbered(cluster.node(leader)).into_iter().collect();
    let missing: Vec<usize> = (0..WRITES)
        .filter(|n| !back.contains(&format!("n{n}.example.test")))
        .collect();
    assert!(
        missing.is_empty(),
        "the old leader lacks writes {missing:?}"
    );
    assert!(
        cluster
            .node(leader)
            .proc
            .stderr
            .contains("snapshot installed"),
        "the old leader caught up without a snapshot"
    );

    let watched = watcher.finish();
    assert!(watched.queries > 100, "only {} queries", watched.queries);
    assert_eq!(watched.failures, 0, "{watched:?}");
    assert_eq!(watched.decreases, 0, "{watched:?}");
    let found = outcomes
        .iter()
        .filter(|o| **o == Outcome::FoundOnRetry)
        .count();
    println!(
        "election after kill -9: {} ms; writes after the kill: {after_kill}; committed but unacknowledged: {found}; {watched:?}",
        elected.as_millis()
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_write_acknowledged_before_all_three_nodes_are_killed_survives() {
    let dir = temp_dir("cluster-all");
    let mut cluster = Cluster::start(&dir, 9, 3, &[]);
    let leader = cluster.leader(30);
    // No agents: both members stay unknown and the pool fails open, so the
    // edge answers both addresses, from its snapshot while all are down.
    let (a, b) = ("127.0.9.101:8080", "127.0.9.102:8080");
    let version = cluster
        .node(leader)
        .apply(&web_pair(a.parse().unwrap(), b.parse().unwrap()), &dir);
    let edge = Edge::start(
        None,
        Some(&cluster.urls()),
        &dir.join("cache"),
        "127.0.0.1:0",
        &[],
    );
    let dns = edge.dns();
    edge.wait_version(version);
    let watcher = Watcher::start(
        &edge,
        dns,
        vec![
            "127.0.9.101".parse().unwrap(),
            "127.0.9.102".parse().unwrap(),
        ],
    );
    // A write that breaks a rule, sent to a follower (and on to the leader),
    // is refused naming the field: only its audit record enters the log.
    let follower = cluster
        .running()
        .into_iter()
        .find(|id| *id != leader)
        .unwrap();
    let before = cluster.status(leader)["lastLogIndex"].as_u64().unwrap();
    let bad = dir.join("bad.json");
    std::fs::write(&bad, r#"{"zone": 1, "name": "elsewhere.example.org", "type": "TXT", "data": {"static": [{"txt": ["x"]}]}}"#).unwrap();
    let (ok, _, err) =
        cluster
            .node(follower)
            .try_ctl(&["records", "create", "-f", bad.to_str().unwrap()]);
    assert!(!ok && err.contains("name"), "{err}");
    assert_eq!(
        cluster.status(leader)["lastLogIndex"].as_u64().unwrap(),
        before + 1
    );
    let audit = cluster.node(leader).ctl(&["audit", "--limit", "1"]);
    assert!(audit.contains("REFUSED: name"), "{audit}");
    assert!(cluster.node(leader).metric("gslb_aggregator_raft_leader") == 1);
    let servers: Vec<String> = cluster.urls().split(',').map(str::to_owned).collect();
    let token = cluster.token();
    assert_eq!(
        write(&servers, &token, &mut 0, 7, &dir),
        Outcome::Acknowledged
    );
    // The operator's brake is a write like any other: sent to a follower
    // (on to the leader), replicated, durable.
    cluster.node(follower).ctl(&["decisions", "pause"]);
    // A web UI session opened on a follower (the leader stores it) is kept
    // through the whole cluster's restart.
    let kept =
        gslb_e2e::dns::ui_session(cluster.node(follower).http, &cluster.node(follower).token);
    for id in 1..=3 {
        cluster.kill(id);
    }
    for id in 1..=3 {
        cluster.start_node(id);
    }
    let leader = cluster.leader(30);
    // A linearizable read through a follower is sent to the leader.
    let follower = cluster
        .running()
        .into_iter()
        .find(|id| *id != leader)
        .unwrap();
    let list = cluster.node(follower).ctl_json(&["records", "list"]);
    let names: Vec<&str> = list
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert!(names.contains(&"n7.example.test"), "{names:?}");
    for id in cluster.running() {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let hold = cluster.node(id).ctl_json(&["--stale", "decisions"]);
            if hold["paused"] == true {
                break;
            }
            assert!(Instant::now() < deadline, "node {id} lost the hold: {hold}");
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    // REST on a follower redirects to the same path on the leader's REST
    // listener; a stale read is answered where it lands.
    let bearer = format!("Bearer {}", cluster.node(follower).token);
    let on_follower = |path: &str| {
        let auth = [("Authorization", bearer.as_str())];
        http_request(cluster.node(follower).http, "GET", path, &auth, "")
    };
    let (code, head, _) = on_follower("/api/v1/records?limit=5");
    let location = format!(
        "location: http://{}/api/v1/records?limit=5",
        cluster.node(leader).http
    );
    assert_eq!(code, 307, "{head}");
    assert!(head.to_ascii_lowercase().contains(&location), "{head}");
    let (code, _, _) = on_follower("/api/v1/records?stale");
    assert_eq!(code, 200);
    follower_ui(&cluster, follower, leader, &kept);
    let after = cluster.status(leader)["version"].as_u64().unwrap();
    edge.wait_version(after);
    let watched = watcher.finish();
    assert_eq!(watched.failures, 0, "{watched:?}");
    assert_eq!(watched.decreases, 0, "{watched:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The web UI on a follower: it signs in and shows the replica's catalog
/// and the cluster, and refuses a change naming the leader's UI. Sessions
/// hold on every node: `kept`, opened before a restart, still does, and
/// one opened here is valid on the leader until it signs out here.
fn follower_ui(cluster: &Cluster, follower: u64, leader: u64, kept: &str) {
    let signed_in = |node: u64, cookie: &str| {
        let headers = [("Cookie", cookie)];
        http_request(cluster.node(node).http, "GET", "/ui/cluster", &headers, "").0
    };
    assert_eq!(
        signed_in(follower, kept),
        200,
        "a session lost in the restart"
    );
    assert_eq!(signed_in(leader, kept), 200);
    let node = cluster.node(follower);
    let body = format!("{{\"token\": \"{}\"}}", node.token);
    let (code, head, _) = http_request(
        node.http,
        "POST",
        "/ui/session",
        &[("x-gslb-ui", "1")],
        &body,
    );
    assert_eq!(code, 204, "{head}");
    let cookie = head
        .lines()
        .find_map(|l| l.strip_prefix("set-cookie: gslb_session="))
        .and_then(|v| v.split(';').next())
        .unwrap_or_else(|| panic!("no session cookie in {head}"))
        .to_owned();
    let cookie = format!("gslb_session={cookie}");
    let (code, _, page) = http_request(node.http, "GET", "/ui/", &[("Cookie", &cookie)], "");
    assert_eq!(code, 200);
    assert!(
        page.contains("n7.example.test"),
        "the follower's topology lacks a replicated record"
    );
    assert!(
        page.contains(&format!("changes are made on the leader, node {leader}"))
            && page.contains("data-can-write=\"false\""),
        "the follower's page does not say where changes are made"
    );
    let csrf = page
        .split("data-csrf=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .unwrap()
        .to_owned();
    let (_, _, page) = http_request(node.http, "GET", "/ui/cluster", &[("Cookie", &cookie)], "");
    assert!(
        page.contains("follower") && page.contains(&format!("node {leader} at")),
        "{page}"
    );
    let headers = [("Cookie", cookie.as_str()), ("x-csrf-token", csrf.as_str())];
    let (code, _, refusal) = http_request(
        node.http,
        "PUT",
        "/ui/api/v1/decisions",
        &headers,
        "{\"paused\": false}",
    );
    assert_eq!(code, 503, "{refusal}");
    let leader_ui = format!("http://{}/ui/", cluster.node(leader).http);
    assert!(
        refusal.contains(&leader_ui),
        "the refusal does not name {leader_ui}: {refusal}"
    );
    assert_eq!(
        signed_in(leader, &cookie),
        200,
        "a follower's session on the leader"
    );
    let (code, head, _) = http_request(node.http, "DELETE", "/ui/session", &headers, "");
    assert_eq!(code, 204, "{head}");
    for id in cluster.running() {
        // Signed out: the page sends the browser to sign in (303).
        assert_eq!(
            signed_in(id, &cookie),
            303,
            "node {id} kept a session signed out"
        );
    }
    assert_eq!(
        signed_in(leader, kept),
        200,
        "signing out ended another session"
    );
}

/// Voter ids per `gslbctl cluster status` (asked of any node, answered by the leader).
fn voters(node: &Aggregator) -> Vec<u64> {
    let status = node.ctl_json(&["cluster", "status"]);
    status["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|n| n["voter"] == true)
        .map(|n| n["id"].as_u64().unwrap())
        .collect()
}

#[test]
fn a_node_joins_and_leaves_under_load_and_bad_joins_change_nothing() {
    let dir = temp_dir("cluster-join");
    let cluster = Cluster::start(&dir, 10, 3, &[]);
    let leader = cluster.leader(30);
    cluster.node(leader).apply(ZONE, &dir);
    let four = Aggregator::start_with(
        None,
        &dir.join("node4"),
        "127.0.10.4:7000",
        &[
            "--node-id",
            "4",
            "--tokens-file",
            dir.join("tokens.json").to_str().unwrap(),
        ],
    );
    let l = cluster.node(leader);

    // Refused joins leave the membership as it was.
    for (args, why) in [
        (
            ["--id", "2", "--address", "127.0.10.4:7000"],
            "node 2 is already a member",
        ),
        (
            ["--id", "5", "--address", "127.0.10.5:7000"],
            "not reachable at 127.0.10.5:7000",
        ),
        (["--id", "5", "--address", "127.0.10.4:7000"], "is node 4"),
        (
            ["--id", "5", "--address", "127.0.10.4"],
            "must be HOST:PORT",
        ),
    ] {
        let mut all = vec!["cluster", "join"];
        all.extend_from_slice(&args);
        let (ok, out, err) = l.try_ctl(&all);
        assert!(!ok && err.contains(why), "join {args:?}: {out}{err}");
        assert_eq!(voters(l), [1, 2, 3]);
    }

    // Under a steady stream of writes, node 4 joins, catches up, then leaves.
    let servers: Vec<String> = cluster.urls().split(',').map(str::to_owned).collect();
    let token = cluster.token();
    let stop = Arc::new(AtomicBool::new(false));
    let count = Arc::new(AtomicUsize::new(0));
    let (s, c, scratch) = (stop.clone(), count.clone(), dir.join("writes"));
    std::fs::create_dir_all(&scratch).unwrap();
    let writer = std::thread::spawn(move || {
        let mut next = 0;
        let mut n = 0;
        while !s.load(Ordering::Relaxed) {
            write(&servers, &token, &mut next, n, &scratch);
            n += 1;
            c.store(n, Ordering::Relaxed);
        }
        n
    });
    let written_at_least = |n: usize| {
        wait_until(60, &format!("{n} writes"), || {
            count.load(Ordering::Relaxed) >= n
        });
    };
    written_at_least(50);
    l.ctl(&[
        "cluster",
        "join",
        "--id",
        "4",
        "--address",
        "127.0.10.4:7000",
    ]);
    assert_eq!(voters(l), [1, 2, 3, 4]);
    let four_applied = || {
        let s = four.ctl_json(&["--stale", "cluster", "status"]);
        (
            s["role"].as_str().unwrap_or("").to_owned(),
            s["appliedIndex"].as_u64().unwrap_or(0),
        )
    };
    let target = cluster.status(leader)["appliedIndex"].as_u64().unwrap();
    wait_until(30, "node 4 following and caught up", || {
        let (role, applied) = four_applied();
        role == "follower" && applied >= target
    });
    let joined = count.load(Ordering::Relaxed);
    written_at_least(joined + 50);
    l.ctl(&["cluster", "remove", "--id", "4"]);
    assert_eq!(voters(l), [1, 2, 3]);
    let removed = count.load(Ordering::Relaxed);
    written_at_least(removed + 50);
    stop.store(true, Ordering::Relaxed);
    let written = writer.join().unwrap();

    // Every write is on the three remaining members.
    let applied = cluster.converged(0, 30);
    for id in cluster.running() {
        let names: BTreeSet<String> = numbered(cluster.node(id)).into_iter().collect();
        assert_eq!(names.len(), written, "node {id}");
    }
    println!("{written} writes while node 4 joined and left; applied {applied}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn concurrent_writers_share_log_entries_and_each_is_acknowledged_once() {
    const WRITERS: usize = 16;
    const EACH: usize = 25;
    let dir = temp_dir("cluster-group");
    let cluster = Cluster::start(&dir, 11, 3, &[]);
    let leader = cluster.leader(30);
    cluster.node(leader).apply(ZONE, &dir);
    let before = cluster.status(leader)["lastLogIndex"].as_u64().unwrap();
    let servers: Vec<String> = cluster.urls().split(',').map(str::to_owned).collect();
    let token = cluster.token();
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (servers, token, scratch) = (servers.clone(), token.clone(), dir.clone());
            std::thread::spawn(move || {
                let mut next = w;
                (0..EACH)
                    .map(|i| write(&servers, &token, &mut next, w * EACH + i, &scratch))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    for writer in writers {
        let outcomes = writer.join().unwrap();
        assert!(outcomes.iter().all(|o| *o == Outcome::Acknowledged));
    }
    let writes = WRITERS * EACH;
    let applied = cluster.converged(0, 30);
    for id in cluster.running() {
        let names: BTreeSet<String> = numbered(cluster.node(id)).into_iter().collect();
        assert_eq!(names.len(), writes, "node {id}");
    }
    let entries = applied - before;
    println!("{writes} writes from {WRITERS} writers in {entries} log entries");
    assert!(
        (entries as usize) < writes,
        "no two writes shared an entry ({entries} entries)"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 16 item 7: `/readyz` says 503, naming why, while a node knows no
/// leader (two of three nodes gone), and 200 naming the leader otherwise.
#[test]
fn readyz_is_unavailable_while_no_leader_is_known() {
    let dir = temp_dir("readyz");
    let mut cluster = Cluster::start(&dir, 12, 3, &[]);
    let leader = cluster.leader(60);
    let readyz = |c: &Cluster, id: u64| {
        let (code, _, body) = http_request(c.node(id).http, "GET", "/readyz", &[], "");
        (code, body)
    };
    for id in 1..=3 {
        let (code, body) = readyz(&cluster, id);
        assert_eq!(code, 200, "node {id}: {body}");
        assert!(
            body.contains("store: open") && body.contains("cluster:"),
            "{body}"
        );
    }
    let kept = if leader == 1 { 2 } else { 1 };
    for id in (1..=3).filter(|&id| id != kept) {
        cluster.kill(id);
    }
    wait_until(60, "the lone node to lose its leader", || {
        let (code, body) = readyz(&cluster, kept);
        code == 503 && body.contains("no leader known")
    });
    for id in (1..=3).filter(|&id| id != kept) {
        cluster.start_node(id);
    }
    wait_until(60, "a leader again", || readyz(&cluster, kept).0 == 200);
}

/// Issue 23: with `--bootstrap manual` no node forms the cluster on its
/// own (in Kubernetes, a pod that lost its volume must not form a second
/// cluster alone); `gslbctl cluster init` on any node forms it of that
/// node's `--peers`, once: a second init is refused, naming why.
#[test]
fn a_manual_bootstrap_forms_the_cluster_only_on_gslbctl_cluster_init() {
    let dir = temp_dir("cluster-manual");
    let cluster = Cluster::start(&dir, 24, 3, &["--bootstrap", "manual"]);
    // In auto mode node 1 has formed the cluster before its listeners
    // open; here every node answers with no membership and no leader.
    for id in 1..=3 {
        let s = cluster.status(id);
        assert_eq!(s["leaderId"], 0, "node {id}: {s}");
        assert!(
            s["nodes"].as_array().is_some_and(Vec::is_empty),
            "node {id} is in a cluster before init: {s}"
        );
    }
    let (ok, out, err) = cluster.node(2).try_ctl(&["cluster", "init"]);
    assert!(ok, "{out}{err}");
    let leader = cluster.leader(30);
    let s = cluster.status(leader);
    let ids: Vec<u64> = s["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["id"].as_u64().unwrap())
        .collect();
    assert_eq!(ids, [1, 2, 3], "{s}");
    let (ok, _, err) = cluster.node(3).try_ctl(&["cluster", "init"]);
    assert!(
        !ok && err.contains("the cluster is already formed"),
        "{err}"
    );
    // The formed cluster takes writes.
    cluster.node(leader).apply(ZONE, &dir);
    drop(cluster);
    let _ = std::fs::remove_dir_all(&dir);
}
