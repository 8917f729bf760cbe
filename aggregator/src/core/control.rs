//! The control core: the one implementation behind the admin gRPC API, the
//! REST API and gslbctl. A write is validated against the catalog, made
//! durable, then handed to the health engine and published to the feed;
//! engine decisions are made durable (latched state, health log) and
//! published the same way. Time comes in as an argument; no sockets here.

mod decisions;
mod grouped;
pub mod history;
mod hold;
mod pool_watch;
mod replica;
mod view;

use std::collections::BTreeMap;

use gslb_shared::{Catalog, Member, MemberFacts, MemberId, Resolved, Rtts, Snapshot};

use crate::core::audit::{Attribution, AuditRecord};
use crate::core::catalog::{CatalogError, CatalogState, Change, Object, ObjectRef, Op, Written};
use crate::core::feed::{Feed, delta_of};
use gslb_engine::{Engine, EngineConfig, EngineError, Input, Output, RestoredMember, Timestamp};
pub use view::{LatchedMap, View};

use crate::core::store::{Commit, Latched, Loaded, LogRecord, Store, StoreError};

/// What a control core is on its node: it decides alone, decides as a
/// cluster's confirmed leader, or mirrors the leader's log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Role {
    /// A single node: decides, with a local store.
    #[default]
    Single,
    /// A cluster's confirmed leader: decides; its writes go through the log,
    /// and the core applies each itself once the log has committed it (the
    /// log's announcement of it is not needed here).
    Leader,
    /// A cluster follower: mirrors the log (see
    /// [`Control::apply_replicated`]) and refuses writes and engine inputs.
    Follower,
}

/// Deltas kept for edges that reconnect.
pub const FEED_WINDOW: usize = 1_024;

