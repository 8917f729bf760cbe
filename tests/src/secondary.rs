//! Knot and NSD as secondaries of a gslb edge on loopback: each transfers
//! one zone from the edge with a TSIG key, takes NOTIFY from it, answers
//! on a port of its own, and gives the zone to anyone on 127.0.0.1 by
//! AXFR (so a test can compare it whole). Killed on drop.

use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

/// A loopback port free for both UDP and TCP.
pub fn free_port() -> u16 {
    for _ in 0..50 {
        let Ok(udp) = UdpSocket::bind("127.0.0.1:0") else {
            continue;
        };
        let Ok(port) = udp.local_addr().map(|a| a.port()) else {
            continue;
        };
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no loopback port free for UDP and TCP")
}

/// Which server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Knot DNS (`knotd`).
    Knot,
    /// NLnet Labs' NSD.
    Nsd,
}

/// A running secondary.
pub struct Secondary {
    child: Child,
    /// Which server it is.
    pub kind: Kind,
    /// Where it answers (UDP and TCP).
    pub addr: SocketAddr,
    /// Its log file.
    pub log: PathBuf,
}

/// What a secondary needs to know of its primary.
pub struct Primary<'a> {
    /// The zone.
    pub apex: &'a str,
    /// The edge's DNS address.
    pub addr: SocketAddr,
    /// TSIG key name and base64 secret.
    pub key: (&'a str, &'a str),
}

impl Secondary {
    /// Start `kind` in `dir` as a secondary of `primary`.
    pub fn start(kind: Kind, dir: &Path, primary: &Primary<'_>) -> Secondary {
        std::fs::create_dir_all(dir).expect("secondary dir");
        let port = free_port();
        let log = dir.join("log");
        let (conf, program, args): (String, &str, Vec<String>) = match kind {
            Kind::Knot => (knot_conf(dir, port, primary), "knotd", vec!["-c".into()]),
            Kind::Nsd => (
                nsd_conf(dir, port, primary),
                "nsd",
                vec!["-d".into(), "-c".into()],
            ),
        };
        let path = dir.join("server.conf");
        std::fs::write(&path, conf).expect("write secondary config");
        let child = Command::new(program)
            .args(args)
            .arg(&path)
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("secondary log"))
            .spawn()
            .unwrap_or_else(|e| panic!("{program} not runnable ({e}): see scripts/packages.sh"));
        Secondary {
            child,
            kind,
            addr: SocketAddr::from(([127, 0, 0, 1], port)),
            log,
        }
    }

    /// Its log so far (NSD writes its own file, Knot to stderr).
    pub fn log_text(&self) -> String {
        let mut text = std::fs::read_to_string(&self.log).unwrap_or_default();
        if self.kind == Kind::Nsd
            && let Some(dir) = self.log.parent()
        {
            text += &std::fs::read_to_string(dir.join("nsd.log")).unwrap_or_default();
        }
        text
    }
}

impl Drop for Secondary {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn knot_conf(dir: &Path, port: u16, p: &Primary<'_>) -> String {
    let d = dir.display();
    let (name, secret) = p.key;
    let (ip, primary_port) = (p.addr.ip(), p.addr.port());
    format!(
        "server:\n    rundir: \"{d}\"\n    listen: 127.0.0.1@{port}\n    udp-workers: 1\n    tcp-workers: 1\n    background-workers: 1\n\
         database:\n    storage: \"{d}\"\n\
         log:\n  - target: stderr\n    any: info\n\
         key:\n  - id: {name}\n    algorithm: hmac-sha256\n    secret: {secret}\n\
         remote:\n  - id: primary\n    address: {ip}@{primary_port}\n    key: {name}\n\
         acl:\n  - id: notify\n    address: {ip}\n    key: {name}\n    action: notify\n  - id: out\n    address: 127.0.0.1\n    action: transfer\n\
         zone:\n  - domain: {apex}.\n    master: primary\n    acl: [notify, out]\n    file: \"{d}/{apex}.zone\"\n    zonefile-sync: -1\n    zonefile-load: none\n",
        apex = p.apex,
    )
}

fn nsd_conf(dir: &Path, port: u16, p: &Primary<'_>) -> String {
    let d = dir.display();
    let (name, secret) = p.key;
    let (ip, primary_port) = (p.addr.ip(), p.addr.port());
    format!(
        "server:\n    ip-address: 127.0.0.1@{port}\n    port: {port}\n    username: \"\"\n    chroot: \"\"\n    zonesdir: \"{d}\"\n    database: \"\"\n\
         \x20   pidfile: \"{d}/nsd.pid\"\n    xfrdfile: \"{d}/xfrd.state\"\n    xfrdir: \"{d}\"\n    zonelistfile: \"{d}/zone.list\"\n\
         \x20   logfile: \"{d}/nsd.log\"\n    verbosity: 2\n    server-count: 1\n\
         \x20   xfrd-reload-timeout: 0\n\
         remote-control:\n    control-enable: no\n\
         key:\n    name: {name}\n    algorithm: hmac-sha256\n    secret: \"{secret}\"\n\
         zone:\n    name: {apex}\n    zonefile: \"{d}/{apex}.zone\"\n    request-xfr: {ip}@{primary_port} {name}\n    allow-notify: {ip} {name}\n    provide-xfr: 127.0.0.1 NOKEY\n",
        apex = p.apex,
    )
}
