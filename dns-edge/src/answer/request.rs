//! Reading a query: what is asked, with which EDNS options, or why it gets
//! an error (or no reply at all). Parsing is NLnet Labs' `domain`, in place
//! on the received bytes; nothing here allocates.

use std::net::IpAddr;

use domain::base::iana::{Class, Opcode, Rtype};
use domain::base::name::ToLabelIter;
use domain::base::opt::{ClientSubnet, Opt};
use domain::base::{Message, Name, ParsedName};

/// Longest wire name (RFC 1035).
pub const MAX_WIRE_NAME: usize = 255;
/// Room for a canonical name plus the type and flags a cached answer is
/// keyed by.
pub const KEY_ROOM: usize = MAX_WIRE_NAME + 3;

/// The EDNS part of a query.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Edns {
    /// The requester's UDP payload size.
    pub udp_size: u16,
    /// EDNS version asked for.
    pub version: u8,
    /// The DO bit.
    pub dnssec_ok: bool,
    /// The client subnet option, if sent.
    pub subnet: Option<ClientSubnet>,
    /// The query asked for the server's identifier (RFC 5001 NSID).
    pub nsid: bool,
}

/// A query we can answer.
#[derive(Debug)]
pub struct Query<'a> {
    /// The parsed message.
    pub message: &'a Message<[u8]>,
    /// The query name as sent (case included).
    pub qname: ParsedName<&'a [u8]>,
    /// The query name as one flat slice (a compressed query name is
    /// FORMERR): cheaper to compress answer owners against, and what makes
    /// an answer reusable for the next query of the name.
    pub flat_qname: Name<&'a [u8]>,
    /// Asked type.
    pub qtype: Rtype,
    /// Asked class.
    pub qclass: Class,
    /// EDNS, when the query had an OPT record.
    pub edns: Option<Edns>,
}

impl Query<'_> {
    /// The question section as received: name (case as sent), type, class.
    /// Always present for a parsed query; `None` only if that ever broke.
    pub fn question_bytes(&self) -> Option<&[u8]> {
        let end = 12 + self.flat_qname.as_slice().len() + 4;
        self.message.as_slice().get(12..end)
    }
}

/// What to do with a received message.
#[derive(Debug)]
pub enum Parsed<'a> {
    /// Answer it.
    Query(Query<'a>),
    /// Reply with this error; the question is copied when it parses.
    Error {
        /// The message, for its id, opcode and question.
        message: &'a Message<[u8]>,
        /// FORMERR or NOTIMP.
        rcode: domain::base::iana::Rcode,
    },
    /// Never reply: too short for a header, or a response (QR set).
    Drop,
}

/// Classify a received message.
pub fn parse(bytes: &[u8]) -> Parsed<'_> {
    let Ok(message) = Message::from_slice(bytes) else {
        return Parsed::Drop;
    };
    let header = message.header();
    // A response is never answered: that is how reflection loops start.
    if header.qr() {
        return Parsed::Drop;
    }
    let formerr = Parsed::Error {
        message,
        rcode: domain::base::iana::Rcode::FORMERR,
    };
    if header.opcode() != Opcode::QUERY {
        return Parsed::Error {
            message,
            rcode: domain::base::iana::Rcode::NOTIMP,
        };
    }
    let counts = message.header_counts();
    if counts.qdcount() != 1 || counts.ancount() != 0 || counts.nscount() != 0 {
        return formerr;
    }
    let Ok(question) = message.sole_question() else {
        return formerr;
    };
    let Ok(edns) = edns(message) else {
        return formerr;
    };
    let (qtype, qclass) = (question.qtype(), question.qclass());
    let qname = question.into_qname();
    // The only thing before the question is the header, so a compression
    // pointer in the query name points into it: malformed, and echoing the
    // expanded name would make the reply longer than the query.
    if qname.is_compressed() {
        return formerr;
    }
    let Some(flat_qname) = bytes
        .get(12..12 + qname.compose_len() as usize)
        .and_then(|b| Name::from_octets(b).ok())
    else {
        return formerr;
    };
    Parsed::Query(Query {
        message,
        qname,
        flat_qname,
        qtype,
        qclass,
        edns,
    })
}

/// The OPT record, if exactly one well-formed one is present; an error
/// for a malformed additional section, two OPTs, or a malformed ECS.
fn edns(message: &Message<[u8]>) -> Result<Option<Edns>, ()> {
    let section = message.additional().map_err(|_| ())?;
    let mut found = None;
    for record in section {
        let record = record.map_err(|_| ())?;
        if record.rtype() != Rtype::OPT {
            continue;
        }
        if found.is_some() || !record.owner().is_root() {
            return Err(());
        }
        let opt = record.to_record::<Opt<_>>().map_err(|_| ())?.ok_or(())?;
        let opt = domain::base::opt::OptRecord::from(opt);
        let mut subnet = None;
        for option in opt.opt().iter::<ClientSubnet>() {
            let option = option.map_err(|_| ())?;
            // RFC 7871 7.1.2: a query's scope must be 0; one option only.
            if option.scope_prefix_len() != 0 || subnet.is_some() {
                return Err(());
            }
            subnet = Some(option);
        }
        // RFC 7873 5.2.2: a COOKIE option whose length is not 8 (client
        // cookie only) or 16 to 40 (with a server cookie) is FORMERR. A
        // well-formed one is ignored: this server does not issue cookies.
        for cookie in opt.opt().iter::<domain::base::opt::Cookie>() {
            cookie.map_err(|_| ())?;
        }
        let nsid = opt
            .opt()
            .iter::<domain::base::opt::Nsid<_>>()
            .next()
            .is_some();
        found = Some(Edns {
            udp_size: opt.udp_payload_size(),
            version: opt.version(),
            dnssec_ok: opt.dnssec_ok(),
            subnet,
            nsid,
        });
    }
    Ok(found)
}

/// The lower-cased wire form of `name` in `key`, with the offset of each
/// label (the suffix lookups of the closest-encloser search start there).
/// Returns the key length and the label count.
pub fn canonical_key(
    name: &ParsedName<&[u8]>,
    key: &mut [u8; KEY_ROOM],
    offsets: &mut [u8; 128],
) -> Option<(usize, usize)> {
    let mut len = 0;
    let mut labels = 0;
    for label in name.iter() {
        let bytes = label.as_slice();
        if len + 1 + bytes.len() > MAX_WIRE_NAME || labels >= offsets.len() {
            return None;
        }
        offsets[labels] = len as u8;
        labels += 1;
        key[len] = bytes.len() as u8;
        for (dst, src) in key[len + 1..len + 1 + bytes.len()].iter_mut().zip(bytes) {
            *dst = src.to_ascii_lowercase();
        }
        len += 1 + bytes.len();
    }
    // The root label is the last one iterated; it is not an encloser.
    Some((len, labels.saturating_sub(1)))
}

/// The address whose region decides a geo answer, and the ECS source
/// prefix it came with (`None`: the resolver's own address was used).
pub fn client_address(edns: Option<&Edns>, resolver: IpAddr) -> (IpAddr, Option<u8>) {
    match edns.and_then(|e| e.subnet) {
        // A /0 source means "do not tailor to my location" (RFC 7871 7.1.2).
        Some(s) if s.source_prefix_len() > 0 => (s.addr(), Some(s.source_prefix_len())),
        _ => (resolver, None),
    }
}
