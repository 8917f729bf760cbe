//! Zone transfers without sockets: the transfer state built from
//! snapshots, and the replies to AXFR and IXFR requests, read back and
//! their TSIG checked with `domain`'s client side.
#![allow(missing_docs, clippy::unwrap_used)]

mod common;

use std::net::IpAddr;
use std::str::FromStr;
use std::sync::Arc;

use common::{a, name, record, stat, zone};
use domain::base::iana::{Class, Opcode, Rcode, Rtype};
use domain::base::message_builder::MessageBuilder;
use domain::base::{Message, Name, ParsedName, Question, Record, Serial, Ttl};
use domain::rdata::{AllRecordData, Soa};
use domain::tsig::{Algorithm, ClientSequence, Key, KeyName};
use gslb_edge::xfr::Transfers;
use gslb_edge::xfr::serve::{Reply, Verdict, respond};
use gslb_shared::*;
use proptest::prelude::*;

const SECRET: &[u8] = b"0123456789abcdef0123456789abcdef";
const PEER: &str = "127.0.0.1";

fn key(name: &str, secret: &[u8]) -> Arc<Key> {
    let n = KeyName::from_str(name).unwrap();
    Arc::new(Key::new(Algorithm::Sha256, secret, n, None, None).unwrap())
}

fn tsig_key() -> TsigKey {
    TsigKey {
        id: TsigKeyId(9),
        name: name("xfr.example.test"),
        algorithm: TsigAlgorithm::HmacSha256,
        secret: Secret(SECRET.to_vec()),
    }
}

/// A snapshot at `version` of example.test, allowing 127.0.0.1 with the
/// key, holding `www` A with `addrs`.
fn snapshot(version: u64, addrs: &[&str]) -> Snapshot {
    let mut z = zone(1, "example.test");
    z.transfer.allow.push(TransferPeer {
        address: PEER.parse().unwrap(),
        key: name("xfr.example.test"),
    });
    let mut s = Snapshot {
        version,
        ..Snapshot::default()
    };
    s.catalog.zones.insert(z.id, z);
    s.catalog.tsig_keys.insert(TsigKeyId(9), tsig_key());
    let www = record(
        2,
        "www.example.test",
        RecordType::A,
        60,
        stat(addrs.iter().map(|x| a(x)).collect()),
    );
    s.catalog.records.insert(www.id, www);
    let ns = record(
        3,
        "ns1.example.test",
        RecordType::A,
        60,
        stat(vec![a("192.0.2.53")]),
    );
    s.catalog.records.insert(ns.id, ns);
    s
}

/// A transfer request of `qtype` (IXFR with `serial`), signed with `key`.
fn request(
    qtype: Rtype,
    serial: Option<u32>,
    key: Option<Arc<Key>>,
) -> (Vec<u8>, Option<ClientSequence<Arc<Key>>>) {
    let mut b = MessageBuilder::new_vec();
    b.header_mut().set_id(7);
    b.header_mut().set_opcode(Opcode::QUERY);
    let apex = Name::<Vec<u8>>::from_str("example.test.").unwrap();
    let mut q = b.question();
    q.push(Question::new(&apex, qtype, Class::IN)).unwrap();
    let mut auth = q.authority();
    if let Some(serial) = serial {
        let soa = Soa::new(
            apex.clone(),
            apex.clone(),
            Serial(serial),
            Ttl::from_secs(1),
            Ttl::from_secs(1),
            Ttl::from_secs(1),
            Ttl::from_secs(1),
        );
        auth.push(Record::new(&apex, Class::IN, Ttl::from_secs(0), soa))
            .unwrap();
    }
    let mut add = auth.additional();
    let seq = key
        .map(|k| ClientSequence::request(k, &mut add, domain::rdata::tsig::Time48::now()).unwrap());
    (add.finish(), seq)
}

