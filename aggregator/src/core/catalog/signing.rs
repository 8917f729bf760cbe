//! DNSSEC keys in zone writes: the leader makes them where writes enter
//! (so every replica stores the same keys), and a zone write never changes
//! the keys a zone has, nor turns signing off in one step.

use gslb_shared::{KeyRole, SigningAlgorithm, SigningKey, Zone, ZoneId};

use super::{CatalogError, Object, Op, invalid};

/// Makes a signing key (the API's, over the system's random source: the
/// core itself reads no randomness).
pub type KeyMaker = fn(SigningAlgorithm, KeyRole) -> Option<SigningKey>;

/// Give every zone write that turns signing on (settings without keys) a
/// key of each role its scheme has, from `generate`. An update of a zone
/// that already has keys keeps those instead (see [`keep`]).
pub fn fill_keys(
    ops: &mut [Op],
    mut generate: impl FnMut(SigningAlgorithm, KeyRole) -> Option<SigningKey>,
) {
    for op in ops {
        match op.inner_mut() {
            Op::Create(Object::Zone(z)) | Op::Update(Object::Zone(z)) => {
                if let Some(s) = &mut z.dnssec
                    && s.keys.is_empty()
                {
                    // A failure leaves the keys short: validation refuses the write.
                    s.keys = (s.roles().iter())
                        .filter_map(|&role| generate(s.algorithm, role))
                        .collect();
                }
            }
            // A patch that sends signing settings without keys gets them
            // too; the core keeps the zone's own if it is signed already.
            Op::Patch {
                target: super::ObjectRef::Zone(_),
                fields,
            } => {
                if let Some(serde_json::Value::Object(dnssec)) = fields.get_mut("dnssec")
                    && dnssec
                        .get("keys")
                        .is_none_or(|k| k.as_array().is_none_or(Vec::is_empty))
                    && let Ok(s) = gslb_shared::defaults::decode::<gslb_shared::ZoneSigning>(
                        "dnssec",
                        serde_json::Value::Object(dnssec.clone()),
                    )
                {
                    let keys: Vec<SigningKey> = (s.roles().iter())
                        .filter_map(|&role| generate(s.algorithm, role))
                        .collect();
                    dnssec.insert(
                        "keys".into(),
                        serde_json::to_value(keys).unwrap_or_default(),
                    );
                }
            }
            _ => {}
        }
    }
}

/// The update of `old` to `new`, with the keys `old` has: a write cannot
/// replace keys (views never show the private halves), change the
/// algorithm or scheme of a signed zone (that is a rollover), or turn
/// signing off before the unsigning step was stored.
pub(super) fn keep(old: &Zone, new: &mut Zone) -> Result<(), CatalogError> {
    match (&old.dnssec, &mut new.dnssec) {
        (Some(before), Some(after)) => {
            if after.algorithm != before.algorithm {
                return Err(invalid(
                    "dnssec.algorithm",
                    format!(
                        "the zone is signed with {}; changing the algorithm is an algorithm \
                         rollover, which is not supported: sign a new zone",
                        before.algorithm
                    ),
                ));
            }
            if after.scheme != before.scheme {
                return Err(invalid(
                    "dnssec.scheme",
                    "the zone's keys are made; the scheme cannot change while it is signed",
                ));
            }
            after.keys = before.keys.clone();
            Ok(())
        }
        (Some(before), None) if !before.unsign => Err(invalid(
            "dnssec",
            "turning signing off takes two steps: first set dnssec.unsign (the edges publish \
             CDS/CDNSKEY delete records), have the DS removed at the parent and wait out its \
             TTL, then remove dnssec",
        )),
        _ => Ok(()),
    }
}

/// A signed zone is stored with its keys: none means the server could not
/// make them (its random source failed).
pub(super) fn has_keys(z: &Zone) -> Result<(), CatalogError> {
    match &z.dnssec {
        Some(s) if s.keys.is_empty() => Err(invalid(
            "dnssec.keys",
            "the server could not make the zone's keys; try again",
        )),
        _ => Ok(()),
    }
}

/// `stored` with its keys replaced by `keys`, if they are still `from`.
pub(super) fn rekeyed(
    stored: Option<&Zone>,
    id: ZoneId,
    from: &[SigningKey],
    keys: Vec<SigningKey>,
) -> Result<Zone, CatalogError> {
    let Some(stored) = stored else {
        return Err(CatalogError::NotFound(super::ObjectRef::Zone(id)));
    };
    let mut z = stored.clone();
    let Some(s) = &mut z.dnssec else {
        return Err(invalid("dnssec", format!("zone {} is not signed", z.apex)));
    };
    if s.keys != from {
        return Err(invalid(
            "dnssec.keys",
            "the keys changed since this step was computed; try again",
        ));
    }
    s.keys = keys;
    Ok(z)
}
