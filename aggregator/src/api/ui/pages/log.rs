//! A member's health log: each transition with every location's evidence,
//! warm-up gate events and expiries, newest first, times in RFC 3339. The
//! script fetches it again when the live stream reports a change of the
//! member (a transition or a gate step is one), so new entries appear
//! without a reload.

use std::sync::Arc;

use axum::Extension;
use axum::extract::{Path, State};
use axum::response::Response;
use gslb_shared::MemberId;
use maud::html;

use super::super::Ui;
use super::super::auth::Caller;
use crate::api::rest::status::{failure_name, health_name};
use crate::api::service::admin::views;

/// Entries shown.
pub const LOG_ENTRIES: usize = 200;

/// `GET /ui/members/{id}/log`.
pub async fn page(
    State(ui): State<Arc<Ui>>,
    Extension(caller): Extension<Caller>,
    Path(id): Path<u64>,
) -> Response {
    let view = ui.service.view();
    let shown = super::sees(
        &caller,
        view.catalog(),
        crate::core::catalog::ObjectRef::Member(MemberId(id)),
    );
    let Some(member) = (view.catalog().members.get(&MemberId(id)).cloned()).filter(|_| shown)
    else {
        return super::missing(
            &caller,
            "Health log",
            &format!("member {id} does not exist"),
        );
    };
    let entries = match view.health_log(MemberId(id), LOG_ENTRIES) {
        Ok(entries) => entries,
        Err(e) => return super::missing(&caller, "Health log", &format!("health log: {e}")),
    };
    // The store gives them oldest first; the page shows the newest first.
    let entries: Vec<_> = entries.iter().rev().filter_map(views::log_entry).collect();
    let word = |h: i32| health_name(h).as_str().unwrap_or("-").to_owned();
    super::page(
        &caller,
        &format!("Health log: {}", member.name),
        "",
        html! {
            p {
                a href="/ui/" { "← Topology" } " · "
                a href=(format!("/ui/pools/{}", member.pool.0)) { "Probe matrix" } " · "
                (member.address.to_string()) ":" (member.port) " · newest first, at most " (LOG_ENTRIES) " · "
                span #live role="status" aria-live="polite" { "connecting…" }
            }
            div #log data-member=(id) {
            @if entries.is_empty() { p #log-empty { "No entries yet." } }
            table.log {
                thead { tr { th scope="col" { "time (RFC 3339)" } th scope="col" { "change" } th scope="col" { "reason" } th scope="col" { "cycle" } th scope="col" { "evidence per location" } } }
                tbody {
                    @for e in &entries {
                        tr {
                            td { time datetime=(super::rfc3339(e.at_ms)) { (super::rfc3339(e.at_ms)) } }
                            td { @if e.from == 0 && e.to == 0 { "-" } @else { (word(e.from)) " → " (word(e.to)) } }
                            td { (e.reason) }
                            td.num { @if e.cycle > 0 { (e.cycle) } }
                            td {
                                ul.evidence {
                                    @for ev in &e.evidence {
                                        li class=(ev.outcome.as_str()) {
                                            strong { (ev.location) } ": " (ev.outcome)
                                            @if let Some(f) = failure_name(ev.failure).as_str() { " (" (f) ")" }
                                            @if ev.outcome == "pass" || ev.outcome == "fail" { ", " (format!("{:.1} ms", f64::from(ev.latency_us) / 1000.0)) }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            }
        },
    )
}
