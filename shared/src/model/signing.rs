//! A zone's DNSSEC settings and keys (issue 20). The keys are the server's:
//! the leader makes them when signing is turned on, a zone write never
//! changes them, and views never show their private halves.

use serde::{Deserialize, Serialize};

use super::Secret;

/// `Display` and `FromStr` for an enum by its text forms (the ones serde,
/// the wire and gslbctl use); a bad text lists the good ones.
macro_rules! text_forms {
    ($ty:ty { $($variant:ident => $text:literal),+ $(,)? }) => {
        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(match self {
                    $(Self::$variant => $text),+
                })
            }
        }

        impl std::str::FromStr for $ty {
            type Err = String;

            fn from_str(text: &str) -> Result<Self, String> {
                match text {
                    $($text => Ok(Self::$variant),)+
                    other => Err(format!(
                        "must be {}, not {other:?}",
                        [$($text),+].join(" or ")
                    )),
                }
            }
        }
    };
}

text_forms!(SigningAlgorithm {
    EcdsaP256Sha256 => "ecdsap256sha256",
    Ed25519 => "ed25519",
});
text_forms!(KeyScheme { Csk => "csk", KskZsk => "ksk-zsk" });
text_forms!(KeyRole { Csk => "csk", Ksk => "ksk", Zsk => "zsk" });
text_forms!(KeyState {
    Pending => "pending",
    Published => "published",
    Active => "active",
    Retired => "retired",
});

/// The algorithms zones are signed with.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, utoipa::ToSchema,
)]
pub enum SigningAlgorithm {
    /// ECDSA P-256 with SHA-256 (13): the default.
    #[default]
    #[serde(rename = "ecdsap256sha256")]
    EcdsaP256Sha256,
    /// Ed25519 (15).
    #[serde(rename = "ed25519")]
    Ed25519,
}

impl SigningAlgorithm {
    /// The IANA number.
    pub fn number(self) -> u8 {
        match self {
            SigningAlgorithm::EcdsaP256Sha256 => 13,
            SigningAlgorithm::Ed25519 => 15,
        }
    }
}

/// How a zone's keys are divided.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum KeyScheme {
    /// One combined signing key (CSK) signs everything: the default.
    #[default]
    Csk,
    /// A key-signing key signs the DNSKEY set, a zone-signing key the rest.
    KskZsk,
}

/// What a key does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "kebab-case")]
pub enum KeyRole {
    /// Combined: signs every set (DNSKEY flags 257).
    Csk,
    /// Key-signing: signs the DNSKEY set (flags 257).
    Ksk,
    /// Zone-signing: signs every other set (flags 256).
    Zsk,
}

impl KeyRole {
    /// The DNSKEY flags of a key with this role.
    pub fn flags(self) -> u16 {
        match self {
            KeyRole::Csk | KeyRole::Ksk => 257,
            KeyRole::Zsk => 256,
        }
    }

    /// Whether it signs the DNSKEY, CDS and CDNSKEY sets.
    pub fn signs_keys(self) -> bool {
        matches!(self, KeyRole::Csk | KeyRole::Ksk)
    }

    /// Whether it signs the other sets.
    pub fn signs_zone(self) -> bool {
        matches!(self, KeyRole::Csk | KeyRole::Zsk)
    }
}

/// Where a key is in its life (see `crate::rollover`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize, utoipa::ToSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum KeyState {
    /// Made for a rollover of a key-signing key: only its DS is shown, for
    /// the parent; not in the zone yet.
    Pending,
    /// In the DNSKEY set; signs nothing but (a key-signing key) the key sets.
    Published,
    /// In the DNSKEY set and signing.
    #[default]
    Active,
    /// Replaced: still in the DNSKEY set while signatures made with it may
    /// be cached, signing nothing.
    Retired,
}

impl KeyState {
    /// Whether the key is in the zone's DNSKEY set.
    pub fn in_dnskey(self) -> bool {
        !matches!(self, KeyState::Pending)
    }
}

