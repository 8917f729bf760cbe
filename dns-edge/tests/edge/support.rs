//! The edge under test started from this package's build, beside the
//! shared end-to-end harness (`gslb-e2e`: processes, the aggregator and
//! gslbctl, HTTP, condition polling), dig/kdig, and the served catalog.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

pub use gslb_e2e::dns::{http_get, rcode};
use gslb_e2e::process::Proc;
pub use gslb_e2e::{Aggregator, temp_dir, wait_until};

/// A running edge.
pub struct Edge {
    pub proc: Proc,
    /// Its status listener.
    pub status: SocketAddr,
}

impl Edge {
    /// Start with `args` plus loopback listeners on free ports.
    pub fn start(args: &[&str]) -> Edge {
        Self::start_logging(args, "info")
    }

    /// [`Edge::start`] logging at `filter` (`RUST_LOG`).
    pub fn start_logging(args: &[&str], filter: &str) -> Edge {
        let mut all = vec![
            "--listen-dns",
            "127.0.0.1:0",
            "--listen-status",
            "127.0.0.1:0",
            "--udp-workers",
            "2",
        ];
        all.extend_from_slice(args);
        let proc = Proc::spawn_logging(
            None,
            Path::new(env!("CARGO_BIN_EXE_gslb-edge")),
            &all,
            filter,
        );
        let status = proc.stdout.listening("status", 30);
        Edge { proc, status }
    }

    /// The DNS address, once bound.
    pub fn dns(&self) -> SocketAddr {
        self.proc.stdout.listening("dns", 30)
    }

    /// GET a status path: (status code, body).
    pub fn get(&self, path: &str) -> (u16, String) {
        http_get(self.status, path)
    }

    /// The applied version per /status/config.
    pub fn version(&self) -> u64 {
        let (_, body) = self.get("/status/config");
        let v: serde_json::Value = serde_json::from_str(&body).unwrap();
        v["version"].as_u64().unwrap()
    }

    /// Wait until /status/config reports `version` or later.
    pub fn wait_version(&self, version: u64) {
        wait_until(30, &format!("version {version}"), || {
            self.version() >= version
        });
    }
}

/// Run `tool` (dig or kdig) against `server`; returns stdout.
pub fn query_tool(tool: &str, server: SocketAddr, args: &[&str]) -> String {
    query_tool_in(None, tool, server, args)
}

/// [`query_tool`] inside network namespace `netns`, if given.
pub fn query_tool_in(netns: Option<&str>, tool: &str, server: SocketAddr, args: &[&str]) -> String {
    let mut cmd = match netns {
        Some(ns) => {
            let mut c = Command::new("ip");
            c.args(["netns", "exec", ns, tool]);
            c
        }
        None => Command::new(tool),
    };
    let out = cmd
        .arg(format!("@{}", server.ip()))
        .args(["-p", &server.port().to_string()])
        .args(if tool == "kdig" {
            ["+timeout=2", "+retry=0"]
        } else {
            ["+time=2", "+tries=1"]
        })
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!("{tool} not runnable ({e}): apt-get install bind9-dnsutils knot-dnsutils")
        });
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `dig` against `server`.
pub fn dig(server: SocketAddr, args: &[&str]) -> String {
    query_tool("dig", server, args)
}

/// `dig +short`, one answer per line, sorted.
pub fn short(server: SocketAddr, args: &[&str]) -> Vec<String> {
    let mut a: Vec<&str> = args.to_vec();
    a.push("+short");
    let mut lines: Vec<String> = dig(server, &a).lines().map(str::to_owned).collect();
    lines.sort();
    lines
}

/// The flags of a dig reply (`qr aa`, ...).
pub fn flags(reply: &str) -> Vec<&str> {
    reply
        .split("flags: ")
        .nth(1)
        .and_then(|r| r.split(';').next())
        .map(|f| f.split_whitespace().collect())
        .unwrap_or_default()
}

/// The quickstart-like catalog the DNS tests serve.
pub const CONFIG: &str = r#"
[[zone]]
apex = "example.test"
ns = ["ns1.example.test", "ns2.example.test"]
defaultTtl = 300
[zone.soa]
mname = "ns1.example.test"
rname = "hostmaster.example.test"
refresh = 3600
retry = 600
expire = 604800
negativeTtl = 60

[[pool]]
name = "web"
[[pool.member]]
name = "web-1"
address = "192.0.2.1"
port = 80
[[pool.member]]
name = "web-2"
address = "192.0.2.2"
port = 80

[[record]]
zone = "example.test"
name = "www.example.test"
type = "A"
dynamic = { steering = "roundrobin", pools = ["web"] }

[[record]]
zone = "example.test"
name = "ns1.example.test"
type = "A"
static = [{ a = "192.0.2.53" }]

[[record]]
zone = "example.test"
name = "alias.example.test"
type = "CNAME"
static = [{ cname = "www.example.test" }]

[[record]]
zone = "example.test"
name = "big.example.test"
type = "TXT"
static = [{ txt = ["aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"] }, { txt = ["bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"] }, { txt = ["cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc"] }, { txt = ["dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd"] }, { txt = ["eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee"] }, { txt = ["ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"] }]

[[record]]
zone = "example.test"
name = "example.test"
type = "MX"
static = [{ mx = { preference = 10, exchange = "ns1.example.test" } }]
"#;

/// An aggregator serving [`CONFIG`] and an edge following it, synced.
pub fn mesh(name: &str, edge_args: &[&str]) -> (PathBuf, Aggregator, Edge, u64) {
    let dir = temp_dir(name);
    let agg = Aggregator::start(&dir.join("agg"));
    let version = agg.apply(CONFIG, &dir);
    let cache = dir.join("cache");
    let url = agg.url();
    let mut args = vec![
        "--aggregator",
        url.as_str(),
        "--cache-dir",
        cache.to_str().unwrap(),
    ];
    args.extend_from_slice(edge_args);
    let edge = Edge::start(&args);
    edge.wait_version(version);
    (dir, agg, edge, version)
}
