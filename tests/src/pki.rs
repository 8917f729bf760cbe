//! Certificates and tokens for the mesh under test: one development CA per
//! test process (made by `gslbctl certs`, like an operator would), leaf
//! certificates issued on first use, and a write token per aggregator
//! data directory (`gslbctl tokens create`).

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

use crate::bins::bin;

/// A certificate and its key.
#[derive(Debug, Clone)]
pub struct CertFiles {
    /// The certificate (PEM).
    pub cert: PathBuf,
    /// Its key (PEM).
    pub key: PathBuf,
    /// The CA (PEM).
    pub ca: PathBuf,
}

impl CertFiles {
    /// `--tls-cert C --tls-key K --tls-ca CA`, as agents, edges and aggregators take them.
    pub fn tls_flags(&self) -> Vec<String> {
        vec![
            "--tls-cert".into(),
            path(&self.cert),
            "--tls-key".into(),
            path(&self.key),
            "--tls-ca".into(),
            path(&self.ca),
        ]
    }

    /// `--ca CA --cert C --key K`, as gslbctl takes them.
    pub fn ctl_flags(&self) -> Vec<String> {
        vec![
            "--ca".into(),
            path(&self.ca),
            "--cert".into(),
            path(&self.cert),
            "--key".into(),
            path(&self.key),
        ]
    }
}

fn path(p: &Path) -> String {
    p.to_str().expect("utf-8 path").to_owned()
}

struct Pki {
    dir: PathBuf,
    issued: Mutex<HashSet<String>>,
}

fn pki() -> &'static Pki {
    static PKI: OnceLock<Pki> = OnceLock::new();
    PKI.get_or_init(|| Pki {
        dir: crate::wait::temp_dir("pki"),
        issued: Mutex::new(HashSet::new()),
    })
}

/// The directory of this process's CA (`ca.crt`, `ca.key`).
pub fn ca_dir() -> PathBuf {
    pki().dir.clone()
}

/// The certificate for `role`:`name` valid for `hosts`, issued once per process.
pub fn cert(role: &str, name: &str, hosts: &[&str]) -> CertFiles {
    let pki = pki();
    let mut issued = pki.issued.lock().unwrap_or_else(|p| p.into_inner());
    if issued.insert(name.to_owned()) {
        return issue_in(&pki.dir, role, name, hosts);
    }
    files_in(&pki.dir, name)
}

/// `gslbctl certs --dir dir` for `role`:`name` valid for `hosts` (the CA
/// of `dir` is made on first use).
pub fn issue_in(dir: &Path, role: &str, name: &str, hosts: &[&str]) -> CertFiles {
    let mut cmd = Command::new(bin("gslbctl"));
    cmd.args(["certs", "--dir", &path(dir)]);
    for host in hosts {
        cmd.args(["--host", host]);
    }
    let out = cmd
        .arg(format!("{role}:{name}"))
        .output()
        .expect("run gslbctl certs");
    assert!(
        out.status.success(),
        "gslbctl certs {role}:{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    files_in(dir, name)
}

/// The files `gslbctl certs` writes for `name` in `dir`.
pub fn files_in(dir: &Path, name: &str) -> CertFiles {
    CertFiles {
        cert: dir.join(format!("{name}.crt")),
        key: dir.join(format!("{name}.key")),
        ca: dir.join("ca.crt"),
    }
}

/// A `gslbctl tokens create` in `file`; the token.
pub fn create_token(file: &Path, name: &str, role: &str, expires: Option<&str>) -> String {
    create_scoped_token(file, name, role, &[], &[], expires)
}

/// A `gslbctl tokens create` in `file` limited to `zones` and `pools`
/// (none: not limited); the token.
pub fn create_scoped_token(
    file: &Path,
    name: &str,
    role: &str,
    zones: &[&str],
    pools: &[&str],
    expires: Option<&str>,
) -> String {
    let mut cmd = Command::new(bin("gslbctl"));
    cmd.args(["-o", "json", "tokens", "create", "--file", &path(file)])
        .args(["--name", name, "--role", role]);
    for zone in zones {
        cmd.args(["--zone", zone]);
    }
    for pool in pools {
        cmd.args(["--pool", pool]);
    }
    if let Some(e) = expires {
        cmd.args(["--expires", e]);
    }
    let out = cmd.output().expect("run gslbctl tokens");
    assert!(
        out.status.success(),
        "gslbctl tokens create: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("token json");
    v["token"].as_str().expect("token").to_owned()
}

/// An admin token in the tokens file `file`, created on first use and kept
/// next to it so a restarted aggregator (or every node of a cluster
/// sharing the file) has the same one.
pub fn admin_token(file: &Path) -> String {
    let saved = file.with_extension("token");
    if let Ok(token) = std::fs::read_to_string(&saved) {
        return token;
    }
    if let Some(dir) = file.parent() {
        std::fs::create_dir_all(dir).expect("create the tokens file's directory");
    }
    let token = create_token(file, "e2e", "admin", None);
    std::fs::write(&saved, &token).expect("save token");
    token
}
