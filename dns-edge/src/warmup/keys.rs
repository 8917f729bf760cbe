//! Hot keys as the endpoint writes them and a new edge reads them, and
//! the query each one stands for, asked from the client's subnet. The
//! wire form is the responder's reply key: canonical name, type (u16 BE),
//! flags (bit 0 EDNS, bit 1 DO).

use std::net::{IpAddr, Ipv4Addr};
use std::str::FromStr;

use domain::base::iana::{Class, Rtype};
use domain::base::{MessageBuilder, Name};
use serde::{Deserialize, Serialize};

use super::hot::{HotKey, Subnet, subnet};
use crate::answer::EDNS_UDP_SIZE;

/// One key in text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct KeyText {
    /// Query name, absolute, lower case.
    pub name: String,
    /// Query type (mnemonic or `TYPEn`).
    #[serde(rename = "type")]
    pub rtype: String,
    /// The query had an OPT record.
    pub edns: bool,
    /// And DO set in it.
    #[serde(rename = "do")]
    pub dnssec_ok: bool,
    /// The client's region, when the geo table knew it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub region: Option<String>,
    /// The client's subnet (`192.0.2.0/24`): the ECS source, or the
    /// resolver's /24 or /56. The key is replayed as a query from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subnet: Option<String>,
}

/// What `GET /internal/warmup` answers (seed 001's names, `payloads` and
/// `capturedAt`, are read as aliases of `keys` and `capturedAtMs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Body {
    /// The snapshot version the edge serves.
    pub version: u64,
    /// When the keys were copied, ms since the Unix epoch.
    #[serde(alias = "capturedAt")]
    pub captured_at_ms: u64,
    /// One answered query in this many is sampled.
    pub sample_every: u32,
    /// Most recent first.
    #[serde(alias = "payloads")]
    pub keys: Vec<KeyText>,
}

/// The same body in seed 001's names, for `GET /internal/warmup/payloads`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct SeedBody<'a> {
    /// The snapshot version the edge serves.
    pub version: u64,
    /// When the payloads were copied, ms since the Unix epoch.
    pub captured_at: u64,
    /// One answered query in this many is sampled.
    pub sample_every: u32,
    /// Most recent first.
    pub payloads: &'a [KeyText],
}

impl Body {
    /// This body in seed 001's names.
    pub fn seed(&self) -> SeedBody<'_> {
        SeedBody {
            version: self.version,
            captured_at: self.captured_at_ms,
            sample_every: self.sample_every,
            payloads: &self.keys,
        }
    }
}

/// A hot key in text; `None` for a key that is not one.
pub fn to_text(hot: &HotKey) -> Option<KeyText> {
    let key = &hot.key;
    let n = key.len().checked_sub(3)?;
    let name = Name::from_octets(&key[..n]).ok()?;
    let rtype = Rtype::from_int(u16::from_be_bytes([key[n], key[n + 1]]));
    let flags = key[n + 2];
    Some(KeyText {
        name: format!("{name}."),
        rtype: rtype.to_string(),
        edns: flags & 1 != 0,
        dnssec_ok: flags & 2 != 0,
        region: hot.region.as_deref().map(str::to_owned),
        subnet: hot.subnet.map(|(addr, prefix)| format!("{addr}/{prefix}")),
    })
}

/// The subnet of a key in text: `address/prefix`, the prefix within the
/// family's bits; host bits are cleared.
fn subnet_of(text: &str) -> Result<Subnet, BadKey> {
    let bad = || format!("subnet {text:?}: must be address/prefix (192.0.2.0/24, 2001:db8::/56)");
    let (addr, prefix) = text.split_once('/').ok_or_else(bad)?;
    let addr = IpAddr::from_str(addr).map_err(|_| bad())?;
    let prefix = u8::from_str(prefix).map_err(|_| bad())?;
    let bits = if addr.is_ipv4() { 32 } else { 128 };
    if prefix > bits {
        return Err(format!(
            "subnet {text:?}: the prefix must be at most {bits}"
        ));
    }
    Ok(subnet(addr, prefix))
}

/// Why a key from a peer was not used.
pub type BadKey = String;

