//! Group commit of single writes on a cluster's leader: writes that queue
//! while another write's proposal replicates are validated in turn and
//! proposed as one log entry, so concurrent writers share one quorum round
//! instead of waiting for one each. Each is still refused or acknowledged
//! on its own.

use std::sync::mpsc::Sender;

use super::{Control, ControlError, removed, renumber};
use crate::core::catalog::{Change, Op};
use crate::core::store::Commit;
use gslb_engine::Timestamp;

/// One queued write and where its outcome goes.
pub type Queued = (Op, Sender<Result<Change, ControlError>>);

impl Control {
    /// Validate each queued write against the state the ones before it
    /// left, then make the accepted ones durable in one commit. The state
    /// takes them before the commit: on a store failure each accepted write
    /// is reported failed and the state holds changes the store lacks,
    /// which only a store that has the core rebuilt after a failed commit
    /// may allow (a Raft store). Any other store writes them one by one.
    pub fn write_grouped(&mut self, queued: Vec<Queued>, now: Timestamp) {
        if let Err(e) = self.decides() {
            for (_, reply) in queued {
                let _ = reply.send(Err(e.clone()));
            }
            return;
        }
        if !self.store.one_version_per_commit() {
            for (op, reply) in queued {
                let outcome = self.write(vec![op], now).map(|mut changes| {
                    // One op makes exactly one change.
                    changes.remove(0)
                });
                let _ = reply.send(outcome);
            }
            return;
        }
        let hold_before = self.state.hold.clone();
        let mut accepted = Vec::with_capacity(queued.len());
        for (op, reply) in queued {
            match self.state.prepare(op) {
                Ok(prepared) => accepted.push((self.state.commit(prepared), reply)),
                Err(e) => {
                    let _ = reply.send(Err(e.into()));
                }
            }
        }
        if accepted.is_empty() {
            return;
        }
        let mut changes: Vec<Change> = accepted.iter().map(|(c, _)| c.clone()).collect();
        let commit = Commit {
            changes: changes.clone(),
            last_id: self.state.last_id,
            version: self.state.version,
            latched: removed(&changes),
            hold: super::hold::hold_after(&hold_before, &changes),
            ..Commit::default()
        };
        let outcome = self
            .store
            .commit(&commit)
            .map_err(ControlError::from)
            .and_then(|stored| {
                renumber(self.store.as_ref(), &mut changes, stored);
                self.state.version = stored;
                self.catalog_generation += 1;
                for change in &changes {
                    self.feed_engine(change, now)?;
                }
                self.publish(&changes, now)
            });
        for ((_, reply), change) in accepted.into_iter().zip(changes) {
            let _ = reply.send(outcome.clone().map(|()| change));
        }
    }
}
