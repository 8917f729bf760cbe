//! Declarative apply: paste or upload a TOML (or JSON) document, see the
//! plan (what would be created, changed or deleted), then apply it. Both
//! steps call `POST /api/v1/config` (first with `dryRun`). The plan says
//! exactly what Apply will do: counts (+N ~N −N), each update's fields
//! (`weight 200 → 150`), deletions only with prune ticked (Apply stays off
//! otherwise), and a typed confirmation to delete more than
//! [`CONFIRM_ABOVE`] objects.

use axum::Extension;
use axum::response::Response;
use maud::html;

use super::super::auth::Caller;

/// Deletions above this many need the count typed to confirm.
pub const CONFIRM_ABOVE: usize = 3;

/// `GET /ui/apply`.
pub async fn page(Extension(caller): Extension<Caller>) -> Response {
    super::page(
        &caller,
        "Declarative apply",
        "/ui/apply",
        html! {
            p {
                "The catalog as this document: "
                a #export-toml href="/ui/api/v1/config?format=toml" download="gslb-config.toml" { "download TOML" }
                " · "
                a #export-json href="/ui/api/v1/config" download="gslb-config.json" { "download JSON" }
                " (what Apply and " code { "gslbctl apply" } " take back unchanged)."
            }
            form #apply-form {
                div.field {
                    label for="apply-file" { "Upload a document" }
                    input #apply-file type="file" accept=".toml,.json,text/plain,application/json";
                }
                div.field {
                    label for="apply-text" { "Or paste it (TOML or JSON, as " code { "gslbctl apply" } " takes)" }
                    textarea #apply-text rows="18" spellcheck="false" {}
                }
                div.field.check {
                    input #apply-prune type="checkbox";
                    label for="apply-prune" { "Delete what the document leaves out (prune)" }
                }
                div.field #apply-typed-field hidden {
                    label for="apply-typed" #apply-typed-label { "Type the number of deletions to confirm" }
                    input #apply-typed type="text" autocomplete="off" spellcheck="false";
                }
                div.actions data-confirm-above=(CONFIRM_ABOVE) {
                    button #apply-plan type="button" { "Show the plan" }
                    button.writes #apply-confirm type="button" disabled { "Apply this plan" }
                }
                p.form-error #apply-error role="alert" {}
            }
            section #apply-result aria-live="polite" hidden {
                h2 #apply-heading { "Plan" }
                p #apply-counts {}
                ul #apply-lines {}
            }
        },
    )
}
