//! The sign-in page: an admin token in, a session cookie out (the script
//! posts it to `/ui/session`; the token never appears in a URL).

use axum::response::{Html, IntoResponse, Response};
use maud::{DOCTYPE, html};

/// `GET /ui/login`.
pub async fn page() -> Response {
    Html(
        html! {
            (DOCTYPE)
            html lang="en" {
                (super::head("Sign in"))
                body data-page="/ui/login" {
                    main.signin #main {
                        h1 { "gslb" }
                        form #signin-form method="post" action="/ui/login" {
                            div.field {
                                label for="token" { "Admin token" }
                                input #token name="token" type="password" autocomplete="off" required aria-describedby="signin-error";
                            }
                            p.form-error #signin-error role="alert" {}
                            button type="submit" { "Sign in" }
                        }
                        p.small { "A token from " code { "gslbctl tokens create NAME --role write" } " (or " code { "--role read" } " to look without changing anything)." }
                    }
                }
            }
        }
        .into_string(),
    )
    .into_response()
}
