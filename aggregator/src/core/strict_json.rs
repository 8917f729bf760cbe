//! Strict JSON for request bodies and documents: a duplicate key in any
//! object is an error (serde_json keeps the last silently), and so is
//! anything after the value. The result is a [`Value`] to decode from.

use std::fmt;

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

struct Strict(Value);

impl<'de> serde::Deserialize<'de> for Strict {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        serde_json::Number::from_f64(v)
            .map(Value::Number)
            .ok_or_else(|| E::custom(format!("{v} is not a finite number")))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(StrictVisitor)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(Strict(v)) = seq.next_element()? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let Strict(value) = map.next_value()?;
            if out.contains_key(&key) {
                return Err(de::Error::custom(format!("duplicate key {key:?}")));
            }
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

/// Parse `text` as one JSON value with no duplicate keys and nothing after
/// it; the error says what is wrong (serde's position in the text).
pub fn parse(text: &[u8]) -> Result<Value, String> {
    let mut de = serde_json::Deserializer::from_slice(text);
    let Strict(value) = serde::Deserialize::deserialize(&mut de).map_err(|e| e.to_string())?;
    de.end().map_err(|e| e.to_string())?;
    Ok(value)
}

/// A TOML document as JSON, refusing what JSON cannot carry (`nan`,
/// `inf`) with the path where it is, instead of turning it into `null`.
pub fn from_toml(text: &str) -> Result<Value, String> {
    let doc: toml::Value = toml::from_str(text).map_err(|e| e.to_string())?;
    to_json(doc, "")
}

fn to_json(v: toml::Value, at: &str) -> Result<Value, String> {
    Ok(match v {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::from(i),
        toml::Value::Float(f) => serde_json::Number::from_f64(f)
            .map(Value::Number)
            .ok_or_else(|| format!("{}: {f} is not a finite number", path(at)))?,
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(a) => Value::Array(
            a.into_iter()
                .enumerate()
                .map(|(i, v)| to_json(v, &format!("{at}[{i}]")))
                .collect::<Result<_, _>>()?,
        ),
        toml::Value::Table(t) => Value::Object(
            t.into_iter()
                .map(|(k, v)| {
                    let here = if at.is_empty() {
                        k.clone()
                    } else {
                        format!("{at}.{k}")
                    };
                    to_json(v, &here).map(|v| (k, v))
                })
                .collect::<Result<_, _>>()?,
        ),
    })
}

fn path(at: &str) -> &str {
    if at.is_empty() { "document" } else { at }
}

#[cfg(test)]
mod tests {
    #[test]
    fn duplicates_trailing_text_and_nan_are_refused() {
        assert!(super::parse(br#"{"a": 1, "b": {"c": 2}}"#).is_ok());
        let dup = super::parse(br#"{"a": 1, "a": 2}"#).unwrap_err();
        assert!(dup.contains("duplicate key \"a\""), "{dup}");
        let nested = super::parse(br#"{"x": [{"k": 1, "k": 1}]}"#).unwrap_err();
        assert!(nested.contains("duplicate key"), "{nested}");
        let trailing = super::parse(br#"{"a": 1} garbage"#).unwrap_err();
        assert!(trailing.contains("trailing characters"), "{trailing}");
        let nan = super::from_toml("[[pool]]\nprotectThreshold = nan\n").unwrap_err();
        assert_eq!(nan, "pool[0].protectThreshold: NaN is not a finite number");
    }
}
