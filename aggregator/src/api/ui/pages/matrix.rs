//! The probe matrix of a pool: members × locations, each cell the last
//! result (pass, or the failure), its latency and age, with quarantined and
//! stale locations marked and each member's score. The script fetches the
//! table again every [`REFRESH_MS`] while the page is shown (results
//! arrive every cycle whether or not a state changes), and ages each
//! result from when the aggregator received it.

use std::collections::BTreeSet;
use std::sync::Arc;

use axum::Extension;
use axum::extract::{Path, State};
use axum::response::Response;
use gslb_shared::status::PoolStatusView;
use gslb_shared::{MemberId, PoolId};
use maud::{Markup, html};

use super::super::Ui;
use super::super::auth::Caller;
use crate::api::service::admin::views;
use crate::core::control::View;

/// How often the page fetches the table again, in ms.
pub const REFRESH_MS: u64 = 2_000;

/// `GET /ui/pools/{id}`.
pub async fn page(
    State(ui): State<Arc<Ui>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<u64>,
) -> Response {
    match table(&ui, &caller, id).await {
        Some((name, table)) => super::page(
            &caller,
            &format!("Probe matrix: pool {name}"),
            "",
            html! {
                p { a href="/ui/" { "← Topology" } " · fetched every " (REFRESH_MS / 1000) " s · " span #matrix-updated { "updated " time #matrix-at datetime=(super::rfc3339(crate::core::now().0)) { "now" } } }
                div #matrix data-pool=(id) data-refresh-ms=(REFRESH_MS) { (table) }
            },
        ),
        None => super::missing(
            &caller,
            "Probe matrix",
            &format!("pool {id} does not exist"),
        ),
    }
}

/// `GET /ui/pools/{id}/matrix`: the table alone.
pub async fn fragment(
    State(ui): State<Arc<Ui>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<u64>,
) -> Response {
    let markup = match table(&ui, &caller, id).await {
        Some((_, table)) => table,
        None => html! { p.error { "pool " (id) " does not exist" } },
    };
    super::fragment(markup)
}

/// The pool's matrix, if it exists and the caller's scope covers it.
async fn table(ui: &Ui, caller: &Caller, id: u64) -> Option<(String, Markup)> {
    let pool = crate::core::catalog::ObjectRef::Pool(PoolId(id));
    if !super::sees(caller, ui.service.view().catalog(), pool) {
        return None;
    }
    let now = crate::core::now();
    let (view, status) = views::pool_status(&ui.service, PoolId(id), now)
        .await
        .ok()?;
    let name = view.catalog().pools.get(&PoolId(id))?.name.clone();
    Some((name, render(&view, &status, now.0)))
}

fn render(view: &View, status: &PoolStatusView, now_ms: u64) -> Markup {
    let catalog = view.catalog();
    let interval = catalog
        .pools
        .get(&PoolId(status.pool_id))
        .and_then(|p| p.check)
        .and_then(|c| catalog.checks.get(&c))
        .map(|c| c.interval);
    let locations: BTreeSet<&str> = status
        .members
        .iter()
        .flat_map(|m| m.locations.iter().map(|l| l.location.as_str()))
        .collect();
    let quarantined: BTreeSet<&str> = status
        .members
        .iter()
        .flat_map(|m| m.locations.iter())
        .filter(|l| l.quarantined)
        .map(|l| l.location.as_str())
        .collect();
    html! {
        @if locations.is_empty() {
            p { "No results yet: no agent has reported for this pool's members." }
        }
        table.matrix {
            caption { "Last result per member and location" @if let Some(i) = interval { " (check every " (humantime::format_duration(i)) ")" } }
            thead {
                tr {
                    th scope="col" { "member" }
                    th scope="col" { "state" }
                    th scope="col" { "score" }
                    @for l in &locations {
                        th scope="col" class=[quarantined.contains(l).then_some("quarantined")] {
                            (l) @if quarantined.contains(l) { br; span.mark { "quarantined" } }
                        }
                    }
                }
            }
            tbody {
                @for m in &status.members {
                    @let member = catalog.members.get(&MemberId(m.member_id));
                    tr data-member=(m.member_id) {
                        th scope="row" {
                            a href=(format!("/ui/members/{}/log", m.member_id)) { (member.map_or("?", |x| x.name.as_str())) }
                        }
                        td class=(m.state.word()) { (m.label) @if let Some(gate) = &m.gate { " (" (gate) ")" } }
                        td.num { (m.score.map_or_else(|| "-".to_owned(), |s| format!("{s:.2}"))) }
                        @for l in &locations {
                            @match m.locations.iter().find(|x| x.location == *l) {
                                Some(cell) => {
                                    @let class = if cell.passed { "pass" } else { "fail" };
                                    td class=(class) data-location=(l) {
                                        @if cell.passed { "pass" } @else { (cell.failure.map_or("fail", |f| f.as_str())) }
                                        br;
                                        span.small { (format!("{:.1} ms", f64::from(cell.latency_us) / 1000.0)) }
                                        @if let Some(at) = cell.received_ms {
                                            " · " span.small.age data-at=(at) { (super::age(now_ms.saturating_sub(at))) " ago" }
                                        }
                                        @if cell.stale { br; span.mark { "stale" } }
                                        @if cell.quarantined { br; span.mark { "quarantined" } }
                                    }
                                }
                                None => { td.none data-location=(l) { "-" } }
                            }
                        }
                    }
                }
            }
        }
    }
}
