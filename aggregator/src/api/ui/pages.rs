//! The UI's pages: one module per page, and the frame they share (head,
//! navigation, the CSRF value and whether the caller may write, which the
//! script reads from the `<body>`'s data attributes).

pub mod apply;
pub mod audit;
pub mod dnssec;
pub mod explain;
pub mod fleet;
pub mod log;
pub mod login;
pub mod matrix;
pub mod notifications;
pub mod objects;
pub mod overview;
pub mod tokens;
pub mod topology;
pub mod tsig;
pub mod zonefiles;

use axum::response::{Html, IntoResponse, Response};
use maud::{DOCTYPE, Markup, html};

use super::auth::Caller;

/// The navigation: (path, label).
const NAV: [(&str, &str); 14] = [
    ("/ui/overview", "Overview"),
    ("/ui/", "Topology"),
    ("/ui/objects", "Objects"),
    ("/ui/apply", "Apply"),
    ("/ui/zonefiles", "Zone files"),
    ("/ui/dnssec", "DNSSEC"),
    ("/ui/tsig", "TSIG"),
    ("/ui/notifications", "Notifications"),
    ("/ui/audit", "Audit"),
    ("/ui/explain", "Explain"),
    ("/ui/agents", "Agents"),
    ("/ui/edges", "Edges"),
    ("/ui/cluster", "Cluster"),
    ("/ui/tokens", "Tokens"),
];

/// The pages a scoped session is refused.
const UNSCOPED_ONLY: [&str; 7] = [
    "/ui/explain",
    "/ui/agents",
    "/ui/edges",
    "/ui/cluster",
    "/ui/tsig",
    "/ui/notifications",
    "/ui/tokens",
];

/// A whole page: `title`, the current navigation entry `here`, and `main`.
pub fn page(caller: &Caller, title: &str, here: &str, main: Markup) -> Response {
    Html(
        html! {
            (DOCTYPE)
            html lang="en" {
                (head(title))
                body data-csrf=(caller.csrf) data-can-write=(caller.can_write && caller.follower.is_none())
                    data-can-operate=(caller.role >= crate::api::tokens::TokenRole::Operate && caller.follower.is_none())
                    data-admin=(caller.role >= crate::api::tokens::TokenRole::Admin && caller.follower.is_none()) data-page=(here) {
                    a.skip href="#main" { "Skip to content" }
                    header.bar {
                        span.brand { "gslb" }
                        nav aria-label="Sections" {
                            ul {
                                // A scoped session is refused the pages
                                // about what belongs to no zone or pool.
                                @for (path, label) in NAV.iter().filter(|(p, _)| (caller.scope.is_none() || !UNSCOPED_ONLY.contains(p)) && (*p != "/ui/tokens" || caller.role >= crate::api::tokens::TokenRole::Admin)) {
                                    li {
                                        a href=(path) aria-current=[(*path == here).then_some("page")] { (label) }
                                    }
                                }
                            }
                        }
                        span.who {
                            @if caller.follower.is_some() { "follower: changes are made on the leader" }
                            @else if caller.can_write { (caller.role) " token" }
                            @else { (caller.role) " token: catalog changes are disabled" }
                            @if let Some(scope) = &caller.scope { " · " (scope.describe()) }
                        }
                        button.link #sign-out type="button" { "Sign out" }
                        span #sign-out-error role="alert" {}
                    }
                    main #main tabindex="-1" {
                        @if let Some(note) = &caller.follower { p.banner role="status" { (note) } }
                        h1 { (title) }
                        (main)
                    }
                    (confirm_dialog())
                    // State changes read out together, a few seconds at a
                    // time (the script fills it).
                    div.sr-only #announce role="status" aria-live="polite" {}
                }
            }
        }
        .into_string(),
    )
    .into_response()
}

/// The confirmation every incident control asks first (the script fills
/// in what it names; never the browser's `confirm()`).
fn confirm_dialog() -> Markup {
    html! {
        div #confirm role="alertdialog" aria-modal="true" aria-labelledby="confirm-title" aria-describedby="confirm-text" hidden {
            h2 #confirm-title { "Confirm" }
            p #confirm-text {}
            p.form-error #confirm-error role="alert" {}
            div.actions {
                button.danger #confirm-yes type="button" { "Confirm" }
                button #confirm-no type="button" { "Cancel" }
            }
        }
    }
}

/// The `<head>` every page shares: the one stylesheet and the one script.
pub fn head(title: &str) -> Markup {
    html! {
        head {
            meta charset="utf-8";
            meta name="viewport" content="width=device-width, initial-scale=1";
            title { (title) " · gslb" }
            link rel="icon" href="/ui/assets/favicon.svg" type="image/svg+xml";
            link rel="stylesheet" href="/ui/assets/ui.css";
            script src="/ui/assets/ui.js" defer {}
        }
    }
}

/// A page's fragment alone (swapped in by the script).
pub fn fragment(markup: Markup) -> Response {
    Html(markup.into_string()).into_response()
}

/// An RFC 3339 time, to the millisecond, of ms since the Unix epoch.
pub fn rfc3339(ms: u64) -> String {
    humantime::format_rfc3339_millis(std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms))
        .to_string()
}

/// A short age ("4.2 s", "3 min") of `ms` milliseconds.
pub fn age(ms: u64) -> String {
    match ms {
        0..1_000 => format!("{ms} ms"),
        1_000..60_000 => format!("{:.1} s", ms as f64 / 1000.0),
        60_000..3_600_000 => format!("{} min", ms / 60_000),
        _ => format!("{} h", ms / 3_600_000),
    }
}

/// The page refused to a caller whose token is limited to some zones and
/// pools, for pages about what belongs to none (agents, edges, the
/// cluster, explain); `None` for an unlimited caller.
pub fn unscoped(caller: &Caller, title: &str) -> Option<Response> {
    let scope = caller.scope.as_ref()?;
    let why = scope.outside(format!("the {title} page")).to_string();
    let mut response = page(caller, title, "", html! { p.error role="alert" { (why) } });
    *response.status_mut() = axum::http::StatusCode::FORBIDDEN;
    Some(response)
}

/// The part of `catalog` a caller limited to `scope` sees (all of it for
/// an unlimited caller).
pub fn seen<'a>(
    catalog: &'a gslb_shared::Catalog,
    scope: Option<&crate::core::scope::Scope>,
) -> std::borrow::Cow<'a, gslb_shared::Catalog> {
    match scope {
        Some(scope) => std::borrow::Cow::Owned(scope.restrict(catalog)),
        None => std::borrow::Cow::Borrowed(catalog),
    }
}

/// Whether the caller may see `target` (an unlimited caller sees all).
pub fn sees(
    caller: &Caller,
    catalog: &gslb_shared::Catalog,
    target: crate::core::catalog::ObjectRef,
) -> bool {
    crate::api::caller::sees(caller.scope.as_deref(), catalog, target)
}

/// A page that says what could not be shown.
pub fn missing(caller: &Caller, title: &str, why: &str) -> Response {
    let mut response = page(caller, title, "", html! { p.error role="alert" { (why) } });
    *response.status_mut() = axum::http::StatusCode::NOT_FOUND;
    response
}
