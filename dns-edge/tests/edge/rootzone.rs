//! Issue 43: a zone shaped like the IANA root zone (moved under a test
//! apex, as the root itself is not served) goes in as an AXFR dump of a
//! signed zone (`--strip-dnssec`, the closing SOA), comes back out, goes in
//! again with nothing planned, and is answered as Knot answers the same
//! file: with EDNS and without (512 bytes: referrals without AA, the NS
//! set and in-domain glue fitted, TC only when that glue does not fit).
//! TTLs are compared too (the apex NS set's 518,400 beside the SOA's
//! 86,400).

use std::fmt::Write as _;

use hickory_proto::rr::RecordType as Rt;

use crate::knot::{Knot, essence_with};
use crate::support::*;

const APEX: &str = "root.test";
const TLDS: usize = 400;

/// The zone (records only; `signed` adds the DNSSEC records and the
/// closing SOA an AXFR of a signed zone has).
fn zone(serial: u64, signed: bool) -> String {
    let soa = format!(
        "{APEX}.\t86400\tIN\tSOA\ta.root-servers.net.{APEX}. nstld.verisign-grs.com.{APEX}. {serial} 1800 900 604800 86400\n"
    );
    let mut z = soa.clone();
    let letters = "abcdefghijklm";
    for l in letters.chars() {
        let _ = writeln!(z, "{APEX}.\t518400\tIN\tNS\t{l}.root-servers.net.{APEX}.");
    }
    if signed {
        let _ = writeln!(
            z,
            "{APEX}.\t86400\tIN\tRRSIG\tSOA 8 0 86400 20300101000000 20200101000000 20326 . AAAA"
        );
        let _ = writeln!(
            z,
            "{APEX}.\t172800\tIN\tDNSKEY\t257 3 8 AwEAAaz/tAm8yTn4Mfeh"
        );
        let _ = writeln!(
            z,
            "{APEX}.\t86400\tIN\tNSEC\taaa.{APEX}. NS SOA RRSIG NSEC DNSKEY"
        );
        let _ = writeln!(
            z,
            "{APEX}.\t86400\tIN\tZONEMD\t{serial} 1 1 {}",
            "AB".repeat(48)
        );
    }
    // net: its servers are in-domain; the root servers' addresses are
    // glue below it (as in the real root zone).
    for i in 0..13 {
        let l = &letters[i..=i];
        let _ = writeln!(
            z,
            "net.{APEX}.\t172800\tIN\tNS\t{l}.gtld-servers.net.{APEX}."
        );
        let _ = writeln!(
            z,
            "{l}.gtld-servers.net.{APEX}.\t172800\tIN\tA\t192.5.{i}.30"
        );
        let _ = writeln!(
            z,
            "{l}.gtld-servers.net.{APEX}.\t172800\tIN\tAAAA\t2001:503:{i}::30"
        );
        let _ = writeln!(
            z,
            "{l}.root-servers.net.{APEX}.\t518400\tIN\tA\t198.41.{i}.4"
        );
        let _ = writeln!(
            z,
            "{l}.root-servers.net.{APEX}.\t518400\tIN\tAAAA\t2001:7fe:{i}::53"
        );
    }
    let _ = writeln!(
        z,
        "net.{APEX}.\t86400\tIN\tDS\t35886 8 2 7862B27F5F516EBE19680444D4CE5E762981931842C465F00236401D8BD973EE"
    );
    // TLDs of every shape the root has: two in-domain servers, servers in
    // another TLD (sibling glue), many servers with IPv6 (too much glue
    // for 512 bytes), out-of-zone servers only, with and without DS.
    for t in 0..TLDS {
        let tld = format!("tld{t}.{APEX}");
        let servers = match t % 5 {
            0 => vec![format!("ns1.{tld}"), format!("ns2.{tld}")],
            1 => vec![
                format!("ns1.{tld}"),
                format!("{}.gtld-servers.net.{APEX}", &letters[t % 13..=t % 13]),
            ],
            2 => (1..=6).map(|n| format!("ns{n}.{tld}")).collect(),
            3 => vec![
                format!("ns.provider{t}.example"),
                format!("ns2.provider{t}.example"),
            ],
            _ => (1..=4).map(|n| format!("a{n}.nic.{tld}")).collect(),
        };
        for s in &servers {
            let _ = writeln!(z, "{tld}.\t172800\tIN\tNS\t{s}.");
        }
        for (n, s) in servers.iter().enumerate() {
            if s.ends_with(&tld) {
                let _ = writeln!(
                    z,
                    "{s}.\t172800\tIN\tA\t10.{}.{}.{}",
                    t / 250,
                    t % 250,
                    n + 1
                );
                if t % 5 != 0 {
                    let _ = writeln!(z, "{s}.\t172800\tIN\tAAAA\t2001:db8:{t:x}::{:x}", n + 1);
                }
            }
        }
        if t % 2 == 0 {
            let _ = writeln!(
                z,
                "{tld}.\t86400\tIN\tDS\t{} 8 2 {:064X}",
                10_000 + t,
                t as u128 * 7_919
            );
        }
        if signed {
            let _ = writeln!(
                z,
                "{tld}.\t86400\tIN\tNSEC\ttld{}.{APEX}. NS DS RRSIG NSEC",
                t + 1
            );
        }
    }
    // Names the zone answers itself, one of every type we serve.
    let own = [
        ("info", "A", "192.0.2.1"),
        ("info", "AAAA", "2001:db8::1"),
        ("info", "TXT", "\"root zone style\" \"two strings\""),
        ("info", "MX", "10 mail.info.root.test."),
        ("mail.info", "A", "192.0.2.25"),
        ("_sip._tcp.info", "SRV", "10 60 5060 mail.info.root.test."),
        ("info", "CAA", "0 issue \"ca.example\""),
        ("ptr.info", "PTR", "info.root.test."),
        (
            "sip.info",
            "NAPTR",
            "100 10 \"S\" \"SIP+D2U\" \"\" _sip._udp.info.root.test.",
        ),
        (
            "_443._tcp.info",
            "TLSA",
            "3 1 1 d2abde240d7cd3ee6b4b28c54df034b97983a1d16e8a410e4561cb106618e971",
        ),
        (
            "info",
            "SSHFP",
            "4 2 a87f1b687ac0e57d2a081a2f282672334d90ed316d2b818ca9580ea384d92401",
        ),
        ("svc.info", "HTTPS", "1 . alpn=h2,h3 port=8443"),
        ("_x._tcp.info", "SVCB", "0 mail.info.root.test."),
        ("alias.info", "CNAME", "mail.info.root.test."),
        ("*.wild.info", "TXT", "\"wildcard\""),
        ("generic.info", "TYPE65534", "\\# 4 0a000001"),
    ];
    for (name, rtype, data) in own {
        let _ = writeln!(z, "{name}.{APEX}.\t3600\tIN\t{rtype}\t{data}");
    }
    if signed {
        z += &soa;
    }
    z
}

