//! A generated, real-shaped zone of more than 2,000 record sets (every
//! type we serve, delegations with glue and DS, wildcards, CNAME chains,
//! empty non-terminals) and a reverse zone, imported with `gslbctl zone
//! import` and served by our edge and by Knot from the same files. Every
//! owner name is asked its own type and others; rcode, AA, answer,
//! authority and additional must be equal.

use std::fmt::Write as _;

use hickory_proto::rr::RecordType as Rt;

use crate::knot::{Knot, essence};
use crate::support::*;

const SHA256: &str = "d2abde240d7cd3ee6b4b28c54df034b97983a1d16e8a410e4561cb106618e971";

/// The forward zone `gen.test` (with `SERIAL` for the serial) and the
/// questions to ask of it.
fn forward() -> (String, Vec<(String, Rt)>) {
    let mut z = String::from(
        "$ORIGIN gen.test.\n$TTL 300\n@ IN SOA ns1 hostmaster SERIAL 3600 600 604800 60\n\
         @ IN NS ns1\n@ IN NS ns2.elsewhere.test.\nns1 IN A 192.0.2.53\nns1 IN AAAA 2001:db8::53\n\
         @ IN MX 10 mx0\n@ IN TXT \"v=spf1 -all\"\n",
    );
    let mut ask: Vec<(String, Rt)> = vec![("gen.test".into(), Rt::NS), ("gen.test".into(), Rt::MX)];
    let mut q = |name: String, types: &[Rt]| {
        for t in types {
            ask.push((name.clone(), *t));
        }
    };
    for i in 0..1_200u32 {
        let n = format!("h{i}");
        let fq = format!("{n}.gen.test");
        let (b, c) = (i % 250, i / 250);
        match i % 16 {
            0 => {
                let _ = writeln!(z, "{n} IN A 198.51.{c}.{b}\n{n} IN A 203.0.{c}.{b}");
                q(fq, &[Rt::A, Rt::AAAA, Rt::TXT]);
            }
            1 => {
                let _ = writeln!(
                    z,
                    "{n} IN AAAA 2001:db8:{c}::{b:x}\n{n} 60 IN A 198.51.100.{b}"
                );
                q(fq, &[Rt::AAAA, Rt::A, Rt::MX]);
            }
            2 => {
                // Chains: in the zone (to a name that exists or not), or out.
                let target = match i % 3 {
                    0 => format!("h{}.gen.test.", i - 2),
                    1 => format!("missing{i}.gen.test."),
                    _ => "cdn.elsewhere.test.".into(),
                };
                let _ = writeln!(z, "{n} IN CNAME {target}");
                q(fq, &[Rt::A, Rt::CNAME, Rt::TXT]);
            }
            3 => {
                let _ = writeln!(z, "{n} IN TXT \"s{i}\" \"second string\"");
                q(fq, &[Rt::TXT, Rt::A]);
            }
            4 => {
                let _ = writeln!(
                    z,
                    "mx{i} IN A 192.0.2.{b}\n{n} IN MX 10 mx{i}\n{n} IN MX 20 h{}.gen.test.\n{n} IN MX 30 mx.elsewhere.test.",
                    i - 4
                );
                q(fq, &[Rt::MX, Rt::A]);
                q(format!("mx{i}.gen.test"), &[Rt::A]);
            }
            5 => {
                let _ = writeln!(z, "_sip._tcp.{n} IN SRV 10 60 5060 h{}.gen.test.", i - 5);
                q(format!("_sip._tcp.{fq}"), &[Rt::SRV, Rt::A]);
                q(format!("_tcp.{fq}"), &[Rt::SRV]);
                q(fq, &[Rt::A]);
            }
            6 => {
                let _ = writeln!(
                    z,
                    "{n} IN CAA 0 issue \"ca{i}.example\"\n{n} IN CAA 128 iodef \"mailto:s@gen.test\""
                );
                q(fq, &[Rt::CAA, Rt::A]);
            }
            7 => {
                // A delegation: glue below the cut, a sibling server, DS.
                let _ = writeln!(
                    z,
                    "d{i} IN NS ns.d{i}\nd{i} IN NS ns1.gen.test.\nd{i} IN NS ns.elsewhere.test.\n\
                     ns.d{i} IN A 192.0.2.{b}\nns.d{i} IN AAAA 2001:db8::{b:x}\n\
                     d{i} IN DS {i} 13 2 {SHA256}"
                );
                let cut = format!("d{i}.gen.test");
                q(cut.clone(), &[Rt::A, Rt::NS, Rt::DS, Rt::SOA]);
                q(format!("www.{cut}"), &[Rt::A, Rt::DS]);
                q(format!("ns.{cut}"), &[Rt::A, Rt::AAAA]);
            }
            8 => {
                let _ = writeln!(z, "{n} IN PTR h{}.gen.test.", i - 8);
                q(fq, &[Rt::PTR, Rt::A]);
            }
            9 => {
                let _ = writeln!(
                    z,
                    "{n} IN NAPTR 100 10 \"S\" \"SIP+D2U\" \"\" _sip._udp.gen.test.\n\
                     {n} IN NAPTR 102 10 \"U\" \"E2U+sip\" \"!^.*$!sip:{i}@gen.test!\" ."
                );
                q(fq, &[Rt::NAPTR, Rt::A]);
            }
            10 => {
                let _ = writeln!(
                    z,
                    "_443._tcp.{n} IN TLSA 3 1 1 {SHA256}\n{n} IN A 192.0.2.{b}"
                );
                q(format!("_443._tcp.{fq}"), &[Rt::TLSA, Rt::A]);
                q(fq, &[Rt::A, Rt::TLSA]);
            }
            11 => {
                let _ = writeln!(
                    z,
                    "{n} IN SSHFP 4 2 {SHA256}\n{n} IN SSHFP 1 1 {}",
                    &SHA256[..40]
                );
                q(fq, &[Rt::SSHFP, Rt::A]);
            }
            12 => {
                let _ = writeln!(
                    z,
                    "{n} IN SVCB 1 h{}.gen.test. alpn=h2,h3 port=8{b}",
                    i - 12
                );
                q(fq, &[Rt::SVCB, Rt::HTTPS]);
            }
            13 => {
                let _ = writeln!(
                    z,
                    "{n} IN HTTPS 1 . alpn=h2 ipv4hint=192.0.2.{b}\n{n} IN A 192.0.2.{b}"
                );
                q(fq, &[Rt::HTTPS, Rt::A]);
            }
            14 => {
                let _ = writeln!(z, "{n} IN TYPE{} \\# 3 {:06x}", 65_280 + i % 200, i);
                q(fq, &[Rt::Unknown(65_280 + (i % 200) as u16), Rt::A]);
            }
            _ => {
                // A wildcard below an empty non-terminal.
                let _ = writeln!(
                    z,
                    "*.w.{n} IN A 192.0.2.{b}\n*.w.{n} IN TXT \"wild {i}\"\nx.w.{n} IN MX 5 h{}.gen.test.",
                    i - 15
                );
                q(format!("any.w.{fq}"), &[Rt::A, Rt::TXT, Rt::MX]);
                q(format!("x.w.{fq}"), &[Rt::A, Rt::MX]);
                q(format!("w.{fq}"), &[Rt::A]);
                q(fq.clone(), &[Rt::A]);
                q(format!("nx.{fq}"), &[Rt::A]);
            }
        }
    }
    (z, ask)
}