/// A refused or failed control operation.
#[derive(Debug, Clone, thiserror::Error)]
pub enum ControlError {
    /// The write broke a catalog rule; nothing was stored.
    #[error(transparent)]
    Catalog(#[from] CatalogError),
    /// The engine refused the input (e.g. manual health on a checked member).
    #[error(transparent)]
    Engine(#[from] EngineError),
    /// Storage failed; the write was not acknowledged.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The caller's token is limited to other zones or pools.
    #[error(transparent)]
    Scope(#[from] crate::core::scope::OutOfScope),
}

/// Put a commit's resolutions into its delta.
fn add_resolved(delta: &mut gslb_shared::Delta, resolved: &[(MemberId, Option<Resolved>)]) {
    for (id, r) in resolved {
        match r {
            Some(r) => delta.resolved.push((*id, r.clone())),
            None => delta.unresolved.push(*id),
        }
    }
}

/// Put a commit's round-trip tables into its delta.
fn add_rtt(delta: &mut gslb_shared::Delta, rtt: &[(MemberId, Option<Rtts>)]) {
    for (id, r) in rtt {
        match r {
            Some(r) => delta.rtt.push((*id, r.clone())),
            None => delta.unmeasured.push(*id),
        }
    }
}

/// A batch error named by the plan line of the operation that failed
/// (`record www.example.test CNAME`) rather than its index alone.
fn named(plan: &crate::core::declarative::Plan, e: ControlError) -> ControlError {
    match e {
        ControlError::Catalog(CatalogError::InBatch { index, error, .. }) => {
            let what = plan
                .lines
                .get(index)
                .map(|l| l.trim_start_matches(['+', '~', '-', ' ']).to_owned());
            ControlError::Catalog(CatalogError::InBatch { index, error, what })
        }
        other => other,
    }
}

/// Catalog, engine, feed and store, kept consistent.
pub struct Control {
    state: CatalogState,
    store: std::sync::Arc<dyn Store>,
    engine: Engine,
    feed: Feed,
    latched: LatchedMap,
    /// Scratch for engine outputs, reused across steps.
    outputs: Vec<Output>,
    /// Bumped on every catalog change (not on health decisions), so agent
    /// streams recompute assignments only when they can have changed.
    catalog_generation: u64,
    /// Who decides here (see [`Role`]).
    role: Role,
    /// Decisions published but not yet durable (a single node publishes a
    /// decision first and makes it durable right after, off the edges'
    /// path: [`Control::flush_deferred`]).
    deferred: Deferred,
    /// Pool flags kept current for notification events.
    pools: pool_watch::PoolWatch,
    /// Who the operation being run is for (its audit records name them);
    /// `None`: the aggregator's own.
    by: Option<Attribution>,
    /// A refusal of the operation being run was recorded already.
    refusal_recorded: std::cell::Cell<bool>,
}

/// A single node's decisions published ahead of their fsync.
#[derive(Debug, Default)]
struct Deferred {
    /// Latched state and the version, merged over the decisions since the
    /// last flush.
    commit: Option<Commit>,
    /// Their health log entries.
    log: Vec<LogRecord>,
    /// Versions up to this may be published before they are durable (the
    /// store holds it, so a restart continues above it).
    reserved: u64,
    /// A decision went to disk first for want of a reservation: the next
    /// flush takes one.
    short: bool,
    /// Given back at shutdown: from then on decisions go to disk first and
    /// no reservation is taken.
    settled: bool,
}

/// How many versions a reservation covers past the current one: raised
/// when half is used, in the flush after a publish, never on the path.
const RESERVE_AHEAD: u64 = 1_024;

/// Most health log entries held while the store fails to take them.
const MAX_DEFERRED_LOG: usize = 100_000;

impl Drop for Control {
    fn drop(&mut self) {
        self.settle();
    }
}

impl std::fmt::Debug for Control {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Control")
            .field("version", &self.state.version)
            .finish()
    }
}

impl Control {
    /// Load the store, rebuild the engine from the catalog and the latched
    /// state (the engine's startup gate then holds decisions until fresh
    /// results have arrived), and start the feed at the stored version.
    pub fn open(
        store: Box<dyn Store>,
        engine: EngineConfig,
        now: Timestamp,
    ) -> Result<Self, ControlError> {
        let Loaded {
            state,
            latched,
            resolved,
            rtt,
            first_start,
            ..
        } = store.load()?;
        let mut control = Self {
            feed: Feed::new(Snapshot::default(), FEED_WINDOW),
            engine: Engine::new(engine),
            state,
            store: store.into(),
            latched: latched.into_iter().collect(),
            outputs: Vec::new(),
            catalog_generation: 0,
            role: Role::Single,
            deferred: Deferred::default(),
            pools: pool_watch::PoolWatch::default(),
            by: None,
            refusal_recorded: std::cell::Cell::new(false),
        };
        // Versions up to the reservation may have reached edges before
        // they were durable: continue above them.
        control.deferred.reserved = control.store.reserved()?;
        control.state.version = control.state.version.max(control.deferred.reserved);
        control.state.build_index();
        let catalog = control.state.catalog.clone();
        for check in catalog.checks.values() {
            control
                .engine
                .step(now, Input::UpsertCheck(check), &mut control.outputs)?;
        }
        for member in catalog.members.values() {
            control
                .engine
                .step(now, member_input(&catalog, member), &mut control.outputs)?;
        }
        control.sync_hold(now)?;
        control.announce_hold();
        let restored: Vec<_> = control
            .latched
            .iter()
            .map(|(id, l)| RestoredMember {
                member: *id,
                health: l.health,
                gate_open: l.gate_open,
                manual: l.manual,
                ramp: l.ramp,
            })
            .collect();
        control.engine.step(
            now,
            Input::Restore {
                members: &restored,
                first_start,
            },
            &mut control.outputs,
        )?;
        let facts = control.facts_from_outputs();
        let resolved = (resolved.into_iter())
            .filter(|(id, _)| catalog.members.contains_key(id))
            .collect();
        let rtt = (rtt.into_iter())
            .filter(|(id, _)| catalog.members.contains_key(id))
            .collect();
        let mut snapshot = Snapshot {
            version: control.state.version,
            epoch: control.state.epoch,
            published_at_ms: now.0,
            catalog,
            facts: facts.into_iter().collect(),
            resolved,
            rtt,
        };
        snapshot.catalog.checks.clear();
        snapshot.catalog.notifiers.clear();
        control.feed = Feed::new(snapshot, FEED_WINDOW);
        Ok(control)
    }

    /// Name who the next operations are for, in their audit records
    /// (`None`: the aggregator's own). The core's owner sets it per command.
    pub fn attribute(&mut self, by: Option<Attribution>) {
        self.by = by;
    }

    /// Refuse `changes` outside the caller's scope (a single write's
    /// parent is looked up `before`, a batch's `after`).
    fn permits(
        &self,
        before: &CatalogState,
        after: &CatalogState,
        changes: &[Change],
    ) -> Result<(), ControlError> {
        match self.by.as_ref().and_then(|b| b.scope.as_deref()) {
            Some(scope) => Ok(scope.permits(before, after, changes)?),
            None => Ok(()),
        }
    }

    /// Refuse `target` unless the caller's scope covers it (for operations
    /// on existing objects that are not catalog changes: manual health,
    /// heartbeats, pausing a pool).
    pub fn within(&self, target: ObjectRef) -> Result<(), ControlError> {
        match self.by.as_ref().and_then(|b| b.scope.as_deref()) {
            Some(scope) => Ok(scope.see(&self.state.catalog, &target)?),
            None => Ok(()),
        }
    }

    /// Refuse a caller whose scope is limited (operations on everything
    /// that are not catalog changes: pausing every pool, resetting edges).
    pub fn unscoped(&self, what: &str) -> Result<(), ControlError> {
        match self.by.as_ref().and_then(|b| b.scope.as_deref()) {
            Some(scope) => Err(scope.outside(what.to_owned()).into()),
            None => Ok(()),
        }
    }

    /// Who the operation being run is for.
    pub(crate) fn attribution(&self) -> Attribution {
        (self.by.clone()).unwrap_or_else(|| Attribution::internal("internal"))
    }

    /// Record a refused write (best effort: the refusal stands whether or
    /// not its record could be written).
    pub(crate) fn audit_refusal(
        &self,
        error: &ControlError,
        objects: Vec<ObjectRef>,
        now: Timestamp,
    ) {
        if matches!(error, ControlError::Store(_)) {
            // Not stored anyway; a follower's or a lost quorum's refusal
            // cannot be written either.
            return;
        }
        self.refusal_recorded.set(true);
        let record = AuditRecord::refused(self.attribution(), now.0, error.to_string(), objects);
        if let Err(e) = self.store.append_audit(&[record]) {
            tracing::warn!(error = %e, "a refused write's audit record was not stored");
        }
    }

    /// Record a write the API refused before it reached the core (the
    /// token's role or scope), best effort like every refusal's record.
    pub fn audit_denied(&self, why: String, objects: Vec<ObjectRef>, now: Timestamp) {
        let record = AuditRecord::refused(self.attribution(), now.0, why, objects);
        if let Err(e) = self.store.append_audit(&[record]) {
            tracing::warn!(error = %e, "a refused write's audit record was not stored");
        }
    }

    /// Run a write `f` (an apply, an import, a rollback, a pause) and, when
    /// `recorded` (not a dry run), record its refusal if nothing under it
    /// did: refusals before the catalog write (a stale plan, a prune) are
    /// audited too.
    pub fn audited<R>(
        &mut self,
        recorded: bool,
        now: Timestamp,
        f: impl FnOnce(&mut Control) -> Result<R, ControlError>,
    ) -> Result<R, ControlError> {
        self.refusal_recorded.set(false);
        let outcome = f(self);
        if let Err(e) = &outcome
            && recorded
            && !self.refusal_recorded.get()
        {
            self.audit_refusal(e, Vec::new(), now);
        }
        outcome
    }

    /// Record an operator action that is not a catalog change (a manual
    /// health change); durable, and replicated, on return.
    pub fn audit_action(&self, detail: String, now: Timestamp) -> Result<(), ControlError> {
        let record =
            AuditRecord::action(self.attribution(), now.0, detail, Some(self.state.version));
        Ok(self.store.append_audit(&[record])?)
    }

    /// Apply writes all-or-nothing; acknowledged only once on disk, with
    /// their audit record (a refusal is recorded too).
    pub fn write(&mut self, ops: Vec<Op>, now: Timestamp) -> Result<Vec<Change>, ControlError> {
        let named: Vec<ObjectRef> = ops.iter().filter_map(crate::core::audit::named).collect();
        let written = self.write_audited(ops, now);
        if let Err(e) = &written {
            self.audit_refusal(e, named, now);
        }
        written
    }

    fn write_audited(&mut self, ops: Vec<Op>, now: Timestamp) -> Result<Vec<Change>, ControlError> {
        self.decides()?;
        self.flush_deferred()?;
        let changes = match <[Op; 1]>::try_from(ops) {
            // One write: validate in place, make it durable, then apply; no copy
            // of the catalog (which at 100,000 members costs tens of ms).
            Ok([op]) => {
                let mut prepared = self.state.prepare(op)?;
                self.permits(
                    &self.state,
                    &self.state,
                    std::slice::from_ref(&prepared.change),
                )?;
                let latched = removed(std::slice::from_ref(&prepared.change));
                let planned = prepared.change.version;
                let record = AuditRecord::accepted(
                    self.attribution(),
                    now.0,
                    &self.state,
                    std::slice::from_ref(&prepared.change),
                    planned,
                );
                let stored = self.store.commit(&Commit {
                    changes: vec![prepared.change.clone()],
                    last_id: prepared.last_id,
                    version: planned,
                    latched,
                    hold: hold::hold_after(
                        &self.state.hold,
                        std::slice::from_ref(&prepared.change),
                    ),
                    audit: vec![record],
                    ..Commit::default()
                })?;
                renumber(
                    self.store.as_ref(),
                    std::slice::from_mut(&mut prepared.change),
                    stored,
                );
                vec![self.state.commit(prepared)]
            }
            // A batch: all or nothing, validated on a copy.
            Err(ops) => {
                let mut trial = self.state.clone();
                let mut changes = trial.apply_all(ops)?;
                self.permits(&self.state, &trial, &changes)?;
                let record = AuditRecord::accepted(
                    self.attribution(),
                    now.0,
                    &self.state,
                    &changes,
                    trial.version,
                );
                let stored = self.store.commit(&Commit {
                    changes: changes.clone(),
                    last_id: trial.last_id,
                    version: trial.version,
                    latched: removed(&changes),
                    hold: hold::hold_after(&self.state.hold, &changes),
                    audit: vec![record],
                    ..Commit::default()
                })?;
                renumber(self.store.as_ref(), &mut changes, stored);
                trial.version = stored;
                for change in &changes {
                    trial.note(change);
                }
                self.state = trial;
                changes
            }
        };
        self.catalog_generation += 1;
        for change in &changes {
            self.feed_engine(change, now)?;
        }
        self.publish(&changes, now)?;
        Ok(changes)
    }

    /// A client's batch (REST and gRPC apply): refuse client-given ids,
    /// then write all-or-nothing, or with `dry_run` only validate. Returns
    /// the changes and the version after them.
    pub fn apply_ops(
        &mut self,
        ops: Vec<Op>,
        dry_run: bool,
        now: Timestamp,
    ) -> Result<(Vec<Change>, u64), ControlError> {
        crate::core::catalog::refuse_client_ids(&ops)?;
        let changes = if dry_run {
            self.check_all(ops)?
        } else {
            self.write(ops, now)?
        };
        Ok((changes, self.version()))
    }

    /// Validate writes as [`Control::write`] would, changing nothing (a dry run).
    pub fn check_all(&self, ops: Vec<Op>) -> Result<Vec<Change>, ControlError> {
        let mut trial = self.state.clone();
        let changes = trial.apply_all(ops)?;
        // A dry run answers as the write would: a scope refuses it too.
        self.permits(&self.state, &trial, &changes)?;
        Ok(changes)
    }

    /// Make the catalog match a declarative document; with `dry_run` only
    /// plan and validate. Returns the plan and the version after it.
    /// Deletions need `prune`: a truncated or empty document must not
    /// wipe what it fails to list.
    pub fn apply_document(
        &mut self,
        desired: &crate::core::declarative::Desired,
        dry_run: bool,
        prune: bool,
        now: Timestamp,
        keys: crate::core::catalog::KeyMaker,
    ) -> Result<(crate::core::declarative::Plan, u64), ControlError> {
        let mut plan =
            crate::core::declarative::plan(&self.state, desired).map_err(CatalogError::Invalid)?;
        crate::core::catalog::fill_keys(&mut plan.ops, keys);
        if !dry_run && !prune {
            refuse_deletions(
                &plan,
                "the document",
                "apply with prune (gslbctl apply --prune, ?prune=true)",
            )?;
        }
        self.carry_out(plan, dry_run, now)
    }

    /// Apply a plan's operations all or nothing, or (`dry_run`) only check
    /// them; an error names the plan line that failed.
    pub(super) fn carry_out(
        &mut self,
        plan: crate::core::declarative::Plan,
        dry_run: bool,
        now: Timestamp,
    ) -> Result<(crate::core::declarative::Plan, u64), ControlError> {
        let done = if dry_run {
            self.check_all(plan.ops.clone()).map(drop)
        } else if !plan.ops.is_empty() {
            self.write(plan.ops.clone(), now).map(drop)
        } else {
            Ok(())
        };
        done.map_err(|e| named(&plan, e))?;
        Ok((plan, self.version()))
    }

    /// Import a zone file: plan it (scoped to its zone: see
    /// [`crate::core::declarative::plan_zone`]) and apply every change or
    /// none, or (`dry_run`) only check that it would apply.
    pub fn import_zone(
        &mut self,
        file: &crate::core::zonefile::ZoneFile,
        dry_run: bool,
        prune: bool,
        now: Timestamp,
    ) -> Result<(crate::core::declarative::Plan, u64), ControlError> {
        let mut plan = crate::core::declarative::plan_zone(&self.state, &file.zone, &file.records)
            .map_err(CatalogError::Invalid)?;
        if file.stripped > 0 {
            plan.notes.push(format!(
                "= {} DNSSEC record(s) dropped (strip-dnssec): the edges sign the zone when its dnssec is on",
                file.stripped
            ));
        }
        if !dry_run && !prune {
            refuse_deletions(
                &plan,
                "the file",
                "import with prune (gslbctl zone import --prune, ?prune=true)",
            )?;
        }
        self.carry_out(plan, dry_run, now)
    }

    /// Hand one engine input over (results, heartbeats, location changes,
    /// manual health, ticks) and make its decisions durable and published.
    pub fn step(&mut self, input: Input<'_>, now: Timestamp) -> Result<(), ControlError> {
        if self.role == Role::Follower {
            // A follower's engine decides nothing: the leader's decisions
            // arrive through the log. Its clock ticks here all the same.
            return match input {
                Input::Tick | Input::LocationConnected(_) | Input::LocationDisconnected(_) => {
                    Ok(())
                }
                _ => self.decides(),
            };
        }
        // An operator's manual health is audited; the engine's own inputs
        // (results, heartbeats, ticks) are not writes.
        let member = match &input {
            Input::ManualHealth { member, .. } => Some(*member),
            _ => None,
        };
        if let Input::ManualHealth { member: id, .. } | Input::Heartbeat(id) = &input
            && let Err(e) = self.within(ObjectRef::Member(*id))
        {
            if member.is_some() {
                self.audit_refusal(&e, vec![ObjectRef::Member(*id)], now);
            }
            return Err(e);
        }
        let manual = match &input {
            Input::ManualHealth { member, health } => Some(match health {
                Some(h) => format!("member {member} health set to {h:?} by hand"),
                None => format!("member {member} manual health cleared"),
            }),
            _ => None,
        };
        if let Err(e) = self.engine.step(now, input, &mut self.outputs) {
            let e = ControlError::from(e);
            if let Some(member) = manual.as_ref().and(member) {
                self.audit_refusal(&e, vec![ObjectRef::Member(member)], now);
            }
            return Err(e);
        }
        self.publish(&[], now)?;
        match manual {
            Some(detail) => self.audit_action(detail, now),
            None => Ok(()),
        }
    }

    /// The catalog as it stands.
    pub fn catalog(&self) -> &Catalog {
        &self.state.catalog
    }

    /// The version of the catalog's last change: what a plan is made
    /// against (health decisions do not move it).
    pub fn catalog_version(&self) -> u64 {
        self.state.catalog_version
    }

    /// Refuse, naming what changed, unless the catalog is still at
    /// `expected` (the version a plan was made against); `None` expects
    /// nothing.
    pub fn expect_catalog(&self, expected: Option<u64>) -> Result<(), ControlError> {
        match expected {
            Some(expected) if expected != self.state.catalog_version => Err(CatalogError::Moved {
                expected,
                current: self.state.catalog_version,
                changed: self.state.changed_since(expected, 10),
            }
            .into()),
            _ => Ok(()),
        }
    }

    /// The current version (catalog writes and health decisions both bump it).
    pub fn version(&self) -> u64 {
        self.state.version
    }

    /// Bytes the store uses on disk.
    pub fn store_size(&self) -> u64 {
        self.store.size_on_disk()
    }

    /// Changes whenever the catalog does.
    pub fn catalog_generation(&self) -> u64 {
        self.catalog_generation
    }

    /// The state reads see, as of now (copies nothing: see [`View`]).
    pub fn view(&self) -> View {
        View {
            state: self.state.clone(),
            latched: self.latched.clone(),
            snapshot: self.feed.current(),
            catalog_generation: self.catalog_generation,
            store: self.store.clone(),
            role: self.role,
        }
    }

    /// What the core is on its node (the published view carries it too).
    pub fn role(&self) -> Role {
        self.role
    }

    /// The health engine (read-only: status views).
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The edge feed.
    pub fn feed(&self) -> &Feed {
        &self.feed
    }

    /// The newest `limit` health log entries of a member (JSON, oldest first).
    pub fn health_log(&self, member: MemberId, limit: usize) -> Result<Vec<Output>, ControlError> {
        let mut entries = self.store.health_log(member, limit)?;
        // Entries published but not yet flushed come last (newest).
        entries.extend(
            self.deferred
                .log
                .iter()
                .filter(|r| r.member == member)
                .map(|r| r.entry.clone()),
        );
        let excess = entries.len().saturating_sub(limit);
        entries.drain(..excess);
        Ok(entries)
    }

    /// Tell the engine about a catalog change. A pool change re-announces its
    /// members, whose check may have changed with it.
    fn feed_engine(&mut self, change: &Change, now: Timestamp) -> Result<(), ControlError> {
        let catalog = &self.state.catalog;
        let out = &mut self.outputs;
        match &change.what {
            Written::Upserted(object) => match object.as_ref() {
                Object::Check(check) => self.engine.step(now, Input::UpsertCheck(check), out)?,
                Object::Member(member) => {
                    self.engine.step(now, member_input(catalog, member), out)?
                }
                Object::Pool(pool) => {
                    for member in self.state.pool_members(pool.id) {
                        self.engine.step(now, member_input(catalog, member), out)?;
                    }
                }
                Object::Zone(_) | Object::Record(_) | Object::TsigKey(_) | Object::Notifier(_) => {}
            },
            Written::Deleted(ObjectRef::Check(id)) => {
                self.engine.step(now, Input::RemoveCheck(*id), out)?
            }
            Written::Deleted(ObjectRef::Member(id)) => {
                // Already gone from the engine when it expired there.
                let _ = self.engine.step(now, Input::RemoveMember(*id), out);
            }
            Written::Deleted(_) => {}
        }
        Ok(())
    }
}

/// Latched state to drop for the members `changes` delete.
fn removed(changes: &[Change]) -> Vec<(MemberId, Option<Latched>)> {
    changes
        .iter()
        .filter_map(|c| match c.what {
            Written::Deleted(ObjectRef::Member(m)) => Some((m, None)),
            _ => None,
        })
        .collect()
}

/// A Raft store numbers a commit by its log index: give every change of it
/// that version (a single node keeps its per-change numbering).
fn renumber(store: &dyn Store, changes: &mut [Change], stored: u64) {
    if store.one_version_per_commit() {
        for change in changes {
            change.version = stored;
        }
    }
}

/// The engine input announcing a member with its pool's check.
fn member_input<'a>(catalog: &Catalog, member: &'a Member) -> Input<'a> {
    let pool = catalog.pools.get(&member.pool);
    Input::UpsertMember {
        member,
        check: pool.and_then(|p| p.check),
        slow_start: pool.and_then(|p| p.slow_start),
    }
}

