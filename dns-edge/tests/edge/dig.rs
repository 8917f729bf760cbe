//! Every authoritative behaviour of DESIGN.md, as dig and kdig see it.

use std::net::UdpSocket;
use std::time::Duration;

use crate::support::*;

#[test]
fn dig_and_kdig_see_every_authoritative_behaviour() {
    let (_dir, _agg, edge, version) = mesh("dig", &[]);
    let dns = edge.dns();
    every_authoritative_behaviour(&|tool, args| query_tool(tool, dns, args), version);
}

/// `dig +short` through `ask`, one answer per line, sorted.
fn short_via(ask: &dyn Fn(&str, &[&str]) -> String, args: &[&str]) -> Vec<String> {
    let mut a: Vec<&str> = args.to_vec();
    a.push("+short");
    let mut lines: Vec<String> = ask("dig", &a).lines().map(str::to_owned).collect();
    lines.sort();
    lines
}

/// The table of behaviours, asked through `ask(tool, args)` (dig or kdig
/// against the edge under test, on whichever path), for the catalog
/// [`CONFIG`] at `version`. Shared by the kernel path's test and the XDP
/// path's (`xdp.rs`).
pub fn every_authoritative_behaviour(ask: &dyn Fn(&str, &[&str]) -> String, version: u64) {
    let dig = |args: &[&str]| ask("dig", args);
    let short = |args: &[&str]| short_via(ask, args);
    let www = dig(&["www.example.test", "A", "+norec"]);
    assert_eq!(rcode(&www), "NOERROR", "{www}");
    assert_eq!(
        flags(&www),
        ["qr", "aa"],
        "authoritative, no recursion: {www}"
    );
    assert_eq!(short(&["www.example.test"]), ["192.0.2.1", "192.0.2.2"]);

    let nx = dig(&["nope.example.test", "A"]);
    assert_eq!(rcode(&nx), "NXDOMAIN", "{nx}");
    assert!(
        nx.contains(&format!("example.test.\t\t60\tIN\tSOA\tns1.example.test. hostmaster.example.test. {version} 3600 600 604800 60")),
        "SOA with the negative TTL and serial = version: {nx}"
    );
    let nodata = dig(&["www.example.test", "AAAA"]);
    assert_eq!(rcode(&nodata), "NOERROR");
    assert!(nodata.contains("ANSWER: 0, AUTHORITY: 1"), "{nodata}");

    let chain = short(&["alias.example.test", "A"]);
    assert_eq!(chain, ["192.0.2.1", "192.0.2.2", "www.example.test."]);

    let soa = short(&["example.test", "SOA"]);
    assert_eq!(
        soa,
        [format!(
            "ns1.example.test. hostmaster.example.test. {version} 3600 600 604800 60"
        )]
    );
    assert_eq!(
        short(&["example.test", "NS"]),
        ["ns1.example.test.", "ns2.example.test."]
    );

    let badvers = ask("kdig", &["www.example.test", "+edns=1"]);
    assert!(badvers.contains("BADVERS"), "{badvers}");

    let ecs = ask("kdig", &["ns1.example.test", "+subnet=10.1.2.0/24"]);
    assert!(
        ecs.contains("CLIENT-SUBNET: 10.1.2.0/24/0"),
        "scope /0 for a static answer: {ecs}"
    );

    let tc = dig(&["big.example.test", "TXT", "+noedns", "+ignore"]);
    assert!(flags(&tc).contains(&"tc"), "{tc}");
    let tcp = dig(&["big.example.test", "TXT", "+tcp"]);
    assert!(
        tcp.contains("ANSWER: 6,") && !flags(&tcp).contains(&"tc"),
        "{tcp}"
    );

    let refused = dig(&["www.example.org", "A"]);
    assert_eq!(rcode(&refused), "REFUSED", "{refused}");
    assert!(!flags(&refused).contains(&"aa"));

    let any = dig(&["example.test", "ANY"]);
    assert!(any.contains("ANSWER: 1,"), "minimal ANY: {any}");

    let case = dig(&["WwW.ExAmPlE.TeSt", "A"]);
    assert!(case.contains("WwW.ExAmPlE.TeSt.\t30\tIN\tA"), "{case}");

    let axfr = dig(&["example.test", "AXFR"]);
    assert!(!axfr.contains("\tSOA\t"), "no zone transfer: {axfr}");
}

