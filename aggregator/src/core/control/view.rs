//! What reads see: the core's durable state after one operation, immutable
//! and shared. Catalog, indexes, latched health and the edge snapshot are
//! persistent maps, so taking a view copies nothing and a reader holding
//! one never waits for the core: a write or an ingest that lands meanwhile
//! copies only the path it changes.

use std::sync::Arc;

use gslb_shared::{Catalog, MemberId, Snapshot};

use crate::core::catalog::CatalogState;
use crate::core::store::backup::Backup;
use crate::core::store::{Latched, Store, StoreError};

/// Latched member state (health, gate, manual), as persisted.
pub type LatchedMap = imbl::OrdMap<MemberId, Latched>;

/// The core's state as of one version (see the module docs).
#[derive(Clone)]
pub struct View {
    pub(super) state: CatalogState,
    pub(super) latched: LatchedMap,
    pub(super) snapshot: Arc<Snapshot>,
    pub(super) catalog_generation: u64,
    pub(super) store: Arc<dyn Store>,
    pub(super) role: super::Role,
}

impl std::fmt::Debug for View {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("View")
            .field("version", &self.state.version)
            .finish()
    }
}

impl View {
    /// The version this view shows.
    pub fn version(&self) -> u64 {
        self.state.version
    }

    /// What the core was on its node at this view.
    pub fn role(&self) -> super::Role {
        self.role
    }

    /// The catalog generation this view shows.
    pub fn catalog_generation(&self) -> u64 {
        self.catalog_generation
    }

    /// The catalog.
    pub fn catalog(&self) -> &Catalog {
        &self.state.catalog
    }

    /// The catalog with its version, id counter and indexes.
    pub fn state(&self) -> &CatalogState {
        &self.state
    }

    /// What edges are served at this version (catalog without checks, facts).
    pub fn snapshot(&self) -> &Arc<Snapshot> {
        &self.snapshot
    }

    /// A consistent backup of the durable state, as a document.
    pub fn backup(&self, now_ms: u64) -> Result<Backup, StoreError> {
        let mut backup = Backup::of(&self.state, &self.latched, now_ms);
        // The log as far as this state: a write after it is not in it.
        let version = self.state.version;
        backup.audit = (self.store.audit_all()?)
            .into_iter()
            .filter(|r| r.version.is_none_or(|v| v <= version))
            .collect();
        Ok(backup)
    }

    /// The notification outbox's bookkeeping, read from the store.
    pub fn outbox(&self) -> Result<crate::core::notify::Outbox, StoreError> {
        self.store.outbox()
    }

    /// At most `limit` outbox events after sequence number `after`.
    pub fn outbox_events(
        &self,
        after: u64,
        limit: usize,
    ) -> Result<Vec<crate::core::notify::Event>, StoreError> {
        self.store.outbox_events(after, limit)
    }

    /// Write to the outbox through this view's store (replicated in a
    /// cluster; blocking until durable).
    pub fn write_outbox(&self, write: &crate::core::notify::OutboxWrite) -> Result<(), StoreError> {
        self.store.write_outbox(write)
    }

    /// The web UI session stored under `digest`, read from the store.
    pub fn session(
        &self,
        digest: &str,
    ) -> Result<Option<crate::core::sessions::SessionRecord>, StoreError> {
        self.store.session(digest)
    }

    /// Every stored web UI session.
    pub fn sessions(
        &self,
    ) -> Result<Vec<(String, crate::core::sessions::SessionRecord)>, StoreError> {
        self.store.sessions()
    }

    /// How many web UI sessions are stored.
    pub fn session_count(&self) -> Result<u64, StoreError> {
        self.store.session_count()
    }

    /// Change the web UI sessions through this view's store (replicated in
    /// a cluster; blocking until durable).
    pub fn write_sessions(
        &self,
        write: &crate::core::sessions::SessionWrite,
    ) -> Result<(), StoreError> {
        self.store.write_sessions(write)
    }

    /// The audit records `query` asks for, newest first, read from the
    /// store directly.
    pub fn audit(
        &self,
        query: &crate::core::audit::AuditQuery,
    ) -> Result<Vec<crate::core::audit::AuditRecord>, StoreError> {
        self.store.audit(query)
    }

    /// How many audit records are kept.
    pub fn audit_count(&self) -> Result<u64, StoreError> {
        self.store.audit_count()
    }

    /// What changed in the catalog after version `from` up to `to` (the
    /// current version when `None`), object by object and field by field.
    pub fn diff(
        &self,
        from: u64,
        to: Option<u64>,
        scope: Option<&crate::core::audit::Judged>,
    ) -> Result<Vec<super::history::ObjectDiff>, super::ControlError> {
        let mut net =
            super::history::net_changes(self.store.as_ref(), self.state.catalog_version, from, to)?;
        if let Some(judged) = scope {
            net.retain(|t| judged.touched(t));
        }
        Ok(super::history::diffs(&net))
    }

    /// The newest `limit` health log entries of a member (JSON, oldest
    /// first), read from the store directly (it serves concurrent reads).
    pub fn health_log(
        &self,
        member: MemberId,
        limit: usize,
    ) -> Result<Vec<gslb_engine::Output>, StoreError> {
        self.store.health_log(member, limit)
    }
}
