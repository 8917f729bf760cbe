//! Answering a transfer request: who may ask (the zone's allow list:
//! address and TSIG key together), what they get (AXFR: the whole zone;
//! IXFR: the changes since their serial, or the whole zone when the
//! journal does not reach back that far), and the reply as a stream of
//! TSIG-signed messages. Everything else is REFUSED; a bad signature gets
//! NOTAUTH with the TSIG error (BADSIG, BADKEY, BADTIME).

use std::net::IpAddr;
use std::sync::Arc;

use domain::base::iana::{Class, Opcode, Rcode, Rtype, TsigRcode};
use domain::base::message_builder::{MessageBuilder, StaticCompressor, TreeCompressor};
use domain::base::{Message, ParsedName, Question, Record, ToName, Ttl};
use domain::rdata::{Soa, Tsig};
use domain::tsig::{Key, ServerSequence};
use gslb_shared::wire::{Data, WireName};

use super::journal::{Change, Ixfr, Rr};
use super::{Transfers, ZoneXfr};

/// A message of a transfer is closed once it holds this many bytes (RFC
/// 5936 allows up to 65,535; smaller messages start the secondary's work
/// sooner and keep the largest record plus the TSIG record within bounds).
pub const MESSAGE_SOFT_LIMIT: usize = 16 * 1024;

/// Room kept in every message for its TSIG record (HMAC-SHA256: the key
/// and algorithm names, a 32-byte MAC and fixed fields).
const TSIG_ROOM: usize = 600;

/// The transfer type asked for, when `query` is a transfer request
/// (opcode QUERY, one question of type AXFR or IXFR).
pub fn transfer_type(query: &[u8]) -> Option<Rtype> {
    let message = Message::from_octets(query).ok()?;
    if message.header().opcode() != Opcode::QUERY || message.header().qr() {
        return None;
    }
    let q = message.sole_question().ok()?;
    matches!(q.qtype(), Rtype::AXFR | Rtype::IXFR).then_some(q.qtype())
}

/// What a request gets.
pub enum Reply {
    /// One message (a refusal, an error, or an up-to-date SOA).
    Single(Vec<u8>),
    /// The messages of a transfer.
    Stream(Box<Stream>),
}

