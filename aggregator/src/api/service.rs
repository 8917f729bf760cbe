//! The running aggregator's shared state: the way to the control core (its
//! one owner, `owner`, takes operations on a channel), the read view, a
//! version watch that wakes every agent and edge stream when something
//! changes, and the registries of connected agents and edges. The gRPC
//! services in the submodules are thin adapters over it.

pub mod admin;
pub mod agents;
pub mod deliveries;
pub mod edges;
pub mod keys;
mod owner;
pub(crate) mod quota;
pub mod registry;
pub mod status;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use gslb_shared::LocationId;
use tokio::sync::{mpsc, oneshot, watch};

use crate::api::caller;
use crate::core::catalog::{Change, Op};
use crate::core::control::{Control, ControlError, View};
use crate::replication::cluster::Cluster;
use owner::{Command, Published, Reply};

/// What the aggregator knows about an agent.
#[derive(Debug, Clone, PartialEq)]
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
    /// When that stream registered, ms since the Unix epoch.
    pub connected_since_ms: u64,
    /// Results received and their rate (see [`registry::Rate`]).
    pub results: registry::Rate,
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

/// Run long work (a large read's rendering, a parse, a backup) on the
/// runtime's blocking pool, where it cannot stall the tasks on its workers;
/// its result (a panic in `f` is the caller's).
pub async fn off_worker<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    match tokio::task::spawn_blocking(f).await {
        Ok(result) => result,
        Err(e) => match e.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            Err(e) => panic!("blocking work did not finish: {e}"),
        },
    }
}

/// How long a disconnected agent's row is kept unless configured.
pub const DEFAULT_AGENT_RETENTION: std::time::Duration = std::time::Duration::from_secs(3600);

