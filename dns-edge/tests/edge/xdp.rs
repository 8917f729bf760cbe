//! The AF_XDP path (`--xdp`) end to end: the edge inside one network
//! namespace, its veth end under the XDP program, clients in a second
//! namespace (root only, as every namespace test). The same table of
//! authoritative behaviours as the kernel path, over IPv4 and IPv6; TCP,
//! fragments and IP options through the kernel; hostile frames counted and
//! dropped; replies too big for the MTU through the kernel; drain detaches
//! the program; no capability or no interface means the kernel path. And
//! the differential test: the shared query mix answered byte for byte
//! alike by both paths.

use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use gslb_e2e::netns::{self, Netns};
use gslb_e2e::process::Proc;
use hickory_proto::op::{Edns, Message, Query};
use hickory_proto::rr::{Name, RecordType};

use crate::dig::every_authoritative_behaviour;
use crate::support::*;

const EDGE: &str = env!("CARGO_BIN_EXE_gslb-edge");

/// Two namespaces joined by a veth pair: `xc0` 10.NET.0.1 and fd00:NET::1
/// in the client's, `xs0` 10.NET.0.2 and fd00:NET::2 in the server's.
struct Link {
    cli: Netns,
    srv: Netns,
    net: u8,
}

impl Link {
    fn create(tag: &str, net: u8, mtu: u16) -> Link {
        let pid = std::process::id();
        let cli = Netns::create(&format!("gslbx{pid}{tag}c"));
        let srv = Netns::create(&format!("gslbx{pid}{tag}s"));
        cli.veth(
            "xc0",
            &format!("10.{net}.0.1/24"),
            &srv,
            "xs0",
            &format!("10.{net}.0.2/24"),
        );
        let mtu_s = mtu.to_string();
        cli.ip(&["link", "set", "xc0", "mtu", &mtu_s]);
        srv.ip(&["link", "set", "xs0", "mtu", &mtu_s]);
        // IPv6 needs an MTU of 1280 at least.
        if mtu >= 1280 {
            cli.ip(&[
                "addr",
                "add",
                &format!("fd00:{net}::1/64"),
                "dev",
                "xc0",
                "nodad",
            ]);
            srv.ip(&[
                "addr",
                "add",
                &format!("fd00:{net}::2/64"),
                "dev",
                "xs0",
                "nodad",
            ]);
        }
        Link { cli, srv, net }
    }

    fn v4(&self) -> IpAddr {
        format!("10.{}.0.2", self.net).parse().unwrap()
    }

    fn v6(&self) -> IpAddr {
        format!("fd00:{}::2", self.net).parse().unwrap()
    }

    /// True while an XDP program is attached to `xs0`.
    fn attached(&self) -> bool {
        self.srv
            .exec(&["ip", "link", "show", "xs0"])
            .contains("prog/xdp")
    }
}

/// Wait until the edge writing `cache` has written its snapshot there
/// (the writer works off the apply path, after the version is served).
fn wait_cached(cache: &Path) {
    let file = cache.join("snapshot.bin");
    wait_until(30, "the snapshot written to the cache", || file.exists());
}

/// A copy of `cache`'s snapshot in a new directory, for another edge.
fn copy_cache(cache: &Path, dir: &Path, name: &str) -> PathBuf {
    wait_cached(cache);
    let to = dir.join(name);
    std::fs::create_dir_all(&to).unwrap();
    std::fs::copy(cache.join("snapshot.bin"), to.join("snapshot.bin")).unwrap();
    to
}

/// An edge inside `link.srv` serving `cache` on `addr`:53, the XDP path on
/// `xs0`, its status listener on the same address, port 8053.
struct XdpEdge {
    proc: Proc,
    dns: SocketAddr,
    status: SocketAddr,
}

fn start_edge(link: &Link, cache: &Path, addr: IpAddr, extra: &[&str]) -> XdpEdge {
    let dns = SocketAddr::new(addr, 53);
    let status = SocketAddr::new(addr, 8053);
    let (dns_s, status_s) = (dns.to_string(), status.to_string());
    let mut args = vec![
        "--cache-dir",
        cache.to_str().unwrap(),
        "--listen-dns",
        &dns_s,
        "--listen-status",
        &status_s,
        "--udp-workers",
        "1",
    ];
    args.extend_from_slice(extra);
    if !extra.contains(&"--min-drain-secs") {
        args.extend_from_slice(&["--min-drain-secs", "0"]);
    }
    let proc = Proc::spawn(Some(&link.srv.name), Path::new(EDGE), &args);
    proc.stdout.listening("dns", 30);
    XdpEdge { proc, dns, status }
}