/// Facts in an output list, last value per member.
fn facts_in(outputs: &[Output]) -> BTreeMap<MemberId, MemberFacts> {
    outputs
        .iter()
        .filter_map(|o| match o {
            Output::Facts { member, facts } => Some((*member, *facts)),
            _ => None,
        })
        .collect()
}

impl Control {
    fn facts_from_outputs(&mut self) -> BTreeMap<MemberId, MemberFacts> {
        let facts = facts_in(&self.outputs);
        self.outputs.clear();
        facts
    }

    /// Publish catalog `changes` and whatever the engine decided since the
    /// last call, under one new version. A single node publishes decisions
    /// (no catalog change) before they are durable, within its version
    /// reservation; the owner makes them durable right after
    /// ([`Control::flush_deferred`]).
    fn publish(&mut self, changes: &[Change], now: Timestamp) -> Result<(), ControlError> {
        let mut decided = self.take_decisions(now)?;
        let decisive = !decided.facts.is_empty()
            || !decided.rtt.is_empty()
            || !decided.expired.is_empty()
            || !decided.events.is_empty();
        let rtt: Vec<_> = std::mem::take(&mut decided.rtt).into_iter().collect();
        let single = !self.store.one_version_per_commit();
        let deferrable = single
            && !self.deferred.settled
            && decided.expired.is_empty()
            && self.state.version < self.deferred.reserved;
        if single && decisive && !deferrable {
            self.deferred.short = true;
        }
        if deferrable {
            if decisive {
                self.state.version += 1;
                let pending = self.deferred.commit.get_or_insert_with(Commit::default);
                pending.version = self.state.version;
                pending.last_id = self.state.last_id;
                pending.latched.append(&mut decided.latched);
                pending.rtt.extend(rtt.iter().cloned());
                pending.events.append(&mut decided.events);
            }
            self.deferred.log.append(&mut decided.log);
        } else {
            // In order: what was deferred goes to disk before this.
            self.flush_deferred()?;
            let commit = decisive.then(|| Commit {
                changes: decided.expired.clone(),
                last_id: self.state.last_id,
                version: self.state.version + 1,
                latched: std::mem::take(&mut decided.latched),
                rtt: rtt.clone(),
                events: std::mem::take(&mut decided.events),
                ..Commit::default()
            });
            if commit.is_some() || !decided.log.is_empty() {
                let stored = self.store.commit_decisions(commit.as_ref(), &decided.log)?;
                if let Some(stored) = stored {
                    renumber(self.store.as_ref(), &mut decided.expired, stored);
                    self.state.version = stored;
                    for change in &decided.expired {
                        self.state.note(change);
                    }
                }
            }
        }
        if changes.is_empty() && !decisive {
            return Ok(());
        }
        let mut all = changes.to_vec();
        all.extend(decided.expired);
        let facts: Vec<_> = decided.facts.into_iter().collect();
        let mut delta = delta_of(&all, &facts, now.0);
        add_rtt(&mut delta, &rtt);
        delta.epoch = self.state.epoch;
        let before = self.feed.snapshot().facts.clone();
        self.feed
            .publish_over(delta, self.state.version, &self.state.catalog);
        self.pools.published(&before, &self.feed.snapshot().facts);
        Ok(())
    }

