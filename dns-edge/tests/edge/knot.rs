//! A differential test: the same static zone (every type we serve by name,
//! SVCB and HTTPS with every kind of parameter, one in RFC 3597's generic
//! form, and a delegation with glue and DS)
//! served by gslb-edge (through the aggregator) and by Knot, the same 580
//! queries, identical rcode, AA flag, answer, authority and additional
//! sections. Left out on purpose: ANY (we answer RFC 8482 minimal ANY).

use std::net::{SocketAddr, UdpSocket};
use std::path::Path;
use std::process::Command;
use std::str::FromStr;
use std::time::Duration;

use hickory_proto::op::{Edns, Message, Query};
use hickory_proto::rr::{Name, RecordType as Rt};

use crate::support::*;

const ZONE: &str = "$ORIGIN diff.test.
$TTL 300
@ IN SOA ns1.diff.test. hostmaster.diff.test. ( SERIAL 3600 600 604800 60 )
@ IN NS ns1.diff.test.
@ IN NS ns2.diff.test.
@ IN MX 10 mail.diff.test.
@ IN TXT \"v=spf1 -all\"
@ IN CAA 0 issue \"ca.example\"
ns1 IN A 192.0.2.53
ns2 IN A 192.0.2.54
www IN A 192.0.2.1
www IN A 192.0.2.2
www IN A 192.0.2.3
www IN AAAA 2001:db8::1
mail 600 IN A 192.0.2.25
alias IN CNAME www.diff.test.
chain IN CNAME alias.diff.test.
ext IN CNAME cdn.elsewhere.test.
deep.a.b IN A 192.0.2.9
*.wild IN A 192.0.2.99
*.wild IN TXT \"wild\"
_sip._tcp IN SRV 10 60 5060 www.diff.test.
host1 IN A 198.51.100.1
host2 IN A 198.51.100.2
host3 IN A 198.51.100.3
host4 IN A 198.51.100.4
host5 IN TXT \"five\"
host6 IN MX 5 mail.diff.test.
ptr IN PTR host1.diff.test.
sip IN NAPTR 100 10 \"S\" \"SIP+D2U\" \"\" _sip._udp.diff.test.
sip IN NAPTR 102 10 \"U\" \"E2U+sip\" \"!^.*$!sip:info@diff.test!\" .
_443._tcp.www IN TLSA 3 1 1 d2abde240d7cd3ee6b4b28c54df034b97983a1d16e8a410e4561cb106618e971
www IN SSHFP 4 2 a87f1b687ac0e57d2a081a2f282672334d90ed316d2b818ca9580ea384d92401
generic IN TYPE65534 \\# 4 0a000001
sub IN NS ns1.sub.diff.test.
sub IN NS ns1.diff.test.
sub IN NS ns.elsewhere.test.
sub IN DS 12345 13 2 d2abde240d7cd3ee6b4b28c54df034b97983a1d16e8a410e4561cb106618e971
ns1.sub IN A 192.0.2.70
ns1.sub IN AAAA 2001:db8::70
into IN CNAME www.sub.diff.test.
ns1 IN AAAA 2001:db8::53
www IN HTTPS 1 . alpn=h2,h3 port=8443
svc IN HTTPS 1 mail.diff.test. alpn=h3 ipv4hint=192.0.2.25 ech=AEX+DQBBpQAgACB/VBxrHPvQyMdFzMdvxVMLdtCbuO5Elsmb4HEBtRH9FgAEAAEAAQASY2xvdWRmbGFyZS1lY2guY29tAAA=
_x._tcp IN SVCB 0 mail.diff.test.
_y._tcp IN SVCB 16 www.diff.test. mandatory=alpn,port alpn=h2,h3 no-default-alpn port=53 ipv6hint=2001:db8::1,2001:db8::2 key65000=abc
";

const NAMES: [&str; 34] = [
    "diff.test",
    "www.diff.test",
    "alias.diff.test",
    "chain.diff.test",
    "mail.diff.test",
    "ext.diff.test",
    "nope.diff.test",
    "a.b.diff.test",
    "b.diff.test",
    "deep.a.b.diff.test",
    "x.wild.diff.test",
    "y.x.wild.diff.test",
    "_sip._tcp.diff.test",
    "_tcp.diff.test",
    "host1.diff.test",
    "host2.diff.test",
    "host3.diff.test",
    "host4.diff.test",
    "host5.diff.test",
    "host6.diff.test",
    "no.such.name.diff.test",
    "WWW.Diff.Test",
    "ptr.diff.test",
    "sip.diff.test",
    "_443._tcp.www.diff.test",
    "generic.diff.test",
    "sub.diff.test",
    "www.sub.diff.test",
    "ns1.sub.diff.test",
    "into.diff.test",
    "a.b.sub.diff.test",
    "svc.diff.test",
    "_x._tcp.diff.test",
    "_y._tcp.diff.test",
];
const TYPES: [Rt; 17] = [
    Rt::A,
    Rt::AAAA,
    Rt::MX,
    Rt::TXT,
    Rt::NS,
    Rt::SOA,
    Rt::CNAME,
    Rt::SRV,
    Rt::CAA,
    Rt::PTR,
    Rt::NAPTR,
    Rt::TLSA,
    Rt::SSHFP,
    Rt::Unknown(65534),
    Rt::DS,
    Rt::SVCB,
    Rt::HTTPS,
];

