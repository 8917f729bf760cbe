//! What the API keeps of notification deliveries: each target's status on
//! this node (written by `api::notify`'s workers, read by the status
//! calls), and the check that refuses a target whose URL reaches a denied
//! destination before it is written.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use gslb_proto::pb;
use gslb_shared::NotifierId;
use gslb_shared::validate::ValidationError;

use super::Service;
use crate::core::catalog::{CatalogError, Object, Op};
use crate::core::control::ControlError;
use crate::core::lock;

/// What one target's deliveries have done on this node.
#[derive(Debug, Clone, Default, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetStatus {
    /// Events delivered.
    pub delivered: u64,
    /// Tries that failed.
    pub failures: u64,
    /// Events given up after a day of retries.
    pub given_up: u64,
    /// Failed tries of the event at the head.
    pub attempts: u32,
    /// When the head is tried again (ms since the Unix epoch; 0: not waiting).
    pub next_attempt_ms: u64,
    /// The last failure.
    pub last_error: String,
    /// When it happened.
    pub last_error_ms: u64,
    /// The last delivery.
    pub last_delivered_ms: u64,
}

/// Each target's delivery status, shared by the workers and the API.
#[derive(Debug, Default)]
pub struct Board {
    targets: std::sync::Mutex<HashMap<NotifierId, TargetStatus>>,
    delivering: AtomicBool,
}

impl Board {
    /// Change target `id`'s status.
    pub(crate) fn update(&self, id: NotifierId, f: impl FnOnce(&mut TargetStatus)) {
        f(lock(&self.targets).entry(id).or_default());
    }

    /// Target `id`'s status.
    pub fn get(&self, id: NotifierId) -> TargetStatus {
        lock(&self.targets).get(&id).cloned().unwrap_or_default()
    }

    /// True while this node delivers.
    pub fn delivering(&self) -> bool {
        self.delivering.load(Ordering::Relaxed)
    }

    /// Say whether this node delivers.
    pub fn set_delivering(&self, delivering: bool) {
        self.delivering.store(delivering, Ordering::Relaxed);
    }
}

/// How long the API waits for a target's host name to resolve.
const RESOLVE_AT_API: Duration = Duration::from_secs(2);

/// The addresses of `host` (an address itself, or a name resolved within
/// `timeout`) at `port`.
pub async fn addresses(
    host: &str,
    port: u16,
    timeout: Duration,
) -> Result<Vec<std::net::SocketAddr>, String> {
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return Ok(vec![std::net::SocketAddr::new(ip, port)]);
    }
    match tokio::time::timeout(timeout, tokio::net::lookup_host((host, port))).await {
        Ok(Ok(addrs)) => Ok(addrs.collect()),
        Ok(Err(e)) => Err(format!("resolve {host}: {e}")),
        Err(_) => Err(format!(
            "resolve {host}: no answer within {} s",
            timeout.as_secs()
        )),
    }
}

/// Refuse a write of a notification target whose URL reaches a denied
/// destination: a denied range, or one of this node's own listeners (by
/// address, or by a host name resolving to one). A name that does not
/// resolve now is let through: every delivery checks again.
pub async fn refuse_denied(service: &Service, ops: &[Op]) -> Result<(), ControlError> {
    let deny = service.deny();
    for (i, op) in ops.iter().enumerate() {
        let url = match op.inner() {
            Op::Create(Object::Notifier(n)) | Op::Update(Object::Notifier(n)) => n.url.as_str(),
            // A patch that changes the URL is checked as an update is.
            Op::Patch {
                target: crate::core::catalog::ObjectRef::Notifier(_),
                fields,
            } => match fields.get("url").and_then(|u| u.as_str()) {
                Some(url) => url,
                None => continue,
            },
            _ => continue,
        };
        let Ok(uri) = gslb_shared::validate::url(url) else {
            continue; // validation names the rule
        };
        let Some((host, port)) = gslb_shared::validate::endpoint(&uri) else {
            continue;
        };
        let addrs = addresses(host, port, RESOLVE_AT_API)
            .await
            .unwrap_or_default();
        for addr in addrs {
            if let Err(why) = deny.check(addr) {
                let field = if ops.len() == 1 {
                    "url".to_owned()
                } else {
                    format!("ops[{i}].url")
                };
                return Err(CatalogError::Invalid(ValidationError::single(
                    field,
                    format!("{url} is denied: {why} (notifications never go to link-local or metadata addresses, or to this aggregator)"),
                ))
                .into());
            }
        }
    }
    Ok(())
}

/// One target's delivery, as the status API shows it.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct TargetView {
    /// Target id.
    pub id: u64,
    /// Its name.
    pub name: String,
    /// Its kind.
    pub kind: String,
    /// Every event up to this sequence number is done.
    pub delivered_through: u64,
    /// Events after it (not all may be for this target).
    pub pending: u64,
    /// False until a new target has been placed at the newest event.
    pub positioned: bool,
    /// This node's figures.
    #[serde(flatten)]
    pub status: TargetStatus,
}

/// The outbox and each target's delivery, as the status API shows them.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase")]
pub struct StatusView {
    /// Events kept.
    pub outbox: u64,
    /// Sequence number of the newest event.
    pub last_event: u64,
    /// True on the node that delivers.
    pub delivering: bool,
    /// Events dropped unsent because the outbox was full.
    pub dropped: u64,
    /// Each target.
    pub targets: Vec<TargetView>,
}

/// The outbox and each target's delivery on this node.
pub fn status(service: &Service) -> Result<StatusView, crate::core::store::StoreError> {
    let view = service.view();
    let outbox = view.outbox()?;
    let board = service.notifications();
    let targets = (view.catalog().notifiers.values())
        .map(|n| {
            let through = outbox
                .cursors
                .get(&n.id)
                .copied()
                .unwrap_or(outbox.last_seq);
            TargetView {
                id: n.id.0,
                name: n.name.clone(),
                kind: n.kind.as_str().into(),
                delivered_through: through,
                pending: outbox.last_seq.saturating_sub(through),
                positioned: outbox.cursors.contains_key(&n.id),
                status: board.get(n.id),
            }
        })
        .collect();
    Ok(StatusView {
        outbox: outbox.len(),
        last_event: outbox.last_seq,
        delivering: board.delivering(),
        dropped: outbox.dropped,
        targets,
    })
}

impl From<StatusView> for pb::NotificationStatus {
    fn from(v: StatusView) -> Self {
        pb::NotificationStatus {
            outbox: v.outbox,
            last_event: v.last_event,
            delivering: v.delivering,
            dropped: v.dropped,
            targets: (v.targets.into_iter())
                .map(|t| pb::NotifierStatus {
                    id: t.id,
                    name: t.name,
                    kind: t.kind,
                    delivered_through: t.delivered_through,
                    pending: t.pending,
                    delivered: t.status.delivered,
                    failures: t.status.failures,
                    given_up: t.status.given_up,
                    attempts: t.status.attempts,
                    next_attempt_ms: t.status.next_attempt_ms,
                    last_error: t.status.last_error,
                    last_error_ms: t.status.last_error_ms,
                    last_delivered_ms: t.status.last_delivered_ms,
                    positioned: t.positioned,
                })
                .collect(),
        }
    }
}
