//! The mesh's processes: aggregator (with gslbctl against it), agents, the
//! edge and demo backends, each started from the workspace build, on
//! loopback or inside a network namespace. An aggregator on loopback runs
//! `--insecure` (plain text); one on another address (inside a namespace)
//! runs mutual TLS with certificates from [`crate::pki`], and agents and
//! edges given an `https://` URL present theirs. Admin calls always carry
//! a write token.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::bins::bin;
use crate::pki::CertFiles;
use crate::process::Proc;
use crate::wait::wait_until;

/// Seconds to wait for a process to print its listening line.
const START_SECS: u64 = 30;

/// A running aggregator.
pub struct Aggregator {
    /// The process (killed on drop).
    pub proc: Proc,
    /// Its gRPC listener (agents, edges, gslbctl).
    pub grpc: SocketAddr,
    /// Its HTTP listener (REST, /readyz, /metrics).
    pub http: SocketAddr,
    /// The namespace it runs in, if any.
    pub netns: Option<String>,
    /// A write token for admin calls.
    pub token: String,
    /// The operator certificate gslbctl presents, when it runs TLS.
    pub operator: Option<CertFiles>,
}

impl Aggregator {
    /// Start on loopback with free ports and a 1 s startup gate.
    pub fn start(data_dir: &Path) -> Aggregator {
        Aggregator::start_with(None, data_dir, "127.0.0.1:0", &["--startup-window", "1s"])
    }

    /// Start in `netns` (when given) with gRPC on `grpc` and `extra` flags;
    /// plain text on loopback, mutual TLS elsewhere.
    pub fn start_with(
        netns: Option<&str>,
        data_dir: &Path,
        grpc: &str,
        extra: &[&str],
    ) -> Aggregator {
        let ip = grpc.parse::<SocketAddr>().expect("gRPC address").ip();
        Aggregator::start_at(netns, data_dir, grpc, !ip.is_loopback(), extra)
    }

    /// [`Aggregator::start_with`], with mutual TLS (a certificate for the
    /// gRPC address's IP) when `tls`, on loopback too.
    pub fn start_at(
        netns: Option<&str>,
        data_dir: &Path,
        grpc: &str,
        tls: bool,
        extra: &[&str],
    ) -> Aggregator {
        let ip = grpc.parse::<SocketAddr>().expect("gRPC address").ip();
        let own = tls.then(|| {
            let host = ip.to_string();
            // The REST listener is on 127.0.0.1 (of its namespace).
            crate::pki::cert("aggregator", &format!("agg-{host}"), &[&host, "127.0.0.1"])
        });
        Aggregator::launch(netns, data_dir, grpc, own.as_ref(), extra)
    }

    /// Start on loopback with mutual TLS, presenting `own` (a certificate
    /// for 127.0.0.1), and `extra` flags.
    pub fn start_tls(data_dir: &Path, own: &CertFiles, extra: &[&str]) -> Aggregator {
        Aggregator::launch(None, data_dir, "127.0.0.1:0", Some(own), extra)
    }

