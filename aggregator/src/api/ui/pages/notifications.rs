//! Notifications: each target (its address with any secret path left
//! out, the events it takes) and how delivery to it stands (delivered,
//! waiting, failing since when and why), and the outbox as a whole.

use std::sync::Arc;

use axum::Extension;
use axum::extract::State;
use axum::response::Response;
use maud::html;

use super::super::Ui;
use super::super::auth::Caller;
use crate::api::service::off_worker;

/// `GET /ui/notifications`.
pub async fn page(State(ui): State<Arc<Ui>>, Extension(caller): Extension<Caller>) -> Response {
    if let Some(refused) = super::unscoped(&caller, "Notifications") {
        return refused;
    }
    let service = Arc::clone(&ui.service);
    let status = off_worker(move || crate::api::service::deliveries::status(&service)).await;
    let view = ui.service.view();
    let notifiers = &view.catalog().notifiers;
    super::page(
        &caller,
        "Notifications",
        "/ui/notifications",
        html! {
            @match &status {
                Err(e) => { p.error role="alert" { "The outbox could not be read: " (e) } }
                Ok(status) => {
                    p #outbox role="status" {
                        (status.outbox) " event(s) in the outbox, the newest number " (status.last_event)
                        @if status.dropped > 0 { "; " (status.dropped) " dropped when it was full" }
                        @if status.delivering { "; this node delivers." } @else { "; the leader delivers (this node does not)." }
                    }
                    @if status.targets.is_empty() { p.small { "No targets. Add one with " code { "gslbctl notifications create" } " or the REST API." } }
                    @else {
                        table #targets {
                            caption.sr-only { "Notification targets" }
                            thead { tr {
                                th scope="col" { "Target" } th scope="col" { "Kind" } th scope="col" { "Address" }
                                th scope="col" { "Delivered" } th scope="col" { "Waiting" } th scope="col" { "State" }
                            } }
                            tbody {
                                @for t in &status.targets {
                                    @let url = notifiers.get(&gslb_shared::NotifierId(t.id)).map(|n| gslb_shared::model::shown_url(&n.url)).unwrap_or_default();
                                    tr data-target=(t.name) {
                                        th scope="row" { (t.name) " " a.small href=(format!("/ui/audit?object=notifier/{}", t.id)) { "History" } }
                                        td { (t.kind) } td { code { (url) } }
                                        td.num { (t.status.delivered) } td.num { (t.pending) }
                                        td {
                                            @if t.status.attempts > 0 || t.status.given_up > 0 {
                                                span.state.unhealthy { "failing" } " "
                                                (t.status.attempts) " failed tries of the event at the head, " (t.status.given_up) " given up"
                                                @if !t.status.last_error.is_empty() { "; last error: " (t.status.last_error) }
                                                @if t.status.last_error_ms > 0 { " at " time datetime=(super::rfc3339(t.status.last_error_ms)) { (super::rfc3339(t.status.last_error_ms)) } }
                                                @if t.status.next_attempt_ms > 0 { "; next try " time datetime=(super::rfc3339(t.status.next_attempt_ms)) { (super::rfc3339(t.status.next_attempt_ms)) } }
                                            } @else { span.state.healthy { "delivering" } }
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