/// The records of every message of a reply, each message's TSIG checked.
fn read(reply: Reply, mut seq: Option<ClientSequence<Arc<Key>>>) -> (Rcode, Vec<String>) {
    let messages = match reply {
        Reply::Single(m) => vec![m],
        Reply::Stream(mut s) => {
            let mut v = Vec::new();
            while let Some(m) = s.next_message() {
                v.push(m.unwrap());
            }
            v
        }
    };
    let mut rcode = Rcode::NOERROR;
    let mut records = Vec::new();
    for bytes in messages {
        let mut m = Message::from_octets(bytes).unwrap();
        if let Some(seq) = seq.as_mut()
            && m.header().rcode() == Rcode::NOERROR
        {
            seq.answer(&mut m, domain::rdata::tsig::Time48::now())
                .unwrap();
        }
        rcode = m.header().rcode();
        for r in m
            .answer()
            .unwrap()
            .limit_to::<AllRecordData<_, ParsedName<_>>>()
        {
            records.push(r.unwrap().to_string());
        }
    }
    (rcode, records)
}

fn serve(
    t: &Transfers,
    qtype: Rtype,
    serial: Option<u32>,
    k: Option<Arc<Key>>,
    peer: &str,
) -> (Verdict, Rcode, Vec<String>) {
    let (bytes, seq) = request(qtype, serial, k);
    let (reply, verdict) = respond(t, bytes, peer.parse::<IpAddr>().unwrap());
    let (rcode, records) = read(reply, seq);
    (verdict, rcode, records)
}

fn good() -> Option<Arc<Key>> {
    Some(key("xfr.example.test", SECRET))
}

#[test]
fn axfr_is_the_whole_zone_between_two_soas_every_message_signed() {
    let t = Transfers::new(8);
    let u = t.update(&snapshot(5, &["192.0.2.1", "192.0.2.2"]));
    assert!(u.errors.is_empty() && u.changed.len() == 1);
    let (verdict, rcode, records) = serve(&t, Rtype::AXFR, None, good(), PEER);
    assert_eq!(
        (verdict, rcode),
        (Verdict::Transfer("AXFR"), Rcode::NOERROR)
    );
    assert!(
        records[0].contains("SOA") && records[0].contains(" 5 "),
        "{records:?}"
    );
    assert_eq!(records.first(), records.last());
    let body = records.join("\n");
    for want in [
        "www.example.test. 60 IN A 192.0.2.1",
        "www.example.test. 60 IN A 192.0.2.2",
        "ns1.example.test. 60 IN A 192.0.2.53",
        "example.test. 300 IN NS ns.elsewhere.test.",
    ] {
        assert!(body.contains(want), "{want} in {body}");
    }
    assert_eq!(records.len(), 2 + 2 + 1 + 2);
}

#[test]
fn ixfr_sends_the_changes_since_the_clients_serial() {
    let t = Transfers::new(8);
    t.update(&snapshot(5, &["192.0.2.1", "192.0.2.2"]));
    let u = t.update(&snapshot(6, &["192.0.2.1", "192.0.2.2"]));
    assert!(
        u.changed.is_empty(),
        "only the serial moved: no change to notify at once"
    );
    assert_eq!(u.moved.len(), 1, "a NOTIFY in its slot");
    let u = t.update(&snapshot(7, &["192.0.2.1", "192.0.2.3"]));
    assert_eq!(u.changed.len(), 1);

    let (verdict, _, records) = serve(&t, Rtype::IXFR, Some(5), good(), PEER);
    assert_eq!(verdict, Verdict::Transfer("IXFR"));
    let soa = |r: &String| r.contains("SOA");
    let serials: Vec<&String> = records.iter().filter(|r| soa(r)).collect();
    assert_eq!(serials.len(), 4, "{records:?}");
    assert!(serials[0].contains(" 7 ") && serials[1].contains(" 5 ") && serials[2].contains(" 7 "));
    let body: Vec<&String> = records.iter().filter(|r| !soa(r)).collect();
    assert_eq!(body.len(), 2, "one removed, one added: {records:?}");
    assert!(body[0].ends_with("192.0.2.2") && body[1].ends_with("192.0.2.3"));

    // From a serial between changes (6 holds 5's data): the same change.
    let (_, _, from6) = serve(&t, Rtype::IXFR, Some(6), good(), PEER);
    assert!(from6[1].contains(" 6 ") && from6.len() == records.len());
    // Current: the SOA alone.
    let (verdict, _, current) = serve(&t, Rtype::IXFR, Some(7), good(), PEER);
    assert_eq!(
        (verdict, current.len()),
        (Verdict::Transfer("IXFR-current"), 1)
    );
    // Unknown serials: the whole zone.
    for serial in [4, 8] {
        let (verdict, _, whole) = serve(&t, Rtype::IXFR, Some(serial), good(), PEER);
        assert_eq!(verdict, Verdict::Transfer("IXFR-as-AXFR"), "{serial}");
        assert_eq!(whole.len(), 7);
    }
}