    fn launch(
        netns: Option<&str>,
        data_dir: &Path,
        grpc: &str,
        own: Option<&CertFiles>,
        extra: &[&str],
    ) -> Aggregator {
        let dir = data_dir.to_str().expect("utf-8 path");
        // The aggregator's default tokens file, unless `extra` names one.
        let tokens = extra
            .iter()
            .position(|a| *a == "--tokens-file")
            .and_then(|i| extra.get(i + 1))
            .map_or_else(|| data_dir.join("tokens.json"), PathBuf::from);
        let token = crate::pki::admin_token(&tokens);
        let mut args: Vec<String> = [
            "--data-dir",
            dir,
            "--listen-grpc",
            grpc,
            "--listen-http",
            "127.0.0.1:0",
        ]
        .map(str::to_owned)
        .to_vec();
        let operator = match own {
            None => {
                args.push("--insecure".into());
                None
            }
            Some(own) => {
                args.extend(own.tls_flags());
                Some(crate::pki::cert("operator", "e2e-operator", &[]))
            }
        };
        args.extend(extra.iter().map(|s| s.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let proc = Proc::spawn(netns, &bin("gslb-aggregator"), &args);
        let grpc = proc.stdout.listening("grpc", START_SECS);
        let http = proc.stdout.listening("http", START_SECS);
        Aggregator {
            proc,
            grpc,
            http,
            netns: netns.map(str::to_owned),
            token,
            operator,
        }
    }

    /// The URL of the gRPC listener (`https://` when it runs TLS), for
    /// agents, edges and gslbctl.
    pub fn url(&self) -> String {
        let scheme = if self.operator.is_some() {
            "https"
        } else {
            "http"
        };
        format!("{scheme}://{}", self.grpc)
    }

    /// Stop with SIGTERM and wait for the exit.
    pub fn stop(&mut self) {
        self.proc.terminate();
        wait_until(30, "the aggregator to exit", || self.proc.exited());
    }

    /// Run gslbctl; returns (success, stdout, stderr).
    pub fn try_ctl(&self, args: &[&str]) -> (bool, String, String) {
        let mut cmd = match &self.netns {
            Some(ns) => {
                let mut c = Command::new("ip");
                c.args(["netns", "exec", ns]).arg(bin("gslbctl"));
                c
            }
            None => Command::new(bin("gslbctl")),
        };
        cmd.args(["--server", &self.url(), "--token", &self.token]);
        if let Some(operator) = &self.operator {
            cmd.args(operator.ctl_flags());
        }
        let out = cmd.args(args).output().expect("run gslbctl");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }

    /// Run gslbctl, which must succeed; returns stdout.
    pub fn ctl(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.try_ctl(args);
        assert!(ok, "gslbctl {args:?} failed: {out} {err}");
        out
    }

    /// Run gslbctl with `-o json`; returns the parsed output.
    pub fn ctl_json(&self, args: &[&str]) -> Value {
        let mut all = vec!["-o", "json"];
        all.extend_from_slice(args);
        let out = self.ctl(&all);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("gslbctl {args:?}: {e}: {out}"))
    }

    /// `gslbctl apply -f` the declarative `config` (written into `dir`);
    /// returns the version it produced.
    pub fn apply(&self, config: &str, dir: &Path) -> u64 {
        let file = dir.join("applied.toml");
        std::fs::write(&file, config).expect("write config");
        let out = self.ctl(&["apply", "-f", file.to_str().expect("utf-8 path")]);
        applied_version(&out).unwrap_or_else(|| panic!("no version in {out}"))
    }

    /// [`Aggregator::apply`] with `--prune`: whatever the document leaves
    /// out is deleted.
    pub fn apply_pruning(&self, config: &str, dir: &Path) -> u64 {
        let file = dir.join("applied.toml");
        std::fs::write(&file, config).expect("write config");
        let path = file.to_str().expect("utf-8 path");
        let out = self.ctl(&["apply", "-f", path, "--prune"]);
        applied_version(&out).unwrap_or_else(|| panic!("no version in {out}"))
    }

    /// A REST call with the write token (plain HTTP: the harness's
    /// loopback aggregators run `--insecure`); (status, parsed body or
    /// `Value::Null`).
    pub fn rest(&self, method: &str, path: &str, body: &str) -> (u16, Value) {
        let auth = format!("Bearer {}", self.token);
        let (code, _, body) =
            crate::dns::http_request(self.http, method, path, &[("Authorization", &auth)], body);
        (code, serde_json::from_str(&body).unwrap_or(Value::Null))
    }

    /// Number of health-log entries of `pool`/`name`.
    pub fn log_len(&self, pool: &str, name: &str) -> usize {
        let member = self.member(pool, name);
        let id = member["id"].as_u64().expect("member id").to_string();
        self.ctl_json(&["logs", &id]).as_array().map_or(0, Vec::len)
    }

    /// Agents connected now, per `gslbctl agents`.
    pub fn connected_agents(&self) -> usize {
        let agents = self.ctl_json(&["agents"]);
        agents
            .as_array()
            .into_iter()
            .flatten()
            .filter(|a| a["connected"] == true)
            .count()
    }

    /// The value of the metric whose name starts with `name` (0 if absent).
    pub fn metric(&self, name: &str) -> u64 {
        let text = crate::dns::http_get(self.http, "/metrics").1;
        text.lines()
            .filter(|l| l.starts_with(name))
            .find_map(|l| l.rsplit(' ').next().and_then(|v| v.parse().ok()))
            .unwrap_or(0)
    }

    /// The id of pool `name`.
    pub fn pool_id(&self, name: &str) -> u64 {
        let pools = self.ctl_json(&["pools", "list"]);
        pools
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["name"] == name)
            .and_then(|p| p["id"].as_u64())
            .unwrap_or_else(|| panic!("no pool {name}"))
    }

    /// Member `name` of pool `pool` with its status, as `members list` shows it.
    pub fn member(&self, pool: &str, name: &str) -> Value {
        self.try_member(pool, name)
            .unwrap_or_else(|| panic!("no member {pool}/{name}"))
    }

    /// [`Aggregator::member`], or `None` when the pool has no such member.
    pub fn try_member(&self, pool: &str, name: &str) -> Option<Value> {
        let id = self.pool_id(pool).to_string();
        let members = self.ctl_json(&["members", "list", "--pool", &id]);
        members
            .as_array()
            .into_iter()
            .flatten()
            .find(|m| m["name"] == name)
            .cloned()
    }

