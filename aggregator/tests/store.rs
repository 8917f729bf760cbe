//! The redb store: everything written survives a reopen; a newer schema is
//! refused; the health log is bounded per member.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

use gslb_aggregator::core::catalog::*;
use gslb_aggregator::core::store::*;
use gslb_engine::{Output, Timestamp};
use gslb_shared::*;

struct TempDir(PathBuf);

impl TempDir {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("gslb-store-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn commit_of(
    state: &CatalogState,
    changes: Vec<Change>,
    latched: Vec<(MemberId, Option<Latched>)>,
) -> Commit {
    Commit {
        changes,
        last_id: state.last_id,
        version: state.version,
        latched,
        ..Commit::default()
    }
}

#[test]
fn a_first_start_is_empty_and_everything_written_survives_a_reopen() {
    let dir = TempDir::new("reopen");
    let mut state = CatalogState::default();
    {
        let store = RedbStore::open(&dir.0).unwrap();
        let loaded = store.load().unwrap();
        assert!(loaded.first_start);
        let changes = state
            .apply_all(vec![
                Op::Create(Object::Check(Check::new(
                    CheckId(0),
                    "tcp",
                    Probe::Tcp(StreamProbe::default()),
                ))),
                Op::Create(Object::Pool(Pool::new(PoolId(0), "web"))),
                Op::Create(Object::Member(Member::new(
                    MemberId(0),
                    PoolId(2),
                    "a",
                    "192.0.2.1".parse().unwrap(),
                    80,
                ))),
                Op::Create(Object::Member(Member::new(
                    MemberId(0),
                    PoolId(2),
                    "b",
                    "192.0.2.2".parse().unwrap(),
                    80,
                ))),
                Op::Create(Object::TsigKey(TsigKey {
                    id: TsigKeyId(0),
                    name: DnsName::parse("xfr.example.com").unwrap(),
                    algorithm: TsigAlgorithm::HmacSha256,
                    secret: Secret(vec![9; 32]),
                })),
            ])
            .unwrap();
        let latched = Latched {
            health: Health::Up,
            gate_open: true,
            manual: None,
            ramp: None,
        };
        store
            .commit(&commit_of(
                &state,
                changes,
                vec![(MemberId(3), Some(latched))],
            ))
            .unwrap();
        let delete = state
            .apply(Op::Delete(ObjectRef::Member(MemberId(4))))
            .unwrap();
        store
            .commit(&commit_of(&state, vec![delete], vec![]))
            .unwrap();
    }
    let store = RedbStore::open(&dir.0).unwrap();
    let loaded = store.load().unwrap();
    assert!(!loaded.first_start);
    assert_eq!(loaded.state, state);
    assert_eq!(loaded.state.version, 6);
    assert_eq!(loaded.latched[&MemberId(3)].health, Health::Up);
    let key = loaded
        .state
        .catalog
        .tsig_key(&DnsName::parse("xfr.example.com").unwrap());
    assert_eq!(key.unwrap().secret.0, vec![9; 32], "the secret survives");
    // The store holds TSIG secrets: its database is the owner's alone.
    use std::os::unix::fs::PermissionsExt;
    let meta = std::fs::metadata(dir.0.join(FILE)).unwrap();
    assert_eq!(meta.permissions().mode() & 0o077, 0, "{meta:?}");
}

#[test]
fn deleting_a_member_drops_its_latched_state() {
    let dir = TempDir::new("latched");
    let store = RedbStore::open(&dir.0).unwrap();
    let mut state = CatalogState::default();
    let changes = state
        .apply_all(vec![
            Op::Create(Object::Pool(Pool::new(PoolId(0), "web"))),
            Op::Create(Object::Member(Member::new(
                MemberId(0),
                PoolId(1),
                "a",
                "192.0.2.1".parse().unwrap(),
                80,
            ))),
        ])
        .unwrap();
    let latched = Latched {
        health: Health::Down,
        gate_open: false,
        manual: Some(Health::Down),
        ramp: None,
    };
    store
        .commit(&commit_of(
            &state,
            changes,
            vec![(MemberId(2), Some(latched))],
        ))
        .unwrap();
    let delete = state
        .apply(Op::Delete(ObjectRef::Member(MemberId(2))))
        .unwrap();
    store
        .commit(&commit_of(&state, vec![delete], vec![]))
        .unwrap();
    assert!(store.load().unwrap().latched.is_empty());
}

#[test]
fn health_log_returns_the_newest_entries_oldest_first_and_is_bounded() {
    let dir = TempDir::new("log");
    let store = RedbStore::open(&dir.0).unwrap();
    // An entry per i, told apart by its time.
    let entry = |member: u64, i: u64| LogRecord {
        member: MemberId(member),
        entry: Output::Expired {
            member: MemberId(member),
            at: Timestamp(i),
        },
    };
    let records: Vec<_> = (0..1_050).map(|i| entry(7, i)).collect();
    store.append_log(&records).unwrap();
    store.append_log(&[entry(8, 0)]).unwrap();
    let last = store.health_log(MemberId(7), 3).unwrap();
    let expected: Vec<_> = (1_047..1_050).map(|i| entry(7, i).entry).collect();
    assert_eq!(last, expected);
    assert_eq!(
        store.health_log(MemberId(7), 5_000).unwrap().len(),
        1_000,
        "bounded per member"
    );
    assert_eq!(store.health_log(MemberId(8), 10).unwrap().len(), 1);
    drop(store);
    let store = RedbStore::open(&dir.0).unwrap();
    store.append_log(&[entry(7, 99_999)]).unwrap();
    assert_eq!(
        store.health_log(MemberId(7), 1).unwrap(),
        vec![entry(7, 99_999).entry],
        "sequence continues after reopen"
    );
}

#[test]
fn a_newer_schema_is_refused() {
    let dir = TempDir::new("schema");
    {
        std::fs::create_dir_all(&dir.0).unwrap();
        let db = redb::Database::create(dir.0.join(gslb_aggregator::core::store::FILE)).unwrap();
        let w = db.begin_write().unwrap();
        let meta: redb::TableDefinition<&str, &[u8]> = redb::TableDefinition::new("meta");
        w.open_table(meta)
            .unwrap()
            .insert("schema", (SCHEMA_VERSION + 1).to_be_bytes().as_slice())
            .unwrap();
        w.commit().unwrap();
    }
    let err = RedbStore::open(&dir.0).unwrap_err();
    assert!(
        matches!(err, StoreError::NewerSchema { found } if found == SCHEMA_VERSION + 1),
        "{err}"
    );
}

#[test]
fn a_store_of_an_earlier_format_is_refused_with_the_upgrade_path() {
    let dir = TempDir::new("old-format");
    std::fs::create_dir_all(&dir.0).unwrap();
    for file in ["conf", "db"] {
        std::fs::write(dir.0.join(file), b"sled").unwrap();
    }
    let err = RedbStore::open(&dir.0).unwrap_err();
    assert!(matches!(err, StoreError::OldFormat { .. }), "{err}");
    let text = err.to_string();
    assert!(
        text.contains("gslbctl backup") && text.contains("--restore"),
        "{text}"
    );
    assert!(
        !dir.0.join(gslb_aggregator::core::store::FILE).exists(),
        "nothing is written beside it"
    );
}

#[test]
fn a_directory_held_by_another_store_is_reported_in_use() {
    let dir = TempDir::new("locked");
    let _held = RedbStore::open(&dir.0).unwrap();
    let err = RedbStore::open(&dir.0).unwrap_err();
    assert!(matches!(err, StoreError::InUse { .. }), "{err}");
    assert!(err.to_string().contains("in use by another process"));
}

#[test]
fn a_log_record_in_the_old_text_form_still_decodes() {
    // Raft log entries written before records were typed carry the
    // engine output as JSON text; a node replaying such a log reads them.
    let old = r#"{"member":7,"json":"{\"kind\":\"expired\",\"member\":7,\"at\":42}"}"#;
    let record: LogRecord = serde_json::from_str(old).unwrap();
    let typed = LogRecord {
        member: MemberId(7),
        entry: Output::Expired {
            member: MemberId(7),
            at: Timestamp(42),
        },
    };
    assert_eq!(record, typed);
    let again: LogRecord = serde_json::from_str(&serde_json::to_string(&typed).unwrap()).unwrap();
    assert_eq!(again, typed);
    let bad = r#"{"member":7,"json":"not json"}"#;
    assert!(serde_json::from_str::<LogRecord>(bad).is_err());
}

fn event(
    kind: EventKind,
    subject: gslb_aggregator::core::notify::Subject,
) -> gslb_aggregator::core::notify::Event {
    gslb_aggregator::core::notify::Event {
        seq: 0,
        at_ms: 1_000,
        kind,
        subject,
        detail: String::new(),
    }
}

#[test]
fn the_outbox_numbers_events_keeps_positions_trims_and_survives_a_reopen() {
    use gslb_aggregator::core::notify::{OutboxWrite, Subject};
    let dir = TempDir::new("outbox");
    let member = Subject::Member {
        id: MemberId(5),
        name: "web-1".into(),
        pool: PoolId(2),
        pool_name: "web".into(),
    };
    let edge = Subject::Edge { name: "e1".into() };
    {
        let store = RedbStore::open(&dir.0).unwrap();
        // Events ride on a commit (a decision) and are numbered as applied.
        let commit = Commit {
            version: 1,
            events: vec![
                event(EventKind::MemberDown, member.clone()),
                event(EventKind::MemberUp, member.clone()),
            ],
            ..Commit::default()
        };
        store.commit(&commit).unwrap();
        store
            .write_outbox(&OutboxWrite {
                events: vec![event(EventKind::EdgeStale, edge.clone())],
                cursors: vec![(NotifierId(7), 1)],
                ..OutboxWrite::default()
            })
            .unwrap();
        let outbox = store.outbox().unwrap();
        assert_eq!((outbox.first_seq, outbox.last_seq, outbox.len()), (1, 3, 3));
        assert_eq!(outbox.cursors.get(&NotifierId(7)), Some(&1));
        // Only the watcher's own problems are levels.
        assert_eq!(outbox.watched.iter().collect::<Vec<_>>(), ["edge/e1/stale"]);
        let after: Vec<(u64, EventKind)> = (store.outbox_events(1, 10).unwrap().iter())
            .map(|e| (e.seq, e.kind))
            .collect();
        assert_eq!(after, [(2, EventKind::MemberUp), (3, EventKind::EdgeStale)]);
        store
            .write_outbox(&OutboxWrite {
                trim_through: Some(2),
                forget: vec!["edge/e1/stale".into()],
                ..OutboxWrite::default()
            })
            .unwrap();
    }
    let store = RedbStore::open(&dir.0).unwrap();
    let outbox = store.outbox().unwrap();
    assert_eq!((outbox.first_seq, outbox.last_seq, outbox.len()), (3, 3, 1));
    assert!(outbox.watched.is_empty());
    assert_eq!(store.outbox_events(0, 10).unwrap()[0].seq, 3);
    // The whole outbox comes back with the rest, for a Raft snapshot.
    let loaded = store.load().unwrap();
    assert_eq!(loaded.outbox.events.len(), 1);
    assert_eq!(loaded.outbox.outbox, outbox);
    // Deleting a target forgets its position.
    let state = CatalogState::default();
    let change = Change {
        version: 2,
        what: Written::Deleted(ObjectRef::Notifier(NotifierId(7))),
    };
    store
        .commit(&commit_of(&state, vec![change], vec![]))
        .unwrap();
    assert!(store.outbox().unwrap().cursors.is_empty());
}

#[test]
fn the_audit_log_is_numbered_kept_within_its_count_and_age_and_survives_a_reopen() {
    use gslb_aggregator::core::audit::{Attribution, AuditQuery, AuditRecord};
    let dir = TempDir::new("audit");
    let record = |at_ms: u64, version: u64| {
        AuditRecord::action(
            Attribution::internal("test"),
            at_ms,
            format!("v{version}"),
            Some(version),
        )
    };
    {
        let store = RedbStore::open(&dir.0).unwrap();
        // By count: 3 kept of 5, the oldest trimmed first.
        set_audit_limits(3, u64::MAX);
        for v in 1..=5 {
            store.append_audit(&[record(1_000 + v, v)]).unwrap();
        }
        set_audit_limits(
            gslb_aggregator::core::audit::DEFAULT_KEEP,
            gslb_aggregator::core::audit::DEFAULT_MAX_AGE_MS,
        );
        assert_eq!(store.audit_count().unwrap(), 3);
        let newest = store.audit(&AuditQuery::default()).unwrap();
        let seqs: Vec<u64> = newest.iter().map(|r| r.seq).collect();
        assert_eq!(seqs, [5, 4, 3], "numbered in order, newest first");
        // History reaches back to version 2 only: 1 and 2 were trimmed.
        assert!(!store.audit_after(1).unwrap().1);
        assert!(store.audit_after(2).unwrap().1);
    }
    {
        let store = RedbStore::open(&dir.0).unwrap();
        assert_eq!(store.audit_count().unwrap(), 3, "kept across a reopen");
        // By age, measured from the newest record: 1 s kept.
        set_audit_limits(100, 1_000);
        store.append_audit(&[record(10_000, 6)]).unwrap();
        set_audit_limits(
            gslb_aggregator::core::audit::DEFAULT_KEEP,
            gslb_aggregator::core::audit::DEFAULT_MAX_AGE_MS,
        );
        let left = store.audit(&AuditQuery::default()).unwrap();
        assert_eq!(left.iter().map(|r| r.seq).collect::<Vec<_>>(), [6]);
        assert!(!store.audit_after(4).unwrap().1);
        assert!(store.audit_after(5).unwrap().1);
    }
}