#[test]
fn strangers_are_refused_and_bad_signatures_get_notauth() {
    let t = Transfers::new(8);
    t.update(&snapshot(5, &["192.0.2.1"]));
    let (v, rcode, records) = serve(&t, Rtype::AXFR, None, good(), "127.0.0.9");
    assert_eq!(
        (v, rcode, records.len()),
        (Verdict::Refused("address not allowed"), Rcode::REFUSED, 0)
    );
    let (v, rcode, _) = serve(&t, Rtype::AXFR, None, None, PEER);
    assert_eq!(
        (v, rcode),
        (Verdict::Refused("request not signed"), Rcode::REFUSED)
    );
    let (v, rcode, records) = serve(
        &t,
        Rtype::AXFR,
        None,
        Some(key("xfr.example.test", b"another secret of 32 bytes......")),
        PEER,
    );
    assert_eq!(v, Verdict::BadTsig("BADSIG".into()));
    assert_eq!((rcode, records.len()), (Rcode::NOTAUTH, 0));
    let (v, rcode, _) = serve(
        &t,
        Rtype::AXFR,
        None,
        Some(key("other.example.test", SECRET)),
        PEER,
    );
    assert!(matches!(v, Verdict::BadTsig(_)), "{v:?}");
    assert_eq!(rcode, Rcode::NOTAUTH);
}

#[test]
fn a_zone_without_transfer_settings_is_not_transferable() {
    let t = Transfers::new(8);
    let mut s = snapshot(5, &["192.0.2.1"]);
    let mut z = s.catalog.zones[&ZoneId(1)].clone();
    z.transfer = Transfer::default();
    s.catalog.zones.insert(z.id, z);
    let u = t.update(&s);
    assert!(u.changed.is_empty() && u.moved.is_empty());
    let (v, rcode, _) = serve(&t, Rtype::AXFR, None, good(), PEER);
    assert_eq!(
        (v, rcode),
        (
            Verdict::Refused("no transfer settings for this zone"),
            Rcode::REFUSED
        )
    );
}