    /// The health word (`up`, `down`, `unknown`) of `pool`/`name`.
    pub fn health(&self, pool: &str, name: &str) -> String {
        let m = self.member(pool, name);
        m["status"]["health"].as_str().unwrap_or("").to_owned()
    }

    /// [`Aggregator::health`] for polling a cluster node: `None` when the
    /// read fails (e.g. a leader that cannot confirm its leadership under
    /// load answers a linearizable read with an error), so a wait retries
    /// instead of failing the test.
    pub fn try_health(&self, pool: &str, name: &str) -> Option<String> {
        let json = |args: &[&str]| -> Option<Value> {
            let mut all = vec!["-o", "json"];
            all.extend_from_slice(args);
            let (ok, out, _) = self.try_ctl(&all);
            ok.then(|| serde_json::from_str(&out).ok()).flatten()
        };
        let pools = json(&["pools", "list"])?;
        let id = pools.as_array()?.iter().find(|p| p["name"] == pool)?["id"]
            .as_u64()?
            .to_string();
        let members = json(&["members", "list", "--pool", &id])?;
        let m = members.as_array()?.iter().find(|m| m["name"] == name)?;
        Some(m["status"]["health"].as_str().unwrap_or("").to_owned())
    }

    /// The STATUS column `gslbctl members list` prints for `pool`/`name`.
    pub fn status_column(&self, pool: &str, name: &str) -> String {
        let id = self.pool_id(pool).to_string();
        let table = self.ctl(&["members", "list", "--pool", &id]);
        table
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(name))
            .and_then(|l| {
                // STATUS is a column of its own: take the text between the
                // priority column and the region column by splitting on runs
                // of two spaces.
                l.split("  ")
                    .map(str::trim)
                    .filter(|c| !c.is_empty())
                    .nth(6)
                    .map(str::to_owned)
            })
            .unwrap_or_default()
    }
}