/// One signing key of a zone.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct SigningKey {
    /// What it signs.
    pub role: KeyRole,
    /// The public key, as in the DNSKEY record (base64 in views).
    pub public_key: Secret,
    /// The private key in BIND's private-key format; empty in every view.
    #[serde(default, skip_serializing_if = "Secret::is_empty")]
    pub private_key: Secret,
    /// When the leader made it (seconds since the Unix epoch).
    pub created: u64,
    /// Where it is in its life.
    #[serde(default)]
    pub state: KeyState,
    /// When it entered that state (0: when it was made).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub since: u64,
    /// When the operator said its DS is at the parent (a pending key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ds_seen: Option<u64>,
}

impl SigningKey {
    /// A new active key (made at `created`).
    pub fn new(role: KeyRole, public_key: Secret, private_key: Secret, created: u64) -> Self {
        Self {
            role,
            public_key,
            private_key,
            created,
            state: KeyState::Active,
            since: 0,
            ds_seen: None,
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Default signature validity: 14 days.
pub const DEFAULT_SIGNATURE_VALIDITY: u32 = 14 * 86_400;
/// Default backdating of a signature's inception: one hour (clock skew).
pub const DEFAULT_INCEPTION_OFFSET: u32 = 3_600;
/// Default time for a change to reach every edge and secondary: 5 minutes.
pub const DEFAULT_PROPAGATION_DELAY: u32 = 300;
/// Default TTL of the DS set at the parent: one day.
pub const DEFAULT_PARENT_DS_TTL: u32 = 86_400;

fn default_delay() -> u32 {
    DEFAULT_PROPAGATION_DELAY
}

fn default_ds_ttl() -> u32 {
    DEFAULT_PARENT_DS_TTL
}

fn default_validity() -> u32 {
    DEFAULT_SIGNATURE_VALIDITY
}

fn default_offset() -> u32 {
    DEFAULT_INCEPTION_OFFSET
}

/// A zone's DNSSEC settings: present when the zone is signed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ZoneSigning {
    /// Signing algorithm.
    #[serde(default)]
    pub algorithm: SigningAlgorithm,
    /// One combined key, or a KSK/ZSK split.
    #[serde(default)]
    pub scheme: KeyScheme,
    /// How long a signature is valid from its inception, seconds.
    #[serde(default = "default_validity")]
    pub signature_validity: u32,
    /// How far a signature's inception lies before its making, seconds.
    #[serde(default = "default_offset")]
    pub inception_offset: u32,
    /// What a rollover step waits on top of the TTLs it waits out: the
    /// time a change takes to reach every server, seconds.
    #[serde(default = "default_delay")]
    pub propagation_delay: u32,
    /// The TTL of the zone's DS set at the parent, seconds.
    #[serde(default = "default_ds_ttl")]
    pub parent_ds_ttl: u32,
    /// Roll the ZSK over automatically this many seconds after it started
    /// signing; 0: only on demand (`gslbctl dnssec rollover`).
    #[serde(default)]
    pub zsk_lifetime: u32,
    /// The first step of turning signing off: the edges keep signing and
    /// publish CDS/CDNSKEY "delete" records (RFC 8078) so the parent can
    /// drop the DS. Removing `dnssec` is refused until this was stored.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unsign: bool,
    /// The keys, made by the server (left empty in a write).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keys: Vec<SigningKey>,
}

impl Default for ZoneSigning {
    fn default() -> Self {
        Self {
            algorithm: SigningAlgorithm::default(),
            scheme: KeyScheme::default(),
            signature_validity: DEFAULT_SIGNATURE_VALIDITY,
            inception_offset: DEFAULT_INCEPTION_OFFSET,
            propagation_delay: DEFAULT_PROPAGATION_DELAY,
            parent_ds_ttl: DEFAULT_PARENT_DS_TTL,
            zsk_lifetime: 0,
            unsign: false,
            keys: Vec::new(),
        }
    }
}

impl ZoneSigning {
    /// The settings as views show them: private keys left out.
    pub fn redacted(&self) -> Self {
        Self {
            keys: (self.keys.iter())
                .map(|k| SigningKey {
                    private_key: Secret::default(),
                    ..k.clone()
                })
                .collect(),
            ..self.clone()
        }
    }

    /// The roles a new key set of this scheme has.
    pub fn roles(&self) -> &'static [KeyRole] {
        match self.scheme {
            KeyScheme::Csk => &[KeyRole::Csk],
            KeyScheme::KskZsk => &[KeyRole::Ksk, KeyRole::Zsk],
        }
    }
}
