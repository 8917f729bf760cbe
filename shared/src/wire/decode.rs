//! Wire data back to the model: what a zone file's records (read by
//! `domain`) become. The inverse of [`super::data`]: for every model
//! record `r`, `rdata(&data(&r)?)` is `r` again, up to the spelling of
//! hex and names.

use domain::base::Name;
use domain::base::rdata::{ComposeRecordData, RecordData};
use domain::rdata::ZoneRecordData;
use domain::rdata::svcb::SvcbRdata;

use super::{Data, WireError};
use crate::model::{DnsName, Rdata, RecordType, ServiceBinding};

fn name(n: &Name<Vec<u8>>) -> Result<DnsName, WireError> {
    DnsName::parse(&n.to_string()).map_err(|e| WireError(format!("name {n}: {e}")))
}

/// A name that may be the root (`None`).
fn name_or_root(n: &Name<Vec<u8>>) -> Result<Option<DnsName>, WireError> {
    if n.is_root() {
        return Ok(None);
    }
    name(n).map(Some)
}

fn text(what: &str, bytes: &[u8]) -> Result<String, WireError> {
    String::from_utf8(bytes.to_vec())
        .map_err(|_| WireError(format!("{what} is not UTF-8 text, which we store it as")))
}

/// An SVCB or HTTPS record's data, parameters in presentation form.
fn binding<V>(s: &SvcbRdata<V, Vec<u8>, Name<Vec<u8>>>) -> Result<ServiceBinding, WireError> {
    Ok(ServiceBinding {
        priority: s.priority(),
        target: name_or_root(s.target())?,
        params: s.params().to_string(),
    })
}

/// The model form of one record's data. Types without a form of their own
/// become RFC 3597 generic data; the types a record set may not have
/// (SOA, DNSSEC records the edges make, meta types) are refused.
pub fn rdata(data: &Data) -> Result<Rdata, WireError> {
    Ok(match data {
        ZoneRecordData::A(a) => Rdata::A(a.addr()),
        ZoneRecordData::Aaaa(a) => Rdata::Aaaa(a.addr()),
        ZoneRecordData::Cname(c) => Rdata::Cname(name(c.cname())?),
        ZoneRecordData::Ns(n) => Rdata::Ns(name(n.nsdname())?),
        ZoneRecordData::Ptr(p) => Rdata::Ptr(name(p.ptrdname())?),
        ZoneRecordData::Mx(m) => Rdata::Mx {
            preference: m.preference(),
            exchange: name(m.exchange())?,
        },
        ZoneRecordData::Txt(t) => Rdata::Txt(
            t.iter()
                .map(|s| text("a TXT string", s))
                .collect::<Result<_, _>>()?,
        ),
        ZoneRecordData::Srv(s) => Rdata::Srv {
            priority: s.priority(),
            weight: s.weight(),
            port: s.port(),
            target: name(s.target())?,
        },
        ZoneRecordData::Caa(c) => Rdata::Caa {
            flags: c.flags().bits(),
            tag: c.tag().to_string(),
            value: text("a CAA value", c.value())?,
        },
        ZoneRecordData::Naptr(n) => Rdata::Naptr {
            order: n.order(),
            preference: n.preference(),
            flags: text("NAPTR flags", n.flags().as_slice())?,
            services: text("NAPTR services", n.services().as_slice())?,
            regexp: text("a NAPTR regexp", n.regexp().as_slice())?,
            replacement: name_or_root(n.replacement())?,
        },
        ZoneRecordData::Tlsa(t) => Rdata::Tlsa {
            usage: t.usage().to_int(),
            selector: t.selector().to_int(),
            matching_type: t.matching_type().to_int(),
            data: hex::encode(t.data()),
        },
        ZoneRecordData::Sshfp(s) => Rdata::Sshfp {
            algorithm: s.algorithm().to_int(),
            fingerprint_type: s.fingerprint_type().to_int(),
            fingerprint: hex::encode(s.fingerprint()),
        },
        ZoneRecordData::Ds(d) => Rdata::Ds {
            key_tag: d.key_tag(),
            algorithm: d.algorithm().to_int(),
            digest_type: d.digest_type().to_int(),
            digest: hex::encode(d.digest()),
        },
        ZoneRecordData::Svcb(s) => Rdata::Svcb(binding(s)?),
        ZoneRecordData::Https(s) => Rdata::Https(binding(s)?),
        other => {
            let code = other.rtype().to_int();
            if !RecordType::generic_allowed(code) {
                return Err(WireError(format!(
                    "{} records cannot be stored: SOA belongs to the zone, DNSSEC records are made by the edges, and meta types are not data",
                    other.rtype()
                )));
            }
            let mut bytes = Vec::new();
            other
                .compose_rdata(&mut bytes)
                .map_err(|_| WireError("record data too long".into()))?;
            Rdata::Generic {
                rtype: code,
                data: hex::encode(bytes),
            }
        }
    })
}
