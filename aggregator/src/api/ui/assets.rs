//! The UI's stylesheet and script, embedded in the binary: the UI needs
//! nothing from the network at run time.

use axum::extract::Path;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

/// The stylesheet.
pub const CSS: &str = include_str!("assets/ui.css");
/// The script (no third-party code).
pub const JS: &str = include_str!("assets/ui.js");
/// The tab's icon.
pub const ICON: &str = include_str!("assets/favicon.svg");

/// `/ui/assets/{name}`.
pub async fn serve(Path(name): Path<String>) -> Response {
    let (body, kind) = match name.as_str() {
        "ui.css" => (CSS, "text/css; charset=utf-8"),
        "ui.js" => (JS, "text/javascript; charset=utf-8"),
        "favicon.svg" => (ICON, "image/svg+xml"),
        _ => return (StatusCode::NOT_FOUND, "no such file\n").into_response(),
    };
    (
        [
            (header::CONTENT_TYPE, kind),
            // They change with the binary: a browser asks again each time
            // rather than run an old script against a new page.
            (header::CACHE_CONTROL, "no-cache"),
        ],
        body,
    )
        .into_response()
}
