//! Keeping a node's control core in step with the log and its role:
//! applied commits go into the mirror; a change of role (or a failed
//! proposal) rebuilds the core from the applied state, as a decider on the
//! confirmed leader and as a mirror everywhere else.

use std::sync::Arc;
use std::time::Duration;

use openraft::ServerState;
use tokio::sync::mpsc::UnboundedReceiver;

use crate::api::service::{Service, now};
use crate::core::control::{Control, Role};
use crate::replication::cluster::{Cluster, RaftStore};
use crate::replication::raft::Event;

/// How often the leader confirms its quorum when nothing else happens.
const CONFIRM_EVERY: Duration = Duration::from_millis(500);

/// Run until the node's event stream closes: apply what the log applied,
/// and rebuild the control core whenever this node's role changes.
pub async fn follow(
    service: Arc<Service>,
    cluster: Arc<Cluster>,
    mut events: UnboundedReceiver<Event>,
) {
    let mut metrics = cluster.raft.metrics();
    let mut confirm = tokio::time::interval(CONFIRM_EVERY);
    confirm.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    // Set when the core must be rebuilt from the applied state; cleared
    // only once a rebuild succeeds.
    let mut diverged = false;
    loop {
        let mut probe = false;
        tokio::select! {
            event = events.recv() => match event {
                None => return,
                // A confirmed leader's commits are its own, applied by the
                // core that proposed them: no round trip through here.
                Some(Event::Committed(..)) if service.view().role() == Role::Leader => {}
                Some(Event::Committed(index, commit)) => {
                    let applied = service
                        .call(move |c| c.apply_replicated(index, &commit, now()))
                        .await;
                    if let Err(err) = applied {
                        tracing::error!(index, error = %err, "applying a replicated commit failed; rebuilding");
                        diverged = true;
                    }
                }
                Some(Event::Installed) => {
                    tracing::info!("snapshot installed; rebuilding the state");
                    diverged = true;
                }
                Some(Event::Diverged) => diverged = true,
            },
            changed = metrics.changed() => if changed.is_err() {
                return;
            },
            _ = confirm.tick() => probe = true,
        }
        diverged = !reconcile(&service, &cluster, probe, diverged).await;
    }
}

/// Bring the control core's role in line with Raft's (and rebuild it when
/// it `diverged`); false when a needed rebuild failed (retried next time).
async fn reconcile(service: &Service, cluster: &Arc<Cluster>, probe: bool, diverged: bool) -> bool {
    let is_leader = cluster.raft.metrics().borrow().state == ServerState::Leader;
    let leading = service.leading();
    // A leader decides only once a quorum confirms it and every entry of
    // earlier terms is applied here; it stops when the quorum is gone.
    let lead = if is_leader && (!leading || probe || diverged) {
        match cluster.confirm().await {
            Ok(()) => true,
            Err(why) => {
                if leading {
                    tracing::warn!(%why, "leadership not confirmed; no decisions until it is");
                }
                false
            }
        }
    } else {
        is_leader && leading
    };
    if lead == leading && !diverged {
        return true;
    }
    let (store, engine) = (RaftStore::new(cluster.clone()), cluster.engine);
    let rebuilt = service
        .replace_control(move || {
            let control = Control::open(Box::new(store), engine, now())?;
            Ok(if lead {
                control.into_leader()
            } else {
                control.into_replica()
            })
        })
        .await;
    match rebuilt {
        Ok(version) => {
            service.role_changed();
            if lead {
                tracing::info!(
                    version,
                    "leading: the health engine runs here (startup gate first)"
                );
            } else {
                tracing::info!(version, leader = ?cluster.leader(false), "following the log");
            }
            true
        }
        Err(err) => {
            tracing::error!(error = %err, "rebuilding the state failed; retrying");
            false
        }
    }
}
