//! `gslbctl` against the real aggregator: apply prints the plan and is
//! idempotent, a failing apply changes nothing, members list prints seed
//! 000's columns with warm-up, JSON output parses, and each kind goes
//! through the one create/read/update/delete path.
#![allow(clippy::unwrap_used)]

mod support;

use std::process::Command;

use support::process::{Aggregator, start};

fn gslbctl(a: &Aggregator, args: &[&str]) -> (bool, String, String) {
    gslbctl_at(&a.grpc, &a.token, args)
}

fn gslbctl_at(server: &str, token: &str, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(support::process::gslbctl_bin())
        .arg("--server")
        .arg(server)
        .env("GSLB_TOKEN", token)
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

const EXAMPLE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../deploy/examples/quickstart.toml"
);

#[test]
fn apply_plan_members_list_status_and_errors() {
    let dir = std::env::temp_dir().join(format!("gslb-gslbctl-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let a = start(&dir);

    let (ok, out, _) = gslbctl(&a, &["apply", "-f", EXAMPLE, "--dry-run"]);
    assert!(ok);
    assert!(
        out.ends_with("dry run: 15 changes, nothing applied\n"),
        "{out}"
    );
    let (ok, out, _) = gslbctl(&a, &["pools", "list"]);
    assert!(
        ok && out == "ID  NAME  CHECK  MIN-HEALTHY  PROTECT  FAIL-MODE  SLOW-START\n",
        "the dry run changed nothing: {out}"
    );

    let (ok, out, _) = gslbctl(&a, &["apply", "-f", EXAMPLE]);
    assert!(ok);
    assert_eq!(
        out,
        "+ zone example.test\n+ check web-http\n+ check api-tcp\n+ pool web-eu\n+ member web-eu/web-eu-1\n+ member web-eu/web-eu-2\n\
         + member web-eu/web-eu-backup\n+ pool web-us\n+ member web-us/web-us-1\n+ member web-us/web-us-2\n+ pool api\n\
         + member api/api-1\n+ record www.example.test A\n+ record api.example.test A\n+ record example.test TXT\n\
         applied: 15 changes, version 16\n"
    );
    let (ok, out, _) = gslbctl(&a, &["apply", "-f", EXAMPLE]);
    assert!(ok && out.starts_with("no changes\n"), "{out}");

    let (ok, out, _) = gslbctl(&a, &["members", "list", "--pool", "4"]);
    assert!(ok);
    assert_eq!(
        out,
        "ID  NAME           IP          PORT   W    PRI  STATUS       REGION\n\
         5   web-eu-1       127.0.0.11  18081  100  0    unknown      eu\n\
         6   web-eu-2       127.0.0.12  18082  100  0    warming 0/3  eu      warmup:3\n\
         7   web-eu-backup  127.0.0.13  18083  100  0    unknown      eu\n"
    );
    let (ok, out, _) = gslbctl(&a, &["--output", "json", "members", "list", "--pool", "4"]);
    assert!(ok);
    let members: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(members[1]["warmupThreshold"], 3);
    assert_eq!(members[1]["status"]["warming"], true);

    let (ok, out, _) = gslbctl(&a, &["status"]);
    assert!(ok);
    assert_eq!(
        out,
        "ID  POOL    HEALTHY  ELIGIBLE  PROTECTED  FAIL-OPEN  DECISIONS\n\
         4   web-eu  0/3      false     false      true       on\n\
         8   web-us  0/2      false     false      true       on\n\
         11  api     0/1      true      true       false      on\n\
         \n\
         ENGINE            STATE\n\
         startup gate      open (health decisions on)\n\
         decisions         on (gslbctl decisions pause holds health as it is)\n\
         cycle grace       500 ms\n\
         quarantine        on\n\
         quarantine rule   a location failing >= 0.5 of its checks while the others fail <= 0.1\n\
         quarantine round  10000 ms, >= 5 samples; released after 3 clean rounds\n\
         quarantined       none\n"
    );

    // A failing apply changes nothing and says where.
    let bad = dir.join("bad.toml");
    std::fs::write(
        &bad,
        std::fs::read_to_string(EXAMPLE)
            .unwrap()
            .replace("address = \"127.0.0.12\"", "address = \"127.0.0.12:80\""),
    )
    .unwrap();
    let (ok, _, err) = gslbctl(&a, &["apply", "-f", bad.to_str().unwrap()]);
    assert!(!ok);
    assert!(
        err.starts_with("gslbctl: ") && err.contains("pool[0].member[1].address"),
        "{err}"
    );
    let (_, out, _) = gslbctl(&a, &["apply", "-f", EXAMPLE, "--dry-run"]);
    assert!(
        out.starts_with("no changes\n"),
        "nothing was half-applied: {out}"
    );

    let (ok, _, err) = gslbctl(&a, &["members", "get", "999"]);
    assert!(
        !ok && err == "gslbctl: member 999 does not exist\n",
        "{err}"
    );
    let (ok, _, err) = gslbctl(&a, &["health", "5", "down"]);
    assert!(!ok && err.contains("active health check"), "{err}");
    let (ok, _, err) = gslbctl_at("http://127.0.0.1:1", &a.token, &["pools", "list"]);
    assert!(
        !ok && err.contains("cannot reach http://127.0.0.1:1"),
        "{err}"
    );
    let (ok, out, _) = gslbctl(&a, &["completions", "bash"]);
    assert!(ok && out.contains("gslbctl"));
    drop(a);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every kind gslbctl edits whole goes through one path (`ctl/crud.rs`):
/// create, get, update, list, delete, and status where a kind has none.
#[test]
fn each_kind_is_created_read_updated_listed_and_deleted() {
    let dir = std::env::temp_dir().join(format!("gslb-gslbctl-crud-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let a = start(&dir);
    let file = |name: &str, body: &str| {
        let path = dir.join(name);
        std::fs::write(&path, body).unwrap();
        path.to_str().unwrap().to_owned()
    };
    let json = |args: &[&str]| -> serde_json::Value {
        let mut all = vec!["-o", "json"];
        all.extend_from_slice(args);
        let (ok, out, err) = gslbctl(&a, &all);
        assert!(ok, "gslbctl {args:?}: {err}");
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}"))
    };
    let id_of = |v: &serde_json::Value| v[0]["id"].as_u64().unwrap().to_string();

    let zone = json(&[
        "zones",
        "create",
        "-f",
        &file(
            "z.json",
            r#"{"apex": "crud.test", "ns": ["ns1.crud.test"],
            "defaultTtl": 300, "soa": {"mname": "ns1.crud.test", "rname": "hostmaster.crud.test",
                    "refresh": 3600, "retry": 600, "expire": 604800, "negativeTtl": 60}}"#,
        ),
    ]);
    let zone_id = id_of(&zone);
    let check = json(&[
        "checks",
        "create",
        "-f",
        &file("c.json", r#"{"name": "tcp", "probe": {"type": "tcp"}}"#),
    ]);
    let check_id = id_of(&check);
    let pool = json(&[
        "pools",
        "create",
        "-f",
        &file(
            "p.json",
            &format!(r#"{{"name": "web", "check": {check_id}}}"#),
        ),
    ]);
    let pool_id = id_of(&pool);
    let record = json(&[
        "records",
        "create",
        "-f",
        &file(
            "r.json",
            &format!(
                r#"{{"zone": {zone_id}, "name": "www.crud.test", "type": "A",
                     "data": {{"static": [{{"a": "127.0.0.1"}}]}}}}"#
            ),
        ),
    ]);
    let record_id = id_of(&record);
    let member_file = file(
        "m.json",
        r#"{"name": "m1", "address": "127.0.0.1", "port": 9}"#,
    );
    let (ok, _, err) = gslbctl(&a, &["members", "create", "-f", &member_file]);
    assert!(!ok && err.contains("members create needs --pool"), "{err}");
    let member = json(&["members", "create", "-f", &member_file, "--pool", &pool_id]);
    let member_id = id_of(&member);
    assert_eq!(member[0]["pool"].as_u64().unwrap().to_string(), pool_id);

    for (kind, id, scope) in [
        ("zones", &zone_id, None),
        ("checks", &check_id, None),
        ("pools", &pool_id, None),
        ("records", &record_id, None),
        ("members", &member_id, Some(&pool_id)),
    ] {
        let got = json(&[kind, "get", id]);
        assert_eq!(&got[0]["id"].to_string(), id, "{kind} get: {got}");
        let mut list = vec![kind, "list"];
        list.extend(
            scope
                .map(|pool| ["--pool", pool.as_str()])
                .into_iter()
                .flatten(),
        );
        assert_eq!(json(&list).as_array().unwrap().len(), 1, "{kind} list");
    }
    let (ok, _, err) = gslbctl(&a, &["members", "list"]);
    assert!(!ok && err.contains("members list needs --pool"), "{err}");
    let moved = json(&[
        "members",
        "update",
        &member_id,
        "-f",
        &file("m2.json", r#"{"port": 10}"#),
    ]);
    assert_eq!(
        (moved[0]["port"].as_u64(), moved[0]["name"].as_str()),
        (Some(10), Some("m1"))
    );
    let (ok, out, _) = gslbctl(&a, &["members", "status", &member_id]);
    assert!(ok && !out.is_empty());
    let renamed = json(&[
        "pools",
        "update",
        &pool_id,
        "-f",
        &file("p2.json", r#"{"name": "web2"}"#),
    ]);
    assert_eq!(renamed[0]["name"], "web2");
    assert_eq!(
        renamed[0]["check"].as_u64().unwrap().to_string(),
        check_id,
        "update keeps what the patch leaves out"
    );
    assert_eq!(
        json(&["records", "list", "--zone", &zone_id])
            .as_array()
            .unwrap()
            .len(),
        1
    );

    let (ok, _, err) = gslbctl(&a, &["zones", "status", &zone_id]);
    assert!(!ok && err.contains("zones have no status"), "{err}");
    let (ok, out, _) = gslbctl(&a, &["pools", "status", &pool_id]);
    assert!(ok && !out.is_empty());

    for (kind, id, word) in [
        ("members", &member_id, "member"),
        ("records", &record_id, "record set"),
        ("pools", &pool_id, "pool"),
        ("checks", &check_id, "check"),
        ("zones", &zone_id, "zone"),
    ] {
        let (ok, out, err) = gslbctl(&a, &[kind, "delete", id]);
        assert!(
            ok && out.starts_with(&format!("deleted {word} {id} (version ")),
            "{out}{err}"
        );
        let (ok, _, err) = gslbctl(&a, &[kind, "get", id]);
        assert!(!ok && err.contains("does not exist"), "{kind}: {err}");
    }
    drop(a);
    let _ = std::fs::remove_dir_all(&dir);
}
