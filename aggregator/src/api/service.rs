//! The running aggregator's shared state: the control core behind one lock,
//! a version watch that wakes every agent and edge stream when something
//! changes, and the registries of connected agents and edges. The gRPC
//! services in the submodules are thin adapters over it.

pub mod admin;
pub mod agents;
pub mod edges;
pub mod registry;
pub mod status;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use gslb_shared::{LocationId, MemberId};
use tokio::sync::watch;

use crate::core::catalog::{Change, Op};
use crate::core::control::{Control, ControlError, Queued, View};
use crate::replication::cluster::Cluster;

/// What the aggregator knows about an agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentInfo {
    /// Agent id (from its registration).
    pub agent_id: String,
    /// Location.
    pub location: LocationId,
    /// Region.
    pub region: String,
    /// Agent version.
    pub version: String,
    /// Last message, ms since the Unix epoch.
    pub last_seen_ms: u64,
    /// Stream open now.
    pub connected: bool,
    /// Targets assigned.
    pub assignments: usize,
    /// The stream that registered it last (see [`registry`]).
    pub stream: u64,
}

/// What the aggregator knows about an edge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EdgeInfo {
    /// Edge id.
    pub edge_id: String,
    /// Version it reported as applied.
    pub applied_version: u64,
    /// Milliseconds from publication of that version to its application.
    pub lag_ms: u64,
    /// Last contact.
    pub last_seen_ms: u64,
    /// Subscribed now.
    pub connected: bool,
    /// Record sets it reported it could not serve (degraded while any).
    pub skipped: Vec<String>,
}

impl EdgeInfo {
    /// A row for an edge first heard of now.
    pub fn new(edge_id: &str) -> Self {
        Self {
            edge_id: edge_id.to_owned(),
            applied_version: 0,
            lag_ms: 0,
            last_seen_ms: 0,
            connected: false,
            skipped: Vec::new(),
        }
    }
}

