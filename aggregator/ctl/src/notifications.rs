//! `gslbctl notifications`: targets that hear of health changes (a signed
//! webhook, Slack, PagerDuty), and how their deliveries are going. A
//! webhook's signing key is printed once, by `create`.

use gslb_proto::pb;
use gslb_shared::Secret;

use crate::{Client, CtlError, Output, table, time};

/// Notification actions.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum NotificationsAction {
    /// Create a target. A webhook without `--secret` gets a generated
    /// signing key, printed this once.
    Create {
        /// The target's name.
        name: String,
        /// webhook, slack or pagerduty.
        #[arg(long)]
        kind: String,
        /// Where events are posted (http:// or https://).
        #[arg(long)]
        url: String,
        /// A webhook's signing key (base64, 16 to 64 bytes).
        #[arg(long)]
        secret: Option<String>,
        /// PagerDuty's routing (integration) key, as PagerDuty shows it.
        #[arg(long)]
        routing_key: Option<String>,
        /// Only events of members and pools answering in this zone (repeatable).
        #[arg(long = "zone")]
        zones: Vec<String>,
        /// Only events of this pool and its members (repeatable).
        #[arg(long = "pool")]
        pools: Vec<String>,
        /// Only events of the member named so (repeatable).
        #[arg(long = "member")]
        members: Vec<String>,
        /// Only these events (repeatable): member_down, member_up,
        /// pool_not_eligible, pool_eligible, fail_open_on, fail_open_off,
        /// protection_on, protection_off, location_quarantined,
        /// location_released, edge_stale, edge_fresh, agent_lost, agent_back.
        #[arg(long = "event")]
        events: Vec<String>,
    },
    /// List targets (secrets left out).
    List,
    /// Delete a target by name.
    Delete {
        /// The target's name.
        name: String,
    },
    /// How each target's deliveries are going: position, pending events,
    /// failures and the last error, the next retry.
    Status,
}

/// Run a notifications action.
pub async fn run(
    c: &mut Client,
    action: NotificationsAction,
    out: Output,
) -> Result<String, CtlError> {
    match action {
        NotificationsAction::Create {
            name,
            kind,
            url,
            secret,
            routing_key,
            zones,
            pools,
            members,
            events,
        } => {
            let secret = match (secret, routing_key) {
                (Some(_), Some(_)) => {
                    return Err(CtlError::Input(
                        "give --secret (webhook, slack) or --routing-key (pagerduty), not both"
                            .into(),
                    ));
                }
                (Some(text), None) => {
                    Secret::from_base64(&text)
                        .map_err(|e| CtlError::Input(format!("--secret {e}")))?
                        .0
                }
                (None, Some(key)) => key.into_bytes(),
                (None, None) => Vec::new(),
            };
            let made = c
                .create_notifier(pb::Notifier {
                    id: 0,
                    name,
                    kind,
                    url,
                    filter: Some(pb::NotifyFilter {
                        zones,
                        pools,
                        members,
                        events,
                    }),
                    secret,
                    ..Default::default()
                })
                .await?
                .into_inner();
            let shown = (made.kind == "webhook" || made.kind == "slack") && !made.secret.is_empty();
            let secret = Secret(made.secret.clone()).to_base64();
            Ok(match out {
                Output::Json => {
                    let mut v = target_json(&made);
                    if shown {
                        v["secret"] = serde_json::Value::String(secret);
                    }
                    v.to_string()
                }
                Output::Table if shown => format!(
                    "created notification target {} ({}, id {})\nsigning key: {secret}\n\
                     this is the only time the key is shown; receivers verify X-Gslb-Signature \
                     (v1=hex HMAC-SHA256 of \"TIMESTAMP.BODY\", TIMESTAMP from X-Gslb-Timestamp) with it\n",
                    made.name, made.kind, made.id
                ),
                Output::Table => format!(
                    "created notification target {} ({}, id {})\n",
                    made.name, made.kind, made.id
                ),
            })
        }
        NotificationsAction::List => {
            let targets = list(c).await?;
            Ok(match out {
                Output::Json => {
                    serde_json::Value::Array(targets.iter().map(target_json).collect()).to_string()
                }
                Output::Table => table::render(
                    &["ID", "NAME", "KIND", "URL", "FILTER"],
                    &(targets.iter())
                        .map(|t| {
                            vec![
                                t.id.to_string(),
                                t.name.clone(),
                                t.kind.clone(),
                                t.url.clone(),
                                filter_text(t.filter.as_ref()),
                            ]
                        })
                        .collect::<Vec<_>>(),
                ),
            })
        }
        NotificationsAction::Delete { name } => {
            let targets = list(c).await?;
            let target = (targets.iter()).find(|t| t.name == name).ok_or_else(|| {
                CtlError::Input(format!("no notification target is named {name}"))
            })?;
            c.delete_notifier(pb::IdRequest {
                id: target.id,
                ..Default::default()
            })
            .await?;
            Ok(format!(
                "deleted notification target {} (id {})\n",
                target.name, target.id
            ))
        }
        NotificationsAction::Status => {
            let s = c
                .get_notification_status(pb::ListRequest::default())
                .await?
                .into_inner();
            Ok(match out {
                Output::Json => status_json(&s).to_string(),
                Output::Table => status_table(&s),
            })
        }
    }
}

