//! TSIG keys (zone transfers and NOTIFY): listed by name and algorithm,
//! made with a secret the server generates and shows once, to the page
//! that made it, and deleted after a confirmation naming the key.

use std::sync::Arc;

use axum::Extension;
use axum::extract::State;
use axum::response::Response;
use maud::html;

use super::super::Ui;
use super::super::auth::Caller;

/// `GET /ui/tsig`.
pub async fn page(State(ui): State<Arc<Ui>>, Extension(caller): Extension<Caller>) -> Response {
    if let Some(refused) = super::unscoped(&caller, "TSIG keys") {
        return refused;
    }
    let view = ui.service.view();
    let state = view.state();
    super::page(
        &caller,
        "TSIG keys",
        "/ui/tsig",
        html! {
            p { "Keys that sign zone transfers and NOTIFY between the edges and secondaries. A secret is shown once, when the key is made; an admin token is needed to make or delete one." }
            ul.objects #tsig-keys {
                @for k in view.catalog().tsig_keys.values() {
                    @let revision = state.revision(crate::core::catalog::ObjectRef::TsigKey(k.id)).unwrap_or(0);
                    li.object data-kind="tsig-keys" data-id=(k.id.0) data-name=(k.name) data-revision=(revision) {
                        span.oname { (k.name) } " " span.small { (k.algorithm) }
                        " " a.history href=(format!("/ui/audit?object=tsigKey/{}", k.id.0)) { "History" }
                        " " button.admin.danger.delete type="button" { "Delete" }
                    }
                }
            }
            form.inline #tsig-form novalidate {
                div.field {
                    label for="tsig-name" { "New key's name (a DNS name)" }
                    input #tsig-name type="text" autocomplete="off" aria-describedby="tsig-error";
                }
                div.actions { button.admin #tsig-create type="submit" { "Make the key" } }
            }
            p.form-error #tsig-error role="alert" {}
            div #tsig-made hidden {
                h2 { "Key made: copy its secret now" }
                p { "It is not shown again. Give it to the secondary as " code { "hmac-sha256" } ":" }
                pre #tsig-secret {}
            }
        },
    )
}
