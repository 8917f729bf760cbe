//! Identifier newtypes, so a pool id can never be passed where a member id is
//! expected.

use std::fmt;

use serde::{Deserialize, Serialize};

macro_rules! numeric_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize, utoipa::ToSchema)]
        #[serde(transparent)]
        pub struct $name(pub u64);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}", self.0)
            }
        }
    };
}

numeric_id!(
    /// Identifies a zone.
    ZoneId
);
numeric_id!(
    /// Identifies a record set inside a zone.
    RecordSetId
);
numeric_id!(
    /// Identifies a pool.
    PoolId
);
numeric_id!(
    /// Identifies a pool member.
    MemberId
);
numeric_id!(
    /// Identifies a health check.
    CheckId
);
numeric_id!(
    /// Identifies a TSIG key.
    TsigKeyId
);
numeric_id!(
    /// Identifies a notification target.
    NotifierId
);

macro_rules! text_id {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        ///
        /// Shared text: a clone (every result, evidence line and status row
        /// names one) is a reference count, not an allocation.
        #[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(std::sync::Arc<str>);

        impl $name {
            /// Wrap a string (validate it with [`crate::validate`]).
            pub fn new(value: impl Into<String>) -> Self {
                Self(value.into().into())
            }

            /// The text of the identifier.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }

        impl Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(&self.0)
            }
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                String::deserialize(d).map(Self::new)
            }
        }
    };
}

text_id!(
    /// A probe location such as `fra1`.
    LocationId
);
text_id!(
    /// A region such as `eu`; members, agents and clients are placed in one.
    Region
);
