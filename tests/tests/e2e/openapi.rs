//! The REST API's OpenAPI description, served by a running aggregator:
//! every route of the router's table is in it with its method (and
//! nothing else is), it validates as OpenAPI 3.1 with
//! `openapi-spec-validator` (PyPI), and real replies fit the schemas it
//! gives for them.

use std::collections::BTreeSet;
use std::process::Command;

use gslb_e2e::catalog::{ZONE, a_record, member, pool};
use gslb_e2e::{Aggregator, temp_dir};
use serde_json::Value;

/// The properties and required fields of schema `name`.
fn fields(doc: &Value, name: &str) -> (BTreeSet<String>, BTreeSet<String>) {
    let schema = &doc["components"]["schemas"][name];
    let properties = schema["properties"]
        .as_object()
        .unwrap_or_else(|| panic!("{name} has no properties: {schema}"))
        .keys()
        .cloned()
        .collect();
    let required = (schema["required"].as_array().into_iter().flatten())
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    (properties, required)
}

/// `reply`'s keys are among the schema's properties, and every required one is there.
fn fits(doc: &Value, name: &str, reply: &Value) {
    let (properties, required) = fields(doc, name);
    let keys: BTreeSet<String> = reply.as_object().unwrap().keys().cloned().collect();
    assert!(
        keys.is_subset(&properties),
        "{name}: {keys:?} not within {properties:?}"
    );
    assert!(
        required.is_subset(&keys),
        "{name}: {required:?} not all in {keys:?}"
    );
}

#[test]
fn the_description_lists_every_route_validates_and_fits_real_replies() {
    let dir = temp_dir("openapi");
    let agg = Aggregator::start(&dir);
    let (code, doc) = agg.rest("GET", "/api/v1/openapi.json", "");
    assert_eq!(code, 200, "{doc}");
    assert_eq!(doc["openapi"], "3.1.0");

    let documented: BTreeSet<(String, String)> = doc["paths"]
        .as_object()
        .unwrap()
        .iter()
        .flat_map(|(path, ops)| {
            ops.as_object()
                .unwrap()
                .keys()
                .map(move |method| (method.to_uppercase(), path.clone()))
        })
        .collect();
    let routed: BTreeSet<(String, String)> = gslb_aggregator::api::rest::routes()
        .into_iter()
        .map(|(method, path)| (method.to_string(), path.to_owned()))
        .collect();
    let missing: Vec<_> = routed.difference(&documented).collect();
    assert!(missing.is_empty(), "routes not described: {missing:?}");
    let stale: Vec<_> = documented.difference(&routed).collect();
    assert!(stale.is_empty(), "described but not routed: {stale:?}");
    for (path, ops) in doc["paths"].as_object().unwrap() {
        for (method, op) in ops.as_object().unwrap() {
            assert!(op["operationId"].is_string(), "{method} {path}");
            assert!(op["responses"].as_object().is_some_and(|r| !r.is_empty()));
        }
    }
    assert!(doc["components"]["securitySchemes"]["bearer"].is_object());

    let file = dir.join("openapi.json");
    std::fs::write(&file, doc.to_string()).unwrap();
    let out = Command::new("python3")
        .args(["-m", "openapi_spec_validator"])
        .arg(&file)
        .output()
        .expect("python3 -m openapi_spec_validator (scripts/packages.sh installs it)");
    assert!(
        out.status.success(),
        "openapi-spec-validator: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );

    // Real replies have the described fields.
    let config = format!(
        "{ZONE}{}{}",
        pool(
            "web",
            None,
            "",
            &[member("web-1", "127.0.27.1:80".parse().unwrap(), "")]
        ),
        a_record("www.example.test", &["web"])
    );
    agg.apply(&config, &dir);
    let id = agg.member("web", "web-1")["id"].as_u64().unwrap();
    let (_, member) = agg.rest("GET", &format!("/api/v1/members/{id}"), "");
    fits(&doc, "MemberView", &member);
    let (_, zones) = agg.rest("GET", "/api/v1/zones", "");
    fits(&doc, "Zone", &zones[0]);
    let (_, pools) = agg.rest("GET", "/api/v1/pools", "");
    fits(&doc, "Pool", &pools[0]);
    let (_, records) = agg.rest("GET", "/api/v1/records", "");
    fits(&doc, "RecordSet", &records[0]);
    let (code, error) = agg.rest("GET", "/api/v1/zones/999", "");
    assert_eq!(code, 404);
    fits(&doc, "ErrorBody", &error);
}