/// The reverse zone `2.0.192.in-addr.arpa` and its questions.
fn reverse() -> (String, Vec<(String, Rt)>) {
    let mut z = String::from(
        "$ORIGIN 2.0.192.in-addr.arpa.\n$TTL 3600\n@ IN SOA ns1.gen.test. hostmaster.gen.test. SERIAL 3600 600 604800 60\n\
         @ IN NS ns1.gen.test.\n",
    );
    let mut ask = Vec::new();
    for i in 1..=250u32 {
        let _ = writeln!(z, "{i} IN PTR h{i}.gen.test.");
        ask.push((format!("{i}.2.0.192.in-addr.arpa"), Rt::PTR));
    }
    ask.push(("251.2.0.192.in-addr.arpa".into(), Rt::PTR));
    (z, ask)
}

#[test]
fn a_generated_zone_of_2000_sets_answers_the_same_as_knot() {
    let dir = temp_dir("generated");
    let agg = Aggregator::start(&dir.join("agg"));
    let zones = [("gen.test", forward()), ("2.0.192.in-addr.arpa", reverse())];
    let mut version = 0;
    let mut sets = 0;
    for (apex, (text, _)) in &zones {
        let file = dir.join(format!("{apex}.import"));
        std::fs::write(&file, text.replace("SERIAL", "1")).unwrap();
        let out = agg.ctl_json(&["zone", "import", file.to_str().unwrap()]);
        version = out["version"].as_u64().unwrap();
        sets += out["plan"].as_array().unwrap().len() - 1;
    }
    assert!(sets >= 2_000, "{sets} record sets");
    // Knot serves the same files with our serial, so SOAs compare too.
    let files: Vec<(&str, std::path::PathBuf)> = zones
        .iter()
        .map(|(apex, (text, _))| {
            let file = dir.join(format!("{apex}.zone"));
            std::fs::write(&file, text.replace("SERIAL", &version.to_string())).unwrap();
            (*apex, file)
        })
        .collect();
    let knot = Knot::start(
        &dir,
        &files
            .iter()
            .map(|(a, f)| (*a, f.as_path()))
            .collect::<Vec<_>>(),
    );
    let edge = Edge::start(&["--aggregator", &agg.url()]);
    edge.wait_version(version);
    let ours = edge.dns();

    let mut compared = 0;
    let (mut answered, mut referred, mut additional) = (0, 0, 0);
    let mut differences = Vec::new();
    for (_, (_, ask)) in &zones {
        for (name, qtype) in ask {
            let (a, b) = (
                essence(ours, name, *qtype),
                essence(knot.addr, name, *qtype),
            );
            answered += usize::from(!a.2.is_empty());
            referred += usize::from(!a.1 && a.2.is_empty() && !a.3.is_empty());
            additional += usize::from(!a.4.is_empty());
            if a != b {
                differences.push(format!("{name} {qtype}:\n  ours: {a:?}\n  knot: {b:?}"));
            }
            compared += 1;
        }
    }
    eprintln!(
        "{sets} record sets, {compared} questions: {answered} answered, {referred} referrals, {additional} with additional records"
    );
    // Not a comparison of empty replies: answers, referrals and
    // additional sections are all there.
    assert!(compared > 2_500, "{compared} questions");
    assert!(
        answered > 1_500 && referred > 200 && additional > 500,
        "{answered} answered, {referred} referred, {additional} with additional records"
    );
    assert!(
        differences.is_empty(),
        "{} of {compared} differ; the first:\n{}",
        differences.len(),
        differences[..differences.len().min(8)].join("\n")
    );
}
