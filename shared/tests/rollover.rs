//! Key rollovers as a pure state machine: the steps of each kind in order,
//! at their times and no earlier; refusals; and, for any sequence of
//! commands and clock steps, the invariants a validating resolver needs.
#![allow(clippy::unwrap_used)]

use gslb_shared::rollover::{self, Next, Timings};
use gslb_shared::*;
use proptest::prelude::*;

const T: Timings = Timings {
    dnskey_ttl: 300,
    max_ttl: 600,
};

fn key(role: KeyRole, n: u8) -> SigningKey {
    SigningKey::new(role, Secret(vec![n; 4]), Secret(vec![n; 8]), 1_000)
}

fn settings(scheme: KeyScheme) -> ZoneSigning {
    let mut s = ZoneSigning {
        scheme,
        propagation_delay: 60,
        parent_ds_ttl: 3_600,
        ..ZoneSigning::default()
    };
    s.keys = (s.roles().iter().zip(1u8..))
        .map(|(&r, n)| key(r, n))
        .collect();
    s
}

fn states(s: &ZoneSigning) -> Vec<(KeyRole, KeyState, u8)> {
    s.keys
        .iter()
        .map(|k| (k.role, k.state, k.public_key.0[0]))
        .collect()
}

/// Step at every second from `from` to `to`; the times steps happened.
fn run(s: &mut ZoneSigning, from: u64, to: u64) -> Vec<u64> {
    let mut at = Vec::new();
    for now in from..=to {
        if let Some(keys) = rollover::step(s, T, now) {
            s.keys = keys;
            at.push(now);
        }
    }
    at
}

#[test]
fn a_zsk_is_published_then_signs_then_the_old_one_goes() {
    let mut s = settings(KeyScheme::KskZsk);
    s.keys = rollover::start(&s, KeyRole::Zsk, key(KeyRole::Zsk, 10), 10_000).unwrap();
    assert_eq!(
        rollover::next(&s, T),
        Next::At {
            at: 10_360,
            step: "the new ZSK signs"
        }
    );
    assert_eq!(run(&mut s, 10_000, 20_000), [10_360, 11_020]);
    use KeyRole::*;
    use KeyState::*;
    assert_eq!(states(&s), [(Ksk, Active, 1), (Zsk, Active, 10)]);
    assert_eq!(rollover::next(&s, T), Next::Idle);
}

#[test]
fn a_ksk_waits_for_its_ds_then_replaces_the_old_one() {
    let mut s = settings(KeyScheme::KskZsk);
    s.keys = rollover::start(&s, KeyRole::Ksk, key(KeyRole::Ksk, 10), 10_000).unwrap();
    assert!(matches!(rollover::next(&s, T), Next::DsSeen { .. }));
    assert!(
        run(&mut s, 10_000, 50_000).is_empty(),
        "nothing before ds-seen"
    );
    s.keys = rollover::ds_seen(&s, 50_000).unwrap();
    assert!(rollover::ds_seen(&s, 50_001).is_err(), "seen once");
    assert_eq!(run(&mut s, 50_000, 60_000), [53_660]);
    use KeyRole::*;
    use KeyState::*;
    assert_eq!(states(&s), [(Zsk, Active, 2), (Ksk, Active, 10)]);
}

#[test]
fn a_csk_takes_the_double_ds_then_the_pre_publication_steps() {
    let mut s = settings(KeyScheme::Csk);
    s.keys = rollover::start(&s, KeyRole::Csk, key(KeyRole::Csk, 10), 10_000).unwrap();
    s.keys = rollover::ds_seen(&s, 20_000).unwrap();
    // Published at DS seen + DS TTL + delay; signs a DNSKEY TTL + delay
    // later; the old key goes a largest TTL + delay after that.
    assert_eq!(run(&mut s, 20_000, 30_000), [23_660, 24_020, 24_680]);
    use KeyRole::*;
    use KeyState::*;
    assert_eq!(states(&s), [(Csk, Active, 10)]);
}

#[test]
fn a_rollover_while_one_runs_and_a_role_the_scheme_lacks_are_refused() {
    let s = settings(KeyScheme::KskZsk);
    let mut busy = s.clone();
    busy.keys = rollover::start(&s, KeyRole::Zsk, key(KeyRole::Zsk, 2), 1).unwrap();
    let err = rollover::start(&busy, KeyRole::Ksk, key(KeyRole::Ksk, 3), 2).unwrap_err();
    assert!(err.contains("a rollover is running"), "{err}");
    let err = rollover::start(&s, KeyRole::Csk, key(KeyRole::Csk, 3), 2).unwrap_err();
    assert!(err.contains("no csk key"), "{err}");
    let err = rollover::ds_seen(&s, 2).unwrap_err();
    assert!(err.contains("no new key waits"), "{err}");
}

