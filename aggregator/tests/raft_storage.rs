//! openraft's storage conformance suite against our redb log store and
//! state machine, each run on fresh directories; plus what the suite does
//! not cover: commands reach the catalog with the log index as version,
//! state survives a reopen, and a snapshot carries the catalog to another
//! node's state machine.
#![allow(missing_docs, clippy::unwrap_used, clippy::result_large_err)]

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use gslb_aggregator::core::catalog::{CatalogState, Object, Op};
use gslb_aggregator::core::sessions::{SessionRecord, SessionWrite};
use gslb_aggregator::core::store::Store;
use gslb_aggregator::replication::raft::{
    Command, LogStore, StateMachine, StorageError, TypeConfig,
};
use gslb_shared::{Pool, PoolId};
use openraft::storage::{RaftSnapshotBuilder, RaftStateMachine};
use openraft::testing::{StoreBuilder, Suite};
use openraft::{CommittedLeaderId, Entry, EntryPayload, LogId};

/// Removes its directory when the suite is done with a store.
struct Dir(PathBuf);

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn fresh_dir(name: &str) -> PathBuf {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("gslb-raft-{name}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

struct Builder;

impl StoreBuilder<TypeConfig, LogStore, StateMachine, Dir> for Builder {
    async fn build(&self) -> Result<(Dir, LogStore, StateMachine), StorageError> {
        let dir = fresh_dir("suite");
        let log = LogStore::open(&dir.join("log"))?;
        let sm = StateMachine::open(&dir.join("state"))?;
        Ok((Dir(dir), log, sm))
    }
}

#[test]
fn the_redb_storage_passes_the_openraft_conformance_suite() {
    Suite::test_all(Builder).unwrap();
}

/// A command creating one pool (validated by the catalog, as the leader
/// would before proposing it).
fn create_pool(state: &mut CatalogState, name: &str) -> Command {
    let change = state
        .apply(Op::Create(Object::Pool(Pool::new(PoolId(0), name))))
        .unwrap();
    Command::catalog(state, vec![change])
}

fn entry(index: u64, command: Command) -> Entry<TypeConfig> {
    Entry {
        log_id: LogId::new(CommittedLeaderId::new(1, 1), index),
        payload: EntryPayload::Normal(command),
    }
}

/// Build a snapshot of `from` and install it on `to`.
async fn move_snapshot(from: &mut StateMachine, to: &mut StateMachine) {
    let snapshot = from
        .get_snapshot_builder()
        .await
        .build_snapshot()
        .await
        .unwrap();
    to.install_snapshot(&snapshot.meta, snapshot.snapshot)
        .await
        .unwrap();
}

#[tokio::test]
async fn commands_apply_with_the_log_index_as_version_and_survive_reopen_and_snapshot() {
    let dir = Dir(fresh_dir("apply"));
    {
        let mut sm = StateMachine::open(&dir.0.join("a")).unwrap();
        let mut state = CatalogState::default();
        let (one, two) = (
            create_pool(&mut state, "one"),
            create_pool(&mut state, "two"),
        );
        let applied = sm.apply([entry(7, one), entry(8, two)]).await.unwrap();
        assert_eq!(applied.iter().map(|a| a.index).collect::<Vec<_>>(), [7, 8]);
    }
    // Reopened: the catalog and the applied id are still there.
    let mut sm = StateMachine::open(&dir.0.join("a")).unwrap();
    let (applied, _) = sm.applied_state().await.unwrap();
    assert_eq!(applied.map(|l| l.index), Some(8));
    let loaded = sm.store().load().unwrap();
    assert_eq!(loaded.state.version, 8, "the version is the log index");
    assert_eq!(loaded.state.catalog.pools.len(), 2);

    // A snapshot installed on another node gives it the same state.
    let mut other = StateMachine::open(&dir.0.join("b")).unwrap();
    let stale = create_pool(&mut CatalogState::default(), "stale");
    other.apply([entry(1, stale)]).await.unwrap();
    move_snapshot(&mut sm, &mut other).await;
    let theirs = other.store().load().unwrap();
    assert_eq!(theirs.state, loaded.state);
    let (applied, _) = other.applied_state().await.unwrap();
    assert_eq!(applied.map(|l| l.index), Some(8));
    let current = other.get_current_snapshot().await.unwrap().unwrap();
    assert_eq!(current.meta.last_log_id.map(|l| l.index), Some(8));
}

fn sessions(write: SessionWrite) -> Command {
    Command {
        sessions: Some(write),
        ..Command::default()
    }
}

fn session(token: &str, at: u64) -> SessionRecord {
    SessionRecord {
        token: token.into(),
        created_ms: at,
        used_ms: at,
    }
}

#[tokio::test]
async fn ui_sessions_apply_in_order_survive_reopen_and_travel_in_snapshots() {
    let dir = Dir(fresh_dir("sessions"));
    {
        let mut sm = StateMachine::open(&dir.0.join("a")).unwrap();
        let open = SessionWrite {
            open: vec![
                ("a".into(), session("t1", 10)),
                ("b".into(), session("t2", 20)),
            ],
            ..SessionWrite::default()
        };
        // A touch never brings back a session closed before it.
        let later = SessionWrite {
            touch: vec![("a".into(), 50), ("gone".into(), 60)],
            close: vec!["b".into()],
            ..SessionWrite::default()
        };
        sm.apply([entry(1, sessions(open)), entry(2, sessions(later))])
            .await
            .unwrap();
    }
    let mut sm = StateMachine::open(&dir.0.join("a")).unwrap();
    let mut want = session("t1", 10);
    want.used_ms = 50;
    assert_eq!(
        sm.store().sessions().unwrap(),
        [("a".to_owned(), want.clone())]
    );
    assert_eq!(sm.store().session("b").unwrap(), None);
    assert_eq!(sm.store().session_count().unwrap(), 1);

    let mut other = StateMachine::open(&dir.0.join("b")).unwrap();
    let stale = SessionWrite {
        open: vec![("stale".into(), session("t3", 1))],
        ..SessionWrite::default()
    };
    other.apply([entry(1, sessions(stale))]).await.unwrap();
    move_snapshot(&mut sm, &mut other).await;
    assert_eq!(other.store().sessions().unwrap(), [("a".to_owned(), want)]);
}
