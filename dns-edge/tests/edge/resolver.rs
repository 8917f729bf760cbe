//! A real resolver in front of the edge: unbound, with the test zone as a
//! stub zone pointing at the edge (and the root pointing at a closed
//! loopback port, so nothing is ever sent off the machine; `test.` is one
//! of unbound's built-in blocked zones, so that default is lifted). Answers,
//! NXDOMAIN, a CNAME chain, and a UDP answer too big for unbound's 512-byte
//! buffer, which it must fetch again over TCP.

use std::net::SocketAddr;
use std::process::{Command, Stdio};

use crate::support::*;

#[test]
fn unbound_resolves_through_the_edge_and_retries_truncated_answers_over_tcp() {
    let (dir, _agg, edge, _) = mesh("unbound", &[]);
    let dns = edge.dns();
    let port = {
        let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        s.local_addr().unwrap().port()
    };
    let conf = dir.join("unbound.conf");
    std::fs::write(
        &conf,
        format!(
            "server:\n  interface: 127.0.0.1\n  port: {port}\n  do-ip6: no\n  do-not-query-localhost: no\n\
             \x20 username: \"\"\n  chroot: \"\"\n  directory: \"{d}\"\n  pidfile: \"{d}/unbound.pid\"\n\
             \x20 use-syslog: no\n  logfile: \"\"\n  verbosity: 1\n  access-control: 127.0.0.0/8 allow\n\
             \x20 module-config: \"iterator\"\n  edns-buffer-size: 512\n  qname-minimisation: no\n\
             \x20 local-zone: \"test.\" nodefault\n\
             stub-zone:\n  name: \"example.test\"\n  stub-addr: 127.0.0.1@{edge}\n\
             stub-zone:\n  name: \".\"\n  stub-addr: 127.0.0.1@9\n",
            d = dir.display(),
            edge = dns.port(),
        ),
    )
    .unwrap();
    let child = Command::new("unbound")
        .arg("-d")
        .arg("-c")
        .arg(&conf)
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(dir.join("unbound.log")).unwrap())
        .spawn()
        .unwrap_or_else(|e| panic!("unbound not runnable ({e}): apt-get install unbound"));
    struct Kill(std::process::Child);
    impl Drop for Kill {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let _unbound = Kill(child);
    let resolver: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let log = dir.join("unbound.log");
    let ready = (0..100).any(|_| {
        let ok = rcode(&dig(resolver, &["www.example.test"])) == "NOERROR";
        if !ok {
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        ok
    });
    assert!(
        ready,
        "unbound never answered: {}",
        std::fs::read_to_string(&log).unwrap_or_default()
    );

    let www = dig(resolver, &["www.example.test", "A"]);
    assert!(flags(&www).contains(&"ra"), "a resolver's answer: {www}");
    assert_eq!(
        short(resolver, &["www.example.test"]),
        ["192.0.2.1", "192.0.2.2"]
    );
    assert_eq!(rcode(&dig(resolver, &["nope.example.test"])), "NXDOMAIN");
    assert_eq!(
        short(resolver, &["alias.example.test"]),
        ["192.0.2.1", "192.0.2.2", "www.example.test."]
    );
    // Six 100-byte TXT strings do not fit unbound's 512-byte buffer: the
    // edge sets TC, unbound asks again over TCP and gets all six.
    let txt = dig(resolver, &["big.example.test", "TXT", "+tcp"]);
    assert!(txt.contains("ANSWER: 6,"), "{txt}");
    let (_, metrics) = edge.get("/metrics");
    assert!(
        metrics
            .lines()
            .any(|l| l.starts_with("gslb_edge_truncated_total ") && !l.ends_with(" 0")),
        "the edge truncated over UDP: {metrics}"
    );
}
