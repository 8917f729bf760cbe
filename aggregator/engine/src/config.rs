//! Engine tuning, validated once into a value the engine can trust.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// Location-quarantine thresholds (DESIGN.md "Health engine" 7).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct QuarantineConfig {
    /// Turn quarantine on or off.
    pub enabled: bool,
    /// Length of one evaluation round.
    #[serde(with = "gslb_shared::duration")]
    pub round: Duration,
    /// A location needs at least this many member-cycles in a round for a
    /// verdict (fewer carry over to the next round).
    pub min_samples: u32,
    /// A location failing at least this fraction of its checks is suspect…
    pub location_fail: f64,
    /// …when the other fresh locations fail at most this fraction of the same.
    pub others_fail_max: f64,
    /// Clean rounds needed to release a quarantined location.
    pub clean_rounds: u32,
}

impl Default for QuarantineConfig {
    fn default() -> Self {
        Self {
            enabled: true,
            round: Duration::from_secs(10),
            min_samples: 5,
            location_fail: 0.5,
            others_fail_max: 0.1,
            clean_rounds: 3,
        }
    }
}

/// Engine settings.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct EngineConfig {
    /// Extra time after `interval + timeout` before a cycle is closed with
    /// whatever arrived (covers transport delay).
    #[serde(with = "gslb_shared::duration")]
    pub cycle_grace: Duration,
    /// Startup gate length; `None` derives it from the checks (two intervals
    /// plus timeout and grace of the slowest check).
    #[serde(default, with = "optional_duration")]
    pub startup_window: Option<Duration>,
    /// Location quarantine.
    pub quarantine: QuarantineConfig,
}

impl Default for EngineConfig {
    fn default() -> Self {
        Self {
            cycle_grace: Duration::from_millis(500),
            startup_window: None,
            quarantine: QuarantineConfig::default(),
        }
    }
}

/// A rejected engine setting.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("engine.{field}: {rule}")]
pub struct EngineConfigError {
    /// The setting.
    pub field: &'static str,
    /// The rule it broke.
    pub rule: &'static str,
}

impl EngineConfig {
    /// Check every setting.
    pub fn validate(self) -> Result<Self, EngineConfigError> {
        let err = |field, rule| Err(EngineConfigError { field, rule });
        if self.cycle_grace > Duration::from_secs(60) {
            return err("cycleGrace", "must be at most 60s");
        }
        let q = &self.quarantine;
        if q.round < Duration::from_secs(1) || q.round > Duration::from_secs(3600) {
            return err("quarantine.round", "must be between 1s and 1h");
        }
        if q.min_samples == 0 {
            return err("quarantine.minSamples", "must be at least 1");
        }
        if !(q.location_fail > 0.0 && q.location_fail <= 1.0) {
            return err(
                "quarantine.locationFail",
                "must be greater than 0 and at most 1",
            );
        }
        if !(q.others_fail_max >= 0.0 && q.others_fail_max < q.location_fail) {
            return err(
                "quarantine.othersFailMax",
                "must be at least 0 and less than locationFail",
            );
        }
        if q.clean_rounds == 0 {
            return err("quarantine.cleanRounds", "must be at least 1");
        }
        Ok(self)
    }
}

mod optional_duration {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(value: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(d) => gslb_shared::duration::serialize(d, s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
        let text: Option<String> = Option::deserialize(d)?;
        text.map(|t| humantime::parse_duration(&t).map_err(serde::de::Error::custom))
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_validate_and_bad_values_name_the_setting() {
        EngineConfig::default().validate().unwrap();
        let mut c = EngineConfig::default();
        c.quarantine.others_fail_max = 0.7;
        assert_eq!(c.validate().unwrap_err().field, "quarantine.othersFailMax");
        let mut c = EngineConfig::default();
        c.quarantine.clean_rounds = 0;
        assert_eq!(
            c.validate().unwrap_err().to_string(),
            "engine.quarantine.cleanRounds: must be at least 1"
        );
    }
}
