//! The overview: what needs an operator now, each a link to where it is
//! seen in full. Members not healthy, pools not eligible, failing open,
//! under protection, answering from backups or with decisions paused,
//! agents disconnected, locations quarantined, edges behind and
//! notification targets failing. A scoped session sees its members and
//! pools only (the fleet is whole-node and left out for it).

use std::sync::Arc;

use axum::Extension;
use axum::extract::State;
use axum::response::Response;
use gslb_shared::status::MemberState;
use maud::{Markup, html};

use super::super::Ui;
use super::super::auth::Caller;
use super::super::live;
use crate::api::service::admin::views;
use crate::api::service::off_worker;

/// Rows shown per list; the rest are counted.
pub const SHOWN: usize = 50;

/// One problem: what it is, where to look, and why.
struct Problem {
    what: String,
    href: String,
    why: String,
}

/// `GET /ui/overview`.
pub async fn page(State(ui): State<Arc<Ui>>, Extension(caller): Extension<Caller>) -> Response {
    let (view, status) = ui.service.status_view().await;
    let scope = caller.scope.clone();
    let (members, pools) = off_worker(move || {
        let briefs = live::briefs(&view, status);
        let frame = live::frame(&view, &briefs);
        let catalog = super::seen(view.catalog(), scope.as_deref());
        let pool_name = |id: gslb_shared::PoolId| {
            catalog
                .pools
                .get(&id)
                .map_or_else(|| format!("pool {}", id.0), |p| p.name.clone())
        };
        let mut members = Vec::new();
        for m in catalog.members.values() {
            let Some(live) = frame.members.get(&m.id.0) else {
                continue;
            };
            if matches!(live.state, MemberState::Healthy | MemberState::Disabled) {
                continue;
            }
            let mut why = live.label.clone();
            if let Some(gate) = &live.gate {
                why.push_str(&format!(" ({gate})"));
            }
            if live.suppressed {
                why.push_str(", held down by flap damping");
            }
            members.push(Problem {
                what: format!("{}/{}", pool_name(m.pool), m.name),
                href: format!("/ui/members/{}/log", m.id.0),
                why,
            });
        }
        let mut pools = Vec::new();
        for p in catalog.pools.values() {
            let Some(live) = frame.pools.get(&p.id.0) else {
                continue;
            };
            let mut why = Vec::new();
            if !live.eligible {
                why.push("not eligible");
            }
            if live.fail_open {
                why.push("failing open");
            }
            if live.protected {
                why.push("protection threshold in force");
            }
            if live.using_backups {
                why.push("answering from backups");
            }
            if live.paused {
                why.push("decisions paused");
            }
            if !why.is_empty() {
                pools.push(Problem {
                    what: format!("pool {}", p.name),
                    href: format!("/ui/pools/{}", p.id.0),
                    why: why.join(", "),
                });
            }
        }
        (members, pools)
    })
    .await;
    let fleet = if caller.scope.is_none() {
        Some(fleet(&ui).await)
    } else {
        None
    };
    let all_clear = members.is_empty()
        && pools.is_empty()
        && fleet
            .as_ref()
            .is_none_or(|f| f.iter().all(|(_, _, l)| l.is_empty()));
    super::page(
        &caller,
        "Overview",
        "/ui/overview",
        html! {
            p #overview-summary role="status" {
                @if all_clear { "Nothing needs attention: every member is healthy or disabled, every pool answers normally." }
                @else { (members.len()) " member(s) and " (pools.len()) " pool(s) need attention." }
                " As of " time datetime=(super::rfc3339(crate::core::now().0)) { (super::rfc3339(crate::core::now().0)) } "."
            }
            (section("overview-members", "Members not healthy", &members))
            (section("overview-pools", "Pools not answering normally", &pools))
            @if let Some(fleet) = &fleet {
                @for (id, title, list) in fleet { (section(id, title, list)) }
            }
        },
    )
}

/// Agents disconnected, locations quarantined, edges behind and
/// notification targets failing, each with its section's id and title.
async fn fleet(ui: &Ui) -> Vec<(&'static str, &'static str, Vec<Problem>)> {
    let agents = views::agents(&ui.service)
        .agents
        .into_iter()
        .filter(|a| !a.connected)
        .map(|a| Problem {
            what: format!("agent {} ({})", a.agent_id, a.location),
            href: "/ui/agents".into(),
            why: format!(
                "disconnected, last heard {}",
                super::rfc3339(a.last_seen_ms)
            ),
        })
        .collect();
    let engine = ui
        .service
        .call(|c| views::engine(c.engine(), c.hold()))
        .await;
    let quarantined = engine
        .quarantined
        .into_iter()
        .map(|l| Problem {
            what: format!("location {l}"),
            href: "/ui/agents".into(),
            why: "quarantined: its results are left out of health decisions".into(),
        })
        .collect();
    let current = ui.service.view().version();
    let edges = views::edges(&ui.service)
        .edges
        .into_iter()
        .filter(|e| !e.connected || !e.skipped.is_empty() || e.applied_version < current)
        .map(|e| Problem {
            what: format!("edge {}", e.edge_id),
            href: "/ui/edges".into(),
            why: if !e.connected {
                "disconnected".into()
            } else if !e.skipped.is_empty() {
                format!("degraded: {}", e.skipped.join("; "))
            } else {
                format!(
                    "{} version(s) behind",
                    current.saturating_sub(e.applied_version)
                )
            },
        })
        .collect();
    let notifications = match crate::api::service::deliveries::status(&ui.service) {
        Ok(status) => status
            .targets
            .into_iter()
            .filter(|t| t.status.attempts > 0 || t.status.given_up > 0)
            .map(|t| Problem {
                what: format!("notification target {}", t.name),
                href: "/ui/objects".into(),
                why: format!(
                    "{} failed tries of the event at the head, {} given up; last error: {}",
                    t.status.attempts, t.status.given_up, t.status.last_error
                ),
            })
            .collect(),
        Err(e) => vec![Problem {
            what: "notifications".into(),
            href: "/ui/objects".into(),
            why: format!("the outbox could not be read: {e}"),
        }],
    };
    vec![
        ("overview-agents", "Agents disconnected", agents),
        ("overview-locations", "Locations quarantined", quarantined),
        ("overview-edges", "Edges behind", edges),
        (
            "overview-notifications",
            "Notifications failing",
            notifications,
        ),
    ]
}

fn section(id: &str, title: &str, list: &[Problem]) -> Markup {
    // Members and pools have a filtered view on the topology.
    let filtered = matches!(id, "overview-members" | "overview-pools") && !list.is_empty();
    html! {
        section #(id) aria-label=(title) {
            h2 { (title) " (" (list.len()) ")" }
            @if list.is_empty() { p.small { "None." } }
            @else {
                ul.problems {
                    @for p in list.iter().take(SHOWN) {
                        li { a href=(p.href) { (p.what) } ": " (p.why) }
                    }
                }
                @if list.len() > SHOWN { p.small { "and " (list.len() - SHOWN) " more." } }
                @if filtered { p.small { a.filtered href="/ui/?state=problems" { "Show only problems on the topology" } } }
            }
        }
    }
}
