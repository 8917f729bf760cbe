//! The gslb domain: the model every component shares, its validation, and the
//! pure selection function that turns health facts and a query into an answer.

pub mod assignment;
pub mod backoff;
pub mod clock;
pub mod config;
pub mod cycle;
pub mod defaults;
pub mod destination;
pub mod dnssec;
pub mod duration;
pub mod geo_db;
pub mod guesses;
pub mod model;
pub mod region_table;
pub mod rollover;
pub mod selection;
pub mod status;
pub mod telemetry;
pub mod validate;
pub mod wire;
pub mod zone_keys;

pub use model::*;
