//! Objects written by hand (a REST body, a gslbctl file, a declarative
//! document) are laid over the documented defaults, so only what differs
//! has to be written. One place, so every surface has the same defaults.

use crate::validate::ValidationError;
use crate::*;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// The JSON of an object's documented defaults, per kind. `probe` of a
/// check and the address of a member have no default: they must be given.
pub fn base(kind: Kind) -> Value {
    match kind {
        Kind::Zone => Value::Object(Map::new()),
        Kind::Record => serde_json::json!({ "ttl": DEFAULT_DYNAMIC_TTL }),
        Kind::Pool => to_json(&Pool::new(PoolId(0), "")),
        Kind::Check => without(to_json(&Check::new(CheckId(0), "", Probe::None)), "probe"),
        Kind::Member => {
            let member = Member::new(
                MemberId(0),
                PoolId(0),
                "",
                MemberAddress::Ip(std::net::Ipv4Addr::UNSPECIFIED.into()),
                80,
            );
            without(to_json(&member), "address")
        }
    }
}

fn without(mut value: Value, key: &str) -> Value {
    if let Value::Object(map) = &mut value {
        map.remove(key);
    }
    value
}

/// The kinds of configured object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Zone.
    Zone,
    /// Record set.
    Record,
    /// Pool.
    Pool,
    /// Member.
    Member,
    /// Check.
    Check,
}

/// `base` with `patch`'s top-level fields laid over it and `id` set.
pub fn overlay(base: Value, patch: Map<String, Value>, id: u64) -> Value {
    let mut map = match base {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    map.extend(patch);
    map.insert("id".into(), Value::from(id));
    Value::Object(map)
}

/// Decode a model object, naming the failing field under `at` (empty for
/// the top level). serde's line and column are left out: they point into
/// the overlaid document, not into what was written.
pub fn decode<T: DeserializeOwned>(at: &str, value: Value) -> Result<T, ValidationError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let message = e.inner().to_string();
        let message = message
            .split(" at line ")
            .next()
            .unwrap_or(&message)
            .to_owned();
        let path = e.path().to_string();
        let field = match (at.is_empty(), path == ".") {
            (true, true) => "body".to_owned(),
            (true, false) => path,
            (false, true) => at.to_owned(),
            (false, false) => format!("{at}.{path}"),
        };
        ValidationError::single(field, message)
    })
}

/// The JSON of a model object.
pub fn to_json<T: Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}