proptest! {
    /// Whatever the history, an IXFR from any serial in the journal,
    /// applied to the data at that serial, gives the data now.
    #[test]
    fn ixfr_replays_to_the_current_data(steps in prop::collection::vec(prop::collection::btree_set(1u8..8, 1..4), 1..8)) {
        let t = Transfers::new(16);
        let mut held = Vec::new();
        for (i, set) in steps.iter().enumerate() {
            let addrs: Vec<String> = set.iter().map(|x| format!("192.0.2.{x}")).collect();
            let refs: Vec<&str> = addrs.iter().map(String::as_str).collect();
            let v = 10 + i as u64;
            t.update(&snapshot(v, &refs));
            let (_, _, whole) = serve(&t, Rtype::AXFR, None, good(), PEER);
            held.push((v, whole));
        }
        let (_, _, now) = serve(&t, Rtype::AXFR, None, good(), PEER);
        let data = |records: &[String]| {
            let mut v: Vec<String> = records.iter().filter(|r| !r.contains("SOA")).cloned().collect();
            v.sort();
            v
        };
        for (v, whole) in &held {
            let (_, _, diff) = serve(&t, Rtype::IXFR, Some(*v as u32), good(), PEER);
            let mut mine = data(whole);
            // Walk the diff: SOA-delimited runs alternate removed / added.
            let mut soas = 0;
            let inner = if diff.len() > 2 { &diff[1..diff.len() - 1] } else { &[][..] };
            for r in inner {
                if r.contains("SOA") { soas += 1; continue; }
                if soas % 2 == 1 { mine.retain(|x| x != r); } else { mine.push(r.clone()); }
            }
            mine.sort();
            prop_assert_eq!(mine, data(&now), "from {}", v);
        }
    }
}

#[test]
fn a_large_zone_goes_in_many_messages_each_signed_in_sequence() {
    let mut s = snapshot(5, &["192.0.2.1"]);
    for i in 0..3_000u64 {
        let r = record(
            100 + i,
            &format!("h{i}.example.test"),
            RecordType::Txt,
            60,
            stat(vec![Rdata::Txt(vec![format!(
                "record {i} {}",
                "x".repeat(40)
            )])]),
        );
        s.catalog.records.insert(r.id, r);
    }
    let t = Transfers::new(8);
    t.update(&s);
    let (bytes, seq) = request(Rtype::AXFR, None, good());
    let (reply, _) = respond(&t, bytes, PEER.parse().unwrap());
    let Reply::Stream(mut stream) = reply else {
        panic!("a transfer")
    };
    let mut sizes = Vec::new();
    let mut seq = seq.unwrap();
    let mut records = 0;
    while let Some(m) = stream.next_message() {
        let m = m.unwrap();
        sizes.push(m.len());
        let mut m = Message::from_octets(m).unwrap();
        seq.answer(&mut m, domain::rdata::tsig::Time48::now())
            .unwrap();
        records += m.header_counts().ancount();
    }
    assert!(sizes.len() > 10, "{sizes:?}");
    assert!(sizes.iter().all(|&n| n < 20_000), "{sizes:?}");
    assert_eq!(usize::from(records), 3_000 + 2 + 2 + 1 + 1);
}

#[test]
fn a_health_flip_changes_only_the_pool_backed_set() {
    let mut s = snapshot(5, &["192.0.2.1"]);
    s.catalog
        .pools
        .insert(PoolId(1), Pool::new(PoolId(1), "web"));
    for i in 1..=2u64 {
        let m = Member::new(
            MemberId(i),
            PoolId(1),
            format!("w{i}"),
            format!("198.51.100.{i}").parse().unwrap(),
            80,
        );
        s.catalog.members.insert(m.id, m);
        s.facts.insert(MemberId(i), MemberFacts::UP);
    }
    let dynamic = RecordData::Dynamic(DynamicRecord {
        steering: Steering::Weighted,
        pools: vec![PoolId(1)],
        geo: vec![],
        first_n: 1,
        flatten: false,
        region_locations: Default::default(),
    });
    let app = record(4, "app.example.test", RecordType::A, 30, dynamic);
    s.catalog.records.insert(app.id, app);
    let t = Transfers::new(8);
    t.update(&s);
    let (_, _, before) = serve(&t, Rtype::AXFR, None, good(), PEER);
    let apps = |rs: &[String]| rs.iter().filter(|r| r.starts_with("app.")).count();
    assert_eq!(
        apps(&before),
        2,
        "the whole answer, firstN and weights aside: {before:?}"
    );

    // Facts only: the record sets are the same map (the fast path).
    let mut flipped = s.clone();
    flipped.version = 6;
    flipped.facts.insert(MemberId(2), MemberFacts::DOWN);
    let u = t.update(&flipped);
    assert_eq!(u.changed.len(), 1);
    let (_, _, diff) = serve(&t, Rtype::IXFR, Some(5), good(), PEER);
    let body: Vec<&String> = diff.iter().filter(|r| !r.contains("SOA")).collect();
    assert_eq!(body.len(), 1, "{diff:?}");
    assert!(body[0].starts_with("app.") && body[0].ends_with("198.51.100.2"));
    let (_, _, after) = serve(&t, Rtype::AXFR, None, good(), PEER);
    assert_eq!(apps(&after), 1);
    assert_eq!(after.len(), before.len() - 1);

    // Nothing changed: no NOTIFY, the serial moves.
    let mut same = flipped.clone();
    same.version = 7;
    let u = t.update(&same);
    assert!(u.changed.is_empty() && u.moved.len() == 1);
    let (_, _, soa_only) = serve(&t, Rtype::IXFR, Some(6), good(), PEER);
    assert_eq!(
        soa_only.len(),
        4,
        "new SOA, an empty change from 6 to 7, new SOA: {soa_only:?}"
    );
}

