//! Humane durations ("10s", "500ms", "1m 30s") for serde, so config files and
//! JSON bodies say what they mean instead of counting milliseconds.

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serializer};

/// Serialize a duration as a humane string such as `"1m 30s"`.
pub fn serialize<S: Serializer>(value: &Duration, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(&humantime::format_duration(*value))
}

/// Parse a humane duration string such as `"10s"` or `"250ms"`.
pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Duration, D::Error> {
    let text = String::deserialize(deserializer)?;
    humantime::parse_duration(&text).map_err(|err| {
        serde::de::Error::custom(format!(
            "invalid duration {text:?}: {err} (write it like \"10s\" or \"500ms\")"
        ))
    })
}

/// [`deserialize`] for a duration that may be left out (`None`).
pub mod optional {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    /// Serialize a duration as a humane string, or nothing as null.
    pub fn serialize<S: Serializer>(
        value: &Option<Duration>,
        serializer: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(d) => super::serialize(d, serializer),
            None => serializer.serialize_none(),
        }
    }

    /// Parse a humane duration string, or nothing.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<Duration>, D::Error> {
        let text: Option<String> = Option::deserialize(deserializer)?;
        text.map(|t| {
            humantime::parse_duration(&t).map_err(|err| {
                serde::de::Error::custom(format!(
                    "invalid duration {t:?}: {err} (write it like \"10s\" or \"500ms\")"
                ))
            })
        })
        .transpose()
    }
}
