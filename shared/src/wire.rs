//! The DNS wire form of model data, through NLnet Labs' `domain`: the edge
//! encodes answers from it and validation measures record sets with it, so
//! what the API accepts is exactly what an edge can send.

use domain::base::CharStr;
use domain::base::iana::{
    Class, DigestAlgorithm, Rtype, SecurityAlgorithm, SshfpAlgorithm, SshfpType,
    TlsaCertificateUsage, TlsaMatchingType, TlsaSelector,
};
use domain::base::message_builder::{MessageBuilder, StaticCompressor};
use domain::base::rdata::UnknownRecordData;
use domain::base::{Name, Question, Record, Ttl};
use domain::rdata::caa::{CaaFlags, CaaTag};
use domain::rdata::{
    A, Aaaa, Caa, Cname, Ds, Mx, Naptr, Ns, Ptr, Srv, Sshfp, Tlsa, Txt, ZoneRecordData,
};

use crate::model::{DnsName, Rdata, RecordType, ServiceBinding};

mod decode;
mod query;
pub mod zone_data;
pub use decode::rdata;
pub use query::{query_type, response_code};

/// Record data as the encoder pushes it.
pub type Data = ZoneRecordData<Vec<u8>, WireName>;
/// An absolute domain name in wire form.
pub type WireName = Name<Vec<u8>>;

/// Largest DNS message (one TCP message, RFC 1035 4.2.2).
pub const MAX_MESSAGE: usize = 65_535;
/// Room an answer keeps for the OPT record: 11 bytes, plus an echoed
/// client subnet option (4 + 4 + 16 address bytes at most).
pub const OPT_ROOM: usize = 11 + 24;

/// Why model data has no wire form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct WireError(pub String);

/// The canonical wire form of a model name (model names are lower-case).
pub fn wire_key(name: &DnsName) -> Vec<u8> {
    let mut out = Vec::with_capacity(name.as_str().len() + 2);
    for label in name.as_str().split('.') {
        out.push(label.len() as u8);
        out.extend_from_slice(label.as_bytes());
    }
    out.push(0);
    out
}

/// A model name as a wire name.
pub fn wire_name(name: &DnsName) -> Result<WireName, WireError> {
    Name::from_octets(wire_key(name)).map_err(|e| WireError(format!("{name}: {e}")))
}

/// The type code of a record type.
pub fn rtype(t: RecordType) -> Rtype {
    Rtype::from_int(t.code())
}

/// Hex text as bytes (white space between digits allowed, as zone files
/// split long data), or why it is not hex.
pub fn hex_bytes(text: &str) -> Result<Vec<u8>, WireError> {
    let digits: String = text.chars().filter(|c| !c.is_ascii_whitespace()).collect();
    hex::decode(&digits).map_err(|e| WireError(e.to_string().to_lowercase()))
}

fn char_str(field: &str, text: &str) -> Result<CharStr<Vec<u8>>, WireError> {
    CharStr::from_octets(text.as_bytes().to_vec())
        .map_err(|_| WireError(format!("{field} is at most 255 bytes")))
}