/// A snapshot whose zone notifies `target`, signed with the key.
fn notifying(version: u64, target: std::net::SocketAddr) -> Snapshot {
    let mut s = snapshot(version, &["192.0.2.1"]);
    let mut z = s.catalog.zones[&ZoneId(1)].clone();
    z.transfer.notify.push(NotifyTarget {
        address: target,
        key: Some(name("xfr.example.test")),
    });
    s.catalog.zones.insert(z.id, z);
    s
}

#[tokio::test(start_paused = true)]
async fn notify_is_signed_and_sent_again_until_answered() {
    let secondary = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let target = secondary.local_addr().unwrap();
    let t = Transfers::new(8);
    let changed = t.update(&notifying(5, target)).changed;
    assert_eq!(changed.len(), 1);
    gslb_edge::xfr::notify::send_all(&t.notifier, &changed[0], "127.0.0.1".parse().unwrap());

    let store = key("xfr.example.test", SECRET);
    let mut buf = vec![0u8; 4096];
    let mut ids = Vec::new();
    let mut last = None;
    // The first is left unanswered: it comes again after the wait.
    for _ in 0..2 {
        let (n, from) = secondary.recv_from(&mut buf).await.unwrap();
        let mut m = Message::from_octets(buf[..n].to_vec()).unwrap();
        assert_eq!(m.header().opcode(), Opcode::NOTIFY);
        assert!(m.header().aa());
        let q = m.sole_question().unwrap();
        assert_eq!(
            (q.qtype(), q.qname().to_string()),
            (Rtype::SOA, "example.test".into())
        );
        let tx = domain::tsig::ServerTransaction::request(
            &store,
            &mut m,
            domain::rdata::tsig::Time48::now(),
        )
        .expect("a valid signature")
        .expect("signed");
        ids.push(m.header().id());
        last = Some((m, tx, from));
    }
    let (m, tx, from) = last.unwrap();
    let mut answer = MessageBuilder::new_vec()
        .start_answer(&m, Rcode::NOERROR)
        .unwrap()
        .additional();
    tx.answer(&mut answer, domain::rdata::tsig::Time48::now())
        .unwrap();
    secondary.send_to(&answer.finish(), from).await.unwrap();
    for _ in 0..100 {
        if t.counts()[4] == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(t.counts()[4], 1, "answered once");
    assert_ne!(ids[0], ids[1], "each send has its own id");
    // Answered: nothing more comes.
    let more = tokio::time::timeout(
        std::time::Duration::from_secs(60),
        secondary.recv_from(&mut buf),
    )
    .await;
    assert!(more.is_err(), "no NOTIFY after the answer");
}

#[tokio::test(start_paused = true)]
async fn an_unanswered_notify_is_given_up_after_five_tries() {
    let secondary = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let t = Transfers::new(8);
    let changed = t
        .update(&notifying(5, secondary.local_addr().unwrap()))
        .changed;
    gslb_edge::xfr::notify::send_all(&t.notifier, &changed[0], "127.0.0.1".parse().unwrap());
    let mut buf = vec![0u8; 4096];
    for _ in 0..gslb_edge::xfr::notify::TRIES {
        secondary.recv_from(&mut buf).await.unwrap();
    }
    for _ in 0..100 {
        if t.counts()[5] == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    }
    assert_eq!(t.counts()[5], 1, "given up once");
    assert!(
        tokio::time::timeout(
            std::time::Duration::from_secs(120),
            secondary.recv_from(&mut buf)
        )
        .await
        .is_err()
    );
}

/// Take one NOTIFY at `secondary`, answer it (signed), return its serial.
async fn answer_notify(secondary: &tokio::net::UdpSocket) -> u32 {
    let store = key("xfr.example.test", SECRET);
    let mut buf = vec![0u8; 4096];
    let (n, from) = secondary.recv_from(&mut buf).await.unwrap();
    let mut m = Message::from_octets(buf[..n].to_vec()).unwrap();
    let tx = domain::tsig::ServerTransaction::request(
        &store,
        &mut m,
        domain::rdata::tsig::Time48::now(),
    )
    .unwrap()
    .unwrap();
    let serial = m
        .answer()
        .unwrap()
        .limit_to::<Soa<ParsedName<_>>>()
        .next()
        .unwrap()
        .unwrap()
        .data()
        .serial()
        .into_int();
    let mut answer = MessageBuilder::new_vec()
        .start_answer(&m, Rcode::NOERROR)
        .unwrap()
        .additional();
    tx.answer(&mut answer, domain::rdata::tsig::Time48::now())
        .unwrap();
    secondary.send_to(&answer.finish(), from).await.unwrap();
    serial
}

#[tokio::test(start_paused = true)]
async fn a_serial_that_only_moved_is_notified_once_a_second_with_the_newest() {
    let secondary = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let target = secondary.local_addr().unwrap();
    let t = Transfers::new(8);
    let source: IpAddr = "127.0.0.1".parse().unwrap();
    let u = t.update(&notifying(5, target));
    gslb_edge::xfr::notify::send_all(&t.notifier, &u.changed[0], source);
    assert_eq!(answer_notify(&secondary).await, 5);
    let started = tokio::time::Instant::now();
    // Two snapshots that change nothing in the zone, within the second.
    for v in [6, 7] {
        let u = t.update(&notifying(v, target));
        assert!(u.changed.is_empty());
        gslb_edge::xfr::notify::send_coalesced(&t.notifier, &u.moved[0], source);
    }
    assert_eq!(
        answer_notify(&secondary).await,
        7,
        "one NOTIFY, the newest serial"
    );
    assert!(
        started.elapsed() >= gslb_edge::xfr::notify::COALESCE - std::time::Duration::from_millis(1)
    );
    let mut buf = vec![0u8; 512];
    let more = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        secondary.recv_from(&mut buf),
    )
    .await;
    assert!(more.is_err(), "nothing more");
}

