//! The audit log as a page: who changed what, field by field, newest
//! first, filtered by time, object and identity (the same query as
//! `GET /api/v1/audit`), a page at a time; each object links to its own
//! history. A scoped session sees the records of its objects only.

use std::sync::Arc;

use axum::Extension;
use axum::extract::{Query, State};
use axum::response::Response;
use maud::{Markup, html};
use serde::Deserialize;

use super::super::Ui;
use super::super::auth::Caller;
use crate::api::service::off_worker;
use crate::core::audit::{AuditQuery, object_path, parse_object};
use crate::core::control::history::RecordView;

/// Records per page.
const PAGE: usize = 50;

/// The filter form's fields (all optional).
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Filters {
    #[serde(default)]
    since: String,
    #[serde(default)]
    object: String,
    #[serde(default)]
    who: String,
    #[serde(default)]
    accepted_only: Option<String>,
    #[serde(default)]
    before: Option<u64>,
}

impl Filters {
    /// The store's query, or the field that is wrong and why.
    fn query(&self) -> Result<AuditQuery, (&'static str, String)> {
        let since = self.since.trim();
        let object = self.object.trim();
        Ok(AuditQuery {
            since_ms: (!since.is_empty())
                .then(|| crate::core::audit::parse_time(since).ok_or(()))
                .transpose()
                .map_err(|()| {
                    let rule = "an RFC 3339 time (2026-12-06T20:00:00Z) or ms since the Unix epoch";
                    ("since", rule.to_owned())
                })?,
            object: (!object.is_empty())
                .then(|| parse_object(object))
                .transpose()
                .map_err(|e| ("object", e))?,
            who: (!self.who.trim().is_empty()).then(|| self.who.trim().to_owned()),
            before_seq: self.before,
            accepted_only: self.accepted_only.is_some(),
            limit: PAGE,
            scope: None,
        })
    }

    /// This filter's URL for the page of records numbered below `before`.
    fn older(&self, before: u64) -> String {
        let before = before.to_string();
        let mut pairs: Vec<(&str, &str)> = [
            ("since", self.since.as_str()),
            ("object", self.object.as_str()),
            ("who", self.who.as_str()),
        ]
        .into_iter()
        .filter(|(_, v)| !v.is_empty())
        .collect();
        if self.accepted_only.is_some() {
            pairs.push(("acceptedOnly", "on"));
        }
        pairs.push(("before", &before));
        format!(
            "/ui/audit?{}",
            serde_urlencoded::to_string(&pairs).unwrap_or_default()
        )
    }
}

/// `GET /ui/audit`.
pub async fn page(
    State(ui): State<Arc<Ui>>,
    Extension(caller): Extension<Caller>,
    Query(filters): Query<Filters>,
) -> Response {
    let (records, error) = match filters.query() {
        Ok(mut query) => {
            let view = ui.service.view();
            query.scope = caller
                .scope
                .clone()
                .map(|scope| crate::core::audit::Judged {
                    scope,
                    catalog: view.catalog().clone(),
                });
            let judged = query.scope.clone();
            match off_worker(move || view.audit(&query)).await {
                Ok(records) => (
                    (records.into_iter())
                        .map(|r| match &judged {
                            Some(j) => RecordView::from(&j.trimmed(r)),
                            None => RecordView::from(&r),
                        })
                        .collect::<Vec<_>>(),
                    None,
                ),
                Err(e) => (
                    Vec::new(),
                    Some(format!("the audit log could not be read: {e}")),
                ),
            }
        }
        Err((field, rule)) => (Vec::new(), Some(format!("{field}: {rule}"))),
    };
    let next = (records.len() == PAGE)
        .then(|| records.last().map(|r| r.seq))
        .flatten();
    let mut response = super::page(
        &caller,
        "Audit log",
        "/ui/audit",
        html! {
            (form(&filters))
            @if let Some(error) = &error { p.error #audit-error role="alert" { (error) } }
            @if records.is_empty() && error.is_none() { p #audit-empty { "No record matches." } }
            @else if !records.is_empty() { (table(&records)) }
            @if let Some(before) = next { p { a #audit-older href=(filters.older(before)) { "Older records" } } }
        },
    );
    if error.is_some() {
        *response.status_mut() = axum::http::StatusCode::BAD_REQUEST;
    }
    response
}

fn form(f: &Filters) -> Markup {
    html! {
        form #audit-filters method="get" action="/ui/audit" {
            div.field {
                label for="audit-since" { "Since (RFC 3339 time)" }
                input #audit-since name="since" type="text" value=(f.since) placeholder="2026-12-06T20:00:00Z";
            }
            div.field {
                label for="audit-object" { "Object (KIND/ID)" }
                input #audit-object name="object" type="text" value=(f.object) placeholder="member/3";
            }
            div.field {
                label for="audit-who" { "Who (part of the identity)" }
                input #audit-who name="who" type="text" value=(f.who) placeholder="alice";
            }
            div.field.check {
                input #audit-accepted name="acceptedOnly" type="checkbox" checked[f.accepted_only.is_some()];
                label for="audit-accepted" { "Accepted writes only (the history of versions)" }
            }
            div.actions { button #audit-filter type="submit" { "Filter" } " " a href="/ui/audit" { "Clear" } }
        }
    }
}

fn table(records: &[RecordView]) -> Markup {
    html! {
        table #audit-records {
            caption { "Newest first" }
            thead { tr { th scope="col" { "When" } th scope="col" { "Who" } th scope="col" { "Operation" } th scope="col" { "Outcome" } th scope="col" { "Changes" } } }
            tbody {
                @for r in records {
                    tr data-seq=(r.seq) {
                        td { (super::rfc3339(r.at_ms)) }
                        td { (r.who) @if !r.source.is_empty() { br; span.small { (r.source) } } }
                        td { code { (r.operation) } }
                        td {
                            @if let Some(why) = &r.refused { span.refused { "refused: " (why) } }
                            @else if let Some(v) = r.version { "version " (v) }
                            @if !r.detail.is_empty() { br; (r.detail) }
                        }
                        td {
                            @for c in &r.changes {
                                @let path = object_path(c.object);
                                div.change {
                                    a href=(format!("/ui/audit?object={path}")) { (path) } " " (c.action) " " (c.name)
                                    ul.fields {
                                        @for f in &c.fields {
                                            li { code { (f.field) } ": " (shown(&f.before)) " → " (shown(&f.after)) }
                                        }
                                    }
                                }
                            }
                            @for o in &r.objects { a href=(format!("/ui/audit?object={o}")) { (o) } " " }
                        }
                    }
                }
            }
        }
    }
}

/// A field's value as the table shows it (absent: an em dash).
fn shown(value: &Option<serde_json::Value>) -> String {
    value
        .as_ref()
        .map_or_else(|| "—".to_owned(), ToString::to_string)
}
