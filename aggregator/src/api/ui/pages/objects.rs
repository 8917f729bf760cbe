//! Zones, records (static and pool-backed), pools and checks: listed with
//! edit and delete, and created from a template. Each is edited in a form
//! (related objects chosen by name; the script builds it from the object's
//! REST JSON), or as that JSON for what the form does not show; a refused
//! change shows the API's message under the field it names. Members are
//! edited on the topology's slide-over.

use std::sync::Arc;

use axum::Extension;
use axum::extract::State;
use axum::response::Response;
use gslb_shared::defaults::to_json;
use maud::{Markup, html};
use serde_json::{Value, json};

use super::super::Ui;
use super::super::auth::Caller;

/// A template's JSON without the id a new object is given.
fn without_id(mut value: Value) -> Value {
    if let Value::Object(map) = &mut value {
        map.remove("id");
    }
    value
}

/// The kinds, as (REST collection, heading, template for a new one); new
/// records go in `zone`.
fn kinds(zone: Option<u64>) -> [(&'static str, &'static str, Value); 5] {
    [
        (
            "zones",
            "zone",
            json!({"apex": "example.test", "ns": ["ns1.example.test"], "defaultTtl": 300,
            "soa": {"mname": "ns1.example.test", "rname": "hostmaster.example.test",
                    "refresh": 3600, "retry": 600, "expire": 604800, "negativeTtl": 60}}),
        ),
        // A new check or pool shows every default, not an empty field.
        (
            "checks",
            "check",
            without_id(to_json(&gslb_shared::Check::new(
                gslb_shared::CheckId(0),
                "web",
                gslb_shared::Probe::Http(gslb_shared::HttpProbe::default()),
            ))),
        ),
        (
            "pools",
            "pool",
            without_id(to_json(&gslb_shared::Pool::new(
                gslb_shared::PoolId(0),
                "web",
            ))),
        ),
        (
            "records",
            "pool-backed record",
            json!({"zone": zone, "name": "www.example.test", "type": "A", "ttl": 30,
            "data": {"dynamic": {"steering": "roundrobin", "pools": [], "firstN": 0}}}),
        ),
        (
            "records",
            "static record",
            json!({"zone": zone, "name": "mail.example.test", "type": "A", "ttl": 300,
            "data": {"static": [{"a": "192.0.2.25"}]}}),
        ),
    ]
}

/// `GET /ui/objects`.
pub async fn page(State(ui): State<Arc<Ui>>, Extension(caller): Extension<Caller>) -> Response {
    let view = ui.service.view();
    // A limited token's caller sees its zones and pools only.
    let catalog = super::seen(view.catalog(), caller.scope.as_deref());
    let catalog = catalog.as_ref();
    let state = view.state();
    let revision_of = |kind: &str, id: u64| {
        let r = crate::core::audit::parse_object(&format!("{}/{id}", kind.trim_end_matches('s')));
        r.ok().and_then(|r| state.revision(r)).unwrap_or(0)
    };
    // Each object's JSON carries its revision: the editor sends it back,
    // and a save over a colleague's change is refused (412), not silent.
    let row = |kind: &str, id: u64, name: String, mut value: Value| -> Markup {
        let revision = revision_of(kind, id);
        if let Value::Object(map) = &mut value {
            map.insert("revision".into(), Value::from(revision));
        }
        html! {
            li.object data-kind=(kind) data-id=(id) data-name=(name) data-revision=(revision) {
                span.oname { (name) } " " span.small { "id " (id) }
                " " a.history href=(format!("/ui/audit?object={}/{id}", kind.trim_end_matches('s'))) { "History" }
                " " button.edit type="button" data-json=(value.to_string()) { "Edit" }
                " " button.writes.danger.delete type="button" { "Delete" }
            }
        }
    };
    // Related objects are chosen by name: the form's lists.
    let names = json!({
        "zones": catalog.zones.values().map(|z| json!([z.id.0, z.apex.to_string()])).collect::<Vec<_>>(),
        "pools": catalog.pools.values().map(|p| json!([p.id.0, p.name])).collect::<Vec<_>>(),
        "checks": catalog.checks.values().map(|c| json!([c.id.0, c.name])).collect::<Vec<_>>(),
    });
    super::page(
        &caller,
        "Objects",
        "/ui/objects",
        html! {
            p { "Members are edited on the " a href="/ui/" { "topology" } " (click a member, or a pool's Add member)." }
            section aria-labelledby="h-zones" {
                h2 #h-zones { "Zones" }
                ul.objects { @for z in catalog.zones.values() { (row("zones", z.id.0, z.apex.to_string(), to_json(&z.redacted()))) } }
            }
            section aria-labelledby="h-records" {
                h2 #h-records { "Records" }
                ul.objects { @for r in catalog.records.values() { (row("records", r.id.0, format!("{} {}", r.name, r.rtype), to_json(r))) } }
            }
            section aria-labelledby="h-pools" {
                h2 #h-pools { "Pools" }
                ul.objects { @for p in catalog.pools.values() { (row("pools", p.id.0, p.name.clone(), to_json(p))) } }
            }
            section aria-labelledby="h-checks" {
                h2 #h-checks { "Checks" }
                ul.objects { @for c in catalog.checks.values() { (row("checks", c.id.0, format!("{} ({})", c.name, c.probe.protocol()), to_json(c))) } }
            }
            section aria-labelledby="h-new" {
                h2 #h-new { "Create" }
                div.actions {
                    @for (collection, label, template) in kinds(catalog.zones.keys().next().map(|z| z.0)) {
                        button.writes.create type="button" data-kind=(collection) data-json=(template.to_string()) { "New: " (label) }
                    }
                }
            }
            div #object-editor role="dialog" aria-modal="true" aria-labelledby="object-title" data-names=(names.to_string()) hidden {
                form #object-form novalidate {
                    h2 #object-title { "Object" }
                    div #object-fields {}
                    div.field.check {
                        input #object-as-json type="checkbox";
                        label for="object-as-json" { "Edit as JSON (advanced: every field, as the REST API takes it)" }
                    }
                    div.field #object-json-field hidden {
                        label for="object-json" { "JSON (the REST API's body)" }
                        textarea #object-json rows="18" spellcheck="false" aria-describedby="object-error" {}
                    }
                    p.form-error #object-error role="alert" {}
                    div.actions {
                        button.writes #object-save type="submit" { "Save" }
                        button #object-close type="button" { "Close" }
                    }
                }
            }
        },
    )
}