#[test]
fn large_records_never_make_a_message_past_65535_bytes() {
    let mut s = snapshot(5, &["192.0.2.1"]);
    // 15 KB (under the soft limit), then 55 KB: together past 65,535.
    for (i, strings) in [60usize, 220, 1].into_iter().enumerate() {
        let r = record(
            200 + i as u64,
            &format!("big{i}.example.test"),
            RecordType::Txt,
            60,
            stat(vec![Rdata::Txt(vec!["y".repeat(250); strings])]),
        );
        s.catalog.records.insert(r.id, r);
    }
    let t = Transfers::new(8);
    assert!(t.update(&s).errors.is_empty());
    let (bytes, seq) = request(Rtype::AXFR, None, good());
    let (reply, _) = respond(&t, bytes, PEER.parse().unwrap());
    let Reply::Stream(mut stream) = reply else {
        panic!("a transfer")
    };
    let mut seq = seq.unwrap();
    let mut records = 0;
    while let Some(m) = stream.next_message() {
        let m = m.unwrap();
        assert!(m.len() <= 65_535, "{}", m.len());
        let mut m = Message::from_octets(m).unwrap();
        seq.answer(&mut m, domain::rdata::tsig::Time48::now())
            .unwrap();
        records += usize::from(m.header_counts().ancount());
    }
    assert_eq!(records, 3 + 2 + 2 + 1 + 1);
}