impl XdpEdge {
    /// A metric's value (summed over its series) from the client side.
    fn metric(&self, link: &Link, name: &str) -> u64 {
        let body = link.cli.exec(&[
            "curl",
            "-s",
            "--max-time",
            "5",
            &format!("http://{}/metrics", self.status_url()),
        ]);
        body.lines()
            .filter(|l| l.starts_with(name) && !l.starts_with('#'))
            .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
            .sum::<f64>() as u64
    }

    fn status_url(&self) -> String {
        match self.status.ip() {
            IpAddr::V6(a) => format!("[{a}]:{}", self.status.port()),
            IpAddr::V4(a) => format!("{a}:{}", self.status.port()),
        }
    }

    fn answered_by_xdp(&self, link: &Link) -> u64 {
        self.metric(link, "gslb_edge_xdp_frames_total{outcome=\"answered\"}")
    }

    fn logs(&self) -> String {
        self.proc.stderr.all().join("\n")
    }
}

fn skip() -> bool {
    if !netns::available() {
        eprintln!("skipped: network namespaces need root");
        return true;
    }
    false
}

#[test]
fn the_xdp_path_answers_every_authoritative_behaviour_over_ipv4_and_ipv6() {
    if skip() {
        return;
    }
    let (dir, _agg, _edge, version) = mesh("xdp-table", &[]);
    let link = Link::create("t", 40, 1500);
    for (i, addr) in [link.v4(), link.v6()].into_iter().enumerate() {
        let cache = copy_cache(&dir.join("cache"), &dir, &format!("xdp-cache-{i}"));
        let edge = start_edge(&link, &cache, addr, &["--xdp", "xs0"]);
        let logs = edge.logs();
        assert!(
            logs.contains("XDP path attached") && logs.contains("bind=\"copy\""),
            "the log says the mode (veth has no zero-copy): {logs}"
        );
        assert!(link.attached());
        let before = edge.answered_by_xdp(&link);
        let dns = edge.dns;
        let cli = link.cli.name.clone();
        every_authoritative_behaviour(
            &|tool, args| query_tool_in(Some(&cli), tool, dns, args),
            version,
        );
        // The table asks 12 questions over UDP (dig sends ANY, AXFR and
        // +tcp over TCP): every one answered from the ring.
        let answered = edge.answered_by_xdp(&link) - before;
        assert_eq!(answered, 12, "UDP answers from the ring over {addr}");
        assert_eq!(edge.metric(&link, "gslb_edge_xdp_attached"), 1);
        assert_eq!(edge.metric(&link, "gslb_edge_xdp_sockets"), 1);
        drop(edge);
        wait_until(10, "the program detached with the edge gone", || {
            !link.attached()
        });
    }
}

/// A DNS query for `name` `rtype` with id `id`, as bytes.
fn query_bytes(id: u16, name: &str, rtype: RecordType, edns: bool) -> Vec<u8> {
    let mut m = Message::query();
    m.add_query(Query::query(Name::from_ascii(name).unwrap(), rtype));
    if edns {
        let mut e = Edns::new();
        e.set_max_payload(1232);
        m.set_edns(e);
    }
    let mut bytes = m.to_vec().unwrap();
    bytes[..2].copy_from_slice(&id.to_be_bytes());
    bytes
}

/// Python in the client namespace: send `payload` to (addr, 53) over UDP
/// with IPv4 options set (four NOPs), print the reply's length or 0.
fn with_ip_options(link: &Link, addr: IpAddr, payload: &[u8]) -> usize {
    let hex: String = payload.iter().map(|b| format!("{b:02x}")).collect();
    let script = format!(
        "import socket\n\
         s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n\
         s.setsockopt(socket.IPPROTO_IP, socket.IP_OPTIONS, bytes([1, 1, 1, 1]))\n\
         s.settimeout(2)\n\
         s.sendto(bytes.fromhex('{hex}'), ('{addr}', 53))\n\
         try:\n    print(len(s.recv(4096)))\n\
         except socket.timeout:\n    print(0)\n"
    );
    link.cli
        .exec(&["python3", "-c", &script])
        .trim()
        .parse()
        .unwrap()
}