    /// True when decisions published ahead of their fsync carry
    /// notification events (they reach the outbox with the next flush).
    pub fn deferred_events(&self) -> bool {
        (self.deferred.commit.as_ref()).is_some_and(|c| !c.events.is_empty())
    }

    /// Make the decisions published ahead of their fsync durable, and keep
    /// the version reservation ahead of what may be published next. Every
    /// other commit calls this first, so the store never goes back a
    /// version. A single node's owner calls it after each operation, once
    /// edges have been told.
    pub fn flush_deferred(&mut self) -> Result<(), ControlError> {
        if self.store.one_version_per_commit() {
            return Ok(());
        }
        // Taken once decisions are published (not by an idle node), and
        // kept ahead from then on.
        let raise = !self.deferred.settled
            && (self.deferred.short
                || (self.deferred.reserved > 0
                    && self.state.version + RESERVE_AHEAD / 2 > self.deferred.reserved));
        if self.deferred.commit.is_none() && self.deferred.log.is_empty() && !raise {
            return Ok(());
        }
        let mut commit = self.deferred.commit.take().unwrap_or_else(|| Commit {
            version: self.state.version,
            last_id: self.state.last_id,
            ..Commit::default()
        });
        let reserved = raise.then_some(self.state.version + RESERVE_AHEAD);
        commit.reserved = reserved;
        let log = std::mem::take(&mut self.deferred.log);
        tracing::debug!(
            version = commit.version,
            latched = commit.latched.len(),
            rtt = commit.rtt.len(),
            events = commit.events.len(),
            log = log.len(),
            "making published decisions durable"
        );
        match self.store.commit_decisions(Some(&commit), &log) {
            Ok(_) => {
                if let Some(reserved) = reserved {
                    self.deferred.reserved = reserved;
                    self.deferred.short = false;
                }
                Ok(())
            }
            Err(e) => {
                // Kept, to be written with the next flush: the last latched
                // state per member, and the newest log entries.
                commit.reserved = None;
                let latest: BTreeMap<_, _> = commit.latched.drain(..).collect();
                commit.latched = latest.into_iter().collect();
                let latest: BTreeMap<_, _> = commit.rtt.drain(..).collect();
                commit.rtt = latest.into_iter().collect();
                self.deferred.commit = Some(commit);
                let mut log = log;
                if log.len() > MAX_DEFERRED_LOG {
                    let dropped = log.len() - MAX_DEFERRED_LOG;
                    log.drain(..dropped);
                    tracing::error!(
                        dropped,
                        "health log entries dropped: the store keeps failing"
                    );
                }
                self.deferred.log = log;
                Err(e.into())
            }
        }
    }

