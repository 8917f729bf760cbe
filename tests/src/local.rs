//! A whole mesh on loopback: one aggregator, agents as locations, one edge.

use std::net::SocketAddr;
use std::path::PathBuf;

use crate::dns;
use crate::mesh::{Agent, Aggregator, Edge};
use crate::wait::temp_dir;

/// The mesh's parts, stopped (killed) on drop.
pub struct LocalMesh {
    /// Scratch directory (store, cache, applied files).
    pub dir: PathBuf,
    /// The aggregator.
    pub agg: Aggregator,
    /// The agents, one per location.
    pub agents: Vec<Agent>,
    /// The edge.
    pub edge: Edge,
    /// The edge's DNS address.
    pub dns: SocketAddr,
}

impl LocalMesh {
    /// Start the aggregator, apply `config`, start one agent per
    /// `(location, region)` and an edge, and wait until the edge serves the
    /// applied version.
    pub fn start(name: &str, config: &str, locations: &[(&str, &str)]) -> LocalMesh {
        let dir = temp_dir(name);
        let agg = Aggregator::start(&dir.join("store"));
        LocalMesh::around(dir, agg, config, locations)
    }

    /// [`LocalMesh::start`] with mutual TLS on every link, as a production
    /// mesh runs (and the web UI needs: its cookie is `Secure`).
    pub fn start_tls(name: &str, config: &str, locations: &[(&str, &str)]) -> LocalMesh {
        let dir = temp_dir(name);
        let own = crate::pki::cert("aggregator", "agg-127.0.0.1", &["127.0.0.1"]);
        let agg = Aggregator::start_tls(&dir.join("store"), &own, &["--startup-window", "1s"]);
        LocalMesh::around(dir, agg, config, locations)
    }

    fn around(
        dir: PathBuf,
        agg: Aggregator,
        config: &str,
        locations: &[(&str, &str)],
    ) -> LocalMesh {
        let version = agg.apply(config, &dir);
        let url = agg.url();
        let agents = locations
            .iter()
            .map(|(loc, region)| Agent::start(None, loc, region, &url))
            .collect();
        let edge = Edge::start(None, Some(&url), &dir.join("cache"), "127.0.0.1:0", &[]);
        let dns = edge.dns();
        edge.wait_version(version);
        LocalMesh {
            dir,
            agg,
            agents,
            edge,
            dns,
        }
    }

    /// Apply `config` and wait until the edge serves it.
    pub fn apply(&self, config: &str) -> u64 {
        let version = self.agg.apply(config, &self.dir);
        self.edge.wait_version(version);
        version
    }

    /// The edge's A answer for `name`, sorted.
    pub fn answers(&self, name: &str) -> Vec<String> {
        dns::short(None, self.dns, &[name, "A"])
    }
}

impl Drop for LocalMesh {
    /// Remove the scratch directory after a passing test; keep it (store,
    /// cache, applied files) for inspection after a failing one.
    fn drop(&mut self) {
        // Stop the processes first: they write into the directory.
        self.edge.proc.kill();
        for agent in &mut self.agents {
            agent.proc.kill();
        }
        self.agg.proc.kill();
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}
