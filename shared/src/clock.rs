//! The one wall-clock helper every binary uses: milliseconds since the Unix
//! epoch (pure code takes time as an argument; only IO shells call this).

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch now (0 before 1970).
pub fn now_ms() -> u64 {
    ms_of(SystemTime::now())
}

/// Seconds since the Unix epoch now (signature times, key ages).
pub fn now_secs() -> u64 {
    now_ms() / 1000
}

/// Milliseconds since the Unix epoch of `time` (0 before 1970).
pub fn ms_of(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