#[test]
fn a_zsk_lifetime_schedules_a_rollover() {
    let mut s = settings(KeyScheme::KskZsk);
    s.zsk_lifetime = 86_400;
    assert_eq!(rollover::scheduled(&s, 1_000 + 86_399), None);
    assert_eq!(rollover::scheduled(&s, 1_000 + 86_400), Some(KeyRole::Zsk));
    s.keys = rollover::start(&s, KeyRole::Zsk, key(KeyRole::Zsk, 2), 90_000).unwrap();
    assert_eq!(rollover::scheduled(&s, 200_000), None, "one at a time");
    run(&mut s, 90_000, 100_000);
    // The new key's lifetime counts from when it started signing.
    assert_eq!(rollover::scheduled(&s, 90_360 + 86_399), None);
    assert_eq!(rollover::scheduled(&s, 90_360 + 86_400), Some(KeyRole::Zsk));
}

#[derive(Debug, Clone)]
enum Cmd {
    Start(KeyRole),
    DsSeen,
    Wait(u16),
}

fn cmd() -> impl Strategy<Value = Cmd> {
    prop_oneof![
        prop::sample::select(vec![KeyRole::Csk, KeyRole::Ksk, KeyRole::Zsk]).prop_map(Cmd::Start),
        Just(Cmd::DsSeen),
        (1..5_000u16).prop_map(Cmd::Wait),
    ]
}

proptest! {
    /// Whatever operators do and however time passes: one active key per
    /// role, at most one other; a key that signs data was in the DNSKEY set
    /// for its TTL and the delay first (or was there from the start); a key
    /// leaves the DNSKEY set only after the largest TTL and the delay since
    /// it last signed data, or (a KSK) only once its successor's DS was
    /// seen a DS TTL and the delay before.
    #[test]
    fn rollovers_keep_every_answer_verifiable(
        scheme in prop::sample::select(vec![KeyScheme::Csk, KeyScheme::KskZsk]),
        cmds in prop::collection::vec(cmd(), 1..40),
    ) {
        let mut s = settings(scheme);
        let mut now = 10_000u64;
        let mut n = 10u8;
        // When each key (by its first byte) entered the DNSKEY set, and
        // when it stopped signing data.
        let mut published: std::collections::HashMap<u8, u64> = [(1u8, 0u64), (2, 0)].into();
        let mut retired: std::collections::HashMap<u8, u64> = Default::default();
        for c in cmds {
            match c {
                Cmd::Start(role) => {
                    if let Ok(keys) = rollover::start(&s, role, key(role, n), now) {
                        s.keys = keys;
                        if s.keys.last().is_some_and(|k| k.state.in_dnskey()) {
                            published.insert(n, now);
                        }
                        n += 1;
                    }
                }
                Cmd::DsSeen => {
                    if let Ok(keys) = rollover::ds_seen(&s, now) {
                        s.keys = keys;
                    }
                }
                Cmd::Wait(secs) => {
                    for _ in 0..secs {
                        now += 1;
                        let before = s.keys.clone();
                        let Some(keys) = rollover::step(&s, T, now) else { continue };
                        s.keys = keys;
                        for k in &s.keys {
                            let id = k.public_key.0[0];
                            let old = before.iter().find(|b| b.public_key.0[0] == id);
                            if k.state.in_dnskey() && !old.is_some_and(|o| o.state.in_dnskey()) {
                                published.insert(id, now);
                            }
                            if k.role.signs_zone() && k.state == KeyState::Active
                                && old.is_some_and(|o| o.state != KeyState::Active)
                                && k.role != KeyRole::Ksk
                            {
                                let p = published[&id];
                                prop_assert!(now >= p + 300 + 60, "signed {} s after publication", now - p);
                            }
                            if k.state == KeyState::Retired && old.is_some_and(|o| o.state == KeyState::Active) {
                                retired.insert(id, now);
                            }
                        }
                        for b in &before {
                            let id = b.public_key.0[0];
                            let gone = s.keys.iter().all(|k| k.public_key.0[0] != id);
                            if gone && b.role.signs_zone() {
                                let r = retired[&id];
                                prop_assert!(now >= r + 600 + 60, "removed {} s after retiring", now - r);
                            }
                            if gone && b.role == KeyRole::Ksk {
                                let new = s.keys.iter().find(|k| k.role == KeyRole::Ksk).unwrap();
                                let seen = new.ds_seen.unwrap();
                                prop_assert!(now >= seen + 3_600 + 60, "replaced {} s after ds-seen", now - seen);
                            }
                        }
                    }
                }
            }
            for role in s.roles() {
                let active = s.keys.iter().filter(|k| k.role == *role && k.state == KeyState::Active).count();
                prop_assert_eq!(active, 1);
            }
            prop_assert!(s.keys.iter().filter(|k| k.state != KeyState::Active).count() <= 1);
        }
    }
}