    /// Make everything durable and give the unused reservation back, so a
    /// clean restart continues at this version (after a crash it continues
    /// above the reservation). Best effort: on a failure the next start
    /// only skips versions.
    pub fn settle(&mut self) {
        if self.store.one_version_per_commit() || self.deferred.reserved == 0 {
            return;
        }
        let settled = self.flush_deferred().and_then(|()| {
            let commit = Commit {
                version: self.state.version,
                last_id: self.state.last_id,
                reserved: Some(self.state.version),
                ..Commit::default()
            };
            Ok(self.store.commit(&commit).map(drop)?)
        });
        match settled {
            Ok(()) => {
                self.deferred.reserved = self.state.version;
                self.deferred.settled = true;
                tracing::info!(
                    version = self.state.version,
                    "decisions durable, version reservation given back"
                );
            }
            Err(e) => tracing::warn!(error = %e, "version reservation not given back"),
        }
    }

    /// Set what hostname members resolved to (`None` forgets it), as one
    /// durable, published version. Entries of unknown or IP members, and
    /// ones that change nothing, are dropped; the new version, if any.
    pub fn set_resolved(
        &mut self,
        updates: Vec<(MemberId, Option<Resolved>)>,
        now: Timestamp,
    ) -> Result<Option<u64>, ControlError> {
        self.decides()?;
        let held = &self.feed.snapshot().resolved;
        let members = &self.state.catalog.members;
        // What edges would refuse (and with it the whole snapshot) never
        // gets in: unicast addresses only, at most 8; none left forgets.
        let updates = (updates.into_iter()).map(|(id, r)| {
            let r = r.map(|mut r| {
                r.addresses
                    .retain(|a| gslb_shared::validate::unanswerable(a).is_none());
                r.addresses.truncate(gslb_shared::MAX_RESOLVED_ADDRESSES);
                r
            });
            (id, r.filter(|r| !r.addresses.is_empty()))
        });
        let updates: Vec<_> = updates
            .filter(|(id, r)| match r {
                Some(r) => {
                    members.get(id).is_some_and(|m| m.address.host().is_some())
                        && held.get(id) != Some(r)
                }
                None => held.contains_key(id),
            })
            .collect();
        if updates.is_empty() {
            return Ok(None);
        }
        self.flush_deferred()?;
        let commit = Commit {
            version: self.state.version + 1,
            last_id: self.state.last_id,
            resolved: updates,
            ..Commit::default()
        };
        let stored = self.store.commit(&commit)?;
        self.state.version = stored;
        let mut delta = delta_of(&[], &[], now.0);
        add_resolved(&mut delta, &commit.resolved);
        delta.epoch = self.state.epoch;
        self.feed.publish_over(delta, stored, &self.state.catalog);
        Ok(Some(stored))
    }

