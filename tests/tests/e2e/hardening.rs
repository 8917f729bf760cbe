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

/// Start the aggregator on `data` expecting a refusal: it exits non-zero
/// without listening; returns what it printed.
fn refused_start(data: &std::path::Path) -> String {
    let dir = data.to_str().unwrap();
    let mut proc = gslb_e2e::process::Proc::spawn(
        None,
        &gslb_e2e::bins::bin("gslb-aggregator"),
        &[
            "--data-dir",
            dir,
            "--listen-grpc",
            "127.0.0.1:0",
            "--listen-http",
            "127.0.0.1:0",
            "--insecure",
        ],
    );
    wait_until(30, "the refused aggregator to exit", || proc.exited());
    let status = proc.child.wait().unwrap();
    let text = proc.stderr.all().join("\n") + &proc.stdout.all().join("\n");
    assert!(!status.success(), "{text}");
    assert!(!text.contains("listening"), "{text}");
    text
}

/// The names and sizes of the files in `dir`, with their bytes' sum.
fn files(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(Result::ok)
        .filter(|e| e.path().is_file())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().filter_map(Result::ok) {
        if e.path().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn a_lost_or_damaged_store_is_refused_and_edges_are_never_emptied() {
    let dir = temp_dir("store-loss");
    let data = dir.join("data");
    let agg = Aggregator::start(&data);
    let zone_version = agg.apply(ZONE, &dir);
    let old_backup = dir.join("old.json");
    agg.ctl(&["backup", "--out", old_backup.to_str().unwrap()]);
    let zone = zone_id(&agg);
    let record = serde_json::json!({
        "zone": zone, "name": "www.example.test", "type": "A", "ttl": 60,
        "data": { "static": [{ "a": "192.0.2.80" }] },
    });
    let (code, body) = agg.rest("POST", "/api/v1/records", &record.to_string());
    assert_eq!(code, 201, "{body}");
    let backup = dir.join("backup.json");
    let out = agg.ctl(&["backup", "--out", backup.to_str().unwrap()]);
    assert!(out.contains("backup of version"), "{out}");
    let edge = Edge::start(
        None,
        Some(&agg.url()),
        &dir.join("cache"),
        "127.0.0.1:0",
        &[],
    );
    let version = zone_version + 1;
    edge.wait_version(version);
    let answers = || gslb_e2e::dns::short(None, edge.dns(), &["www.example.test", "A"]);
    assert_eq!(answers(), ["192.0.2.80"]);
    let grpc = agg.grpc.to_string();
    drop(agg);

    // 1. sled's db file removed: refused, naming the directory and the
    //    remedy, and nothing in the directory changed.
    let lost = dir.join("lost");
    copy_dir(&data, &lost);
    std::fs::remove_file(lost.join("db")).unwrap();
    let before = files(&lost);
    let text = refused_start(&lost);
    assert!(
        text.contains(lost.to_str().unwrap())
            && text.contains("db file is missing")
            && text.contains("Restore"),
        "{text}"
    );
    assert_eq!(files(&lost), before, "a refused store is never written");

    // 2. The tail of db cut off: an error (never a panic), nothing written.
    let cut = dir.join("cut");
    copy_dir(&data, &cut);
    let db = std::fs::read(cut.join("db")).unwrap();
    std::fs::write(cut.join("db"), &db[..db.len() / 2]).unwrap();
    let before = files(&cut);
    let text = refused_start(&cut);
    assert!(
        text.contains(cut.to_str().unwrap()) && text.contains("Restore"),
        "{text}"
    );
    assert!(!text.contains("panicked"), "{text}");
    assert_eq!(files(&cut), before, "a refused store is never written");

    // 3. An aggregator started on an empty directory at the same address
    //    (the wrong --data-dir, or a store moved aside): the edge refuses
    //    its empty catalog, keeps answering and says why.
    let empty = dir.join("empty");
    let fresh = Aggregator::start_with(None, &empty, &grpc, &["--startup-window", "1s"]);
    wait_until(30, "the edge to refuse the empty catalog", || {
        edge.status_config()["lastFailure"]["error"]
            .as_str()
            .is_some_and(|e| e.contains("refused snapshot"))
    });
    let status = edge.status_config();
    assert_eq!(status["state"], "degraded", "{status}");
    assert_eq!(status["version"], version, "{status}");
    assert_eq!(answers(), ["192.0.2.80"]);
    drop(fresh);

    // 4. The older backup restored: refused too (a lower version), until
    //    the operator resets the edges on purpose.
    let restored = dir.join("restored");
    let out = gslb_e2e::process::Proc::spawn(
        None,
        &gslb_e2e::bins::bin("gslbctl"),
        &[
            "restore",
            "--data-dir",
            restored.to_str().unwrap(),
            "--file",
            old_backup.to_str().unwrap(),
        ],
    );
    let mut out = out;
    wait_until(30, "gslbctl restore", || out.exited());
    assert!(
        out.child.wait().unwrap().success(),
        "{:?}",
        out.stderr.all()
    );
    assert!(
        out.stdout
            .contains(&format!("restored version {zone_version}")),
        "{:?}",
        out.stdout.all()
    );
    let older = Aggregator::start_with(None, &restored, &grpc, &["--startup-window", "1s"]);
    wait_until(30, "the edge to refuse the lower version", || {
        edge.status_config()["lastFailure"]["error"]
            .as_str()
            .is_some_and(|e| e.contains(&format!("refused snapshot version {zone_version}")))
    });
    assert_eq!(answers(), ["192.0.2.80"]);
    let (ok, _, err) = older.try_ctl(&["reset-edges", "--confirm-version", "999"]);
    assert!(!ok && err.contains("confirmVersion"), "{err}");
    let out = older.ctl(&[
        "reset-edges",
        "--confirm-version",
        &zone_version.to_string(),
    ]);
    assert!(out.contains("edges reset: epoch 1"), "{out}");
    wait_until(30, "the edge to take the reset catalog", || {
        gslb_e2e::dns::dig(None, edge.dns(), &["www.example.test", "A"]).contains("NXDOMAIN")
    });
    let status = edge.status_config();
    assert_eq!(status["state"], "synced", "{status}");
    assert_eq!(status["version"], zone_version + 1, "{status}");
    assert!(older.proc.stderr.contains("edges reset by an operator"));

    // 5. The full backup restored into a fresh directory serves again.
    drop(older);
    let again = dir.join("again");
    let mut out = gslb_e2e::process::Proc::spawn(
        None,
        &gslb_e2e::bins::bin("gslbctl"),
        &[
            "restore",
            "--data-dir",
            again.to_str().unwrap(),
            "--file",
            backup.to_str().unwrap(),
        ],
    );
    wait_until(30, "gslbctl restore", || out.exited());
    assert!(out.child.wait().unwrap().success());
    let agg = Aggregator::start(&again);
    let (_, records) = agg.rest("GET", "/api/v1/records", "");
    assert_eq!(records[0]["name"], "www.example.test", "{records}");
}
