//! Starting the real `gslb-aggregator` binary for integration tests.
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

/// A running `gslb-aggregator`; killed on drop.
pub struct Aggregator {
    pub child: Child,
    /// `http://127.0.0.1:PORT` of its gRPC listener.
    pub grpc: String,
    /// `127.0.0.1:PORT` of its HTTP listener.
    pub http: String,
    /// A write token for admin calls.
    pub token: String,
}

impl Aggregator {
    /// Stop it as an operator does (SIGTERM), and wait for it to exit.
    pub fn stop(mut self) {
        let pid = self.child.id().to_string();
        let _ = Command::new("kill").args(["-TERM", &pid]).status();
        let _ = self.child.wait();
    }
}

impl Drop for Aggregator {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Start the binary on port 0 with `data_dir` (plain text on loopback, a
/// write token in its default tokens file); read the bound address from stdout.
pub fn start(data_dir: &std::path::Path) -> Aggregator {
    start_with(data_dir, &[])
}

/// [`start`] with more command-line arguments.
pub fn start_with(data_dir: &std::path::Path, extra: &[&str]) -> Aggregator {
    use gslb_proto::link::tokens::{TokenFile, TokenRole};
    std::fs::create_dir_all(data_dir).unwrap();
    let tokens_file = data_dir.join("tokens.json");
    let mut tokens = TokenFile::load(&tokens_file).unwrap();
    let (token, _) = tokens
        .create(
            &format!("test-{}", tokens.tokens.len()),
            TokenRole::Admin,
            Default::default(),
            None,
            std::time::SystemTime::now(),
        )
        .unwrap();
    tokens.save(&tokens_file).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_gslb-aggregator"))
        .arg("--insecure")
        .args([
            "--data-dir",
            data_dir.to_str().unwrap(),
            "--listen-grpc",
            "127.0.0.1:0",
            "--listen-http",
            "127.0.0.1:0",
        ])
        .args(["--startup-window", "2s"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let (mut grpc, mut http) = (String::new(), String::new());
    for _ in 0..2 {
        let line = lines.next().unwrap().unwrap();
        if let Some(addr) = line.strip_prefix("grpc listening on ") {
            grpc = format!("http://{addr}");
        }
        if let Some(addr) = line.strip_prefix("http listening on ") {
            http = addr.to_owned();
        }
    }
    Aggregator {
        child,
        grpc,
        http,
        token,
    }
}

/// The `gslbctl` binary (package `gslb-ctl`), built beside the aggregator by
/// any workspace build (`scripts/test.sh`, `cargo test --workspace`).
pub fn gslbctl_bin() -> std::path::PathBuf {
    let aggregator = std::path::Path::new(env!("CARGO_BIN_EXE_gslb-aggregator"));
    let path = aggregator.with_file_name("gslbctl");
    assert!(
        path.exists(),
        "{} not built: build the workspace first (scripts/test.sh or cargo build --workspace)",
        path.display()
    );
    path
}