/// Python in the client namespace: one raw Ethernet frame on `xc0`, to
/// `xs0`'s MAC: IPv4/UDP to (addr, 53) whose UDP length claims 200 bytes
/// more than the frame has (the program's checks pass it; ours drop it).
fn lying_frame(link: &Link, addr: IpAddr) {
    let mac = link.srv.exec(&["cat", "/sys/class/net/xs0/address"]);
    let script = format!(
        "import socket, struct\n\
         dst = bytes.fromhex('{}')\n\
         src = bytes.fromhex(open('/sys/class/net/xc0/address').read().strip().replace(':', ''))\n\
         payload = b'\\x12\\x34' + bytes(10)\n\
         udp = struct.pack('!HHHH', 40000, 53, 8 + len(payload) + 200, 0) + payload\n\
         ip = struct.pack('!BBHHHBBH4s4s', 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0,\n\
             socket.inet_aton('10.{}.0.1'), socket.inet_aton('{addr}'))\n\
         s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)\n\
         s.bind(('xc0', 0))\n\
         s.send(dst + src + b'\\x08\\x00' + ip + udp)\n",
        mac.trim().replace(':', ""),
        link.net
    );
    link.cli.exec(&["python3", "-c", &script]);
}

#[test]
fn fragments_options_and_oversized_replies_go_through_the_kernel_and_bad_frames_are_dropped() {
    if skip() {
        return;
    }
    let (dir, _agg, _edge, _) = mesh("xdp-hostile", &[]);
    // A small MTU: big replies and padded queries cross it.
    let link = Link::create("h", 41, 576);
    let cache = copy_cache(&dir.join("cache"), &dir, "xdp-cache");
    let edge = start_edge(&link, &cache, link.v4(), &["--xdp", "xs0"]);
    let dns = edge.dns;
    let ask = |args: &[&str]| query_tool_in(Some(&link.cli.name), "kdig", dns, args);
    let queries = |edge: &XdpEdge| edge.metric(&link, "gslb_edge_queries_total");
    let frames = |edge: &XdpEdge, outcome: &str| {
        edge.metric(
            &link,
            &format!("gslb_edge_xdp_frames_total{{outcome=\"{outcome}\"}}"),
        )
    };

    // A plain query: the ring.
    let a = ask(&["ns1.example.test", "A"]);
    assert!(a.contains("192.0.2.53"), "{a}");
    assert_eq!(frames(&edge, "answered"), 1);

    // A query padded past the MTU arrives in fragments: the kernel
    // reassembles it and its socket answers.
    let (q0, xdp0) = (queries(&edge), frames(&edge, "answered"));
    let padded = ask(&["ns1.example.test", "A", "+padding=1000"]);
    assert!(padded.contains("192.0.2.53"), "{padded}");
    assert_eq!(queries(&edge), q0 + 1, "answered");
    assert_eq!(frames(&edge, "answered"), xdp0, "not by the ring");

    // IPv4 options: the kernel too.
    let n = with_ip_options(
        &link,
        link.v4(),
        &query_bytes(7, "ns1.example.test", RecordType::A, false),
    );
    assert!(n > 12, "a reply to the query with IP options ({n} bytes)");
    assert_eq!(queries(&edge), q0 + 2);
    assert_eq!(frames(&edge, "answered"), xdp0);

    // A reply larger than the MTU leaves through the kernel's socket,
    // fragmented, whole.
    let big = ask(&["big.example.test", "TXT", "+bufsize=4096", "+ignore"]);
    assert!(big.contains("ANSWER: 6;") && !big.contains(" TC"), "{big}");
    assert_eq!(frames(&edge, "kernel_sent"), 1);

    // A frame whose UDP length lies: dropped and counted, no reply.
    lying_frame(&link, link.v4());
    wait_until(10, "the lying frame counted", || {
        frames(&edge, "rejected") == 1
    });
    // Garbage where the DNS message should be: taken from the ring, not answered.
    let s = format!(
        "import socket\ns = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\ns.settimeout(1)\n\
         s.sendto(bytes(5), ('{}', 53))\ntry:\n    print(len(s.recv(4096)))\nexcept socket.timeout:\n    print(0)\n",
        link.v4()
    );
    assert_eq!(link.cli.exec(&["python3", "-c", &s]).trim(), "0");
    wait_until(10, "the garbage counted", || {
        frames(&edge, "unanswered") == 1
    });

    // And still serving.
    assert!(ask(&["ns1.example.test", "A"]).contains("192.0.2.53"));
}