/// Send raw bytes over UDP, return the reply (if any within 1 s).
fn raw(dns: std::net::SocketAddr, bytes: &[u8]) -> Option<Vec<u8>> {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.set_read_timeout(Some(Duration::from_secs(1))).unwrap();
    s.send_to(bytes, dns).unwrap();
    let mut buf = [0u8; 4096];
    s.recv(&mut buf).ok().map(|n| buf[..n].to_vec())
}

fn query(id: u16, flags: u16, qdcount: u16) -> Vec<u8> {
    let mut q = id.to_be_bytes().to_vec();
    q.extend_from_slice(&flags.to_be_bytes());
    q.extend_from_slice(&qdcount.to_be_bytes());
    q.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
    for _ in 0..qdcount {
        q.extend_from_slice(b"\x03www\x07example\x04test\x00\x00\x01\x00\x01");
    }
    q
}

#[test]
fn malformed_and_unsupported_queries_over_the_wire() {
    let (_dir, _agg, edge, _) = mesh("raw", &[]);
    let dns = edge.dns();
    // NOTIFY (opcode 4): NOTIMP.
    let r = raw(dns, &query(1, 4 << 11, 1)).unwrap();
    assert_eq!(r[3] & 0x0f, 4, "NOTIMP");
    // Two questions: FORMERR.
    let r = raw(dns, &query(2, 0, 2)).unwrap();
    assert_eq!(r[3] & 0x0f, 1, "FORMERR");
    // A response (QR set) gets nothing back, nor does a short packet.
    assert!(raw(dns, &query(3, 0x8000, 1)).is_none());
    assert!(raw(dns, &[0; 5]).is_none());
    // Random bytes: never a crash, never a reply longer than the query.
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..300 {
        let len = 12 + (seed % 60) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                seed as u8
            })
            .collect();
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
        s.send_to(&bytes, dns).unwrap();
        let mut buf = [0u8; 4096];
        if let Ok(n) = s.recv(&mut buf) {
            assert!(n <= bytes.len() + 11, "amplified {} -> {n}", bytes.len());
        }
    }
    // Still serving.
    assert_eq!(
        short(dns, &["www.example.test"]),
        ["192.0.2.1", "192.0.2.2"]
    );
}

/// Issue 43 item 11: `--nsid` names the edge to `dig +nsid` and `kdig
/// +nsid`, as Knot's `nsid` does; without it no NSID is sent.
#[test]
fn nsid_names_the_edge_that_answered() {
    let (dir, _agg, edge, _) = mesh("nsid", &["--nsid", "edge-fra-1"]);
    let dig_reply = dig(edge.dns(), &["www.example.test", "A", "+nsid"]);
    assert!(
        dig_reply.contains("NSID: 65 64 67 65 2d 66 72 61 2d 31"),
        "{dig_reply}"
    );
    let kdig_reply = query_tool("kdig", edge.dns(), &["www.example.test", "A", "+nsid"]);
    assert!(kdig_reply.contains("edge-fra-1"), "{kdig_reply}");
    let _ = std::fs::remove_dir_all(&dir);
    let (dir, _agg, edge, _) = mesh("no-nsid", &[]);
    let reply = dig(edge.dns(), &["www.example.test", "A", "+nsid"]);
    assert!(!reply.contains("NSID"), "{reply}");
    let _ = std::fs::remove_dir_all(&dir);
    // A bad value is refused at start, naming the flag.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_gslb-edge"))
        .args(["--aggregator", "http://127.0.0.1:9", "--nsid", "\u{7}bell"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("nsid"), "{err}");
}