/// The version in gslbctl apply's `applied: N changes, version V` line.
fn applied_version(out: &str) -> Option<u64> {
    out.lines().find_map(|l| {
        l.strip_prefix("applied: ")
            .and_then(|r| r.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
    })
}

/// A running probe agent.
pub struct Agent {
    /// The process (killed on drop).
    pub proc: Proc,
    /// Its metrics listener.
    pub metrics: SocketAddr,
}

impl Agent {
    /// Start location `location` in `region`, reporting to `aggregator`.
    pub fn start(netns: Option<&str>, location: &str, region: &str, aggregator: &str) -> Agent {
        Agent::start_with(netns, location, region, aggregator, &[])
    }

    /// [`Agent::start`] with `extra` flags (`--resolver IP:PORT`, ...).
    pub fn start_with(
        netns: Option<&str>,
        location: &str,
        region: &str,
        aggregator: &str,
        extra: &[&str],
    ) -> Agent {
        let mut args: Vec<String> = [
            "--location",
            location,
            "--region",
            region,
            "--aggregator",
            aggregator,
            "--listen-metrics",
            "127.0.0.1:0",
            "--batch-interval",
            "20ms",
        ]
        .map(str::to_owned)
        .to_vec();
        if aggregator.contains("https://") {
            // The certificate of an agent is named for its location.
            args.extend(crate::pki::cert("agent", location, &[]).tls_flags());
        }
        args.extend(extra.iter().map(|a| (*a).to_owned()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let proc = Proc::spawn(netns, &bin("gslb-agent"), &args);
        let metrics = proc.stdout.listening("metrics", START_SECS);
        Agent { proc, metrics }
    }
}

/// A running DNS edge.
pub struct Edge {
    /// The process (killed on drop).
    pub proc: Proc,
    /// Its status listener.
    pub status: SocketAddr,
    /// Its cache directory.
    pub cache: PathBuf,
    /// The namespace it runs in, if any.
    pub netns: Option<String>,
}

impl Edge {
    /// Start following `aggregator` (None: cache only) with `cache`, on
    /// loopback ports `dns` and a free status port, plus `extra` flags.
    pub fn start(
        netns: Option<&str>,
        aggregator: Option<&str>,
        cache: &Path,
        dns: &str,
        extra: &[&str],
    ) -> Edge {
        // A status address in `extra` wins (a fleet whose peers know it).
        let status: &[&str] = if extra.contains(&"--listen-status") {
            &[]
        } else {
            &["--listen-status", "127.0.0.1:0"]
        };
        // One UDP worker unless `extra` asks for more.
        let workers: &[&str] = if extra.contains(&"--udp-workers") {
            &[]
        } else {
            &["--udp-workers", "1"]
        };
        let mut args = vec![
            "--listen-dns",
            dns,
            "--min-drain-secs",
            "0",
            "--cache-dir",
            cache.to_str().expect("utf-8 path"),
        ];
        args.extend_from_slice(status);
        args.extend_from_slice(workers);
        if let Some(a) = aggregator {
            args.extend_from_slice(&["--aggregator", a]);
        }
        let tls = aggregator
            .filter(|a| a.contains("https://"))
            .map(|_| crate::pki::cert("edge", "e2e-edge", &[]).tls_flags())
            .unwrap_or_default();
        args.extend(tls.iter().map(String::as_str));
        args.extend_from_slice(extra);
        let proc = Proc::spawn(netns, &bin("gslb-edge"), &args);
        let status = proc.stdout.listening("status", START_SECS);
        Edge {
            proc,
            status,
            cache: cache.to_path_buf(),
            netns: netns.map(str::to_owned),
        }
    }

    /// The DNS address, once a snapshot is applied and DNS is bound.
    pub fn dns(&self) -> SocketAddr {
        self.proc.stdout.listening("dns", START_SECS)
    }

    /// `/status/config` as JSON (Null when unreachable). Loopback only: an
    /// edge inside a namespace is observed through its DNS answers.
    pub fn status_config(&self) -> Value {
        assert!(self.netns.is_none(), "status of a namespaced edge");
        let body = crate::dns::http_get(self.status, "/status/config").1;
        serde_json::from_str(&body).unwrap_or(Value::Null)
    }

    /// A counter or gauge of the edge's `/metrics` (0 when absent).
    pub fn metric(&self, name: &str) -> u64 {
        let text = crate::dns::http_get(self.status, "/metrics").1;
        text.lines()
            .filter(|l| l.split([' ', '{']).next() == Some(name))
            .find_map(|l| l.rsplit(' ').next().and_then(|v| v.parse().ok()))
            .unwrap_or(0)
    }

    /// A labelled counter or gauge of the edge's `/metrics`: the first
    /// line of `name` holding `label` (e.g. `how="refresh"`); 0 when absent.
    pub fn metric_with(&self, name: &str, label: &str) -> u64 {
        let text = crate::dns::http_get(self.status, "/metrics").1;
        text.lines()
            .filter(|l| l.split([' ', '{']).next() == Some(name) && l.contains(label))
            .find_map(|l| l.rsplit(' ').next().and_then(|v| v.parse().ok()))
            .unwrap_or(0)
    }

    /// The applied snapshot version per `/status/config` (0 before one).
    pub fn version(&self) -> u64 {
        self.status_config()["version"].as_u64().unwrap_or(0)
    }

    /// Wait until the edge has applied `version` or later.
    pub fn wait_version(&self, version: u64) {
        wait_until(30, &format!("edge at version {version}"), || {
            self.version() >= version
        });
    }

    /// Stop with SIGTERM and wait for the exit.
    pub fn stop(&mut self) {
        self.proc.terminate();
        wait_until(30, "the edge to exit", || self.proc.exited());
    }
}

/// A running demo backend (`gslb-demo-backend`).
pub struct Backend {
    /// The process (killed on drop).
    pub proc: Proc,
    /// Where it listens.
    pub addr: SocketAddr,
    netns: Option<String>,
}

impl Backend {
    /// Serve on `addr` (in `netns` when given) until killed.
    pub fn start(netns: Option<&str>, addr: &str) -> Backend {
        Backend::start_with(netns, addr, &[])
    }

    /// [`Backend::start`] with `extra` flags (`--delays FILE`).
    pub fn start_with(netns: Option<&str>, addr: &str, extra: &[&str]) -> Backend {
        let mut args = vec!["--listen", addr, "--name", addr];
        args.extend_from_slice(extra);
        let proc = Proc::spawn(netns, &bin("gslb-demo-backend"), &args);
        let addr = proc.stdout.listening("backend", START_SECS);
        Backend {
            proc,
            addr,
            netns: netns.map(str::to_owned),
        }
    }

    /// Kill it (the failure the tests inject).
    pub fn kill(&mut self) {
        self.proc.kill();
    }

    /// Freeze it (SIGSTOP): connections still complete in the kernel's
    /// backlog but nothing answers, so checks fail by timing out.
    pub fn pause(&self) {
        self.proc.signal("STOP");
    }

    /// Thaw it (SIGCONT).
    pub fn resume(&self) {
        self.proc.signal("CONT");
    }

    /// Start it again on the same address.
    pub fn restart(&mut self) {
        let again = Backend::start(self.netns.as_deref(), &self.addr.to_string());
        *self = again;
    }
}