#[test]
fn rate_limiting_holds_on_the_ring() {
    if skip() {
        return;
    }
    let (dir, _agg, _edge, _) = mesh("xdp-rrl", &[]);
    let link = Link::create("r", 45, 1500);
    let cache = copy_cache(&dir.join("cache"), &dir, "xdp-cache");
    let rrl = ["--rrl-rate", "5", "--rrl-burst", "5", "--rrl-slip", "2"];
    let mut args = vec!["--xdp", "xs0"];
    args.extend_from_slice(&rrl);
    let edge = start_edge(&link, &cache, link.v4(), &args);
    let (dns, cli) = (edge.dns, link.cli.name.clone());
    let (full, truncated) = std::thread::spawn(move || {
        netns::enter(&cli);
        crate::rrl::flood(dns, "0.0.0.0:0")
    })
    .join()
    .unwrap();
    crate::rrl::assert_limited(full, truncated);
    assert_eq!(
        edge.answered_by_xdp(&link),
        (full + truncated) as u64,
        "every reply left from the ring"
    );
    assert!(edge.metric(&link, "gslb_edge_rrl_dropped_total") >= 10);
}

#[test]
fn drain_detaches_the_program_and_the_kernel_answers_the_window() {
    if skip() {
        return;
    }
    let (dir, _agg, _edge, _) = mesh("xdp-drain", &[]);
    let link = Link::create("d", 42, 1500);
    let cache = copy_cache(&dir.join("cache"), &dir, "xdp-cache");
    let mut edge = start_edge(
        &link,
        &cache,
        link.v4(),
        &["--xdp", "xs0", "--min-drain-secs", "4"],
    );
    assert!(link.attached());
    edge.proc.terminate();
    wait_until(10, "the program detached at the drain", || !link.attached());
    let dns = edge.dns;
    let during = query_tool_in(
        Some(&link.cli.name),
        "kdig",
        dns,
        &["ns1.example.test", "A"],
    );
    assert!(
        during.contains("192.0.2.53"),
        "answered during the window: {during}"
    );
    let (status, logs) = edge.proc.output_at_exit(30);
    assert!(status.success(), "{logs}");
    assert!(logs.contains("XDP program detached"), "{logs}");
}

#[test]
fn without_the_capability_or_the_interface_the_edge_answers_on_the_kernel_path() {
    if skip() {
        return;
    }
    let (dir, _agg, _edge, _) = mesh("xdp-fallback", &[]);
    let link = Link::create("f", 43, 1500);

    // No such interface.
    let cache = copy_cache(&dir.join("cache"), &dir, "xdp-cache-a");
    let edge = start_edge(&link, &cache, link.v4(), &["--xdp", "nosuch0"]);
    let logs = edge.logs();
    assert!(
        logs.contains("XDP path not started") && logs.contains("nosuch0"),
        "{logs}"
    );
    let a = query_tool_in(
        Some(&link.cli.name),
        "kdig",
        edge.dns,
        &["ns1.example.test", "A"],
    );
    assert!(a.contains("192.0.2.53"), "{a}");
    drop(edge);

    // Not root and no capabilities (nobody): the kernel path, on a high port.
    let cache = copy_cache(&dir.join("cache"), &dir, "xdp-cache-b");
    for p in [&dir, &cache, &cache.join("snapshot.bin")] {
        let _ = Command::new("chmod").arg("a+rwx").arg(p).status();
    }
    let dns = SocketAddr::new(link.v4(), 5353).to_string();
    let status = SocketAddr::new(link.v4(), 8054).to_string();
    let unprivileged = Proc::spawn(
        Some(&link.srv.name),
        Path::new("setpriv"),
        &[
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            EDGE,
            "--cache-dir",
            cache.to_str().unwrap(),
            "--listen-dns",
            &dns,
            "--listen-status",
            &status,
            "--udp-workers",
            "1",
            "--xdp",
            "xs0",
        ],
    );
    let bound = unprivileged.stdout.listening("dns", 30);
    let logs = unprivileged.stderr.all().join("\n");
    assert!(logs.contains("XDP path not started"), "{logs}");
    assert!(!link.attached());
    let a = query_tool_in(
        Some(&link.cli.name),
        "kdig",
        bound,
        &["ns1.example.test", "A"],
    );
    assert!(a.contains("192.0.2.53"), "{a}");
}