pub type Essence = (String, bool, Vec<String>, Vec<String>, Vec<String>);

/// What we compare of a reply (asked with EDNS, 1,232 bytes).
pub fn essence(server: SocketAddr, name: &str, qtype: Rt) -> Essence {
    essence_with(server, name, qtype, Some(1232))
}

/// What we compare of a reply, asked with EDNS and this UDP size, or
/// without EDNS (512 bytes).
pub fn essence_with(server: SocketAddr, name: &str, qtype: Rt, edns: Option<u16>) -> Essence {
    let mut q = Message::query();
    q.add_query(Query::query(
        Name::from_str(&format!("{name}.")).unwrap(),
        qtype,
    ));
    if let Some(size) = edns {
        let mut e = Edns::new();
        e.set_max_payload(size);
        q.set_edns(e);
    }
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    s.send_to(&q.to_vec().unwrap(), server).unwrap();
    let mut buf = [0u8; 4096];
    let n = s
        .recv(&mut buf)
        .unwrap_or_else(|e| panic!("{server} {name} {qtype}: {e}"));
    let m = Message::from_vec(&buf[..n]).unwrap();
    let sorted = |records: &[hickory_proto::rr::Record]| {
        let mut v: Vec<String> = records
            .iter()
            .map(|r| r.to_string().to_lowercase())
            .collect();
        v.sort();
        v
    };
    (
        format!(
            "{:?}{}",
            m.metadata.response_code,
            if m.metadata.truncation { " TC" } else { "" }
        ),
        m.metadata.authoritative,
        sorted(&m.answers),
        sorted(&m.authorities),
        // Without the OPT record (hickory keeps it apart anyway).
        sorted(&m.additionals),
    )
}

fn free_port() -> u16 {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = s.local_addr().unwrap().port();
    let t = std::net::TcpListener::bind(("127.0.0.1", port));
    if t.is_ok() { port } else { free_port() }
}

/// knotd on loopback serving zone files; killed on drop.
pub struct Knot {
    child: std::process::Child,
    /// Where it answers (UDP and TCP).
    pub addr: SocketAddr,
}

impl Knot {
    /// Serve `zones` (apex, file), with scratch space in `dir`; returns
    /// once the first zone's SOA answers.
    pub fn start(dir: &Path, zones: &[(&str, &Path)]) -> Knot {
        let port = free_port();
        let mut conf = format!(
            "server:\n    rundir: \"{d}\"\n    listen: 127.0.0.1@{port}\n    udp-workers: 1\n    tcp-workers: 1\n    background-workers: 1\n\
             database:\n    storage: \"{d}\"\nlog:\n  - target: stderr\n    any: warning\nzone:\n",
            d = dir.display()
        );
        for (apex, file) in zones {
            conf += &format!(
                "  - domain: {apex}.\n    file: \"{}\"\n    zonefile-sync: -1\n    zonefile-load: whole\n    journal-content: none\n",
                file.display()
            );
        }
        let path = dir.join("knot.conf");
        std::fs::write(&path, conf).unwrap();
        let child = Command::new("knotd")
            .arg("-c")
            .arg(&path)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("knotd not runnable ({e}): apt-get install knot"));
        let knot = Knot {
            child,
            addr: format!("127.0.0.1:{port}").parse().unwrap(),
        };
        let apex = zones[0].0;
        wait_until(20, "knot answering", || {
            dig(knot.addr, &[apex, "SOA"]).contains("status: NOERROR")
        });
        knot
    }
}

impl Drop for Knot {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn the_same_zone_answers_the_same_as_knot() {
    let dir = temp_dir("knot");
    let agg = Aggregator::start(&dir.join("agg"));
    let zone_file = dir.join("diff.test.zone");
    std::fs::write(&zone_file, ZONE.replace("SERIAL", "1")).unwrap();
    let converter = concat!(env!("CARGO_MANIFEST_DIR"), "/../scripts/zone2gslb.py");
    let out = Command::new("python3")
        .arg(converter)
        .arg(&zone_file)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let version = agg.apply(&String::from_utf8(out.stdout).unwrap(), &dir);
    // Knot serves the zone with our serial, so the SOA compares too.
    std::fs::write(&zone_file, ZONE.replace("SERIAL", &version.to_string())).unwrap();
    let edge = Edge::start(&["--aggregator", &agg.url()]);
    edge.wait_version(version);
    let ours = edge.dns();

    let knot = Knot::start(&dir, &[("diff.test", &zone_file)]);
    let theirs = knot.addr;

    let mut compared = 0;
    let mut differences = Vec::new();
    for name in NAMES {
        for qtype in TYPES {
            let (a, b) = (essence(ours, name, qtype), essence(theirs, name, qtype));
            if a != b {
                differences.push(format!("{name} {qtype}:\n  ours: {a:?}\n  knot: {b:?}"));
            }
            compared += 1;
        }
    }
    for qtype in [Rt::A, Rt::MX] {
        let (a, b) = (
            essence(ours, "nope.nope.diff.test", qtype),
            essence(theirs, "nope.nope.diff.test", qtype),
        );
        if a != b {
            differences.push(format!("nope.nope {qtype}:\n  ours: {a:?}\n  knot: {b:?}"));
        }
        compared += 1;
    }
    assert_eq!(compared, 34 * 17 + 2);
    assert!(
        differences.is_empty(),
        "{} of {compared} differ:\n{}",
        differences.len(),
        differences.join("\n")
    );
}