async fn list(c: &mut Client) -> Result<Vec<pb::Notifier>, CtlError> {
    Ok(c.list_notifiers(pb::ListRequest::default())
        .await?
        .into_inner()
        .notifiers)
}

fn target_json(t: &pb::Notifier) -> serde_json::Value {
    let f = t.filter.clone().unwrap_or_default();
    serde_json::json!({
        "id": t.id, "name": t.name, "kind": t.kind, "url": t.url,
        "filter": {"zones": f.zones, "pools": f.pools, "members": f.members, "events": f.events},
    })
}

/// A filter in one cell: `pools=web events=member_down,member_up`, or `all`.
fn filter_text(f: Option<&pb::NotifyFilter>) -> String {
    let Some(f) = f else {
        return "all".into();
    };
    let parts: Vec<String> = [
        ("zones", &f.zones),
        ("pools", &f.pools),
        ("members", &f.members),
        ("events", &f.events),
    ]
    .iter()
    .filter(|(_, list)| !list.is_empty())
    .map(|(name, list)| format!("{name}={}", list.join(",")))
    .collect();
    if parts.is_empty() {
        "all".into()
    } else {
        parts.join(" ")
    }
}

fn when(ms: u64) -> String {
    if ms == 0 { "-".into() } else { time::at_ms(ms) }
}

fn status_json(s: &pb::NotificationStatus) -> serde_json::Value {
    serde_json::json!({
        "outbox": s.outbox, "lastEvent": s.last_event, "delivering": s.delivering,
        "dropped": s.dropped,
        "targets": s.targets.iter().map(|t| serde_json::json!({
            "id": t.id, "name": t.name, "kind": t.kind,
            "deliveredThrough": t.delivered_through, "pending": t.pending,
            "delivered": t.delivered, "failures": t.failures, "givenUp": t.given_up,
            "attempts": t.attempts, "nextAttemptMs": t.next_attempt_ms,
            "lastError": t.last_error, "lastErrorMs": t.last_error_ms,
            "lastDeliveredMs": t.last_delivered_ms, "positioned": t.positioned,
        })).collect::<Vec<_>>(),
    })
}

fn status_table(s: &pb::NotificationStatus) -> String {
    let mut text = format!(
        "outbox: {} event(s) kept, newest #{}, {} dropped; {}\n",
        s.outbox,
        s.last_event,
        s.dropped,
        if s.delivering {
            "this node delivers"
        } else {
            "this node does not deliver (a follower: failures show on the leader)"
        }
    );
    text.push_str(&table::render(
        &[
            "NAME",
            "KIND",
            "THROUGH",
            "PENDING",
            "DELIVERED",
            "FAILURES",
            "GIVEN UP",
            "NEXT TRY",
            "LAST DELIVERED",
            "LAST ERROR",
        ],
        &(s.targets.iter())
            .map(|t| {
                let error = if t.last_error.is_empty() {
                    "-".to_owned()
                } else {
                    format!("{} ({})", t.last_error, when(t.last_error_ms))
                };
                let next = if t.next_attempt_ms == 0 {
                    "-".to_owned()
                } else {
                    format!("{} (try {})", when(t.next_attempt_ms), t.attempts + 1)
                };
                vec![
                    t.name.clone(),
                    t.kind.clone(),
                    format!("#{}", t.delivered_through),
                    t.pending.to_string(),
                    t.delivered.to_string(),
                    t.failures.to_string(),
                    t.given_up.to_string(),
                    next,
                    when(t.last_delivered_ms),
                    error,
                ]
            })
            .collect::<Vec<_>>(),
    ));
    text
}