/// What [`respond`] decided, for logs and counters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Refused: why.
    Refused(&'static str),
    /// The signature did not verify: the TSIG error.
    BadTsig(String),
    /// Malformed.
    FormErr(&'static str),
    /// Sent: the kind (`AXFR`, `IXFR`, `IXFR-as-AXFR`, `IXFR-current`).
    Transfer(&'static str),
}

fn refusal(message: &Message<Vec<u8>>, rcode: Rcode) -> Vec<u8> {
    let builder = MessageBuilder::from_target(StaticCompressor::new(Vec::new()))
        .expect("a Vec holds a header");
    match builder.start_answer(message, rcode) {
        Ok(answer) => answer.finish().into_target(),
        // The question does not fit (it was read from a message that
        // did): answer with the header alone.
        Err(_) => {
            let mut b = MessageBuilder::from_target(StaticCompressor::new(Vec::new()))
                .expect("a Vec holds a header");
            let h = b.header_mut();
            h.set_id(message.header().id());
            h.set_qr(true);
            h.set_rcode(rcode);
            b.finish().into_target()
        }
    }
}

/// The client's serial: the SOA in the IXFR request's authority section.
fn client_serial(message: &Message<Vec<u8>>) -> Option<u32> {
    let authority = message.authority().ok()?;
    let record = authority.limit_to::<Soa<ParsedName<_>>>().next()?.ok()?;
    Some(record.data().serial().into_int())
}

/// Decide and build the reply to transfer request `query` from `peer`.
pub fn respond(transfers: &Transfers, query: Vec<u8>, peer: IpAddr) -> (Reply, Verdict) {
    // Verification edits the message in place; a BADSIG reply needs the
    // request's TSIG record as it came.
    let original = query.clone();
    let Ok(mut message) = Message::from_octets(query) else {
        return (Reply::Single(Vec::new()), Verdict::FormErr("unparsable"));
    };
    let Ok(question) = message.sole_question() else {
        return (
            Reply::Single(refusal(&message, Rcode::FORMERR)),
            Verdict::FormErr("not one question"),
        );
    };
    let qtype = question.qtype();
    let Ok(apex) = question.qname().try_to_name::<Vec<u8>>();
    if question.qclass() != Class::IN {
        return refused(&message, "class is not IN");
    }
    let Some(zone) = transfers.zone(&apex) else {
        return refused(&message, "no transfer settings for this zone");
    };
    if !zone.allow.iter().any(|(ip, _)| *ip == peer) {
        return refused(&message, "address not allowed");
    }
    let now = domain::rdata::tsig::Time48::now();
    let signer = match ServerSequence::request(&zone.keys, &mut message, now) {
        Ok(Some(signer)) => signer,
        Ok(None) => return refused(&message, "request not signed"),
        Err(error) if error.error() == TsigRcode::FORMERR => {
            // `domain` 0.12 reports a MAC that does not verify as FORMERR;
            // RFC 8945 5.2.2 asks for NOTAUTH with BADSIG. A TSIG record
            // that parses, under a key we hold, is that case.
            return match bad_signature(&original, &zone.keys) {
                Some(bytes) => (Reply::Single(bytes), Verdict::BadTsig("BADSIG".into())),
                None => (
                    Reply::Single(refusal(&message, Rcode::FORMERR)),
                    Verdict::FormErr("TSIG record not readable"),
                ),
            };
        }
        Err(error) => {
            let why = error.to_string();
            let builder = MessageBuilder::from_target(StaticCompressor::new(Vec::new()))
                .expect("a Vec holds a header");
            let bytes = match error.build_message(&message, builder) {
                Ok(additional) => additional.finish().into_target(),
                Err(_) => refusal(&message, Rcode::NOTAUTH),
            };
            return (Reply::Single(bytes), Verdict::BadTsig(why));
        }
    };
    let key = signer.key().name().clone();
    if !zone.allow.iter().any(|(ip, k)| *ip == peer && *k == key) {
        // The request verified: the refusal is signed (RFC 8945 5.3).
        let mut signer = signer;
        let signed = MessageBuilder::from_target(StaticCompressor::new(Vec::new()))
            .ok()
            .and_then(|b| b.start_answer(&message, Rcode::REFUSED).ok())
            .map(|answer| answer.additional())
            .and_then(|mut additional| {
                signer.answer(&mut additional, now).ok()?;
                Some(additional.finish().into_target())
            });
        let bytes = signed.unwrap_or_else(|| refusal(&message, Rcode::REFUSED));
        return (
            Reply::Single(bytes),
            Verdict::Refused("key not allowed from this address"),
        );
    }
    let (segments, kind) = if qtype == Rtype::IXFR {
        let Some(serial) = client_serial(&message) else {
            return (
                Reply::Single(refusal(&message, Rcode::FORMERR)),
                Verdict::FormErr("IXFR without the client's SOA"),
            );
        };
        match zone.history.ixfr(serial) {
            Ixfr::Current => (vec![Segment::Soa(zone.history.version)], "IXFR-current"),
            Ixfr::Changes(changes) => {
                let client = zone.history.version_of(serial).unwrap_or(0);
                (ixfr_segments(&zone, client, &changes), "IXFR")
            }
            Ixfr::Whole => (axfr_segments(&zone), "IXFR-as-AXFR"),
        }
    } else {
        (axfr_segments(&zone), "AXFR")
    };
    let stream = Stream {
        zone,
        id: message.header().id(),
        question: Question::new(apex, qtype, Class::IN),
        signer,
        segments,
        at: (0, 0),
        first: true,
    };
    (Reply::Stream(Box::new(stream)), Verdict::Transfer(kind))
}

/// Answer an IXFR request that came over UDP (AXFR over UDP is not
/// defined and stays REFUSED by the responder; `None` for anything but
/// IXFR). The checks are TCP's; a request that passes gets the current
/// SOA alone (RFC 1995 2: the client is current, or asks again over TCP).
pub fn respond_udp(
    transfers: &Transfers,
    query: &[u8],
    peer: IpAddr,
) -> Option<(Vec<u8>, Verdict)> {
    if transfer_type(query) != Some(Rtype::IXFR) {
        return None;
    }
    match respond(transfers, query.to_vec(), peer) {
        (Reply::Single(bytes), verdict) => (!bytes.is_empty()).then_some((bytes, verdict)),
        (Reply::Stream(mut stream), _) => {
            stream.segments = vec![Segment::Soa(stream.zone.history.version)];
            let bytes = stream.next_message()?.ok()?;
            Some((bytes, Verdict::Transfer("IXFR-udp")))
        }
    }
}

/// The unsigned NOTAUTH/BADSIG reply to `request`, whose last record is
/// a TSIG record under one of `keys` (else `None`): the request's TSIG
/// fields with an empty MAC (RFC 8945 5.3.2: such an error is not signed).
fn bad_signature(request: &[u8], keys: &super::KeyStore) -> Option<Vec<u8>> {
    let message = Message::from_octets(request).ok()?;
    let mut tsigs = (message.additional().ok()?).limit_to::<Tsig<&[u8], ParsedName<&[u8]>>>();
    let record = tsigs.next()?.ok()?;
    if tsigs.next().is_some() {
        // More than one: FORMERR it is (RFC 8945 5.2).
        return None;
    }
    let algorithm = domain::tsig::Algorithm::from_name(record.data().algorithm())?;
    let owner = record.owner().try_to_name::<Vec<u8>>().ok()?;
    let held = keys
        .keys()
        .any(|(name, a)| *a == algorithm && name.name_eq(&owner));
    if !held {
        return None;
    }
    let builder = MessageBuilder::from_target(StaticCompressor::new(Vec::new())).ok()?;
    let mut additional = builder
        .start_answer(&message, Rcode::NOTAUTH)
        .ok()?
        .additional();
    let data = Tsig::new(
        record.data().algorithm(),
        record.data().time_signed(),
        record.data().fudge(),
        &b""[..],
        record.data().original_id(),
        TsigRcode::BADSIG,
        &b""[..],
    )
    .ok()?;
    additional
        .push((record.owner(), Class::ANY, 0, data))
        .ok()?;
    Some(additional.finish().into_target())
}

fn refused(message: &Message<Vec<u8>>, why: &'static str) -> (Reply, Verdict) {
    (
        Reply::Single(refusal(message, Rcode::REFUSED)),
        Verdict::Refused(why),
    )
}

/// A run of records of a reply.
enum Segment {
    /// The SOA at this version.
    Soa(u64),
    /// One set of the zone's records.
    Records(Arc<[Rr]>),
    /// A change's removed records.
    Removed(Arc<Change>),
    /// A change's added records.
    Added(Arc<Change>),
}

impl Segment {
    fn len(&self) -> usize {
        match self {
            Segment::Soa(_) => 1,
            Segment::Records(r) => r.len(),
            Segment::Removed(c) => c.removed.len(),
            Segment::Added(c) => c.added.len(),
        }
    }
}

/// AXFR: SOA, every record, SOA.
fn axfr_segments(zone: &ZoneXfr) -> Vec<Segment> {
    let v = zone.history.version;
    let sets = zone
        .history
        .sets
        .iter()
        .map(|s| Segment::Records(Arc::clone(&s.records)));
    std::iter::once(Segment::Soa(v))
        .chain(sets)
        .chain([Segment::Soa(v)])
        .collect()
}

/// IXFR (RFC 1995 4): the new SOA, then per change the old SOA, what it
/// removed, the new SOA, what it added; then the new SOA again. The last
/// change ends at the current version (the data has not changed since).
fn ixfr_segments(zone: &ZoneXfr, client: u64, changes: &[(u64, Arc<Change>)]) -> Vec<Segment> {
    let now = zone.history.version;
    let mut out = vec![Segment::Soa(now)];
    if changes.is_empty() {
        // Only the serial moved since the client's: one change with
        // nothing in it.
        out.push(Segment::Soa(client));
        out.push(Segment::Soa(now));
    }
    for (i, (from, change)) in changes.iter().enumerate() {
        let to = if i + 1 == changes.len() {
            now
        } else {
            change.to
        };
        out.push(Segment::Soa(*from));
        out.push(Segment::Removed(Arc::clone(change)));
        out.push(Segment::Soa(to));
        out.push(Segment::Added(Arc::clone(change)));
    }
    out.push(Segment::Soa(now));
    out
}

/// The messages of one transfer, built one at a time, each signed.
pub struct Stream {
    zone: Arc<ZoneXfr>,
    id: u16,
    question: Question<WireName>,
    signer: ServerSequence<Arc<Key>>,
    segments: Vec<Segment>,
    /// Next segment and record in it.
    at: (usize, usize),
    first: bool,
}

/// A transfer that cannot be encoded (a record that does not fit a
/// message, which validation keeps from happening).
#[derive(Debug, thiserror::Error)]
#[error("transfer of {0} failed: {1}")]
pub struct StreamError(String, String);

impl Stream {
    /// Records in the whole reply.
    pub fn records(&self) -> usize {
        self.segments.iter().map(Segment::len).sum()
    }

    fn record(&self, segment: &Segment, i: usize) -> Result<(WireName, u32, Data), String> {
        let zone = &self.zone;
        Ok(match segment {
            Segment::Soa(v) => (
                zone.apex.clone(),
                zone.zone.default_ttl,
                zone.soa(*v).map_err(|e| e.to_string())?,
            ),
            Segment::Records(r) => (r[i].owner.clone(), r[i].ttl, r[i].data.clone()),
            Segment::Removed(c) => (
                c.removed[i].owner.clone(),
                c.removed[i].ttl,
                c.removed[i].data.clone(),
            ),
            Segment::Added(c) => (
                c.added[i].owner.clone(),
                c.added[i].ttl,
                c.added[i].data.clone(),
            ),
        })
    }

    /// The next message, `None` after the last.
    pub fn next_message(&mut self) -> Option<Result<Vec<u8>, StreamError>> {
        if self.at.0 >= self.segments.len() {
            return None;
        }
        Some(
            self.build()
                .map_err(|e| StreamError(self.zone.zone.apex.to_string(), e)),
        )
    }

    fn build(&mut self) -> Result<Vec<u8>, String> {
        let mut builder = MessageBuilder::from_target(TreeCompressor::new(Vec::with_capacity(
            MESSAGE_SOFT_LIMIT + 1024,
        )))
        .map_err(|e| e.to_string())?;
        // A message never passes 65,535 bytes (its TCP length prefix) with
        // the TSIG record: a record that would go past starts the next one.
        builder.set_push_limit(gslb_shared::wire::MAX_MESSAGE - TSIG_ROOM);
        let h = builder.header_mut();
        h.set_id(self.id);
        h.set_qr(true);
        h.set_aa(true);
        h.set_opcode(Opcode::QUERY);
        h.set_rcode(Rcode::NOERROR);
        let mut question = builder.question();
        // RFC 5936 2.2: the question in the first message; later ones may
        // leave it out.
        if self.first {
            question.push(&self.question).map_err(|e| e.to_string())?;
            self.first = false;
        }
        let mut answer = question.answer();
        let mut count = 0usize;
        while self.at.0 < self.segments.len() {
            let (s, i) = self.at;
            let segment = &self.segments[s];
            if i >= segment.len() {
                self.at = (s + 1, 0);
                continue;
            }
            if answer.as_slice().len() >= MESSAGE_SOFT_LIMIT {
                break;
            }
            let (owner, ttl, data) = self.record(segment, i)?;
            match answer.push(Record::new(owner, Class::IN, Ttl::from_secs(ttl), data)) {
                Ok(()) => count += 1,
                // Full: this record opens the next message.
                Err(_) if count > 0 => break,
                Err(e) => return Err(format!("a record does not fit a message: {e}")),
            }
            self.at = (s, i + 1);
        }
        let mut additional = answer.additional();
        additional.as_builder_mut().clear_push_limit();
        self.signer
            .answer(&mut additional, domain::rdata::tsig::Time48::now())
            .map_err(|e| format!("the TSIG record does not fit: {e}"))?;
        Ok(additional.finish().into_target())
    }
}

/// The name of the zone a transfer is for (for logs).
pub fn zone_name(stream: &Stream) -> String {
    stream.zone.zone.apex.to_string()
}
