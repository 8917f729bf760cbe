//! Agents, edges and the cluster, as this node knows them.

use std::sync::Arc;

use axum::Extension;
use axum::extract::State;
use axum::response::Response;
use maud::html;

use super::super::Ui;
use super::super::auth::Caller;
use crate::api::membership;
use crate::api::service::admin::views;

/// `GET /ui/agents`.
pub async fn agents(State(ui): State<Arc<Ui>>, Extension(caller): Extension<Caller>) -> Response {
    if let Some(refused) = super::unscoped(&caller, "Agents") {
        return refused;
    }
    let list = views::agents(&ui.service);
    let now = crate::core::now().0;
    super::page(
        &caller,
        "Agents",
        "/ui/agents",
        html! {
            @if list.agents.is_empty() { p { "No agent has connected to this node." } }
            table {
                thead { tr {
                    th scope="col" { "agent" } th scope="col" { "location" } th scope="col" { "region" }
                    th scope="col" { "state" } th scope="col" { "connected since" } th scope="col" { "results/s" }
                    th scope="col" { "targets" } th scope="col" { "last heard" } th scope="col" { "version" }
                } }
                tbody {
                    @for a in &list.agents {
                        tr {
                            th scope="row" { (a.agent_id) }
                            td { (a.location) } td { (a.region) }
                            td class=(if a.connected { "pass" } else { "fail" }) { @if a.connected { "connected" } @else { "disconnected" } }
                            td { @if a.connected { (super::rfc3339(a.connected_since_ms)) } @else { "-" } }
                            td.num { (format!("{:.1}", a.results_per_second)) }
                            td.num { (a.assignments) }
                            td { (super::age(now.saturating_sub(a.last_seen_ms))) " ago" }
                            td { (a.version) }
                        }
                    }
                }
            }
            p.small { "results/s is measured over whole 10 s windows." }
        },
    )
}

/// `GET /ui/edges`.
pub async fn edges(State(ui): State<Arc<Ui>>, Extension(caller): Extension<Caller>) -> Response {
    if let Some(refused) = super::unscoped(&caller, "Edges") {
        return refused;
    }
    let list = views::edges(&ui.service);
    let current = ui.service.view().version();
    let now = crate::core::now().0;
    super::page(
        &caller,
        "Edges",
        "/ui/edges",
        html! {
            p { "Current version on this node: " strong { (current) } }
            @if list.edges.is_empty() { p { "No edge has subscribed to this node." } }
            table {
                thead { tr {
                    th scope="col" { "edge" } th scope="col" { "applied version" } th scope="col" { "behind" }
                    th scope="col" { "lag" } th scope="col" { "state" } th scope="col" { "last heard" }
                } }
                tbody {
                    @for e in &list.edges {
                        @let state = if !e.connected { "disconnected" } else if !e.skipped.is_empty() { "degraded" } else if e.applied_version >= current { "current" } else { "catching up" };
                        tr {
                            th scope="row" { (e.edge_id) }
                            td.num { (e.applied_version) }
                            td.num { (current.saturating_sub(e.applied_version)) " versions" }
                            td.num { (e.lag_ms) " ms" }
                            td class=(if state == "current" { "pass" } else { "fail" }) {
                                (state)
                                @if !e.skipped.is_empty() { ": " (e.skipped.join("; ")) }
                            }
                            td { (super::age(now.saturating_sub(e.last_seen_ms))) " ago" }
                        }
                    }
                }
            }
        },
    )
}

/// `GET /ui/cluster`.
pub async fn cluster(State(ui): State<Arc<Ui>>, Extension(caller): Extension<Caller>) -> Response {
    if let Some(refused) = super::unscoped(&caller, "Cluster") {
        return refused;
    }
    let status = membership::status(&ui.service);
    super::page(
        &caller,
        "Cluster",
        "/ui/cluster",
        html! {
            dl.facts {
                dt { "this node" } dd { @if status.node_id == 0 { "runs alone (no --node-id)" } @else { "node " (status.node_id) } }
                dt { "role" } dd #role { (status.role) }
                @if status.node_id != 0 {
                    dt { "leader" } dd #leader { @if status.leader_id == 0 { "none known" } @else { "node " (status.leader_id) " at " (status.leader_address) } }
                    dt { "term" } dd { (status.term) }
                    dt { "last log index" } dd { (status.last_log_index) }
                    dt { "applied index" } dd { (status.applied_index) }
                }
                dt { "version" } dd { (status.version) }
                dt { "HTTP address" } dd { (status.http_address) }
            }
            @if !status.nodes.is_empty() {
                table {
                    thead { tr { th scope="col" { "node" } th scope="col" { "address" } th scope="col" { "voter" } th scope="col" { "matched index" } th scope="col" { "lag" } } }
                    tbody {
                        @for n in &status.nodes {
                            tr {
                                th scope="row" { (n.id) @if n.id == status.leader_id { " (leader)" } }
                                td { (n.address) } td { (n.voter) }
                                td.num { (n.matched_index.map_or_else(|| "-".to_owned(), |i| i.to_string())) }
                                td.num { (n.lag.map_or_else(|| "-".to_owned(), |i| i.to_string())) }
                            }
                        }
                    }
                }
                p.small { "Matched index and lag are known on the leader only." }
            }
        },
    )
}
