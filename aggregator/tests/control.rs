//! The control core with a real redb store: writes are durable and
//! validated, decisions are published and latched, a restart keeps
//! everything and holds decisions behind the startup gate.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;
use std::time::Duration;

use gslb_aggregator::core::catalog::*;
use gslb_aggregator::core::control::{Control, ControlError};
use gslb_aggregator::core::feed::Catchup;
use gslb_aggregator::core::store::RedbStore;
use gslb_engine::{EngineConfig, Input, Output, Timestamp, WarmupEvent};
use gslb_shared::*;

const INTERVAL_MS: u64 = 10_000;

struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn dir(name: &str) -> Dir {
    let d = std::env::temp_dir().join(format!("gslb-control-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    Dir(d)
}

fn open(dir: &Dir, now: Timestamp) -> Control {
    Control::open(
        Box::new(RedbStore::open(&dir.0).unwrap()),
        EngineConfig::default(),
        now,
    )
    .unwrap()
}

fn t(cycle: u64, ms: u64) -> Timestamp {
    Timestamp(cycle * INTERVAL_MS + ms)
}

/// check 1 (http), pool 2 using it, members 3 (threshold 0) and 4 (warm-up 2).
fn configure(c: &mut Control, now: Timestamp) {
    let mut check = Check::new(CheckId(0), "http", Probe::Http(HttpProbe::default()));
    check.interval = Duration::from_millis(INTERVAL_MS);
    let mut pool = Pool::new(PoolId(0), "web");
    pool.check = Some(CheckId(1));
    let m3 = Member::new(
        MemberId(0),
        PoolId(2),
        "a",
        "192.0.2.3".parse().unwrap(),
        80,
    );
    let mut m4 = Member::new(
        MemberId(0),
        PoolId(2),
        "b",
        "192.0.2.4".parse().unwrap(),
        80,
    );
    m4.warmup_threshold = 2;
    c.write(
        vec![
            Op::Create(Object::Check(check)),
            Op::Create(Object::Pool(pool)),
            Op::Create(Object::Member(m3)),
            Op::Create(Object::Member(m4)),
        ],
        now,
    )
    .unwrap();
}

fn pass_cycle(c: &mut Control, location: &LocationId, cycle: u64) {
    cycle_of(c, location, cycle, &[3, 4], &[]);
}

#[test]
fn writes_are_published_to_the_feed_with_their_version() {
    let d = dir("publish");
    let mut c = open(&d, t(1_000, 0));
    configure(&mut c, t(1_000, 0));
    let snapshot = c.feed().current();
    assert_eq!(snapshot.version, c.version());
    assert_eq!(snapshot.catalog.members.len(), 2);
    assert!(
        snapshot.catalog.checks.is_empty(),
        "edges do not get checks"
    );
    assert_eq!(
        snapshot.facts[&MemberId(4)],
        MemberFacts {
            health: Health::Unknown,
            warming: true,
            ramp: None,
        }
    );
    assert!(matches!(c.feed().since(0), Catchup::Full(_)));
}

#[test]
fn a_refused_write_stores_nothing() {
    let d = dir("refused");
    {
        let mut c = open(&d, t(1_000, 0));
        configure(&mut c, t(1_000, 0));
        let version = c.version();
        let bad = Member::new(
            MemberId(0),
            PoolId(77),
            "x",
            "192.0.2.9".parse().unwrap(),
            80,
        );
        let err = c
            .write(vec![Op::Create(Object::Member(bad))], t(1_000, 1))
            .unwrap_err();
        assert!(matches!(err, ControlError::Catalog(_)), "{err}");
        assert_eq!(c.version(), version);
    }
    let c = open(&d, t(1_000, 2));
    assert_eq!(c.catalog().members.len(), 2);
}

#[test]
fn decisions_are_published_logged_and_latched_and_survive_a_restart() {
    let d = dir("restart");
    let fra = LocationId::new("fra1");
    let version;
    {
        let mut c = open(&d, t(1_000, 0));
        configure(&mut c, t(1_000, 0));
        c.step(Input::LocationConnected(&fra), t(1_000, 1)).unwrap();
        let before = c.version();
        pass_cycle(&mut c, &fra, 1_001);
        pass_cycle(&mut c, &fra, 1_002);
        version = c.version();
        assert!(version > before, "decisions bump the version");
        let s = c.feed().current();
        assert_eq!(s.facts[&MemberId(3)], MemberFacts::UP);
        assert_eq!(s.facts[&MemberId(4)], MemberFacts::UP, "warm-up 2/2 passed");
        let log = c.health_log(MemberId(3), 10).unwrap();
        assert!(
            log.iter()
                .any(|e| matches!(e, Output::Transition(t) if t.to == Health::Up)),
            "{log:?}"
        );
        assert!(
            c.health_log(MemberId(4), 10)
                .unwrap()
                .iter()
                .any(|e| matches!(
                    e,
                    Output::Warmup {
                        event: WarmupEvent::Opened,
                        ..
                    }
                ))
        );
    }
    let mut c = open(&d, t(1_100, 0));
    assert_eq!(c.version(), version);
    let s = c.feed().current();
    assert_eq!(
        s.facts[&MemberId(3)],
        MemberFacts::UP,
        "latched health restored"
    );
    assert_eq!(
        s.facts[&MemberId(4)],
        MemberFacts::UP,
        "the warm-up latch survives"
    );
    assert!(
        !c.engine().decisions_enabled(),
        "startup gate closed after a restart"
    );
    // A failing cycle right after the restart changes nothing yet.
    c.step(Input::LocationConnected(&fra), t(1_100, 1)).unwrap();
    let fail: Vec<_> = [3, 4]
        .iter()
        .map(|m| ProbeResult {
            member: MemberId(*m),
            check: CheckId(1),
            cycle: 1_101,
            failure: Some(FailReason::Refused),
            latency_us: 1,
        })
        .collect();
    c.step(
        Input::Results {
            location: &fra,
            results: &fail,
        },
        t(1_101, 2_000),
    )
    .unwrap();
    assert_eq!(c.feed().current().facts[&MemberId(3)], MemberFacts::UP);
}

#[test]
fn manual_health_on_a_checked_member_is_refused() {
    let d = dir("manual");
    let mut c = open(&d, t(1_000, 0));
    configure(&mut c, t(1_000, 0));
    let err = c
        .step(
            Input::ManualHealth {
                member: MemberId(3),
                health: Some(Health::Down),
            },
            t(1_000, 5),
        )
        .unwrap_err();
    assert!(
        matches!(err, ControlError::Engine(_)) && err.to_string().contains("active health check"),
        "{err}"
    );
}

#[test]
fn an_expired_ephemeral_member_is_deleted_everywhere() {
    let d = dir("ephemeral");
    let mut c = open(&d, t(1_000, 0));
    c.write(
        vec![Op::Create(Object::Pool(Pool::new(PoolId(0), "eph")))],
        t(1_000, 0),
    )
    .unwrap();
    let mut m = Member::new(
        MemberId(0),
        PoolId(1),
        "worker",
        "192.0.2.50".parse().unwrap(),
        80,
    );
    m.kind = MemberKind::Ephemeral(EphemeralPolicy::default());
    c.write(vec![Op::Create(Object::Member(m))], t(1_000, 0))
        .unwrap();
    assert_eq!(c.feed().current().facts[&MemberId(2)], MemberFacts::UP);
    c.step(Input::Tick, t(1_000, 16_000)).unwrap();
    assert_eq!(c.feed().current().facts[&MemberId(2)].health, Health::Down);
    c.step(Input::Tick, t(1_000, 31_000)).unwrap();
    assert!(c.catalog().members.is_empty());
    assert!(c.feed().current().catalog.members.is_empty());
    drop(c);
    assert!(
        open(&d, t(1_010, 0)).catalog().members.is_empty(),
        "the deletion is durable"
    );
}

#[test]
fn a_decision_hold_is_durable_idempotent_and_goes_with_its_pool() {
    let d = dir("hold");
    let now = t(100, 0);
    {
        let mut c = open(&d, now);
        configure(&mut c, now);
        let pool = Pool::new(PoolId(0), "spare");
        c.write(vec![Op::Create(Object::Pool(pool))], now).unwrap();
        let spare = *c.catalog().pools.keys().next_back().unwrap();
        let v = c.version();
        c.set_decisions(Some(spare), true, now).unwrap();
        assert_eq!(c.version(), v + 1, "a hold is its own version");
        c.set_decisions(Some(spare), true, t(101, 0)).unwrap();
        assert_eq!(c.version(), v + 1, "pausing what is paused changes nothing");
        assert_eq!(c.hold().pools.get(&spare), Some(&now.0), "keeps its time");
        c.set_decisions(None, true, now).unwrap();
        assert!(matches!(
            c.set_decisions(Some(PoolId(999)), true, now),
            Err(ControlError::Catalog(CatalogError::NotFound(_)))
        ));
        c.write(vec![Op::Delete(ObjectRef::Pool(spare))], now)
            .unwrap();
        assert!(
            c.hold().pools.is_empty(),
            "a deleted pool's hold goes with it"
        );
    }
    let c = open(&d, t(102, 0));
    assert_eq!(c.hold().all_since_ms, Some(now.0), "durable");
    assert!(
        c.hold().pools.is_empty(),
        "the delete's hold change was stored too"
    );
}

#[test]
fn resolutions_of_hostname_members_are_published_durable_and_go_with_their_member() {
    let d = dir("resolved");
    let now = t(1_000, 0);
    let mut c = open(&d, now);
    configure(&mut c, now);
    let host = c
        .write(
            vec![Op::Create(Object::Member(Member::new(
                MemberId(0),
                PoolId(2),
                "cdn",
                "cdn.example.net".parse().unwrap(),
                443,
            )))],
            now,
        )
        .unwrap();
    let Written::Upserted(o) = &host[0].what else {
        unreachable!()
    };
    let ObjectRef::Member(id) = o.reference() else {
        unreachable!()
    };
    let found = Resolved {
        addresses: vec!["192.0.2.10".parse().unwrap()],
        ttl: 30,
    };
    // IP members and unknown ids are dropped; the rest is one version.
    let before = c.version();
    let version = c
        .set_resolved(
            vec![
                (id, Some(found.clone())),
                (MemberId(3), Some(found.clone())),
                (MemberId(999), Some(found.clone())),
            ],
            now,
        )
        .unwrap()
        .unwrap();
    assert_eq!(version, before + 1);
    let Catchup::Deltas(deltas) = c.feed().since(before) else {
        panic!("a delta")
    };
    assert_eq!(deltas[0].resolved, vec![(id, found.clone())]);
    assert_eq!(c.feed().current().resolved.len(), 1);
    // The same again changes nothing.
    assert_eq!(
        c.set_resolved(vec![(id, Some(found.clone()))], now)
            .unwrap(),
        None
    );
    // Addresses edges would refuse never get in: 0.0.0.0 and multicast
    // alone forget the member's addresses.
    let blocked = Resolved {
        addresses: vec!["0.0.0.0".parse().unwrap(), "224.0.0.1".parse().unwrap()],
        ttl: 30,
    };
    assert!(
        c.set_resolved(vec![(id, Some(blocked))], now)
            .unwrap()
            .is_some()
    );
    assert!(c.feed().current().resolved.is_empty());
    c.set_resolved(vec![(id, Some(found.clone()))], now)
        .unwrap();
    // A restart keeps it.
    drop(c);
    let mut c = open(&d, now);
    assert_eq!(c.feed().current().resolved.get(&id), Some(&found));
    // Deleting the member forgets it, on disk too.
    c.write(vec![Op::Delete(ObjectRef::Member(id))], now)
        .unwrap();
    assert!(c.feed().current().resolved.is_empty());
    drop(c);
    let c = open(&d, now);
    assert!(c.feed().current().resolved.is_empty());
}

#[test]
fn round_trip_times_are_published_durable_and_go_with_their_member() {
    let d = dir("rtt");
    let fra = LocationId::new("fra1");
    let want = Rtts::new(vec![LocationRtt {
        location: fra.clone(),
        micros: 100,
    }]);
    let version;
    {
        let mut c = open(&d, t(1_000, 0));
        configure(&mut c, t(1_000, 0));
        c.step(Input::LocationConnected(&fra), t(1_000, 1)).unwrap();
        let before = c.version();
        pass_cycle(&mut c, &fra, 1_001);
        let s = c.feed().current();
        assert_eq!(s.rtt.get(&MemberId(3)), Some(&want));
        assert_eq!(s.rtt.get(&MemberId(4)), Some(&want));
        let Catchup::Deltas(deltas) = c.feed().since(before) else {
            panic!("deltas expected");
        };
        assert!(deltas.iter().any(|d| d.rtt.len() == 2), "{deltas:?}");
        // The same times again publish nothing.
        let after = c.version();
        pass_cycle(&mut c, &fra, 1_002);
        pass_cycle(&mut c, &fra, 1_003);
        assert!(
            c.feed().current().rtt.get(&MemberId(3)) == Some(&want),
            "unchanged"
        );
        let Catchup::Deltas(deltas) = c.feed().since(after) else {
            panic!("deltas expected");
        };
        assert!(deltas.iter().all(|d| d.rtt.is_empty()), "{deltas:?}");
        version = c.version();
    }
    let mut c = open(&d, t(1_100, 0));
    assert_eq!(c.version(), version);
    assert_eq!(
        c.feed().current().rtt.get(&MemberId(3)),
        Some(&want),
        "restored from the store"
    );
    c.write(
        vec![Op::Delete(ObjectRef::Member(MemberId(3)))],
        t(1_100, 1),
    )
    .unwrap();
    assert!(c.feed().current().rtt.get(&MemberId(3)).is_none());
    drop(c);
    let c = open(&d, t(1_200, 0));
    let s = c.feed().current();
    assert!(s.rtt.get(&MemberId(3)).is_none(), "gone from the store");
    assert_eq!(s.rtt.get(&MemberId(4)), Some(&want));
}

#[test]
fn a_follower_publishes_the_times_its_leader_committed() {
    let d = dir("rtt-follower");
    let mut c = open(&d, t(1_000, 0));
    configure(&mut c, t(1_000, 0));
    let mut c = c.into_replica();
    let table = Rtts::new(vec![LocationRtt {
        location: LocationId::new("fra1"),
        micros: 4_200,
    }]);
    let base = c.version();
    let commit = gslb_aggregator::core::store::Commit {
        version: base + 1,
        last_id: c.catalog().members.keys().map(|m| m.0).max().unwrap(),
        rtt: vec![(MemberId(3), Some(table.clone()))],
        ..Default::default()
    };
    c.apply_replicated(base + 1, &commit, t(1_000, 1)).unwrap();
    assert_eq!(c.feed().current().rtt.get(&MemberId(3)), Some(&table));
    let gone = gslb_aggregator::core::store::Commit {
        version: base + 2,
        rtt: vec![(MemberId(3), None)],
        ..commit
    };
    c.apply_replicated(base + 2, &gone, t(1_000, 2)).unwrap();
    assert!(c.feed().current().rtt.is_empty());
    let Catchup::Deltas(deltas) = c.feed().since(base) else {
        panic!("deltas expected");
    };
    assert_eq!(deltas.len(), 2);
    assert_eq!(deltas[1].unmeasured, vec![MemberId(3)]);
}

/// A scoped caller's writes are checked against its scope whether the
/// owner commits them alone or grouped with others' (concurrent writers):
/// in a group, the write outside the scope is refused and recorded, the
/// others commit.
#[test]
fn a_scoped_write_is_refused_alone_and_in_a_group() {
    let d = dir("scoped");
    let now = t(0, 0);
    let mut c = open(&d, now);
    configure(&mut c, now);
    let other = match c
        .write(
            vec![Op::Create(Object::Pool(Pool::new(PoolId(0), "db")))],
            now,
        )
        .unwrap()[0]
        .what
    {
        Written::Upserted(ref o) => o.reference(),
        Written::Deleted(_) => unreachable!(),
    };
    let ObjectRef::Pool(other) = other else {
        unreachable!()
    };
    let scope = std::sync::Arc::new(gslb_aggregator::core::scope::Scope::new(
        "team",
        &[],
        &["web".into()],
    ));
    let by = |scope: Option<std::sync::Arc<_>>| gslb_aggregator::core::audit::Attribution {
        who: "token:team (1)".into(),
        source: String::new(),
        operation: "test".into(),
        scope,
    };
    let member = |pool: PoolId, name: &str, ip: &str| {
        Op::Create(Object::Member(Member::new(
            MemberId(0),
            pool,
            name,
            ip.parse().unwrap(),
            80,
        )))
    };
    // Alone.
    c.attribute(Some(by(Some(scope.clone()))));
    let alone = c.write(vec![member(other, "x", "192.0.2.9")], now);
    c.attribute(None);
    assert!(matches!(alone, Err(ControlError::Scope(_))), "{alone:?}");
    // Grouped: in scope, out of scope, unscoped caller out of the scope.
    let outcomes = c.write_grouped(
        vec![
            (
                member(PoolId(2), "in", "192.0.2.10"),
                Some(by(Some(scope.clone()))),
            ),
            (member(other, "out", "192.0.2.11"), Some(by(Some(scope)))),
            (member(other, "admin", "192.0.2.12"), Some(by(None))),
        ],
        now,
    );
    assert!(outcomes[0].is_ok(), "{:?}", outcomes[0]);
    assert!(
        matches!(&outcomes[1], Err(ControlError::Scope(e)) if e.to_string().starts_with("scope: token \"team\"")),
        "{:?}",
        outcomes[1]
    );
    assert!(outcomes[2].is_ok(), "{:?}", outcomes[2]);
    let names: Vec<String> = (c.catalog().members.values())
        .map(|m| m.name.clone())
        .collect();
    assert!(names.contains(&"in".to_owned()) && names.contains(&"admin".to_owned()));
    assert!(!names.iter().any(|n| n == "out" || n == "x"), "{names:?}");
}

/// One cycle from `location`: members `pass` pass, `fail` fail.
fn cycle_of(c: &mut Control, location: &LocationId, cycle: u64, pass: &[u64], fail: &[u64]) {
    let results: Vec<_> = (pass.iter().map(|m| (m, None)))
        .chain(fail.iter().map(|m| (m, Some(FailReason::Refused))))
        .map(|(m, failure)| ProbeResult {
            member: MemberId(*m),
            check: CheckId(1),
            cycle,
            failure,
            latency_us: 100,
        })
        .collect();
    c.step(
        Input::Results {
            location,
            results: &results,
        },
        t(cycle, 2_000),
    )
    .unwrap();
}

/// The pool events in the outbox, oldest first.
fn pool_events(c: &mut Control) -> Vec<EventKind> {
    c.flush_deferred().unwrap();
    let events = c.view().outbox_events(0, 100).unwrap();
    (events.into_iter())
        .filter(|e| {
            matches!(
                e.subject,
                gslb_aggregator::core::notify::Subject::Pool { .. }
            )
        })
        .map(|e| e.kind)
        .collect()
}

#[test]
fn pool_events_follow_decisions_and_count_a_catalog_change_between_them() {
    let d = dir("pool-events");
    let fra = LocationId::new("fra1");
    let mut c = open(&d, t(1_000, 0));
    configure(&mut c, t(1_000, 0));
    let mut pool = c.catalog().pools[&PoolId(2)].clone();
    pool.protect_threshold = 0.5;
    c.write(vec![Op::Update(Object::Pool(pool))], t(1_000, 0))
        .unwrap();
    c.step(Input::LocationConnected(&fra), t(1_000, 1)).unwrap();
    cycle_of(&mut c, &fra, 1_001, &[3, 4], &[]);
    cycle_of(&mut c, &fra, 1_002, &[3, 4], &[]);
    let s = c.feed().current();
    assert_eq!(
        (s.facts[&MemberId(3)], s.facts[&MemberId(4)]),
        (MemberFacts::UP, MemberFacts::UP)
    );
    let settled = pool_events(&mut c);
    // Both down: 0 of 2 healthy is under the threshold.
    cycle_of(&mut c, &fra, 1_003, &[], &[3, 4]);
    assert_eq!(c.feed().current().facts[&MemberId(4)].health, Health::Down);
    let mut expected = settled.clone();
    expected.push(EventKind::ProtectionOn);
    assert_eq!(pool_events(&mut c), expected);
    // A write takes member 3 away; then 4 comes back: 1 of 1 healthy is
    // over the threshold (a count kept from before the write would still
    // hold 3 and see 1 of 2, still protected).
    c.write(
        vec![Op::Delete(ObjectRef::Member(MemberId(3)))],
        t(1_003, 3_000),
    )
    .unwrap();
    cycle_of(&mut c, &fra, 1_004, &[4], &[]);
    cycle_of(&mut c, &fra, 1_005, &[4], &[]);
    assert_eq!(c.feed().current().facts[&MemberId(4)].health, Health::Up);
    expected.push(EventKind::ProtectionOff);
    assert_eq!(pool_events(&mut c), expected);
}
