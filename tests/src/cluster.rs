//! A Raft cluster of real `gslb-aggregator` processes: on loopback, node
//! `i` listens for gRPC on `127.0.NET.i:7000` (each scenario its own `NET`,
//! so ports never collide); or each node in a network namespace of its own
//! at an address there. Node `i` stores under `DIR/nodeI` and may be killed
//! and restarted on the same address.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::mesh::Aggregator;
use crate::wait::wait_until;

/// The cluster's processes (killed on drop).
pub struct Cluster {
    /// Node `i` at index `i - 1`; `None` while it is down.
    pub nodes: Vec<Option<Aggregator>>,
    dir: PathBuf,
    /// Node `i`'s namespace (if any) and gRPC address, at index `i - 1`.
    places: Vec<(Option<String>, String)>,
    extra: Vec<String>,
    /// Mutual TLS on loopback too (nodes in namespaces always run it).
    tls: bool,
}

impl Cluster {
    /// Start `size` nodes on loopback forming one cluster, each with `extra` flags.
    pub fn start(dir: &Path, net: u8, size: u64, extra: &[&str]) -> Cluster {
        let places = (1..=size)
            .map(|i| (None, format!("127.0.{net}.{i}:7000")))
            .collect();
        Cluster::start_at(dir, places, extra)
    }

    /// [`Cluster::start`] with mutual TLS on every link and listener.
    pub fn start_tls(dir: &Path, net: u8, size: u64, extra: &[&str]) -> Cluster {
        let places = (1..=size)
            .map(|i| (None, format!("127.0.{net}.{i}:7000")))
            .collect();
        Cluster::launch(dir, places, extra, true)
    }

    /// Start one node per `(namespace, gRPC address)`, node ids from 1.
    pub fn start_at(dir: &Path, places: Vec<(Option<String>, String)>, extra: &[&str]) -> Cluster {
        Cluster::launch(dir, places, extra, false)
    }

    fn launch(
        dir: &Path,
        places: Vec<(Option<String>, String)>,
        extra: &[&str],
        tls: bool,
    ) -> Cluster {
        let mut cluster = Cluster {
            tls,
            nodes: places.iter().map(|_| None).collect(),
            dir: dir.to_path_buf(),
            places,
            extra: extra.iter().map(|s| s.to_string()).collect(),
        };
        for id in cluster.ids() {
            cluster.start_node(id);
        }
        cluster
    }

    /// The write token every node accepts (their shared tokens file).
    pub fn token(&self) -> String {
        crate::pki::admin_token(&self.dir.join("tokens.json"))
    }

    /// Node `id`'s gRPC address.
    pub fn addr(&self, id: u64) -> String {
        self.places[(id - 1) as usize].1.clone()
    }

    /// Every node's URL, comma-separated (for agents' and edges' lists).
    pub fn urls(&self) -> String {
        let scheme = |addr: &str| {
            let ip: std::net::SocketAddr = addr.parse().expect("node address");
            if ip.ip().is_loopback() && !self.tls {
                "http"
            } else {
                "https"
            }
        };
        self.ids()
            .map(|id| format!("{}://{}", scheme(&self.addr(id)), self.addr(id)))
            .collect::<Vec<_>>()
            .join(",")
    }

    fn ids(&self) -> impl Iterator<Item = u64> + use<> {
        1..=self.nodes.len() as u64
    }

    /// Start (or restart) node `id` on its address with its data directory.
    pub fn start_node(&mut self, id: u64) {
        let peers = self
            .ids()
            .map(|i| format!("{i}={}", self.addr(i)))
            .collect::<Vec<_>>()
            .join(",");
        let node_id = id.to_string();
        // One tokens file for the whole cluster, as an operator distributes it.
        let tokens = self.dir.join("tokens.json");
        let tokens = tokens.to_str().expect("utf-8 path");
        let mut args = vec![
            "--node-id",
            &node_id,
            "--peers",
            &peers,
            "--tokens-file",
            tokens,
        ];
        args.extend(self.extra.iter().map(String::as_str));
        let data = self.dir.join(format!("node{id}"));
        let netns = self.places[(id - 1) as usize].0.as_deref();
        let addr = self.addr(id);
        let ip = addr
            .parse::<std::net::SocketAddr>()
            .expect("node address")
            .ip();
        let agg = Aggregator::start_at(netns, &data, &addr, self.tls || !ip.is_loopback(), &args);
        self.nodes[(id - 1) as usize] = Some(agg);
    }

    /// SIGKILL node `id` (no shutdown of any kind) and reap it.
    pub fn kill(&mut self, id: u64) {
        if let Some(mut agg) = self.nodes[(id - 1) as usize].take() {
            agg.proc.kill();
        }
    }

    /// Node `id`, which must be running.
    pub fn node(&self, id: u64) -> &Aggregator {
        self.nodes[(id - 1) as usize]
            .as_ref()
            .unwrap_or_else(|| panic!("node {id} is down"))
    }

    /// The running nodes' ids.
    pub fn running(&self) -> Vec<u64> {
        self.ids()
            .filter(|id| self.nodes[(id - 1) as usize].is_some())
            .collect()
    }

    /// Node `id`'s own view (`gslbctl cluster status --stale -o json`);
    /// Null when it does not answer.
    pub fn status(&self, id: u64) -> Value {
        let (ok, out, _) = self
            .node(id)
            .try_ctl(&["--stale", "-o", "json", "cluster", "status"]);
        if !ok {
            return Value::Null;
        }
        serde_json::from_str(&out).unwrap_or(Value::Null)
    }

    /// Wait until a running node leads with its quorum confirmed; its id.
    pub fn leader(&self, secs: u64) -> u64 {
        let mut leader = 0;
        wait_until(secs, "a confirmed leader", || {
            leader = self
                .running()
                .into_iter()
                .find(|id| self.status(*id)["role"] == "leader")
                .unwrap_or(0);
            leader != 0
        });
        leader
    }

    /// Wait until every running node has applied the same index, at least
    /// `index`, and serves the same version from it (its state mirrors the
    /// log that far); that index.
    pub fn converged(&self, index: u64, secs: u64) -> u64 {
        let mut applied = 0;
        wait_until(secs, &format!("every node applied {index}"), || {
            let all: Vec<(u64, u64)> = self
                .running()
                .into_iter()
                .map(|id| {
                    let s = self.status(id);
                    (
                        s["appliedIndex"].as_u64().unwrap_or(0),
                        s["version"].as_u64().unwrap_or(0),
                    )
                })
                .collect();
            applied = all[0].0;
            all.iter().all(|a| *a == all[0] && a.0 >= index)
        });
        applied
    }
}

impl Drop for Cluster {
    /// After a failure, show what each node logged last (the processes
    /// themselves are killed by their own drop).
    fn drop(&mut self) {
        if !std::thread::panicking() {
            return;
        }
        for (i, node) in self.nodes.iter().enumerate() {
            if let Some(node) = node {
                let lines = node.proc.stderr.all();
                let tail = &lines[lines.len().saturating_sub(40)..];
                eprintln!(
                    "--- node {} (last {} log lines)\n{}",
                    i + 1,
                    tail.len(),
                    tail.join("\n")
                );
            }
        }
    }
}