/// Run `f` where it cannot stall the runtime's other tasks: through
/// `block_in_place` on a multi-threaded runtime, in place elsewhere.
pub fn off_worker<R>(f: impl FnOnce() -> R) -> R {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

/// How long a disconnected agent's row is kept unless configured.
pub const DEFAULT_AGENT_RETENTION: std::time::Duration = std::time::Duration::from_secs(3600);

/// Shared state of a running aggregator.
#[derive(Debug)]
pub struct Service {
    /// The control core; every operation on it is short (an fsync at most).
    control: Mutex<Control>,
    /// The current version; edge streams wait on it.
    version: watch::Sender<u64>,
    /// The catalog generation; agent streams wait on it, so a health
    /// decision (a new version) does not wake them.
    catalog: watch::Sender<u64>,
    /// Agents by id.
    pub(crate) agents: Mutex<registry::Registry>,
    /// How long a disconnected agent's row is kept.
    agent_retention: Mutex<std::time::Duration>,
    /// Connected agent streams per location (the engine hears of a location
    /// leaving only when its last agent does).
    pub(crate) locations: Mutex<HashMap<LocationId, usize>>,
    /// Edges by id.
    pub(crate) edges: Mutex<BTreeMap<String, EdgeInfo>>,
    /// The Raft node, when this aggregator is one of a cluster.
    cluster: Option<Arc<Cluster>>,
    /// Bumped when the node's role changes; agent streams wait on it.
    role: watch::Sender<u64>,
    /// The HTTP listener's address as clients should reach it (REST
    /// redirects to the leader use the leader's).
    http_address: std::sync::OnceLock<String>,
    /// The bound gRPC and HTTP listeners, told to agents so they never probe them.
    own_listeners: std::sync::OnceLock<Vec<std::net::SocketAddr>>,
    /// Single writes waiting for the control core (group commit).
    pending: Mutex<Vec<Queued>>,
    /// The core's state as reads see it: replaced (while the core is held)
    /// after every operation that moved the version or the catalog, so
    /// reads take it without ever waiting for the core.
    view: arc_swap::ArcSwap<View>,
}

pub(crate) use crate::core::lock;

pub use crate::core::now;

impl Service {
    /// Wrap a single node's control core.
    pub fn new(control: Control) -> Self {
        Self::build(control, None)
    }

    /// Wrap a cluster node's control core (a mirror until it leads).
    pub fn clustered(control: Control, cluster: Arc<Cluster>) -> Self {
        Self::build(control, Some(cluster))
    }

    fn build(control: Control, cluster: Option<Arc<Cluster>>) -> Self {
        let (version, _) = watch::channel(control.version());
        let (catalog, _) = watch::channel(control.catalog_generation());
        let view = arc_swap::ArcSwap::from_pointee(control.view());
        Self {
            control: Mutex::new(control),
            version,
            catalog,
            agents: Mutex::default(),
            agent_retention: Mutex::new(DEFAULT_AGENT_RETENTION),
            locations: Mutex::default(),
            edges: Mutex::default(),
            cluster,
            role: watch::channel(0).0,
            http_address: std::sync::OnceLock::new(),
            own_listeners: std::sync::OnceLock::new(),
            pending: Mutex::default(),
            view,
        }
    }

    /// The view and, taken with it, the engine state of the members `ids`
    /// picks from it (for status reads). The core is held only for a pointer
    /// per member; the ids are picked before, from the published view, and
    /// again under the core only if a write landed in between.
    pub fn status_view(
        &self,
        ids: impl Fn(&View) -> Vec<MemberId>,
    ) -> (Arc<View>, gslb_engine::StatusView) {
        let mut view = self.view();
        let mut wanted = ids(&view);
        self.with_control(|c| {
            let current = self.view();
            if !Arc::ptr_eq(&current, &view) {
                wanted = ids(&current);
                view = current;
            }
            let status = c.engine().status_view(wanted);
            (view, status)
        })
    }

    /// The core's state as of the last operation (never waits for the core).
    pub fn view(&self) -> Arc<View> {
        self.view.load_full()
    }

    /// One write of one op; its change. In a cluster, writes that arrive
    /// while another's proposal replicates are committed together with it
    /// (one log entry, each acknowledged or refused on its own); a single
    /// node writes each on its own.
    pub fn write_one(&self, op: Op) -> Result<Change, ControlError> {
        crate::core::catalog::refuse_client_ids(std::slice::from_ref(&op))?;
        if self.cluster.is_none() {
            return self.with_control(|c| c.write(vec![op], now()).map(|mut v| v.remove(0)));
        }
        let (reply, outcome) = std::sync::mpsc::channel();
        lock(&self.pending).push((op, reply));
        // Whoever holds the core next takes every queued write, ours
        // included, and answers it before letting go.
        let commit = || {
            self.with_control(|c| {
                let queued = std::mem::take(&mut *lock(&self.pending));
                if !queued.is_empty() {
                    c.write_grouped(queued, now());
                }
            })
        };
        // Waiting for a busy core blocks this thread: on tokio's
        // multi-threaded runtime its other tasks then move to another, so
        // more writers can queue behind the proposal under way. A free core
        // is taken at once (the hand-over costs a single writer ~1 ms).
        let busy = self.control.try_lock().is_err();
        match tokio::runtime::Handle::try_current() {
            Ok(h) if busy && h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(commit)
            }
            _ => commit(),
        }
        outcome.recv().unwrap_or_else(|_| {
            Err(ControlError::Store(crate::core::store::StoreError::Db(
                "the write was dropped by the writer committing it".into(),
            )))
        })
    }

    /// Keep disconnected agents' rows for `retention`.
    pub fn set_agent_retention(&self, retention: std::time::Duration) {
        *lock(&self.agent_retention) = retention;
    }

    /// Drop agent rows past their retention.
    pub(crate) fn evict_agents(&self) {
        let retention = *lock(&self.agent_retention);
        lock(&self.agents).evict(now().0, retention);
    }

    /// Record where the HTTP listener can be reached (once, after binding).
    pub fn set_http_address(&self, address: String) {
        let _ = self.http_address.set(address);
    }

    /// Record the bound listeners (once).
    pub fn set_own_listeners(&self, listeners: Vec<std::net::SocketAddr>) {
        let _ = self.own_listeners.set(listeners);
    }

    /// The bound listeners (empty until recorded).
    pub fn own_listeners(&self) -> &[std::net::SocketAddr] {
        self.own_listeners.get().map_or(&[], Vec::as_slice)
    }

    /// Where the HTTP listener can be reached, once bound.
    pub fn http_address(&self) -> Option<&str> {
        self.http_address.get().map(String::as_str)
    }

    /// The Raft node, in a cluster.
    pub fn cluster(&self) -> Option<&Arc<Cluster>> {
        self.cluster.as_ref()
    }

    /// Where decisions are made when it is not here: `Err` with the
    /// leader's hint (or `None` while no leader is known) on a cluster node
    /// that does not lead; `Ok` on a single node or the leader.
    pub fn leader_elsewhere(&self) -> Result<(), Option<crate::replication::cluster::LeaderHint>> {
        match &self.cluster {
            Some(c) if !c.leading() => Err(c.leader()),
            _ => Ok(()),
        }
    }

    /// Replace the control core with the one `build` makes, holding the
    /// lock throughout so no replicated commit lands in between; the new
    /// core's version.
    pub fn replace_control(
        &self,
        build: impl FnOnce() -> Result<Control, crate::core::control::ControlError>,
    ) -> Result<u64, crate::core::control::ControlError> {
        self.with_control(|control| {
            *control = build()?;
            self.view.store(Arc::new(control.view()));
            Ok(control.version())
        })
    }

    /// Tell agent streams the node's role changed (they may have to move).
    pub fn role_changed(&self) {
        self.role.send_modify(|r| *r += 1);
    }

    /// A receiver that sees every role change.
    pub fn watch_role(&self) -> watch::Receiver<u64> {
        self.role.subscribe()
    }

    /// Run `f` on the control core, then wake the streams whose watch moved.
    /// Waiting for a busy core happens off the runtime's workers
    /// (`block_in_place`), so the tasks queued behind this one move on;
    /// short work on a free core runs in place (a hand-off per call cost a
    /// single write 0.7 ms with one core). Work that is long (a read whose
    /// answer is large, an apply, a backup) uses
    /// [`Service::with_control_long`].
    pub fn with_control<R>(&self, f: impl FnOnce(&mut Control) -> R) -> R {
        let busy = self.control.try_lock().is_err();
        self.on_core(busy, f)
    }

    /// [`Service::with_control`] for long work: always off the worker, so
    /// `/livez`, `/metrics` and the streams (even a task in this worker's
    /// LIFO slot, which no other worker may steal) keep running.
    pub fn with_control_long<R>(&self, f: impl FnOnce(&mut Control) -> R) -> R {
        self.on_core(true, f)
    }

    fn on_core<R>(&self, off: bool, f: impl FnOnce(&mut Control) -> R) -> R {
        let run = || {
            let mut control = lock(&self.control);
            let result = f(&mut control);
            let (version, generation) = (control.version(), control.catalog_generation());
            let shown = self.view.load();
            if (shown.version(), shown.catalog_generation()) != (version, generation) {
                // Published before the core is let go: a read that follows
                // an acknowledged write sees it.
                self.view.store(Arc::new(control.view()));
            }
            (result, version, generation)
        };
        let (result, version, generation) = if off { off_worker(run) } else { run() };
        self.version.send_if_modified(|v| {
            let moved = *v != version;
            *v = version;
            moved
        });
        self.catalog.send_if_modified(|g| {
            let moved = *g != generation;
            *g = generation;
            moved
        });
        result
    }

    /// A receiver that sees every catalog change.
    pub fn watch_catalog(&self) -> watch::Receiver<u64> {
        self.catalog.subscribe()
    }

    /// A receiver that sees every version change.
    pub fn watch_version(&self) -> watch::Receiver<u64> {
        self.version.subscribe()
    }
}