    /// Deliberately reset every edge: raise the epoch (durably, as its own
    /// version), so edges accept this aggregator's snapshot even when its
    /// version is lower than theirs or its catalog empty. For an operator
    /// who restored an older backup or started empty on purpose.
    pub fn reset_edges(&mut self, now: Timestamp) -> Result<(u64, u64), ControlError> {
        self.unscoped("resetting every edge")?;
        self.decides()?;
        self.flush_deferred()?;
        let epoch = self.state.epoch + 1;
        let detail = format!("edges reset: epoch {epoch}");
        let commit = Commit {
            version: self.state.version + 1,
            last_id: self.state.last_id,
            epoch: Some(epoch),
            audit: vec![AuditRecord::action(
                self.attribution(),
                now.0,
                detail,
                Some(self.state.version + 1),
            )],
            ..Commit::default()
        };
        let stored = self.store.commit(&commit)?;
        self.state.version = stored;
        self.state.epoch = epoch;
        let mut delta = delta_of(&[], &[], now.0);
        delta.epoch = epoch;
        self.feed.publish_over(delta, stored, &self.state.catalog);
        tracing::warn!(
            epoch,
            version = stored,
            members = self.state.catalog.members.len(),
            "edges reset by an operator: they will accept this catalog even if older or empty"
        );
        Ok((epoch, stored))
    }
}

/// Refuse a plan that deletes what `source` leaves out unless it was asked
/// for (`how`): a truncated document or file must never empty a catalog.
fn refuse_deletions(
    plan: &crate::core::declarative::Plan,
    source: &str,
    how: &str,
) -> Result<(), ControlError> {
    let deletes: Vec<&str> = (plan.lines.iter())
        .filter(|l| l.starts_with("- "))
        .map(String::as_str)
        .collect();
    if deletes.is_empty() {
        return Ok(());
    }
    let shown: Vec<&str> = deletes.iter().take(5).copied().collect();
    Err(
        CatalogError::Invalid(gslb_shared::validate::ValidationError::single(
            "prune",
            format!(
                "{source} leaves out {} object(s) that exist ({}{}); nothing was applied: \
             list them, or {how} to delete them",
                deletes.len(),
                shown.join(", "),
                if deletes.len() > shown.len() {
                    ", ..."
                } else {
                    ""
                }
            ),
        ))
        .into(),
    )
}
