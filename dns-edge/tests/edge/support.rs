//! Starting the real binaries on loopback and talking to them: the edge,
//! the aggregator and gslbctl, dig/kdig, a minimal HTTP client, and
//! condition polling with deadlines.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Poll `cond` every 20 ms until it holds or `secs` pass.
pub fn wait_until(secs: u64, what: &str, mut cond: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(secs);
    while !cond() {
        assert!(
            Instant::now() < deadline,
            "timed out after {secs}s waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A fresh temporary directory for one test.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gslb-edge-it-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// The workspace's build of another package's binary, beside ours.
fn sibling_bin(name: &str) -> PathBuf {
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_gslb-edge"));
    let path = ours.parent().unwrap().join(name);
    assert!(
        path.exists(),
        "{} not built: run the workspace tests (cargo nextest run --workspace)",
        path.display()
    );
    path
}

/// Lines a child printed, collected by a reader thread.
#[derive(Clone, Default)]
pub struct Lines(Arc<Mutex<Vec<String>>>);

impl Lines {
    fn follow(self, stream: impl Read + Send + 'static) -> Self {
        let lines = self.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stream).lines() {
                let Ok(line) = line else { break };
                lines.0.lock().unwrap().push(line);
            }
        });
        self
    }

    /// Lines so far.
    pub fn all(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }

    /// True when some line contains `text`.
    pub fn contains(&self, text: &str) -> bool {
        self.0.lock().unwrap().iter().any(|l| l.contains(text))
    }

    /// How many lines contain `text`.
    pub fn count(&self, text: &str) -> usize {
        self.0
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.contains(text))
            .count()
    }

    /// The address of the first "NAME listening on ADDR" line, waiting for it.
    pub fn listening(&self, name: &str, secs: u64) -> SocketAddr {
        let prefix = format!("{name} listening on ");
        let mut found = None;
        wait_until(secs, &prefix, || {
            found = self
                .0
                .lock()
                .unwrap()
                .iter()
                .find_map(|l| l.strip_prefix(&prefix).map(|a| a.parse().unwrap()));
            found.is_some()
        });
        found.unwrap()
    }
}

/// A child process, killed on drop.
pub struct Proc {
    pub child: Child,
    pub stdout: Lines,
    pub stderr: Lines,
}

impl Proc {
    fn spawn(bin: &Path, args: &[&str]) -> Proc {
        let mut child = Command::new(bin)
            .args(args)
            .env("RUST_LOG", "info")
            .env_remove("RUST_BACKTRACE")
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = Lines::default().follow(child.stdout.take().unwrap());
        let stderr = Lines::default().follow(child.stderr.take().unwrap());
        Proc {
            child,
            stdout,
            stderr,
        }
    }

    /// Send SIGTERM.
    pub fn terminate(&self) {
        let pid = self.child.id().to_string();
        assert!(
            Command::new("kill")
                .args(["-TERM", &pid])
                .status()
                .unwrap()
                .success()
        );
    }

    /// True once the process has exited.
    pub fn exited(&mut self) -> bool {
        self.child.try_wait().unwrap().is_some()
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A running aggregator.
pub struct Aggregator {
    /// The process (killed when this is dropped).
    _proc: Proc,
    /// `http://127.0.0.1:PORT` of its gRPC listener.
    pub grpc: String,
}

impl Aggregator {
    /// Start on `grpc` (port 0 picks one) with `data_dir`.
    pub fn start(data_dir: &Path, grpc: &str) -> Aggregator {
        let proc = Proc::spawn(
            &sibling_bin("gslb-aggregator"),
            &[
                "--data-dir",
                data_dir.to_str().unwrap(),
                "--listen-grpc",
                grpc,
                "--listen-http",
                "127.0.0.1:0",
                "--startup-window",
                "1s",
            ],
        );
        let addr = proc.stdout.listening("grpc", 30);
        Aggregator {
            _proc: proc,
            grpc: format!("http://{addr}"),
        }
    }

    /// Run gslbctl against this aggregator; returns stdout (it must succeed).
    pub fn ctl(&self, args: &[&str]) -> String {
        let out = Command::new(sibling_bin("gslbctl"))
            .args(["--server", &self.grpc])
            .args(args)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "gslbctl {args:?}: {text} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    }

    /// `gslbctl apply -f` a declarative config; returns the applied version.
    pub fn apply(&self, config: &str, dir: &Path) -> u64 {
        let file = dir.join("config.toml");
        std::fs::write(&file, config).unwrap();
        let out = Command::new(sibling_bin("gslbctl"))
            .args([
                "--server",
                &self.grpc,
                "apply",
                "-f",
                file.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "apply failed: {text} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        text.lines()
            .find_map(|l| {
                l.strip_prefix("applied: ")
                    .and_then(|r| r.rsplit(' ').next())
            })
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no version in {text}"))
    }
}

/// A running edge.
pub struct Edge {
    pub proc: Proc,
    /// Its status listener.
    pub status: SocketAddr,
}

impl Edge {
    /// Start with `args` plus loopback listeners on free ports.
    pub fn start(args: &[&str]) -> Edge {
        let mut all = vec![
            "--listen-dns",
            "127.0.0.1:0",
            "--listen-status",
            "127.0.0.1:0",
            "--udp-workers",
            "2",
        ];
        all.extend_from_slice(args);
        let proc = Proc::spawn(Path::new(env!("CARGO_BIN_EXE_gslb-edge")), &all);
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

/// A plain HTTP/1.1 GET.
pub fn http_get(addr: SocketAddr, path: &str) -> (u16, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    let code = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    let body = text
        .split_once("\r\n\r\n")
        .map_or("", |(_, b)| b)
        .to_owned();
    (code, body)
}

/// Run `tool` (dig or kdig) against `server`; returns stdout.
pub fn query_tool(tool: &str, server: SocketAddr, args: &[&str]) -> String {
    let out = Command::new(tool)
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

/// The status word of a dig reply (`NOERROR`, `NXDOMAIN`, ...).
pub fn rcode(reply: &str) -> &str {
    reply
        .split("status: ")
        .nth(1)
        .and_then(|r| r.split([',', ';']).next())
        .unwrap_or("")
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
    let agg = Aggregator::start(&dir.join("agg"), "127.0.0.1:0");
    let version = agg.apply(CONFIG, &dir);
    let cache = dir.join("cache");
    let mut args = vec![
        "--aggregator",
        agg.grpc.as_str(),
        "--cache-dir",
        cache.to_str().unwrap(),
    ];
    args.extend_from_slice(edge_args);
    let edge = Edge::start(&args);
    edge.wait_version(version);
    (dir, agg, edge, version)
}
