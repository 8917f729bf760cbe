//! Zone files: each zone downloaded as an RFC 1035 master file, and a
//! master file imported into a zone with the plan shown first (every
//! record set added, changed or left out, by name), then applied all or
//! nothing: the same import and export `gslbctl zone` runs.

use std::sync::Arc;

use axum::Extension;
use axum::extract::State;
use axum::response::Response;
use maud::html;

use super::super::Ui;
use super::super::auth::Caller;

/// `GET /ui/zonefiles`.
pub async fn page(State(ui): State<Arc<Ui>>, Extension(caller): Extension<Caller>) -> Response {
    let view = ui.service.view();
    let catalog = super::seen(view.catalog(), caller.scope.as_deref());
    super::page(
        &caller,
        "Zone files",
        "/ui/zonefiles",
        html! {
            h2 { "Download" }
            ul.objects {
                @for z in catalog.zones.values() {
                    li.object { a.download href=(format!("/ui/api/v1/zonefile?apex={}", z.apex)) download=(format!("{}zone", z.apex)) { "zone " (z.apex) } }
                }
            }
            h2 { "Import" }
            form #zonefile-form novalidate {
                div.field {
                    label for="zonefile-apex" { "Zone" }
                    select #zonefile-apex { @for z in catalog.zones.values() { option value=(z.apex) { (z.apex) } } }
                }
                div.field {
                    label for="zonefile-text" { "Master file (paste it, or choose a file)" }
                    textarea #zonefile-text rows="12" spellcheck="false" {}
                    input #zonefile-file type="file" aria-label="Choose a master file";
                }
                div.field.check {
                    input #zonefile-prune type="checkbox";
                    label for="zonefile-prune" { "Delete the zone's static record sets the file leaves out" }
                }
                div.field.check {
                    input #zonefile-strip type="checkbox";
                    label for="zonefile-strip" { "Drop the file's DNSSEC records (RRSIG, NSEC, DNSKEY, …) instead of refusing it" }
                }
                div.actions {
                    button #zonefile-plan type="button" { "Show plan" }
                    button.writes.danger #zonefile-apply type="button" disabled { "Import" }
                }
                p.form-error #zonefile-error role="alert" {}
            }
            div #zonefile-result hidden {
                h2 #zonefile-heading {}
                ul #zonefile-lines {}
            }
        },
    )
}
