//! OpenAPI schemas of the model types that serialize as text by hand
//! (names, addresses, identifiers, secrets, record types): each is a
//! string with what it holds said in its description. The rest derive
//! theirs (`utoipa::ToSchema`) from their serde attributes.

use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{ObjectBuilder, Schema, Type};

use super::{DnsName, LocationId, MemberAddress, RecordType, Region, Secret};

/// A string schema described by `what`.
fn text(what: &str, example: &str) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some(what))
        .examples([serde_json::Value::String(example.to_owned())])
        .into()
}

macro_rules! text_schema {
    ($ty:ty, $what:expr, $example:expr) => {
        impl utoipa::PartialSchema for $ty {
            fn schema() -> RefOr<Schema> {
                text($what, $example)
            }
        }
        impl utoipa::ToSchema for $ty {}
    };
}

text_schema!(
    DnsName,
    "A domain name, absolute (the final dot may be left out), at most 255 bytes, labels of 1 to 63",
    "www.example.com"
);
text_schema!(
    Secret,
    "Bytes in base64; write-only: views show it empty",
    "c2VjcmV0LWJ5dGVzLWluLWJhc2U2NA=="
);
text_schema!(
    MemberAddress,
    "An IPv4 or IPv6 address, or a hostname whose addresses are probed and answered",
    "192.0.2.10"
);
text_schema!(
    RecordType,
    "A record type: A, AAAA, CNAME, TXT, MX, SRV, CAA, NS, PTR, NAPTR, TLSA, SSHFP, DS, SVCB, HTTPS, or TYPEn",
    "A"
);
text_schema!(
    LocationId,
    "A probe location: 1 to 64 letters, digits, '-', '_' or '.'",
    "fra1"
);
text_schema!(
    Region,
    "A region: 1 to 64 letters, digits, '-', '_' or '.'",
    "eu"
);
