//! Token roles and scopes through the real aggregator: every REST route of
//! `api::rest::routes()` called by a token of each role and by a token
//! limited to other zones and pools gets the answer `api::access` says it
//! should; a token limited to a team's zone and pool sees and changes only
//! those, and the UI signed in with it shows only them.

use std::net::SocketAddr;

use gslb_aggregator::api::access::{self, Reach};
use gslb_e2e::dns::{http_request, ui_session};
use gslb_e2e::pki::{create_scoped_token, create_token};
use gslb_e2e::{Aggregator, temp_dir};
use serde_json::{Value, json};

use super::routes::{self, call, created};

const ROLES: [&str; 4] = ["read", "operate", "write", "admin"];

/// The URL and body of a call of `method` `path` in the fixture.
fn request(f: &routes::Fixture, method: &str, path: &'static str) -> (String, String) {
    if method == "GET" {
        return (f.read_url(path), String::new());
    }
    match f.recipes.get(&(method, path)) {
        Some(recipe) => recipe.clone(),
        // The heartbeat writes nothing to the catalog: no audit recipe.
        None => (f.read_url(path), String::new()),
    }
}

fn names(list: &Value, field: &str) -> Vec<String> {
    (list.as_array().unwrap().iter())
        .map(|x| x[field].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn every_rest_route_answers_each_role_and_a_foreign_scope_as_the_table_says() {
    let dir = temp_dir("access-routes");
    let agg = Aggregator::start(&dir);
    let h = agg.http;
    let file = dir.join("tokens.json");
    let root = create_token(&file, "root", "admin", None);
    // Another team's zone and pool, made first: the foreign token sees
    // those only.
    created(
        h,
        &root,
        "/api/v1/zones",
        json!({"apex": "other.test", "ns": ["ns1.other.test"], "defaultTtl": 60,
        "soa": {"mname": "ns1.other.test", "rname": "h.other.test", "refresh": 3600, "retry": 600, "expire": 604800, "negativeTtl": 5}}),
    );
    created(h, &root, "/api/v1/pools", json!({"name": "other"}));
    // After them: the rollback recipe goes back to the fixture's version.
    let f = routes::fixture(h, &root);
    let foreign = create_scoped_token(
        &file,
        "team-other",
        "admin",
        &["other.test"],
        &["other"],
        None,
    );
    let tokens: Vec<String> = ROLES
        .iter()
        .map(|r| create_token(&file, &format!("role-{r}"), r, None))
        .collect();

    let routes = gslb_aggregator::api::rest::routes();
    // The foreign scope first: nothing it is refused changes anything.
    for (method, path) in &routes {
        let need = access::rest(method, path);
        let m = method.as_str();
        let (url, body) = request(&f, m, path);
        let (code, reply) = call(h, &foreign, m, &url, &body);
        let text = reply.to_string();
        let what = format!("{m} {url} with a token limited elsewhere: {code} {text}");
        let message = reply["error"]["message"].as_str().unwrap_or_default();
        let scope_refused = code == 403 && message.starts_with("scope: token \"team-other\"");
        match need.reach {
            Reach::Any => assert_eq!(code, 200, "{what}"),
            Reach::Everything | Reach::Object(_) => assert!(scope_refused, "{what}"),
            Reach::Filtered if m == "GET" && *path != "/api/v1/zonefile" => {
                assert_eq!(code, 200, "{what}");
                for theirs in ["example.test", "\"web\"", "\"tcp\""] {
                    assert!(!text.contains(theirs), "{what}: shows {theirs}");
                }
            }
            // Refused anyway (the document leaves out what exists; the
            // rollback would bring back a deleted key): either answer.
            Reach::Filtered if ["/api/v1/config", "/api/v1/rollback"].contains(path) => {
                assert!(scope_refused || code == 400, "{what}")
            }
            Reach::Filtered => assert!(scope_refused, "{what}"),
        }
    }
    // Then each role, weakest first: refused below the route's role (and
    // saying which role it needs), let through at or above it.
    for (method, path) in &routes {
        let need = access::rest(method, path);
        let m = method.as_str();
        let (url, body) = request(&f, m, path);
        for (role, token) in ROLES.iter().zip(&tokens) {
            let (code, reply) = call(h, token, m, &url, &body);
            let what = format!("{m} {url} with role {role}: {code} {reply}");
            if role.parse::<gslb_proto::link::tokens::TokenRole>().unwrap() < need.role {
                assert_eq!(code, 403, "{what}");
                let message = reply["error"]["message"].as_str().unwrap();
                assert!(
                    message.contains(&format!("needs role {}", need.role)),
                    "{what}"
                );
            } else {
                assert!(![401, 403].contains(&code), "{what}");
            }
        }
    }
}

/// The id of the member of pool `manual`.
fn manual_member(h: SocketAddr, token: &str, pool: u64) -> u64 {
    let (_, members) = call(
        h,
        token,
        "GET",
        &format!("/api/v1/pools/{pool}/members"),
        "",
    );
    members[0]["id"].as_u64().unwrap()
}

/// The first event (the snapshot) of the UI's live stream, as JSON.
fn first_event(h: SocketAddr, cookie: &str) -> Value {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(h).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    write!(
        s,
        "GET /ui/events HTTP/1.1\r\nHost: {h}\r\nCookie: {cookie}\r\n\r\n"
    )
    .unwrap();
    let mut text = String::new();
    let mut buf = [0u8; 65536];
    // Bounded: the read times out, and the snapshot is the first event.
    while !text.contains("event: snapshot")
        || !text
            .split("event: snapshot")
            .nth(1)
            .unwrap()
            .contains("\n\n")
    {
        let n = s.read(&mut buf).expect("the snapshot within 10 s");
        assert!(n > 0, "the stream closed: {text}");
        text.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let after = text.split("event: snapshot").nth(1).unwrap();
    let data = after
        .lines()
        .find_map(|l| l.strip_prefix("data: "))
        .expect("the snapshot's data");
    serde_json::from_str(data).unwrap()
}

fn ui_get(h: SocketAddr, cookie: &str, path: &str) -> (u16, String) {
    let (code, _, body) = http_request(h, "GET", path, &[("Cookie", cookie)], "");
    (code, body)
}

#[test]
fn a_team_token_sees_and_changes_only_its_zone_and_pool_over_rest_and_in_the_ui() {
    let dir = temp_dir("access-team");
    let agg = Aggregator::start(&dir);
    let h = agg.http;
    let file = dir.join("tokens.json");
    let root = create_token(&file, "root", "admin", None);
    let f = routes::fixture(h, &root);
    let team = create_scoped_token(
        &file,
        "team-web",
        "write",
        &["Example.TEST."],
        &["web"],
        None,
    );
    let get = |path: &str| call(h, &team, "GET", path, "");

    // Lists hold its zone, its pool, its pool's members and check only.
    let (code, zones) = get("/api/v1/zones");
    assert_eq!(code, 200, "{zones}");
    assert_eq!(names(&zones, "apex"), ["example.test"]);
    assert_eq!(names(&get("/api/v1/pools").1, "name"), ["web"]);
    assert_eq!(names(&get("/api/v1/checks").1, "name"), ["tcp"]);
    let (_, all) = call(h, &root, "GET", "/api/v1/pools", "");
    let manual = (all.as_array().unwrap().iter())
        .find(|p| p["name"] == "manual")
        .unwrap()["id"]
        .as_u64()
        .unwrap();
    let members = get("/api/v1/records").1;
    assert!(!members.as_array().unwrap().is_empty());

    // It changes its own objects, and is refused, with nothing written,
    // outside them: another pool, a shared check, moving a member out.
    let (code, v) = call(
        h,
        &team,
        "PUT",
        &format!("/api/v1/members/{}", f.member),
        r#"{"weight": 3}"#,
    );
    assert_eq!(code, 200, "{v}");
    let (code, v) = call(
        h,
        &team,
        "POST",
        &format!("/api/v1/pools/{}/members", f.pool),
        r#"{"name": "team", "ipAddress": "127.0.0.9"}"#,
    );
    assert_eq!(code, 201, "{v}");
    let before = call(h, &root, "GET", "/api/v1/audit?limit=1", "").1["records"][0]["seq"].clone();
    let (_, mut theirs) = call(h, &root, "GET", &format!("/api/v1/pools/{manual}"), "");
    theirs["id"] = json!(0);
    theirs["name"] = json!("theirs");
    let dry_run =
        json!({"dryRun": true, "ops": [{"op": "create", "kind": "pool", "object": theirs}]})
            .to_string();
    for (method, path, body) in [
        (
            "PUT",
            format!("/api/v1/pools/{manual}"),
            r#"{"minHealthy": 2}"#,
        ),
        ("GET", format!("/api/v1/pools/{manual}"), ""),
        (
            "POST",
            "/api/v1/checks".to_owned(),
            r#"{"name": "mine", "probe": {"type": "tcp"}}"#,
        ),
        (
            "PUT",
            format!("/api/v1/checks/{}", f.check),
            r#"{"interval": "30s"}"#,
        ),
        (
            "PUT",
            format!("/api/v1/members/{}", f.member),
            &format!(r#"{{"poolId": {manual}}}"#),
        ),
        (
            "POST",
            format!("/api/v1/pools/{manual}/members"),
            r#"{"name": "x", "ipAddress": "127.0.0.8"}"#,
        ),
        ("PUT", "/api/v1/decisions".to_owned(), r#"{"paused": true}"#),
        // A dry run answers as the write would.
        ("POST", "/api/v1/apply".to_owned(), &dry_run),
    ] {
        let (code, v) = call(h, &team, method, &path, body);
        assert_eq!(code, 403, "{method} {path}: {v}");
        let message = v["error"]["message"].as_str().unwrap();
        assert!(
            message.starts_with(
                "scope: token \"team-web\" is limited to zones [example.test] and pools [web]"
            ),
            "{message}"
        );
    }
    let (_, member) = call(
        h,
        &root,
        "GET",
        &format!("/api/v1/members/{}", f.member),
        "",
    );
    assert_eq!(member["poolId"], f.pool, "the refused move wrote nothing");
    assert_eq!(member["weight"], 3);
    // The refused writes are audited; the team's log shows its scope only.
    let (_, log) = call(h, &root, "GET", "/api/v1/audit?limit=20", "");
    let refused = (log["records"].as_array().unwrap().iter())
        .filter(|r| r["seq"].as_u64() > before.as_u64() && r["refused"].is_string())
        .count();
    // Every refused write: those the API refuses by path (the manual
    // pool, every pool's decisions) and those the core does.
    assert_eq!(refused, 6, "{log}");
    let (code, log) = get("/api/v1/audit?limit=1000");
    assert_eq!(code, 200, "{log}");
    let text = log.to_string();
    assert!(text.contains("token:team-web"), "{text}");
    for theirs in ["\"manual\"", "spare.test", "xfr.key", "\"hook\""] {
        assert!(!text.contains(theirs), "the team's log shows {theirs}");
    }

    // Over gRPC (gslbctl) the same: its lists, and refusals naming the
    // scope, the refused write audited.
    let ctl = |args: &[&str]| {
        let out = std::process::Command::new(gslb_e2e::bins::bin("gslbctl"))
            .args(["--server", &agg.url(), "--token", &team, "-o", "json"])
            .args(args)
            .output()
            .unwrap();
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let (ok, out, err) = ctl(&["pools", "list"]);
    assert!(ok, "{err}");
    let pools: Value = serde_json::from_str(&out).unwrap();
    let pools = pools
        .as_array()
        .map_or_else(|| pools["pools"].clone(), |_| pools.clone());
    assert_eq!(names(&pools, "name"), ["web"], "{out}");
    let (ok, _, err) = ctl(&["agents"]);
    assert!(!ok && err.contains("scope: token \"team-web\""), "{err}");
    let (ok, _, err) = ctl(&[
        "members",
        "delete",
        &manual_member(h, &root, manual).to_string(),
    ]);
    assert!(!ok && err.contains("scope: token \"team-web\""), "{err}");
    let (_, newest) = call(h, &root, "GET", "/api/v1/audit?limit=1", "");
    let newest = &newest["records"][0];
    assert!(
        newest["refused"].as_str().unwrap().starts_with("scope:"),
        "{newest}"
    );
    assert!(
        newest["who"]
            .as_str()
            .unwrap()
            .starts_with("token:team-web"),
        "{newest}"
    );
    // A read token's refused gRPC write is audited too (by the guard).
    let reader = create_token(&file, "reader", "read", None);
    let out = std::process::Command::new(gslb_e2e::bins::bin("gslbctl"))
        .args(["--server", &agg.url(), "--token", &reader])
        .args(["decisions", "pause"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let (_, newest) = call(h, &root, "GET", "/api/v1/audit?limit=1", "");
    let newest = &newest["records"][0];
    assert!(
        newest["refused"]
            .as_str()
            .unwrap()
            .contains("needs role operate"),
        "{newest}"
    );
    assert!(
        newest["who"].as_str().unwrap().starts_with("token:reader"),
        "{newest}"
    );

    // The UI signed in with it shows its objects only.
    let cookie = ui_session(h, &team);
    let (code, objects) = ui_get(h, &cookie, "/ui/objects");
    assert_eq!(code, 200, "{objects}");
    assert!(objects.contains("example.test") && objects.contains("web"));
    for theirs in ["spare.test", "manual", "xfr.key", "hook"] {
        assert!(!objects.contains(theirs), "the objects page shows {theirs}");
    }
    let (code, page) = ui_get(h, &cookie, "/ui/topology");
    assert_eq!(code, 200, "{page}");
    assert!(page.contains("example.test") && !page.contains("spare.test"));
    let (code, _) = ui_get(h, &cookie, &format!("/ui/pools/{manual}"));
    assert_eq!(code, 404);
    // Its live stream carries its members and pool only.
    // (A stream opened before the hub's first refresh starts empty: open
    // again until it has drawn a frame.)
    let mut snapshot = Value::Null;
    gslb_e2e::wait_until(10, "a live snapshot with members", || {
        snapshot = first_event(h, &cookie);
        snapshot["seq"].as_u64() > Some(0)
    });
    let ids = |key: &str| -> Vec<u64> {
        let mut v: Vec<u64> = (snapshot[key].as_array().unwrap().iter())
            .map(|x| x["id"].as_u64().unwrap())
            .collect();
        v.sort_unstable();
        v
    };
    let (_, web) = call(
        h,
        &root,
        "GET",
        &format!("/api/v1/pools/{}/members", f.pool),
        "",
    );
    let mut mine: Vec<u64> = (web.as_array().unwrap().iter())
        .map(|m| m["id"].as_u64().unwrap())
        .collect();
    mine.sort_unstable();
    assert_eq!(ids("members"), mine, "{snapshot}");
    assert_eq!(ids("pools"), [f.pool], "{snapshot}");
    let (code, agents) = ui_get(h, &cookie, "/ui/agents");
    assert_eq!(code, 403, "{agents}");
    // Its writes through the UI pass the same checks.
    let csrf = objects
        .split("data-csrf=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the page's CSRF value")
        .to_owned();
    let ui_put = |path: String, body: &str| {
        let headers = [("Cookie", cookie.as_str()), ("x-csrf-token", csrf.as_str())];
        http_request(h, "PUT", &path, &headers, body)
    };
    let (code, _, body) = ui_put(format!("/ui/api/v1/pools/{manual}"), r#"{"minHealthy": 2}"#);
    assert_eq!(code, 403, "{body}");
    assert!(body.contains("scope: token"), "{body}");
    let (code, _, body) = ui_put(
        format!("/ui/api/v1/members/{}", f.member),
        r#"{"weight": 4}"#,
    );
    assert_eq!(code, 200, "{body}");
}