/// One record's data in wire form.
pub fn data(rdata: &Rdata) -> Result<Data, WireError> {
    let bad = |e: &dyn std::fmt::Display| WireError(e.to_string());
    Ok(match rdata {
        Rdata::A(a) => ZoneRecordData::A(A::new(*a)),
        Rdata::Aaaa(a) => ZoneRecordData::Aaaa(Aaaa::new(*a)),
        Rdata::Cname(n) => ZoneRecordData::Cname(Cname::new(wire_name(n)?)),
        Rdata::Ns(n) => ZoneRecordData::Ns(Ns::new(wire_name(n)?)),
        Rdata::Mx {
            preference,
            exchange,
        } => ZoneRecordData::Mx(Mx::new(*preference, wire_name(exchange)?)),
        Rdata::Txt(strings) => {
            let mut raw = Vec::new();
            for s in strings {
                let bytes = s.as_bytes();
                let len = u8::try_from(bytes.len())
                    .map_err(|_| WireError("a TXT string is at most 255 bytes".into()))?;
                raw.push(len);
                raw.extend_from_slice(bytes);
            }
            let size = raw.len();
            ZoneRecordData::Txt(Txt::from_octets(raw).map_err(|e| {
                WireError(format!(
                    "TXT data of {size} bytes does not fit a record: {e}"
                ))
            })?)
        }
        Rdata::Srv {
            priority,
            weight,
            port,
            target,
        } => ZoneRecordData::Srv(Srv::new(*priority, *weight, *port, wire_name(target)?)),
        Rdata::Caa { flags, tag, value } => {
            let tag = CaaTag::from_octets(tag.as_bytes().to_vec()).map_err(|e| bad(&e))?;
            ZoneRecordData::Caa(Caa::new(
                CaaFlags::new(*flags),
                tag,
                value.as_bytes().to_vec(),
            ))
        }
        Rdata::Ptr(n) => ZoneRecordData::Ptr(Ptr::new(wire_name(n)?)),
        Rdata::Naptr {
            order,
            preference,
            flags,
            services,
            regexp,
            replacement,
        } => ZoneRecordData::Naptr(Naptr::new(
            *order,
            *preference,
            char_str("flags", flags)?,
            char_str("services", services)?,
            char_str("regexp", regexp)?,
            match replacement {
                Some(n) => wire_name(n)?,
                None => Name::root_vec(),
            },
        )),
        Rdata::Tlsa {
            usage,
            selector,
            matching_type,
            data,
        } => ZoneRecordData::Tlsa(
            Tlsa::try_new(
                TlsaCertificateUsage::from_int(*usage),
                TlsaSelector::from_int(*selector),
                TlsaMatchingType::from_int(*matching_type),
                hex_bytes(data)?,
            )
            .map_err(|e| bad(&e))?,
        ),
        Rdata::Sshfp {
            algorithm,
            fingerprint_type,
            fingerprint,
        } => ZoneRecordData::Sshfp(
            Sshfp::try_new(
                SshfpAlgorithm::from_int(*algorithm),
                SshfpType::from_int(*fingerprint_type),
                hex_bytes(fingerprint)?,
            )
            .map_err(|e| bad(&e))?,
        ),
        Rdata::Ds {
            key_tag,
            algorithm,
            digest_type,
            digest,
        } => ZoneRecordData::Ds(
            Ds::new(
                *key_tag,
                SecurityAlgorithm::from_int(*algorithm),
                DigestAlgorithm::from_int(*digest_type),
                hex_bytes(digest)?,
            )
            .map_err(|e| bad(&e))?,
        ),
        Rdata::Svcb(b) => service_binding(RecordType::Svcb, b)?,
        Rdata::Https(b) => service_binding(RecordType::Https, b)?,
        Rdata::Generic { rtype, data } => ZoneRecordData::Unknown(
            UnknownRecordData::from_octets(Rtype::from_int(*rtype), hex_bytes(data)?)
                .map_err(|e| bad(&e))?,
        ),
    })
}

/// The wire data of an SVCB or HTTPS record, read from its presentation
/// form by `domain`'s zone file scanner: the parameters' syntax and rules
/// are RFC 9460's as `domain` implements them, not ours.
fn service_binding(rtype: RecordType, b: &ServiceBinding) -> Result<Data, WireError> {
    use domain::base::name::FlattenInto;
    use domain::zonefile::inplace::{Entry, Zonefile};
    // One line, one record: nothing may end it early or start another.
    if let Some(c) = b.params.chars().find(|c| c.is_control() || *c == ';') {
        return Err(WireError(format!(
            "params: {c:?} is not allowed (one line of key=value pairs)"
        )));
    }
    let target = b
        .target
        .as_ref()
        .map_or(".".to_owned(), |n| format!("{n}."));
    let line = format!(". 0 IN {rtype} {} {target} {}\n", b.priority, b.params);
    let mut zone = Zonefile::new();
    zone.extend_from_slice(line.as_bytes());
    let params = |e: &dyn std::fmt::Display| WireError(format!("params: {e}"));
    let record = match zone.next_entry().map_err(|e| params(&e))? {
        Some(Entry::Record(r)) => r,
        _ => return Err(params(&"not an SVCB parameter list")),
    };
    if !matches!(zone.next_entry(), Ok(None)) {
        return Err(params(&"not one parameter list"));
    }
    // Copying into owned octets cannot fail.
    Ok(record.into_data().flatten_into())
}

/// The size of the message that answers a query for `owner` with the whole
/// set `rdata` (header, question, every record, owners compressed as the
/// edge compresses them), or an error when it does not fit one DNS message
/// with room for the OPT record: such a set could never be sent, not even
/// over TCP.
pub fn answer_size(owner: &DnsName, rtype: RecordType, rdata: &[Data]) -> Result<usize, WireError> {
    let too_big = || {
        WireError(format!(
            "the record set does not fit one DNS message ({MAX_MESSAGE} bytes over TCP, \
             {OPT_ROOM} of them kept for EDNS)"
        ))
    };
    let name = wire_name(owner)?;
    let Ok(mut builder) = MessageBuilder::from_target(StaticCompressor::new(Vec::new()));
    builder.set_push_limit(MAX_MESSAGE - OPT_ROOM);
    let mut question = builder.question();
    question
        .push(Question::new(&name, self::rtype(rtype), Class::IN))
        .map_err(|_| too_big())?;
    let mut answer = question.answer();
    for d in rdata {
        answer
            .push(Record::new(&name, Class::IN, Ttl::from_secs(0), d))
            .map_err(|_| too_big())?;
    }
    Ok(answer.finish().as_slice().len())
}