/// A key in text made ready to replay.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replayable {
    /// The reply key.
    pub key: Vec<u8>,
    /// The query it stands for.
    pub query: Vec<u8>,
    /// Who asks it: the subnet's address (unspecified without a subnet).
    pub client: IpAddr,
    /// The subnet, as kept.
    pub subnet: Option<Subnet>,
    /// The client's region, as the peer kept it.
    pub region: Option<String>,
}

/// The wire key, the query and the client of a key in text.
pub fn from_text(k: &KeyText) -> Result<Replayable, BadKey> {
    let name = Name::<Vec<u8>>::from_str(&k.name).map_err(|e| format!("name {:?}: {e}", k.name))?;
    let rtype = Rtype::from_str(&k.rtype).map_err(|_| format!("type {:?}: not a type", k.rtype))?;
    if matches!(rtype, Rtype::AXFR | Rtype::IXFR) {
        return Err(format!("type {}: transfers are not replayed", k.rtype));
    }
    let subnet = k.subnet.as_deref().map(subnet_of).transpose()?;
    let mut key: Vec<u8> = name.as_slice().to_ascii_lowercase();
    key.extend_from_slice(&rtype.to_int().to_be_bytes());
    key.push(u8::from(k.edns) | (u8::from(k.edns && k.dnssec_ok) << 1));
    let mut q = MessageBuilder::new_vec().question();
    q.push((&name, rtype, Class::IN))
        .map_err(|e| format!("name {:?}: {e}", k.name))?;
    let query = if k.edns {
        let mut extra = q.additional();
        extra
            .opt(|opt| {
                opt.set_udp_payload_size(EDNS_UDP_SIZE);
                if k.dnssec_ok {
                    opt.set_dnssec_ok(true);
                }
                Ok(())
            })
            .map_err(|e| format!("name {:?}: {e}", k.name))?;
        extra.finish()
    } else {
        q.finish()
    };
    let client = subnet.map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |(a, _)| a);
    Ok(Replayable {
        key,
        query,
        client,
        subnet,
        region: k.region.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_goes_to_text_and_back_and_makes_its_query() {
        let text = KeyText {
            name: "WWW.Example.test.".into(),
            rtype: "AAAA".into(),
            edns: true,
            dnssec_ok: true,
            region: Some("eu".into()),
            subnet: Some("192.0.2.77/24".into()),
        };
        let r = from_text(&text).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            r.client,
            IpAddr::from([192, 0, 2, 0]),
            "asked from the subnet"
        );
        let (key, query) = (r.key, r.query);
        let hot = HotKey {
            key: key.into(),
            region: Some("eu".into()),
            subnet: r.subnet,
        };
        let back = to_text(&hot).unwrap_or_else(|| panic!("no text"));
        assert_eq!(back.subnet.as_deref(), Some("192.0.2.0/24"));
        assert_eq!(back.name, "www.example.test.");
        assert_eq!(
            (back.rtype.as_str(), back.edns, back.dnssec_ok),
            ("AAAA", true, true)
        );
        let m = domain::base::Message::from_octets(query).unwrap_or_else(|e| panic!("{e}"));
        let q = m.first_question().unwrap_or_else(|| panic!("no question"));
        assert_eq!(q.qtype(), Rtype::AAAA);
        assert!(m.opt().is_some_and(|o| o.dnssec_ok()));
        for bad in [("a..b.", "A"), ("x.test.", "NOPE"), ("x.test.", "AXFR")] {
            let k = KeyText {
                name: bad.0.into(),
                rtype: bad.1.into(),
                ..text.clone()
            };
            assert!(from_text(&k).is_err(), "{bad:?}");
        }
        for (bad, rule) in [
            ("192.0.2.0", "address/prefix"),
            ("192.0.2.0/33", "at most 32"),
            ("2001:db8::/129", "at most 128"),
            ("eu/8", "address/prefix"),
        ] {
            let k = KeyText {
                subnet: Some(bad.into()),
                ..text.clone()
            };
            let e = from_text(&k).err().unwrap_or_default();
            assert!(e.contains("subnet") && e.contains(rule), "{bad}: {e}");
        }
    }
}
