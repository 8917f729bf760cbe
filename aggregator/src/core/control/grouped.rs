//! Group commit: single writes that queued while the core was busy (an
//! fsync, a Raft round) are validated in turn, each against the state the
//! ones before it left, and made durable as one commit, so concurrent
//! writers share one fsync or one quorum round instead of waiting for one
//! each. Each is still refused or acknowledged on its own.

use super::hold::hold_after;
use super::{Control, ControlError, removed, renumber};
use crate::core::audit::{Attribution, AuditRecord};
use crate::core::catalog::{Change, Op};
use crate::core::store::Commit;
use gslb_engine::Timestamp;

impl Control {
    /// Validate `ops` in turn on a copy of the state (a persistent map: the
    /// copy shares everything), commit the accepted ones together, and only
    /// then take the copy: on a store failure nothing changed and every
    /// accepted write reports the failure. One outcome per op, in order.
    /// Each write is attributed to its own caller (`by`), and each has
    /// its audit record, a refusal too, in the same commit.
    pub fn write_grouped(
        &mut self,
        ops: Vec<(Op, Option<Attribution>)>,
        now: Timestamp,
    ) -> Vec<Result<Change, ControlError>> {
        if let Err(e) = self.decides().and_then(|()| self.flush_deferred()) {
            return ops.iter().map(|_| Err(e.clone())).collect();
        }
        if ops.len() == 1 {
            // Validated in place, no copy at all.
            let (op, by) = ops.into_iter().next().unwrap_or_else(|| unreachable!());
            self.attribute(by);
            let outcome = self
                .write(vec![op], now)
                .map(|mut changes| changes.remove(0));
            self.attribute(None);
            return vec![outcome];
        }
        let mut trial = self.state.clone();
        let mut outcomes: Vec<Result<usize, ControlError>> = Vec::with_capacity(ops.len());
        let mut changes: Vec<Change> = Vec::new();
        let mut audit = Vec::with_capacity(ops.len());
        for (op, by) in ops {
            let by = by.unwrap_or_else(|| Attribution::internal("internal"));
            let named: Vec<_> = crate::core::audit::named(&op).into_iter().collect();
            // Each write's own caller's scope, against the state the ones
            // before it left (as a write alone is checked in `write`).
            let prepared = trial.prepare(op).map_err(ControlError::from).and_then(|p| {
                match by.scope.as_deref() {
                    Some(scope) => scope
                        .permits(&trial, &trial, std::slice::from_ref(&p.change))
                        .map(|()| p)
                        .map_err(ControlError::from),
                    None => Ok(p),
                }
            });
            match prepared {
                Ok(prepared) => {
                    let change = std::slice::from_ref(&prepared.change);
                    let version = prepared.change.version;
                    audit.push(AuditRecord::accepted(by, now.0, &trial, change, version));
                    changes.push(trial.commit(prepared));
                    outcomes.push(Ok(changes.len() - 1));
                }
                Err(e) => {
                    audit.push(AuditRecord::refused(by, now.0, e.to_string(), named));
                    outcomes.push(Err(e));
                }
            }
        }
        if changes.is_empty() {
            // Every one was refused: their records alone.
            if let Err(e) = self.store.append_audit(&audit) {
                tracing::warn!(error = %e, "refused writes' audit records were not stored");
            }
            return outcomes
                .into_iter()
                .filter_map(Result::err)
                .map(Err)
                .collect();
        }
        let commit = Commit {
            changes: changes.clone(),
            last_id: trial.last_id,
            version: trial.version,
            latched: removed(&changes),
            hold: hold_after(&self.state.hold, &changes),
            audit,
            ..Commit::default()
        };
        let applied = self
            .store
            .commit(&commit)
            .map_err(ControlError::from)
            .and_then(|stored| {
                renumber(self.store.as_ref(), &mut changes, stored);
                trial.version = stored;
                for change in &changes {
                    trial.note(change);
                }
                self.state = trial;
                self.catalog_generation += 1;
                for change in &changes {
                    self.feed_engine(change, now)?;
                }
                self.publish(&changes, now)
            });
        outcomes
            .into_iter()
            .map(|o| {
                let at = o?;
                applied.clone().map(|()| changes[at].clone())
            })
            .collect()
    }
}
