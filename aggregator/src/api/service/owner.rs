//! The one owner of the control core: a thread that holds [`Control`] and
//! runs every operation on it in arrival order. Operations arrive as
//! commands on a bounded channel; each is answered on its own oneshot, and
//! only after the read view and the watches show its effect (a read that
//! follows an acknowledged write sees it). No lock is ever taken on the
//! core. Writes waiting together are validated in turn and committed as
//! one (group commit: one fsync, or one Raft entry, for all of them).
//!
//! A thread, not a task: the core does blocking IO (fsync, and a Raft
//! proposal that waits for its quorum), which must not stall the runtime.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use arc_swap::ArcSwap;
use tokio::sync::{mpsc, oneshot, watch};

use crate::core::audit::Attribution;
use crate::core::catalog::{Change, Op};
use crate::core::control::{Control, ControlError, View};
use crate::core::now;

/// Commands that may wait for the core before senders wait for room.
pub const QUEUE: usize = 4_096;
/// Most writes committed together.
pub const MAX_GROUP: usize = 1_024;
/// An operation that holds the core this long is logged (debug): every
/// other caller, agents' batches included, waited behind it.
const SLOW: Duration = Duration::from_millis(10);

/// Sends a finished operation's result once its effect is published.
pub(super) type Reply = Box<dyn FnOnce() + Send>;

/// One operation for the core.
pub(super) enum Command {
    /// Run on the core for a caller; returns how to answer.
    Run(
        Box<dyn FnOnce(&mut Control) -> Reply + Send>,
        Option<Attribution>,
        /// Where it comes from (the closure's type name), for the slow
        /// operation log.
        &'static str,
    ),
    /// One catalog write for a caller, committed with the writes queued
    /// beside it (boxed: an op is large, and the queue holds thousands of
    /// commands).
    Write(
        Box<Op>,
        Option<Attribution>,
        oneshot::Sender<Result<Change, ControlError>>,
    ),
}

/// Where the owner shows what the core holds after each operation.
pub(super) struct Published {
    /// The read view (reads never reach the core).
    pub view: Arc<ArcSwap<View>>,
    /// The version; edge streams wait on it.
    pub version: watch::Sender<u64>,
    /// The catalog generation; agent streams wait on it.
    pub catalog: watch::Sender<u64>,
    /// Member cycles closed so far; the web UI's live view waits on it
    /// (scores and warm-up passes move without a new version).
    pub health: watch::Sender<u64>,
    /// Bumped when a single node's deferred decisions that carried
    /// notification events became durable (they reach the outbox only
    /// then); the notifier waits on it besides the version.
    pub outbox: watch::Sender<u64>,
}

impl Published {
    /// Publish the view and move the watches if the operation moved them
    /// (a role change with no new version moves the view too: the API
    /// reads from it whether this node leads).
    fn show(&self, control: &Control) {
        let now = (
            control.version(),
            control.catalog_generation(),
            control.role(),
        );
        let (version, generation, _) = now;
        let shown = self.view.load();
        if (shown.version(), shown.catalog_generation(), shown.role()) != now {
            self.view.store(Arc::new(control.view()));
        }
        self.version
            .send_if_modified(|v| std::mem::replace(v, version) != version);
        self.catalog
            .send_if_modified(|g| std::mem::replace(g, generation) != generation);
        let closed = control.engine().counters().closed;
        self.health
            .send_if_modified(|c| std::mem::replace(c, closed) != closed);
    }
}

/// Start the owner of `control`; the sender is the only way to it. The
/// thread ends when every sender is gone.
pub(super) fn spawn(control: Control, published: Published) -> mpsc::Sender<Command> {
    let (tx, rx) = mpsc::channel(QUEUE);
    std::thread::Builder::new()
        .name("gslb-core".into())
        .spawn(move || own(control, rx, &published))
        .unwrap_or_else(|e| panic!("starting the control core's thread: {e}"));
    tx
}

/// Make the decisions just published durable: after the edges were told
/// (`Published::show`) and the callers answered, so the fsync is on
/// neither path, and before the next operation.
fn durable(control: &mut Control, published: &Published) {
    let events = control.deferred_events();
    match control.flush_deferred() {
        Ok(()) if events => published.outbox.send_modify(|n| *n += 1),
        Ok(()) => {}
        Err(e) => {
            tracing::error!(error = %e, "published decisions not yet durable; retried with the next operation")
        }
    }
}

fn own(mut control: Control, mut rx: mpsc::Receiver<Command>, published: &Published) {
    let mut next = None;
    loop {
        let command = match next.take() {
            Some(command) => command,
            None => match rx.blocking_recv() {
                Some(command) => command,
                None => return,
            },
        };
        match command {
            Command::Run(job, by, site) => {
                // A panicking operation fails its caller only (its reply is
                // dropped); the core goes on for everyone else.
                let start = Instant::now();
                control.attribute(by);
                let reply = std::panic::catch_unwind(AssertUnwindSafe(|| job(&mut control)));
                control.attribute(None);
                let ran = start.elapsed();
                published.show(&control);
                match reply {
                    Ok(reply) => reply(),
                    Err(_) => tracing::error!("an operation on the control core panicked"),
                }
                let shown = start.elapsed();
                durable(&mut control, published);
                let took = start.elapsed();
                if took >= SLOW {
                    tracing::debug!(
                        site,
                        ran_ms = ran.as_millis() as u64,
                        shown_ms = (shown - ran).as_millis() as u64,
                        durable_ms = (took - shown).as_millis() as u64,
                        "slow operation on the control core"
                    );
                }
            }
            Command::Write(op, by, reply) => {
                let mut writes = vec![((*op, by), reply)];
                // Everything already waiting joins this commit; anything
                // else waits its turn, right after it.
                while writes.len() < MAX_GROUP {
                    match rx.try_recv() {
                        Ok(Command::Write(op, by, reply)) => writes.push(((*op, by), reply)),
                        Ok(other) => {
                            next = Some(other);
                            break;
                        }
                        Err(_) => break,
                    }
                }
                let (ops, replies): (Vec<(Op, Option<Attribution>)>, Vec<_>) =
                    writes.into_iter().unzip();
                let outcomes = std::panic::catch_unwind(AssertUnwindSafe(|| {
                    control.write_grouped(ops, now())
                }));
                published.show(&control);
                match outcomes {
                    Ok(outcomes) => {
                        for (reply, outcome) in replies.into_iter().zip(outcomes) {
                            let _ = reply.send(outcome);
                        }
                    }
                    Err(_) => tracing::error!("a group of writes panicked on the control core"),
                }
                durable(&mut control, published);
            }
        }
    }
}