/// The questions: every delegation (a name below it, its NS and DS), the
/// apex, the zone's own names by every type, and names that do not exist.
fn questions() -> Vec<(String, Rt)> {
    let mut ask = vec![
        (APEX.to_owned(), Rt::SOA),
        (APEX.to_owned(), Rt::NS),
        (format!("net.{APEX}"), Rt::NS),
        (format!("www.example.net.{APEX}"), Rt::A),
        (format!("a.root-servers.net.{APEX}"), Rt::A),
        (format!("nothing.{APEX}"), Rt::A),
        (format!("x.wild.info.{APEX}"), Rt::TXT),
        (format!("x.wild.info.{APEX}"), Rt::A),
    ];
    for t in 0..TLDS {
        let tld = format!("tld{t}.{APEX}");
        ask.push((format!("www.{tld}"), Rt::A));
        ask.push((tld.clone(), Rt::NS));
        ask.push((tld, Rt::DS));
    }
    let types = [
        Rt::A,
        Rt::AAAA,
        Rt::TXT,
        Rt::MX,
        Rt::SRV,
        Rt::CAA,
        Rt::PTR,
        Rt::NAPTR,
        Rt::TLSA,
        Rt::SSHFP,
        Rt::HTTPS,
        Rt::SVCB,
        Rt::CNAME,
        Rt::Unknown(65534),
    ];
    for name in [
        "info",
        "mail.info",
        "_sip._tcp.info",
        "ptr.info",
        "sip.info",
        "_443._tcp.info",
        "svc.info",
        "_x._tcp.info",
        "alias.info",
        "generic.info",
        "nx.info",
    ] {
        for t in types {
            ask.push((format!("{name}.{APEX}"), t));
        }
    }
    ask
}

