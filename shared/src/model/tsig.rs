//! TSIG keys (RFC 8945) that secondaries sign zone transfer requests
//! with, and a zone's transfer settings: who may transfer it and whom to
//! NOTIFY.

use std::fmt;
use std::net::{IpAddr, SocketAddr};

use serde::{Deserialize, Serialize};

use super::{DnsName, TsigKeyId};

/// A shared secret for TSIG. `Debug` and `Display` never show it; it is
/// serialized (base64) only where it must travel: the store, the Raft log
/// and the snapshot the edges verify requests with.
#[derive(Clone, PartialEq, Eq, Default)]
pub struct Secret(pub Vec<u8>);

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Secret(<{} bytes, redacted>)", self.0.len())
    }
}

impl Secret {
    /// The base64 text the key is configured with on a secondary.
    pub fn to_base64(&self) -> String {
        domain::utils::base64::encode_string(&self.0)
    }

    /// Read base64 text.
    pub fn from_base64(text: &str) -> Result<Self, String> {
        domain::utils::base64::decode::<Vec<u8>>(text.trim())
            .map(Secret)
            .map_err(|e| format!("is not base64: {e}"))
    }

    /// True for the empty secret views show in place of the real one.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl Serialize for Secret {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&self.to_base64())
    }
}

impl<'de> Deserialize<'de> for Secret {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Secret::from_base64(&text).map_err(serde::de::Error::custom)
    }
}

/// The MAC algorithm of a key. HMAC-SHA256 only: RFC 8945 makes it the
/// one every implementation must support, and the older ones are weak.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, utoipa::ToSchema,
)]
pub enum TsigAlgorithm {
    /// `hmac-sha256`.
    #[default]
    #[serde(rename = "hmac-sha256")]
    HmacSha256,
}

impl fmt::Display for TsigAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("hmac-sha256")
    }
}

/// A TSIG key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TsigKey {
    /// Key id.
    #[serde(default)]
    pub id: TsigKeyId,
    /// The key's name, the same on both ends (`transfer.example.com`).
    pub name: DnsName,
    /// MAC algorithm.
    #[serde(default)]
    pub algorithm: TsigAlgorithm,
    /// The shared secret. Empty on create asks the server to generate one;
    /// every view after creation shows it empty.
    #[serde(default, skip_serializing_if = "Secret::is_empty")]
    pub secret: Secret,
}

impl TsigKey {
    /// The key as views show it: the secret left out.
    pub fn redacted(&self) -> Self {
        Self {
            secret: Secret::default(),
            ..self.clone()
        }
    }
}

/// A secondary allowed to transfer a zone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TransferPeer {
    /// The address its requests come from.
    #[schema(value_type = String)]
    pub address: IpAddr,
    /// The name of the TSIG key its requests must be signed with.
    pub key: DnsName,
}

/// A secondary told of each change with NOTIFY (RFC 1996).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct NotifyTarget {
    /// Where to send it (`192.0.2.1:53`).
    #[schema(value_type = String)]
    pub address: SocketAddr,
    /// The TSIG key to sign it with; unsigned when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<DnsName>,
}

/// Who may transfer a zone, and whom to notify: nobody by default.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Transfer {
    /// Secondaries allowed to request AXFR and IXFR.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allow: Vec<TransferPeer>,
    /// Secondaries sent NOTIFY when the zone changes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notify: Vec<NotifyTarget>,
}

impl Transfer {
    /// True when nobody may transfer the zone and nobody is notified.
    pub fn is_empty(&self) -> bool {
        self.allow.is_empty() && self.notify.is_empty()
    }
}
