//! Key rollovers of signed zones, as a pure state machine: the keys and a
//! time in, the keys after the next due step out. The aggregator that
//! decides (a single node or the leader) runs it each second and writes
//! each step as a replicated zone change, so a new leader continues where
//! the old one stopped.
//!
//! A key goes Pending (only its DS is shown, for the parent) → Published
//! (in the DNSKEY set) → Active (signs) → Retired (still in the DNSKEY
//! set, signs nothing) → removed. Which steps a rollover takes:
//!
//! - **ZSK, pre-publication** (RFC 6781 4.1.1.1): the new key is published;
//!   once the DNSKEY set's TTL and the propagation delay have passed it
//!   signs and the old key retires; once the zone's largest TTL and the
//!   delay have passed the old key goes.
//! - **KSK, double DS** (RFC 6781 4.1.2): the new key is pending and its DS
//!   shown; the operator publishes it at the parent and says so
//!   (`ds-seen`); once the parent's DS TTL and the delay have passed the
//!   new key replaces the old one in the DNSKEY set, and the operator
//!   removes the old DS.
//! - **CSK**: double DS first, then, because a CSK also signs the data,
//!   the ZSK's pre-publication: pending → (DS seen, DS TTL) → published →
//!   (DNSKEY TTL) → active, the old key retired → (largest TTL) removed.

use crate::model::{KeyRole, KeyState, SigningKey, Zone, ZoneSigning};

/// The TTLs a zone's steps wait for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timings {
    /// TTL of the DNSKEY set (the zone's default TTL).
    pub dnskey_ttl: u32,
    /// The largest TTL of any set the zone signs (its negative TTL too).
    pub max_ttl: u32,
}

impl Timings {
    /// The timings of `zone` whose record sets' largest TTL is `largest`.
    pub fn of(zone: &Zone, largest: u32) -> Timings {
        Timings {
            dnskey_ttl: zone.default_ttl,
            max_ttl: largest.max(zone.default_ttl).max(zone.soa.negative_ttl),
        }
    }
}

/// What the rollover under way waits for next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// No rollover is running.
    Idle,
    /// The operator must publish the new DS and say so (`ds-seen`).
    DsSeen {
        /// The new key's tag is not known here: its index in the keys.
        key: usize,
    },
    /// The next step is due at this time (seconds since the Unix epoch).
    At {
        /// When.
        at: u64,
        /// What happens then.
        step: &'static str,
    },
}

/// The key of a rollover under way, if any: every key but the active ones.
pub fn running(s: &ZoneSigning) -> Option<usize> {
    s.keys.iter().position(|k| k.state != KeyState::Active)
}

/// Start a rollover of the active key with `role`: `new` (a key of that
/// role) joins, pending for a key-signing key, published for a ZSK.
pub fn start(
    s: &ZoneSigning,
    role: KeyRole,
    mut new: SigningKey,
    now: u64,
) -> Result<Vec<SigningKey>, String> {
    if s.unsign {
        return Err("the zone is being unsigned; no rollover starts".into());
    }
    if let Some(i) = running(s) {
        let k = &s.keys[i];
        return Err(format!(
            "a rollover is running (the {} key made at {} is {}); wait for it to end",
            k.role, k.created, k.state
        ));
    }
    if !s.roles().contains(&role) {
        let roles: Vec<String> = s.roles().iter().map(ToString::to_string).collect();
        return Err(format!(
            "the zone's scheme has no {role} key (it has {})",
            roles.join(", ")
        ));
    }
    new.role = role;
    new.state = if role == KeyRole::Zsk {
        KeyState::Published
    } else {
        KeyState::Pending
    };
    new.since = now;
    new.ds_seen = None;
    let mut keys = s.keys.clone();
    keys.push(new);
    Ok(keys)
}

/// The operator saw the new DS at the parent: its wait starts now.
pub fn ds_seen(s: &ZoneSigning, now: u64) -> Result<Vec<SigningKey>, String> {
    let Some(i) = (s.keys.iter()).position(|k| k.state == KeyState::Pending && k.ds_seen.is_none())
    else {
        return Err("no new key waits for its DS (start a KSK or CSK rollover first)".into());
    };
    let mut keys = s.keys.clone();
    keys[i].ds_seen = Some(now);
    Ok(keys)
}

/// When `k`'s next step is due, and what it is; `None` while it waits for
/// the operator or has no step of its own.
fn due(s: &ZoneSigning, t: Timings, k: &SigningKey) -> Option<(u64, &'static str)> {
    let delay = u64::from(s.propagation_delay);
    match (k.role, k.state) {
        (KeyRole::Zsk, KeyState::Published) => Some((
            k.since + u64::from(t.dnskey_ttl) + delay,
            "the new ZSK signs",
        )),
        (KeyRole::Ksk, KeyState::Pending) => k.ds_seen.map(|seen| {
            (
                seen + u64::from(s.parent_ds_ttl) + delay,
                "the new KSK replaces the old one",
            )
        }),
        (KeyRole::Csk, KeyState::Pending) => k.ds_seen.map(|seen| {
            (
                seen + u64::from(s.parent_ds_ttl) + delay,
                "the new CSK is published",
            )
        }),
        (KeyRole::Csk, KeyState::Published) => Some((
            k.since + u64::from(t.dnskey_ttl) + delay,
            "the new CSK signs",
        )),
        (_, KeyState::Retired) => Some((
            k.since + u64::from(t.max_ttl.max(t.dnskey_ttl)) + delay,
            "the old key is removed",
        )),
        _ => None,
    }
}

/// What the rollover under way waits for.
pub fn next(s: &ZoneSigning, t: Timings) -> Next {
    let Some(i) = running(s) else {
        return Next::Idle;
    };
    match due(s, t, &s.keys[i]) {
        Some((at, step)) => Next::At { at, step },
        None => Next::DsSeen { key: i },
    }
}

/// The keys after the step due at `now`, if one is.
pub fn step(s: &ZoneSigning, t: Timings, now: u64) -> Option<Vec<SigningKey>> {
    let i = running(s)?;
    let (at, _) = due(s, t, &s.keys[i])?;
    if now < at {
        return None;
    }
    let mut keys = s.keys.clone();
    let role = keys[i].role;
    let old = keys
        .iter()
        .position(|k| k.role == role && k.state == KeyState::Active);
    match (role, keys[i].state) {
        (_, KeyState::Retired) => {
            keys.remove(i);
        }
        (KeyRole::Csk, KeyState::Pending) => {
            keys[i].state = KeyState::Published;
            keys[i].since = now;
        }
        (KeyRole::Ksk, KeyState::Pending) => {
            // Double DS: the parent holds both, so the new key can take
            // the old one's place in one step.
            keys[i].state = KeyState::Active;
            keys[i].since = now;
            if let Some(o) = old {
                keys.remove(o);
            }
        }
        _ => {
            keys[i].state = KeyState::Active;
            keys[i].since = now;
            if let Some(o) = old {
                keys[o].state = KeyState::Retired;
                keys[o].since = now;
            }
        }
    }
    Some(keys)
}

/// The role whose scheduled rollover is due at `now`: a ZSK active for
/// `zskLifetime` seconds (0: only on demand), when none is running.
pub fn scheduled(s: &ZoneSigning, now: u64) -> Option<KeyRole> {
    if s.zsk_lifetime == 0 || s.unsign || running(s).is_some() {
        return None;
    }
    s.keys
        .iter()
        .find(|k| k.role == KeyRole::Zsk && k.state == KeyState::Active)
        .filter(|k| now >= k.since.max(k.created) + u64::from(s.zsk_lifetime))
        .map(|k| k.role)
}
