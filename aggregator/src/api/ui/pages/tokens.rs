//! Tokens (admin sessions only): this node's tokens file as it is now, by
//! name, role, scope and expiry (the secrets are not in the file). They are
//! made and revoked with `gslbctl tokens` on each node, which this page says.

use std::sync::Arc;

use axum::Extension;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use maud::html;

use super::super::Ui;
use super::super::auth::Caller;
use crate::api::tokens::TokenRole;

/// `GET /ui/tokens`.
pub async fn page(State(ui): State<Arc<Ui>>, Extension(caller): Extension<Caller>) -> Response {
    // A token limited to some zones and pools sees no other token.
    if let Some(refused) = super::unscoped(&caller, "Tokens") {
        return refused;
    }
    if caller.role < TokenRole::Admin {
        let mut refused = super::page(
            &caller,
            "Tokens",
            "",
            html! {
                p.error role="alert" { "tokens: the tokens page needs an admin token; this session's is " (caller.role) "." }
            },
        );
        *refused.status_mut() = StatusCode::FORBIDDEN;
        return refused;
    }
    let file = ui.tokens.file();
    let path = ui.tokens.path().display().to_string();
    let now = std::time::SystemTime::now();
    super::page(
        &caller,
        "Tokens",
        "/ui/tokens",
        html! {
            p { "This node's tokens file, " code { (path) } ", as it is now. Make and revoke tokens with "
                code { "gslbctl tokens create" } " and " code { "gslbctl tokens revoke" } " on every node (each reads its own file; sessions hold on every node that has the same token)." }
            table #tokens {
                caption.sr-only { "Tokens" }
                thead { tr { th scope="col" { "Name" } th scope="col" { "Id" } th scope="col" { "Role" } th scope="col" { "Scope" } th scope="col" { "Expires" } } }
                tbody {
                    @for t in &file.tokens {
                        tr data-token=(t.name) {
                            th scope="row" { (t.name) } td { code { (t.id) } } td { (t.role) }
                            td { @if t.scope.is_empty() { "everything" } @else { (t.scope) } }
                            td {
                                @match t.expires {
                                    Some(at) => {
                                        @let ms = at.saturating_mul(1000);
                                        time datetime=(super::rfc3339(ms)) { (super::rfc3339(ms)) }
                                        @if t.expired(now) { " " span.state.unhealthy { "expired" } }
                                    }
                                    None => { "never" }
                                }
                            }
                        }
                    }
                }
            }
        },
    )
}