#[test]
fn a_root_zone_style_file_round_trips_and_answers_as_knot_with_and_without_edns() {
    let dir = temp_dir("rootzone");
    let agg = Aggregator::start(&dir.join("agg"));
    let dump = dir.join("root.axfr");
    std::fs::write(&dump, zone(1, true)).unwrap();
    let dump = dump.to_str().unwrap();
    // A signed dump is refused by its first DNSSEC record, nothing applied.
    let (ok, _, err) = agg.try_ctl(&["zone", "import", dump]);
    assert!(!ok && err.contains("--strip-dnssec"), "{err}");
    let imported = agg.ctl_json(&["zone", "import", dump, "--strip-dnssec"]);
    let stripped = imported["notes"].to_string();
    assert!(
        stripped.contains(&format!("{} DNSSEC record(s) dropped", 4 + TLDS)),
        "{stripped}"
    );
    // Out and in again: nothing to do, nothing lost (TTLs included).
    let exported = agg.ctl(&["zone", "export", APEX]);
    assert!(
        exported.contains(&format!("{APEX}. 518400 IN NS a.root-servers.net.{APEX}.")),
        "the apex NS set keeps its TTL"
    );
    let file = dir.join("root.export");
    std::fs::write(&file, &exported).unwrap();
    let again = agg.ctl_json(&["zone", "import", file.to_str().unwrap()]);
    assert_eq!(again["plan"], serde_json::json!([]), "{again}");
    let version = again["version"].as_u64().unwrap();

    // Knot serves the same records (unsigned, our serial).
    let plain = dir.join("root.zone");
    std::fs::write(&plain, zone(version, false)).unwrap();
    let knot = Knot::start(&dir, &[(APEX, plain.as_path())]);
    let edge = Edge::start(&["--aggregator", &agg.url()]);
    edge.wait_version(version);
    let ours = edge.dns();

    let ask = questions();
    let mut differences = Vec::new();
    let (mut referrals, mut truncated, mut compared) = (0, 0, 0);
    for edns in [Some(1232), None] {
        for (name, qtype) in &ask {
            let (a, b) = (
                essence_with(ours, name, *qtype, edns),
                essence_with(knot.addr, name, *qtype, edns),
            );
            referrals += usize::from(!a.1 && a.2.is_empty() && !a.3.is_empty());
            truncated += usize::from(a.0.ends_with("TC"));
            if a != b {
                differences.push(format!(
                    "{name} {qtype} edns {edns:?}:\n  ours: {a:?}\n  knot: {b:?}"
                ));
            }
            compared += 1;
        }
    }
    eprintln!("{compared} questions: {referrals} referrals, {truncated} truncated");
    assert!(referrals > 1_000, "{referrals} referrals");
    assert!(
        differences.is_empty(),
        "{} of {compared} differ; the first:\n{}",
        differences.len(),
        differences[..differences.len().min(8)].join("\n")
    );
}
