//! Defects found by attacking the running system, each shown fixed through
//! the real aggregator (and edge): client-chosen ids, records too big for
//! any DNS message.

use gslb_e2e::{Aggregator, Edge, ZONE, temp_dir, wait_until};

fn zone_id(agg: &Aggregator) -> u64 {
    let (code, zones) = agg.rest("GET", "/api/v1/zones", "");
    assert_eq!(code, 200);
    zones[0]["id"].as_u64().unwrap()
}

fn refused_on(reply: (u16, serde_json::Value), field: &str, rule: &str) {
    let (code, body) = reply;
    assert_eq!(code, 400, "{body}");
    let text = body.to_string();
    assert!(
        text.contains(field) && text.contains(rule),
        "{field}: ..{rule}.. in {text}"
    );
}

#[test]
fn ids_are_assigned_by_the_server_only() {
    let dir = temp_dir("ids");
    let agg = Aggregator::start(&dir);
    agg.apply(ZONE, &dir);
    refused_on(
        agg.rest("POST", "/api/v1/pools", r#"{"id": 7, "name": "p"}"#),
        "id",
        "ids are assigned by the server",
    );
    let (code, pool) = agg.rest("POST", "/api/v1/pools", r#"{"name": "p"}"#);
    assert_eq!(code, 201, "{pool}");
    let id = pool["id"].as_u64().unwrap();
    assert!(id < 1 << 53 && id > 0, "{pool}");
    // u64::MAX once wrapped the id counter to 0 and broke every later
    // create, across deletes and restarts.
    let mut object = pool.clone();
    object["id"] = serde_json::json!(u64::MAX);
    object["name"] = serde_json::json!("wrap");
    let batch = serde_json::json!({"ops": [{"op": "create", "kind": "pool", "object": object}]});
    refused_on(
        agg.rest("POST", "/api/v1/apply", &batch.to_string()),
        "id",
        "ids are assigned by the server",
    );
    refused_on(
        agg.rest(
            "PUT",
            &format!("/api/v1/pools/{id}"),
            &format!(r#"{{"id": {}}}"#, id + 1),
        ),
        "id",
        "must be the id in the path",
    );
    // Creates still work after the refusals, and across a restart.
    let (code, _) = agg.rest("POST", "/api/v1/pools", r#"{"name": "q"}"#);
    assert_eq!(code, 201);
    let data = dir.clone();
    drop(agg);
    let agg = Aggregator::start(&data);
    let (code, pool) = agg.rest("POST", "/api/v1/pools", r#"{"name": "r"}"#);
    assert_eq!(code, 201, "{pool}");
    assert_eq!(pool["id"].as_u64().unwrap(), id + 2);
}

#[test]
fn records_that_no_dns_message_can_carry_are_refused() {
    let dir = temp_dir("oversized");
    let agg = Aggregator::start(&dir);
    let version = agg.apply(ZONE, &dir);
    let edge = Edge::start(
        None,
        Some(&agg.url()),
        &dir.join("cache"),
        "127.0.0.1:0",
        &[],
    );
    edge.wait_version(version);
    let zone = zone_id(&agg);
    let txt = |records: usize, strings: usize| {
        let one: Vec<String> = (0..strings).map(|_| "x".repeat(255)).collect();
        let data: Vec<serde_json::Value> = (0..records)
            .map(|_| serde_json::json!({ "txt": one }))
            .collect();
        serde_json::json!({
            "zone": zone, "name": "big.example.test", "type": "TXT", "ttl": 60,
            "data": { "static": data },
        })
        .to_string()
    };
    refused_on(
        agg.rest("POST", "/api/v1/records", &txt(1, 280)),
        "data.static[0]",
        "does not fit a record",
    );
    refused_on(
        agg.rest("POST", "/api/v1/records", &txt(64, 4)),
        "data.static",
        "does not fit one DNS message",
    );
    // Nothing was stored, and the edge keeps following: the next write
    // reaches it.
    let (_, records) = agg.rest("GET", "/api/v1/records", "");
    assert_eq!(records.as_array().map_or(0, Vec::len), 0, "{records}");
    let (code, record) = agg.rest("POST", "/api/v1/records", &txt(4, 4));
    assert_eq!(code, 201, "{record}");
    wait_until(30, "the edge to apply the new record", || {
        edge.version() > version
    });
    let dig = gslb_e2e::dns::dig(None, edge.dns(), &["big.example.test", "TXT", "+tcp"]);
    assert!(dig.contains("ANSWER: 4,"), "{dig}");
}
