//! unbound as a real resolver on loopback: zones stubbed to our edges,
//! zones it serves itself from zone files (`auth-zone`, used for its own
//! lookups too, so a CNAME from our edge into them is followed: the
//! "origin" of hostname members), and the root pointed at a closed
//! loopback port, so nothing is ever sent off the machine. `test.` is one
//! of unbound's built-in blocked zones; the default is lifted. A zone can
//! be rewritten while it runs (`unbound-control` over a socket in the
//! test directory).

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use crate::dns::{dig, rcode};

/// What unbound serves.
#[derive(Debug, Default, Clone)]
pub struct UnboundConf {
    /// Zones resolved by asking one server (an edge): `(zone, server)`.
    pub stubs: Vec<(String, SocketAddr)>,
    /// Zones unbound serves itself: `(zone, records)`, records in zone
    /// file form with absolute names (`lb.origin.test. 30 IN A 127.0.0.2`).
    pub zones: Vec<(String, Vec<String>)>,
    /// A name that answers NOERROR once unbound is up.
    pub ready: String,
    /// Trust anchors (DS or DNSKEY records in zone file form): when any is
    /// given, unbound validates, and answers under them carry AD or fail.
    pub trust_anchors: Vec<String>,
}

/// A running unbound (killed on drop).
pub struct Unbound {
    child: Child,
    /// Where it answers (UDP and TCP).
    pub addr: SocketAddr,
    conf: PathBuf,
    dir: PathBuf,
    /// The SOA serial of the next rewrite.
    serial: std::cell::Cell<u32>,
}

impl Drop for Unbound {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Unbound {
    /// Start on a free loopback port in `dir`. A port can be taken between
    /// choosing it and unbound binding it (tests open listeners all the
    /// time): then unbound exits, and it is started again on another.
    pub fn start(dir: &Path, conf: &UnboundConf) -> Unbound {
        let log = dir.join("unbound.log");
        for _ in 0..3 {
            let port = free_udp_and_tcp_port();
            let path = write_conf(dir, port, conf);
            let child = Command::new("unbound")
                .arg("-d")
                .arg("-c")
                .arg(&path)
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&log).expect("create unbound.log"))
                .spawn()
                .unwrap_or_else(|e| panic!("unbound not runnable ({e}): apt-get install unbound"));
            let mut unbound = Unbound {
                child,
                addr: SocketAddr::from(([127, 0, 0, 1], port)),
                conf: path,
                dir: dir.to_owned(),
                serial: std::cell::Cell::new(2),
            };
            if unbound.answers(&conf.ready) {
                return unbound;
            }
        }
        panic!(
            "unbound never answered: {}",
            std::fs::read_to_string(&log).unwrap_or_default()
        )
    }

    /// True once `name` answers NOERROR (polled for up to 20 s); false
    /// when unbound exited or never answered.
    fn answers(&mut self, name: &str) -> bool {
        for _ in 0..100 {
            if rcode(&dig(None, self.addr, &[name])) == "NOERROR" {
                return true;
            }
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return false;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
        false
    }

    /// Serve `records` as zone `zone` from now on, and drop what unbound
    /// cached from it.
    pub fn set_zone(&self, zone: &str, records: &[&str]) {
        let serial = self.serial.get();
        self.serial.set(serial + 1);
        let records: Vec<String> = records.iter().map(|r| (*r).to_owned()).collect();
        write_zone(&self.dir, zone, serial, &records);
        self.control(&["auth_zone_reload", zone]);
        self.control(&["flush_zone", zone]);
    }

    fn control(&self, args: &[&str]) {
        let out = Command::new("unbound-control")
            .arg("-c")
            .arg(&self.conf)
            .args(args)
            .output()
            .expect("unbound-control runs");
        assert!(
            out.status.success(),
            "unbound-control {args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn write_conf(dir: &Path, port: u16, conf: &UnboundConf) -> PathBuf {
    let d = dir.display();
    let mut text = format!(
        "server:\n  interface: 127.0.0.1\n  port: {port}\n  do-ip6: no\n  do-not-query-localhost: no\n\
         \x20 username: \"\"\n  chroot: \"\"\n  directory: \"{d}\"\n  pidfile: \"{d}/unbound.pid\"\n\
         \x20 use-syslog: no\n  logfile: \"\"\n  verbosity: 1\n  access-control: 127.0.0.0/8 allow\n\
         \x20 module-config: \"iterator\"\n  edns-buffer-size: 512\n  qname-minimisation: no\n\
         \x20 local-zone: \"test.\" nodefault\n"
    );
    if !conf.trust_anchors.is_empty() {
        text = text.replace("\"iterator\"", "\"validator iterator\"");
        text.push_str("  val-log-level: 2\n");
        for anchor in &conf.trust_anchors {
            text.push_str(&format!("  trust-anchor: \"{anchor}\"\n"));
        }
    }
    text.push_str(&format!(
        "remote-control:\n  control-enable: yes\n  control-interface: \"{d}/unbound.ctl\"\n"
    ));
    for (zone, records) in &conf.zones {
        let file = write_zone(dir, zone, 1, records);
        text.push_str(&format!(
            "auth-zone:\n  name: \"{zone}\"\n  zonefile: \"{}\"\n  for-downstream: yes\n  \
             for-upstream: yes\n  fallback-enabled: no\n",
            file.display()
        ));
    }
    for (zone, server) in &conf.stubs {
        text.push_str(&format!(
            "stub-zone:\n  name: \"{zone}\"\n  stub-addr: {}@{}\n",
            server.ip(),
            server.port()
        ));
    }
    text.push_str("stub-zone:\n  name: \".\"\n  stub-addr: 127.0.0.1@9\n");
    let path = dir.join("unbound.conf");
    std::fs::write(&path, text).expect("write unbound.conf");
    path
}

/// Write zone `zone` with its SOA (`serial`), NS and `records`; its path.
fn write_zone(dir: &Path, zone: &str, serial: u32, records: &[String]) -> PathBuf {
    let mut text = format!(
        "{zone}. 1 IN SOA ns.{zone}. hostmaster.{zone}. {serial} 3600 600 86400 1\n{zone}. 1 IN NS ns.{zone}.\n"
    );
    for r in records {
        text.push_str(r);
        text.push('\n');
    }
    let path = dir.join(format!("{zone}.zone"));
    std::fs::write(&path, text).expect("write zone file");
    path
}

/// A loopback port free for both UDP and TCP just now.
fn free_udp_and_tcp_port() -> u16 {
    loop {
        let tcp = std::net::TcpListener::bind("127.0.0.1:0").expect("bind loopback");
        let port = tcp.local_addr().expect("bound address").port();
        if std::net::UdpSocket::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
}
