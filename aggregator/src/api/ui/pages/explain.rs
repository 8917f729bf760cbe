//! Explain: a name, a type and a client (a region, or an address or
//! subnet) traced through every selection step to the answer: the same
//! trace as `gslbctl explain` and `GET /api/v1/explain`.

use std::sync::Arc;

use axum::Extension;
use axum::extract::{Query, State};
use axum::response::Response;
use gslb_proto::pb;
use maud::{Markup, html};
use serde::Deserialize;
use serde_json::Value;

use super::super::Ui;
use super::super::auth::Caller;

/// The form's fields.
#[derive(Debug, Default, Deserialize)]
pub struct Form {
    #[serde(default)]
    name: String,
    #[serde(default, rename = "type")]
    rtype: String,
    #[serde(default)]
    client: String,
}

/// `GET /ui/explain`.
pub async fn page(
    State(ui): State<Arc<Ui>>,
    Extension(caller): Extension<Caller>,
    Query(form): Query<Form>,
) -> Response {
    if let Some(refused) = super::unscoped(&caller, "Explain") {
        return refused;
    }
    let aaaa = form.rtype.eq_ignore_ascii_case("AAAA");
    let result = (!form.name.trim().is_empty()).then(|| trace(&ui, &form, aaaa));
    super::page(
        &caller,
        "Explain",
        "/ui/explain",
        html! {
            form.inline method="get" action="/ui/explain" {
                div.field { label for="x-name" { "Name" } input #x-name name="name" type="text" required value=(form.name) placeholder="www.example.com"; }
                div.field {
                    label for="x-type" { "Type" }
                    select #x-type name="type" {
                        option value="A" selected[!aaaa] { "A" }
                        option value="AAAA" selected[aaaa] { "AAAA" }
                    }
                }
                div.field { label for="x-client" { "Client region, address or subnet" } input #x-client name="client" type="text" value=(form.client) placeholder="eu or 192.0.2.0/24"; }
                button type="submit" { "Explain" }
            }
            p.small { "A subnet is explained by its address, placed by the aggregator's MaxMind files (--geo-mmdb) for country, continent, subdivision and AS branches. Mapping an address to a region is the edges' CIDR table's work; a region given here is used as is." }
            @if let Some(result) = result { (result) }
        },
    )
}

fn trace(ui: &Ui, form: &Form, aaaa: bool) -> Markup {
    // A subnet stands for its address.
    let client = form.client.trim();
    let client = client
        .split_once('/')
        .map_or(client, |(address, _)| address);
    let request = pb::ExplainRequest {
        name: form.name.trim().to_owned(),
        r#type: if aaaa {
            pb::RecordType::Aaaa
        } else {
            pb::RecordType::A
        } as i32,
        client: client.to_owned(),
    };
    let view = ui.service.view();
    let names = Names {
        catalog: view.catalog(),
    };
    let response = match ui.service.explain(&request) {
        Ok(r) => r,
        Err(status) => return html! { p.error role="alert" { (status.message()) } },
    };
    let placed = response
        .client
        .as_ref()
        .map(|c| c.note.as_str())
        .unwrap_or_default();
    html! {
        section.explain aria-label="trace" {
            @if !placed.is_empty() {
                p.client { strong { "Client: " } span #client { (placed) } }
            }
            ol.steps {
                @for s in &response.steps {
                    li {
                        strong { (s.step) }
                        @if let Ok(Value::Object(fields)) = serde_json::from_str::<Value>(&s.detail_json) {
                            dl {
                                @for (k, v) in fields.iter().filter(|(k, _)| *k != "step") {
                                    dt { (k) } dd { (names.readable(k, v)) }
                                }
                            }
                        }
                    }
                }
                li.outcome {
                    strong { "outcome" } " "
                    span #outcome { (outcome(&response.outcome, &names)) }
                }
            }
            p.answer { "Answer: " span #answers { @if response.answers.is_empty() { "(none)" } @else { (response.answers.join(" ")) } } }
        }
    }
}

fn outcome(text: &str, names: &Names<'_>) -> String {
    match serde_json::from_str::<Value>(text) {
        Ok(v) => names.readable("outcome", &v),
        Err(_) => text.to_owned(),
    }
}

/// Turns a trace step's JSON into text with pools and members named.
struct Names<'a> {
    catalog: &'a gslb_shared::Catalog,
}

/// Fields whose numbers are pool ids.
const POOL_FIELDS: [&str; 2] = ["pool", "pools"];
/// Fields whose numbers (or first elements) are member ids.
const MEMBER_FIELDS: [&str; 7] = [
    "member",
    "candidates",
    "healthy",
    "unhealthy",
    "chosen",
    "excluded",
    "answers",
];

impl Names<'_> {
    fn pool(&self, id: u64) -> String {
        self.catalog
            .pools
            .get(&gslb_shared::PoolId(id))
            .map_or_else(|| format!("pool {id}"), |p| p.name.clone())
    }

    fn member(&self, id: u64) -> String {
        self.catalog
            .members
            .get(&gslb_shared::MemberId(id))
            .map_or_else(|| format!("member {id}"), |m| m.name.clone())
    }

    /// `v`, the value of field `key`, as short text.
    fn readable(&self, key: &str, v: &Value) -> String {
        match v {
            Value::Number(n) if POOL_FIELDS.contains(&key) => {
                n.as_u64().map_or_else(|| n.to_string(), |id| self.pool(id))
            }
            Value::Number(n) if MEMBER_FIELDS.contains(&key) => n
                .as_u64()
                .map_or_else(|| n.to_string(), |id| self.member(id)),
            Value::String(s) => s.clone(),
            Value::Null => "-".into(),
            Value::Array(items) if items.is_empty() => "none".into(),
            // [member, health] pairs: "web-1 (down)".
            Value::Array(items) => items
                .iter()
                .map(|item| match item.as_array().map(Vec::as_slice) {
                    Some([first, rest @ ..]) => format!(
                        "{} ({})",
                        self.readable(key, first),
                        rest.iter()
                            .map(|r| self.readable("", r))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    _ => self.readable(key, item),
                })
                .collect::<Vec<_>>()
                .join(", "),
            // An answer: its address and its member.
            Value::Object(map) if map.contains_key("address") => {
                let address = map
                    .get("address")
                    .map(|a| self.readable("", a))
                    .unwrap_or_default();
                match map.get("member") {
                    Some(m) => format!("{address} ({})", self.readable("member", m)),
                    None => address,
                }
            }
            Value::Object(map) => map
                .iter()
                .map(|(k, v)| match v {
                    Value::Object(inner) if inner.is_empty() => k.clone(),
                    _ => format!("{k}: {}", self.readable(k, v)),
                })
                .collect::<Vec<_>>()
                .join(", "),
            other => other.to_string(),
        }
    }
}