/// Shared state of a running aggregator.
#[derive(Debug)]
pub struct Service {
    /// The way to the control core's owner (see `owner`).
    core: mpsc::Sender<Command>,
    /// The current version; edge streams wait on it.
    version: watch::Receiver<u64>,
    /// The catalog generation; agent streams wait on it, so a health
    /// decision (a new version) does not wake them.
    catalog: watch::Receiver<u64>,
    /// Member cycles closed; the web UI's live view waits on it.
    health: watch::Receiver<u64>,
    /// Moved when a single node's deferred notification events are durable.
    outbox: watch::Receiver<u64>,
    /// Agents by id.
    pub(crate) agents: Mutex<registry::Registry>,
    /// How long a disconnected agent's row is kept.
    agent_retention: Mutex<std::time::Duration>,
    /// Connected agent streams per location (the engine hears of a location
    /// leaving only when its last agent does).
    pub(crate) locations: Mutex<HashMap<LocationId, usize>>,
    /// Edges by id.
    pub(crate) edges: Mutex<BTreeMap<String, EdgeInfo>>,
    /// Agent streams' assignment sets, one per list of checks run.
    pub(crate) assignment_sets: Arc<Mutex<crate::core::assignments::SharedSets>>,
    /// The Raft node, when this aggregator is one of a cluster.
    cluster: Option<Arc<Cluster>>,
    /// Bumped when the node's role changes; agent streams wait on it.
    role: watch::Sender<u64>,
    /// The HTTP listener's address as clients should reach it (REST
    /// redirects to the leader use the leader's).
    http_address: std::sync::OnceLock<String>,
    /// The bound gRPC and HTTP listeners, told to agents so they never probe them.
    own_listeners: std::sync::OnceLock<Vec<std::net::SocketAddr>>,
    /// MaxMind files explain places client addresses with (`--geo-mmdb`).
    geo: std::sync::OnceLock<crate::api::geo::ExplainGeo>,
    /// Where notifications may not go: the denied ranges and, once bound,
    /// this node's own listeners.
    deny: std::sync::OnceLock<Arc<gslb_shared::destination::DenyList>>,
    /// Each notification target's delivery on this node.
    notifications: Arc<deliveries::Board>,
    /// Open streams per kind and caller identity ([`quota`]).
    pub(crate) quotas: Mutex<HashMap<String, usize>>,
    /// The core's state as reads see it: replaced by the owner after every
    /// operation that moved the version or the catalog (before answering
    /// it), so reads take it without ever waiting for the core.
    view: Arc<arc_swap::ArcSwap<View>>,
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
        let (version_tx, version) = watch::channel(control.version());
        let (catalog_tx, catalog) = watch::channel(control.catalog_generation());
        let (health_tx, health) = watch::channel(control.engine().counters().closed);
        let (outbox_tx, outbox) = watch::channel(0);
        let view = Arc::new(arc_swap::ArcSwap::from_pointee(control.view()));
        let core = owner::spawn(
            control,
            Published {
                view: Arc::clone(&view),
                version: version_tx,
                catalog: catalog_tx,
                health: health_tx,
                outbox: outbox_tx,
            },
        );
        Self {
            core,
            version,
            catalog,
            health,
            outbox,
            agents: Mutex::default(),
            agent_retention: Mutex::new(DEFAULT_AGENT_RETENTION),
            locations: Mutex::default(),
            edges: Mutex::default(),
            assignment_sets: Arc::default(),
            cluster,
            role: watch::channel(0).0,
            http_address: std::sync::OnceLock::new(),
            own_listeners: std::sync::OnceLock::new(),
            geo: std::sync::OnceLock::new(),
            deny: std::sync::OnceLock::new(),
            notifications: Arc::default(),
            quotas: Mutex::default(),
            view,
        }
    }

    /// The view and, taken with it, the engine state status reads need.
    /// The core's part is O(1) of the members (see
    /// [`gslb_engine::StatusView`]): a read never holds up writes or ingest
    /// for longer, whatever its size.
    pub async fn status_view(&self) -> (Arc<View>, gslb_engine::StatusView) {
        let published = Arc::clone(&self.view);
        // The owner publishes after every operation that moves the view, so
        // between operations the published view is the core's.
        self.call(move |c| (published.load_full(), c.engine().status_view()))
            .await
    }

    /// The core's state as of the last operation (never waits for the core).
    pub fn view(&self) -> Arc<View> {
        self.view.load_full()
    }

    /// One write of one op; its change. Writes that arrive while the core
    /// is busy are committed together (one fsync, or one Raft entry), each
    /// acknowledged or refused on its own.
    pub async fn write_one(&self, mut op: Op) -> Result<Change, ControlError> {
        crate::core::catalog::refuse_client_ids(std::slice::from_ref(&op))?;
        deliveries::refuse_denied(self, std::slice::from_ref(&op)).await?;
        crate::api::secrets::fill(std::slice::from_mut(&mut op));
        let (reply, outcome) = oneshot::channel();
        if self
            .core
            .send(Command::Write(Box::new(op), caller::current(), reply))
            .await
            .is_err()
        {
            return Err(stopped());
        }
        outcome.await.unwrap_or_else(|_| Err(stopped()))
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

    /// Record the bound listeners (once); notifications never go to them.
    pub fn set_own_listeners(&self, listeners: Vec<std::net::SocketAddr>) {
        let deny =
            gslb_shared::destination::DenyList::new(gslb_shared::destination::default_ranges());
        let text: Vec<String> = listeners.iter().map(ToString::to_string).collect();
        deny.deny_listeners(&text);
        let _ = self.deny.set(Arc::new(deny));
        let _ = self.own_listeners.set(listeners);
    }

    /// Where notifications may not go.
    pub fn deny(&self) -> Arc<gslb_shared::destination::DenyList> {
        Arc::clone(self.deny.get_or_init(|| {
            Arc::new(gslb_shared::destination::DenyList::new(
                gslb_shared::destination::default_ranges(),
            ))
        }))
    }

    /// Each notification target's delivery on this node.
    pub fn notifications(&self) -> &deliveries::Board {
        &self.notifications
    }

    /// Set the geo data explain uses (once).
    pub fn set_geo(&self, geo: crate::api::geo::ExplainGeo) {
        let _ = self.geo.set(geo);
    }

    /// Explain a name for a client (a region, or an address placed with
    /// the region table and MaxMind files if any): every selection step.
    pub fn explain(
        &self,
        request: &gslb_proto::pb::ExplainRequest,
    ) -> Result<gslb_proto::pb::ExplainResponse, tonic::Status> {
        let geo = self.geo.get().map(|g| g.current()).unwrap_or_default();
        crate::api::service::admin::views::explain(&self.view(), request, &geo)
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
            Some(c) if !self.leading() => Err(c.leader(false)),
            _ => Ok(()),
        }
    }

    /// True when this node is a cluster's confirmed leader: its core
    /// decides (read from the published view, never waiting for the core).
    pub fn leading(&self) -> bool {
        self.view().role() == crate::core::control::Role::Leader
    }

    /// Replace the control core with the one `build` makes, on the core
    /// (so no replicated commit lands in between); the new core's version.
    pub async fn replace_control(
        &self,
        build: impl FnOnce() -> Result<Control, ControlError> + Send + 'static,
    ) -> Result<u64, ControlError> {
        self.call(move |control| {
            *control = build()?;
            Ok(control.version())
        })
        .await
    }

    /// Tell agent streams the node's role changed (they may have to move).
    pub fn role_changed(&self) {
        self.role.send_modify(|r| *r += 1);
    }

    /// A receiver that sees every role change.
    pub fn watch_role(&self) -> watch::Receiver<u64> {
        self.role.subscribe()
    }

    /// Run `f` on the control core, in turn with every other operation;
    /// its result once the read view and the watches show its effect.
    pub async fn call<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Control) -> R + Send + 'static,
    ) -> R {
        let (reply, result) = oneshot::channel();
        self.core
            .send(job(f, reply))
            .await
            .unwrap_or_else(|_| panic!("{}", stopped()));
        result
            .await
            .unwrap_or_else(|_| panic!("an operation on the control core panicked"))
    }

    /// [`Service::call`] from a thread outside the runtime (blocks it).
    pub fn call_blocking<R: Send + 'static>(
        &self,
        f: impl FnOnce(&mut Control) -> R + Send + 'static,
    ) -> R {
        let (reply, result) = oneshot::channel();
        self.core
            .blocking_send(job(f, reply))
            .unwrap_or_else(|_| panic!("{}", stopped()));
        result
            .blocking_recv()
            .unwrap_or_else(|_| panic!("an operation on the control core panicked"))
    }

    /// A receiver that sees every catalog change.
    pub fn watch_catalog(&self) -> watch::Receiver<u64> {
        self.catalog.clone()
    }

    /// A receiver that sees every version change.
    pub fn watch_version(&self) -> watch::Receiver<u64> {
        self.version.clone()
    }

    /// A receiver that moves whenever member cycles closed.
    pub fn watch_health(&self) -> watch::Receiver<u64> {
        self.health.clone()
    }

    /// Moves when a single node's deferred notification events reach the
    /// outbox (a cluster's are there before the version moves).
    pub fn watch_outbox(&self) -> watch::Receiver<u64> {
        self.outbox.clone()
    }
}

/// `f` as a command whose result goes to `reply`.
fn job<R: Send + 'static, F: FnOnce(&mut Control) -> R + Send + 'static>(
    f: F,
    reply: oneshot::Sender<R>,
) -> Command {
    let run = Box::new(move |control: &mut Control| -> Reply {
        let result = f(control);
        Box::new(move || {
            let _ = reply.send(result);
        })
    });
    Command::Run(run, caller::current(), std::any::type_name::<F>())
}

/// The error of a call the core's owner can no longer take.
fn stopped() -> ControlError {
    ControlError::Store(crate::core::store::StoreError::Db(
        "the control core has stopped (the aggregator is shutting down)".into(),
    ))
}