#[test]
fn ixfr_over_udp_gets_the_soa_alone_and_axfr_over_udp_is_not_ours_to_answer() {
    use gslb_edge::xfr::serve::respond_udp;
    let t = Transfers::new(8);
    t.update(&snapshot(5, &["192.0.2.1"]));
    t.update(&snapshot(6, &["192.0.2.2"]));
    let peer: IpAddr = PEER.parse().unwrap();
    let (bytes, seq) = request(Rtype::IXFR, Some(5), good());
    let (reply, verdict) = respond_udp(&t, &bytes, peer).unwrap();
    assert_eq!(verdict, Verdict::Transfer("IXFR-udp"));
    let (rcode, records) = read(Reply::Single(reply), seq);
    assert_eq!(rcode, Rcode::NOERROR);
    assert_eq!(records.len(), 1, "the SOA alone: {records:?}");
    assert!(records[0].contains("SOA") && records[0].contains(" 6 "));
    // The same checks as over TCP.
    let (bytes, _) = request(Rtype::IXFR, Some(5), None);
    let (reply, verdict) = respond_udp(&t, &bytes, peer).unwrap();
    assert_eq!(verdict, Verdict::Refused("request not signed"));
    assert_eq!(
        Message::from_octets(reply).unwrap().header().rcode(),
        Rcode::REFUSED
    );
    let (bytes, _) = request(Rtype::IXFR, Some(5), good());
    assert!(matches!(
        respond_udp(&t, &bytes, "127.0.0.9".parse().unwrap()),
        Some((_, Verdict::Refused(_)))
    ));
    // AXFR over UDP: left to the responder (REFUSED).
    let (bytes, _) = request(Rtype::AXFR, None, good());
    assert!(respond_udp(&t, &bytes, peer).is_none());
}

#[test]
fn a_verified_request_with_a_key_another_address_holds_is_refused_signed() {
    // Two secondaries, each with its own key: 127.0.0.1's key from
    // 127.0.0.2 verifies, is refused, and the refusal is signed.
    let mut s = snapshot(5, &["192.0.2.1"]);
    let mut z = s.catalog.zones[&ZoneId(1)].clone();
    z.transfer.allow.push(TransferPeer {
        address: "127.0.0.2".parse().unwrap(),
        key: name("other.example.test"),
    });
    s.catalog.zones.insert(z.id, z);
    let other = TsigKey {
        id: TsigKeyId(10),
        name: name("other.example.test"),
        algorithm: TsigAlgorithm::HmacSha256,
        secret: Secret(b"fedcba9876543210fedcba9876543210".to_vec()),
    };
    s.catalog.tsig_keys.insert(other.id, other);
    let t = Transfers::new(8);
    assert!(t.update(&s).errors.is_empty());
    let (bytes, seq) = request(Rtype::AXFR, None, good());
    let (reply, verdict) = respond(&t, bytes, "127.0.0.2".parse().unwrap());
    assert_eq!(
        verdict,
        Verdict::Refused("key not allowed from this address")
    );
    let Reply::Single(reply) = reply else {
        panic!("one message")
    };
    let mut m = Message::from_octets(reply).unwrap();
    assert_eq!(m.header().rcode(), Rcode::REFUSED);
    seq.unwrap()
        .answer(&mut m, domain::rdata::tsig::Time48::now())
        .expect("the refusal is signed with the request's key");
}