/// Send each query to `to` from inside namespace `ns` (a thread of its
/// own); the replies in order (empty where none came).
fn ask_all(ns: &str, to: SocketAddr, queries: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let ns = ns.to_owned();
    let queries = queries.to_vec();
    std::thread::spawn(move || {
        netns::enter(&ns);
        let bind: SocketAddr = if to.is_ipv4() {
            "0.0.0.0:0".parse().unwrap()
        } else {
            "[::]:0".parse().unwrap()
        };
        let s = UdpSocket::bind(bind).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
        let mut buf = [0u8; 65_535];
        let mut missed = 0;
        queries
            .iter()
            .map(|q| {
                // A path that stopped answering fails the test in seconds.
                if missed >= 3 {
                    return Vec::new();
                }
                s.send_to(q, to).unwrap();
                loop {
                    match s.recv(&mut buf) {
                        // A late reply to an earlier query: skip it.
                        Ok(n) if n >= 2 && buf[..2] != q[..2] => continue,
                        Ok(n) => return buf[..n].to_vec(),
                        Err(_) => {
                            missed += 1;
                            return Vec::new();
                        }
                    }
                }
            })
            .collect()
    })
    .join()
    .unwrap()
}

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/peer-dns")
        .join(name)
}

#[test]
fn both_paths_answer_the_shared_query_mix_byte_for_byte_alike() {
    if skip() {
        return;
    }
    // The shared benchmark's zone (../shared/bench/peer-dns), imported, and
    // its query mix (each distinct query once), with and without EDNS.
    let dir = temp_dir("xdp-diff");
    let agg = Aggregator::start(&dir.join("agg"));
    let zone = data("example.test.zone");
    let applied = agg.ctl_json(&["zone", "import", zone.to_str().unwrap()]);
    let version = applied["version"].as_u64().unwrap();
    let cache = dir.join("cache");
    let url = agg.url();
    let feeder = Edge::start(&["--aggregator", &url, "--cache-dir", cache.to_str().unwrap()]);
    feeder.wait_version(version);
    wait_cached(&cache);
    drop(feeder);
    let link = Link::create("x", 44, 1500);
    let edge = start_edge(&link, &cache, link.v4(), &["--xdp", "xs0"]);
    let mut queries = Vec::new();
    for (i, line) in std::fs::read_to_string(data("queries.txt"))
        .unwrap()
        .lines()
        .enumerate()
    {
        let mut f = line.split_whitespace();
        let (Some(name), Some(rtype)) = (f.next(), f.next()) else {
            continue;
        };
        let rtype: RecordType = rtype.parse().unwrap();
        queries.push(query_bytes(i as u16, name, rtype, i % 2 == 0));
    }
    assert!(queries.len() > 10_000, "{} queries", queries.len());
    let before = edge.answered_by_xdp(&link);
    // From the client's namespace over the veth: the ring. From the
    // server's own namespace (through lo, which has no program): the
    // kernel's socket.
    let xdp = ask_all(&link.cli.name, edge.dns, &queries);
    let kernel = ask_all(&link.srv.name, edge.dns, &queries);
    assert_eq!(
        edge.answered_by_xdp(&link) - before,
        queries.len() as u64,
        "every XDP-side query answered from the ring"
    );
    let mut differ = 0;
    for (i, (x, k)) in xdp.iter().zip(&kernel).enumerate() {
        assert!(!x.is_empty(), "query {i} unanswered");
        if x != k {
            differ += 1;
            assert!(differ < 5, "query {i}: {x:02x?} vs {k:02x?}");
        }
    }
    assert_eq!(differ, 0, "answers differ between the paths");
}
