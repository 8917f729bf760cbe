//! The web UI in a real browser (headless Chromium over WebDriver) against
//! the real aggregator (mutual TLS), an agent, an edge and the quickstart's
//! demo backends: sign-in, seed 000's live labels, the slide-over editor,
//! read-only sessions, CSRF and cross-site refusals, explain, and a
//! screenshot of every page (in `target/ui-screenshots`, or
//! `GSLB_UI_SHOTS`).

use std::process::Command;

use fantoccini::key::Key;
use gslb_e2e::browser::Browser;
use gslb_e2e::{Backend, LocalMesh, wait_until};
use serde_json::{Value, json};

/// The quickstart's document with its backends moved to `backends`
/// (name → backend, in the file's order) and 1 s checks.
fn quickstart(backends: &[(&str, &Backend)]) -> String {
    let mut text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../deploy/examples/quickstart.toml"
    ))
    .unwrap()
    .replace("interval = \"2s\"", "interval = \"1s\"")
    .replace("timeout = \"1s\"", "timeout = \"500ms\"");
    let was = [
        ("127.0.0.11", 18081),
        ("127.0.0.12", 18082),
        ("127.0.0.13", 18083),
        ("127.0.0.21", 18091),
        ("127.0.0.22", 18092),
        ("127.0.0.31", 18101),
    ];
    for ((ip, port), (_, backend)) in was.iter().zip(backends) {
        let old = format!("address = \"{ip}\"\nport = {port}\n");
        assert!(text.contains(&old), "quickstart.toml no longer has {old}");
        text = text.replace(
            &old,
            &format!(
                "address = \"{}\"\nport = {}\n",
                backend.addr.ip(),
                backend.addr.port()
            ),
        );
    }
    text
}

/// The quickstart's members, in its file's order.
const NAMES: [&str; 6] = [
    "web-eu-1",
    "web-eu-2",
    "web-eu-backup",
    "web-us-1",
    "web-us-2",
    "api-1",
];

/// The quickstart over TLS with one location, its backends on
/// `127.0.{net}.11..16` ([`NAMES`]' order) and web-eu-2's killed before
/// the mesh starts: the backends, the document applied and the mesh.
fn quickstart_mesh(name: &str, net: u8) -> (Vec<Backend>, String, LocalMesh) {
    let mut backends: Vec<Backend> = (0..NAMES.len())
        .map(|i| Backend::start(None, &format!("127.0.{net}.{}:0", 11 + i)))
        .collect();
    backends[1].kill();
    let pairs: Vec<(&str, &Backend)> = NAMES.iter().copied().zip(backends.iter()).collect();
    let config = quickstart(&pairs);
    let mesh = LocalMesh::start_tls(name, &config, &[("fra1", "eu")]);
    (backends, config, mesh)
}

/// A REST call over the aggregator's HTTPS listener with `token`; (status,
/// body).
fn rest(mesh: &LocalMesh, token: &str, method: &str, path: &str, extra: &[&str]) -> (u16, Value) {
    let ca = mesh.agg.operator.as_ref().unwrap().ca.clone();
    let out = Command::new("curl")
        .args(["-s", "-w", "\n%{http_code}", "--cacert"])
        .arg(ca)
        .args([
            "-X",
            method,
            "-H",
            &format!("Authorization: Bearer {token}"),
        ])
        .args(extra)
        .arg(format!("https://{}{path}", mesh.agg.http))
        .output()
        .expect("curl");
    let text = String::from_utf8_lossy(&out.stdout);
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", "0"));
    (
        code.trim().parse().unwrap_or(0),
        serde_json::from_str(body).unwrap_or(Value::Null),
    )
}

/// A call to the UI's API with a session cookie (as a browser elsewhere
/// would send it) and the given headers; the status.
fn ui_call(mesh: &LocalMesh, cookie: &str, method: &str, path: &str, headers: &[String]) -> u16 {
    let ca = mesh.agg.operator.as_ref().unwrap().ca.clone();
    let mut cmd = Command::new("curl");
    cmd.args(["-s", "-o", "/dev/null", "-w", "%{http_code}", "--cacert"])
        .arg(ca)
        .args([
            "-X",
            method,
            "-H",
            &format!("Cookie: gslb_session={cookie}"),
        ])
        .args([
            "-H",
            "content-type: application/json",
            "--data",
            "{\"weight\": 7}",
        ]);
    for h in headers {
        cmd.args(["-H", h]);
    }
    let out = cmd
        .arg(format!("https://{}{path}", mesh.agg.http))
        .output()
        .expect("curl");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0)
}

/// Wait until the object editor's save shows `done` (a script returning
/// true), failing with what the page refused instead if it shows that.
async fn saved(b: &Browser, what: &str, done: &str) {
    let outcome = b
        .wait_js(
            what,
            &format!(
                "if ((() => {{ {done} }})()) return 'ok'; const said = [document.querySelector('#object-error'), ...document.querySelectorAll('#object-fields [data-error-for]')].map(e => e && e.textContent).filter(Boolean); return said.length ? said.join(' | ') : null;"
            ),
        )
        .await;
    assert_eq!(outcome, json!("ok"), "{what}: the page refused");
}

/// The runtime a browser test drives its page from.
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// axe-core finds no violation on the page `name` shows now.
async fn accessible(b: &Browser, name: &str) {
    let violations = b.axe().await;
    assert!(
        violations.is_empty(),
        "axe-core on {name}:\n{}",
        violations.join("\n")
    );
}

/// The member id of `pool`/`name`.
fn id(mesh: &LocalMesh, pool: &str, name: &str) -> u64 {
    mesh.agg.member(pool, name)["id"].as_u64().unwrap()
}

/// The label on the node of member `id`.
async fn label(b: &Browser, id: u64) -> String {
    b.js(
        "const n = document.querySelector('button.member[data-member=\"' + arguments[0] + '\"] [data-label]'); return n ? n.textContent : null;",
        vec![json!(id)],
    )
    .await
    .as_str()
    .unwrap_or_default()
    .to_owned()
}

#[test]
fn the_web_ui_shows_and_edits_the_mesh_live_in_a_real_browser() {
    // web-eu-2 (threshold 3) starts down: it waits, red `unhealthy` with
    // its gate at `warming 0/3`, until the browser is watching.
    let (mut backends, config, mesh) = quickstart_mesh("ui", 2);
    wait_until(30, "web-eu-1 up", || {
        mesh.agg.health("web-eu", "web-eu-1") == "up"
    });
    let tokens = mesh.dir.join("store/tokens.json");
    let write = mesh.agg.token.clone();
    let read = gslb_e2e::pki::create_token(&tokens, "ui-reader", "read", None);
    let team =
        gslb_e2e::pki::create_scoped_token(&tokens, "team-us", "write", &[], &["web-us"], None);
    let base = format!("https://{}", mesh.agg.http);
    let (eu1, eu2, us1, us2) = (
        id(&mesh, "web-eu", "web-eu-1"),
        id(&mesh, "web-eu", "web-eu-2"),
        id(&mesh, "web-us", "web-us-1"),
        id(&mesh, "web-us", "web-us-2"),
    );
    let web_eu = mesh.agg.pool_id("web-eu");

    // Without a session: pages send to sign-in, the API and the events
    // refuse, and a sign-in that is not the UI's own call is refused.
    let anonymous = |path: &str, method: &str, extra: &[&str]| {
        let ca = mesh.agg.operator.as_ref().unwrap().ca.clone();
        let out = Command::new("curl")
            .args([
                "-s",
                "-o",
                "/dev/null",
                "-w",
                "%{http_code} %{redirect_url}",
                "--cacert",
            ])
            .arg(ca)
            .args(["-X", method])
            .args(extra)
            .arg(format!("{base}{path}"))
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    };
    assert_eq!(
        anonymous("/ui/", "GET", &[]),
        format!("303 {base}/ui/login")
    );
    assert_eq!(anonymous("/ui/api/v1/pools", "GET", &[]), "401");
    assert_eq!(anonymous("/ui/events", "GET", &[]), "401");
    assert_eq!(
        anonymous(&format!("/ui/api/v1/members/{us1}"), "DELETE", &[]),
        "401"
    );
    let body = format!("{{\"token\": \"{write}\"}}");
    assert_eq!(
        anonymous("/ui/session", "POST", &["--data", &body]),
        "403",
        "a sign-in without the UI's header"
    );
    assert_eq!(
        anonymous(
            "/ui/session",
            "POST",
            &[
                "--data",
                &body,
                "-H",
                "x-gslb-ui: 1",
                "-H",
                "Origin: https://attacker.test"
            ]
        ),
        "403",
        "a sign-in from another site"
    );
    assert_eq!(
        anonymous(
            "/ui/session",
            "POST",
            &["--data", "{\"token\": \"gslb_nope\"}", "-H", "x-gslb-ui: 1"]
        ),
        "401"
    );

    let rt = runtime();
    rt.block_on(async {
        let b = Browser::start().await;

        // Sign-in with a write token; the cookie is HttpOnly, Secure, Strict.
        b.client.goto(&format!("{base}/ui/login")).await.unwrap();
        b.shot("login").await;
        accessible(&b, "sign-in").await;
        b.sign_in(&base, &write).await;
        assert!(b.js("return document.querySelectorAll('button.member').length;", vec![]).await.as_u64().unwrap() > 0);
        let cookie = b.client.get_named_cookie("gslb_session").await.unwrap();
        assert_eq!(cookie.http_only(), Some(true));
        assert_eq!(cookie.secure(), Some(true));
        assert_eq!(format!("{:?}", cookie.same_site()), "Some(Strict)");
        let session = cookie.value().to_owned();

        // The quickstart's nodes: zone, records, pools with their checks, members.
        let canvas = b.text("#topology").await.unwrap();
        for text in [
            "zone example.test", "www.example.test", "api.example.test", "pool web-eu", "pool web-us",
            "pool api", "check web-http: http every 1s", "check api-tcp: tcp every 1s",
        ] {
            assert!(canvas.contains(text), "the topology lacks {text:?}:\n{canvas}");
        }
        for name in NAMES {
            assert!(canvas.contains(name), "the topology lacks member {name}");
        }
        assert!(canvas.contains("backup"), "the backup member is not marked");

        // Seed 000: warming 1/3, 2/3, then green healthy, with no reload.
        b.wait_js("web-eu-2 failing with its gate at 0/3", &format!(
            "const n = document.querySelector('button.member[data-member=\"{eu2}\"]'); return n.querySelector('[data-label]').textContent === 'unhealthy' && n.querySelector('[data-gate]').textContent === 'warming 0/3';"
        )).await;
        b.js("window.notReloaded = true; return null;", vec![]).await;
        backends[1].restart();
        let mut seen: Vec<String> = Vec::new();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let now = label(&b, eu2).await;
            if seen.last() != Some(&now) {
                if now == "warming 1/3" {
                    b.shot("topology-warming").await;
                }
                seen.push(now.clone());
            }
            if now == "healthy" {
                break;
            }
            assert!(std::time::Instant::now() < deadline, "labels seen: {seen:?}");
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let steps: Vec<&str> = seen.iter().map(String::as_str).filter(|l| *l != "unhealthy").collect();
        assert_eq!(steps, ["warming 1/3", "warming 2/3", "healthy"], "labels seen: {seen:?}");
        let class = b.js(&format!("return document.querySelector('button.member[data-member=\"{eu2}\"]').className;"), vec![]).await;
        assert!(class.as_str().unwrap().contains("healthy"), "{class}");
        assert_eq!(b.js("return window.notReloaded === true;", vec![]).await, json!(true), "the page reloaded");
        b.shot("topology").await;
        accessible(&b, "topology").await;

        // Both primaries down: red within 2 s of each transition, and the
        // pool answers from its backup.
        backends[0].kill();
        backends[1].kill();
        for member in [eu1, eu2] {
            b.wait_js("a red node", &format!(
                "return window.gslbLive.shown[{member}] && window.gslbLive.shown[{member}].label === 'unhealthy';"
            )).await;
            let shown_at = b.js(&format!("return window.gslbLive.shown[{member}].at;"), vec![]).await.as_f64().unwrap();
            let (_, log) = rest(&mesh, &write, "GET", &format!("/api/v1/members/{member}/logs?limit=20"), &[]);
            let down_at = log["entries"].as_array().unwrap().iter()
                .filter(|e| e["to"] == "down")
                .map(|e| e["atMs"].as_f64().unwrap())
                .fold(0.0, f64::max);
            assert!(down_at > 0.0, "no transition to down in {log}");
            let delay = shown_at - down_at;
            assert!(delay <= 2000.0, "member {member} turned red {delay:.0} ms after its transition");
        }
        b.wait_js("the backup badge", &format!(
            "const t = document.querySelector('[data-badges=\"{web_eu}\"]').textContent; return t.includes('using backups') && t.includes('1 healthy · 2 unhealthy');"
        )).await;
        b.shot("topology-backups").await;

        // The slide-over sets the warm-up threshold; REST confirms it.
        b.click(&format!("button.member[data-member=\"{us2}\"]")).await;
        b.wait_js("the slide-over", "return !document.querySelector('#slideover').hidden && document.querySelector('#f-name').value === 'web-us-2';").await;
        b.shot("slide-over").await;
        accessible(&b, "the member slide-over").await;
        b.fill("#f-warmupThreshold", "5").await;
        b.click("#member-save").await;
        b.wait_js("the slide-over to close", "return document.querySelector('#slideover').hidden;").await;
        let (_, member) = rest(&mesh, &write, "GET", &format!("/api/v1/members/{us2}"), &[]);
        assert_eq!(member["warmupThreshold"], 5, "{member}");

        // A colleague changes the priority while the slide-over is open:
        // saving the weight is refused as changed since it was opened, the
        // panel lists what changed, and "Save mine over theirs" keeps both.
        b.click(&format!("button.member[data-member=\"{us2}\"]")).await;
        b.wait_js("the slide-over again", "return !document.querySelector('#slideover').hidden && document.querySelector('#f-name').value === 'web-us-2';").await;
        let (code, _) = rest(&mesh, &write, "PUT", &format!("/api/v1/members/{us2}"), &["--data", r#"{"priority": 7}"#]);
        assert_eq!(code, 200);
        b.fill("#f-weight", "150").await;
        b.click("#member-save").await;
        b.wait_js("what changed meanwhile", "return document.querySelector('#member-changed') !== null;").await;
        let notice = b.text("#member-error").await.unwrap();
        assert!(notice.contains("Changed since you opened it") && notice.contains("priority: 0 → 7"), "{notice}");
        b.shot("slide-over-changed-since").await;
        b.click("#member-overwrite").await;
        b.wait_js("the slide-over to close after the overwrite", "return document.querySelector('#slideover').hidden;").await;
        let (_, member) = rest(&mesh, &write, "GET", &format!("/api/v1/members/{us2}"), &[]);
        assert_eq!((member["weight"].as_u64(), member["priority"].as_u64()), (Some(150), Some(7)), "{member}");
        // The audit log names the UI session's token for the save.
        let (_, audit) = rest(&mesh, &write, "GET", &format!("/api/v1/audit?limit=1&object=member/{us2}"), &[]);
        let who = audit["records"][0]["who"].as_str().unwrap_or_default().to_owned();
        assert!(who.starts_with("ui:e2e ("), "{audit}");
        assert_eq!(audit["records"][0]["changes"][0]["fields"], json!([{"field": "weight", "before": 100, "after": 150}]), "only the field changed: {audit}");

        // Keyboard: Enter on a focused member node opens the slide-over,
        // Escape closes it and gives the focus back to the node.
        let node = format!("button.member[data-member=\"{us2}\"]");
        b.press(Some(&node), &Key::Enter).await;
        b.wait_js("the slide-over from the keyboard", "return !document.querySelector('#slideover').hidden;").await;
        b.press(None, &Key::Escape).await;
        b.wait_js("the slide-over closed by Escape", "return document.querySelector('#slideover').hidden;").await;
        let focused = b.js("return document.activeElement.dataset.member;", vec![]).await;
        assert_eq!(focused, json!(us2.to_string()), "focus did not return to the node");

        // Search by name: only the matching members stay visible.
        b.fill("#search", "web-us").await;
        let visible = "return [...document.querySelectorAll('button.member')].filter(n => n.offsetParent !== null).map(n => n.querySelector('.mname').textContent).join(',');";
        b.wait_js("the search to filter", &format!("{} return v === 'web-us-1,web-us-2' ? v : null;", visible.replacen("return ", "const v = ", 1))).await;
        b.js("const s = document.querySelector('#search'); s.value = ''; s.dispatchEvent(new Event('input')); return null;", vec![]).await;

        // A member created in its pool's slide-over, then deleted there.
        let web_us = mesh.agg.pool_id("web-us");
        b.click(&format!("button.add-member[data-pool=\"{web_us}\"]")).await;
        b.wait_js("the new member's slide-over", "return !document.querySelector('#slideover').hidden;").await;
        b.fill("#f-name", "web-us-9").await;
        b.fill("#f-ipAddress", "127.0.2.29").await;
        b.fill("#f-port", "80").await;
        b.click("#member-save").await;
        b.wait_js("the slide-over to close", "return document.querySelector('#slideover').hidden;").await;
        let made = mesh.agg.member("web-us", "web-us-9")["id"].as_u64().unwrap();
        b.wait_js("the new node", &format!("return document.querySelector('button.member[data-member=\"{made}\"]') !== null;")).await;
        b.click(&format!("button.member[data-member=\"{made}\"]")).await;
        b.wait_js("its slide-over", "return !document.querySelector('#slideover').hidden && document.querySelector('#f-name').value === 'web-us-9';").await;
        b.click("#member-delete").await;
        assert_eq!(b.text("#confirm-title").await.unwrap(), "Delete member web-us-9?");
        b.click("#confirm-yes").await;
        b.wait_js("the node gone", &format!("return document.querySelector('button.member[data-member=\"{made}\"]') === null;")).await;
        assert!(mesh.agg.try_health("web-us", "web-us-9").is_none(), "the member was not deleted");

        // An invalid weight: the API's message beside the weight field.
        b.click(&format!("button.member[data-member=\"{us1}\"]")).await;
        b.wait_js("the slide-over", "return !document.querySelector('#slideover').hidden && document.querySelector('#f-name').value === 'web-us-1';").await;
        b.fill("#f-weight", "-1").await;
        b.click("#member-save").await;
        let error = b.wait_js("the weight error", "return document.querySelector('[data-error-for=weight]').textContent;").await;
        assert!(error.as_str().unwrap().starts_with("weight"), "{error}");
        assert_eq!(b.js("return document.querySelector('#member-error').textContent;", vec![]).await, json!(""));
        b.shot("field-error").await;
        b.click("#member-close").await;
        let (_, member) = rest(&mesh, &write, "GET", &format!("/api/v1/members/{us1}"), &[]);
        assert_eq!(member["weight"], 200, "a refused change left {member}");

        // Cross-site and CSRF-less changes are refused with 403.
        let no_csrf = b.js(&format!(
            "return fetch('/ui/api/v1/members/{us1}', {{method: 'PUT', headers: {{'content-type': 'application/json'}}, body: '{{\"weight\": 7}}'}}).then(r => r.status);"
        ), vec![]).await;
        assert_eq!(no_csrf, json!(403));
        let csrf = b.js("return document.body.dataset.csrf;", vec![]).await.as_str().unwrap().to_owned();
        let path = format!("/ui/api/v1/members/{us1}");
        let with = |h: &str| vec![format!("x-csrf-token: {csrf}"), h.to_owned()];
        assert_eq!(ui_call(&mesh, &session, "PUT", &path, &with("Origin: https://attacker.test")), 403);
        assert_eq!(ui_call(&mesh, &session, "PUT", &path, &with("Sec-Fetch-Site: cross-site")), 403);
        assert_eq!(ui_call(&mesh, &session, "PUT", &path, &["x-csrf-token: wrong".to_owned()]), 403);
        let (_, member) = rest(&mesh, &write, "GET", &format!("/api/v1/members/{us1}"), &[]);
        assert_eq!(member["weight"], 200, "a refused change left {member}");
        assert_eq!(ui_call(&mesh, &session, "PUT", &path, &with(&format!("Origin: {base}"))), 200, "the same call from the UI's own origin");
        rest(&mesh, &write, "PUT", &format!("/api/v1/members/{us1}"), &["--data", "{\"weight\": 200}"]);

        // Explain: the same answer as gslbctl explain.
        b.client.goto(&format!("{base}/ui/explain?name=www.example.test&type=A&client=eu")).await.unwrap();
        let shown = b.wait_js("the explain answer", "const a = document.querySelector('#answers'); return a && a.textContent;").await;
        let ctl = mesh.agg.ctl(&["explain", "www.example.test", "--client", "eu"]);
        let answers = ctl.lines().find_map(|l| l.strip_prefix("answers")).unwrap().trim().to_owned();
        assert!(!answers.is_empty(), "{ctl}");
        assert_eq!(shown.as_str().unwrap(), answers, "gslbctl explain said:\n{ctl}");
        b.shot("explain").await;
        accessible(&b, "explain").await;

        // Every other page, with a screenshot.
        b.client.goto(&format!("{base}/ui/pools/{web_eu}")).await.unwrap();
        b.wait_js("the probe matrix", "return document.querySelector('td[data-location=fra1]') !== null;").await;
        b.shot("probe-matrix").await;
        accessible(&b, "probe matrix").await;
        b.client.goto(&format!("{base}/ui/members/{eu1}/log")).await.unwrap();
        let log = b.text("table.log").await.unwrap();
        assert!(log.contains("up → down") && log.contains("fra1"), "{log}");
        b.shot("health-log").await;
        accessible(&b, "health log").await;
        for (page, expect) in [("agents", "fra1"), ("edges", "versions"), ("cluster", "single"), ("objects", "web-http")] {
            b.client.goto(&format!("{base}/ui/{page}")).await.unwrap();
            let text = b.text("main").await.unwrap();
            assert!(text.contains(expect), "/ui/{page} lacks {expect:?}:\n{text}");
            b.shot(page).await;
            accessible(&b, page).await;
        }

        // Objects (item 11): each kind in a form, related objects by name.
        // A check made from its form (a tcp probe), then edited there.
        b.client.goto(&format!("{base}/ui/objects")).await.unwrap();
        b.click("button.create[data-kind=checks]").await;
        b.wait_js("the object form", "return !document.querySelector('#object-editor').hidden && document.querySelector('[data-key=\"probe.path\"]') !== null;").await;
        b.fill("[data-key=name]", "ui-made").await;
        b.js("const t = document.querySelector('[data-key=\"probe.type\"]'); t.value = 'tcp'; t.dispatchEvent(new Event('change')); return null;", vec![]).await;
        let fields = b.js("return [...document.querySelectorAll('#object-fields [data-key]')].map(i => i.dataset.key);", vec![]).await;
        assert!(fields.as_array().unwrap().contains(&json!("probe.send")) && !fields.as_array().unwrap().contains(&json!("probe.path")), "{fields}");
        b.fill("[data-key=window]", "x").await;
        b.click("#object-save").await;
        assert_eq!(b.text("[data-error-for=window]").await.unwrap(), "Results kept per location: \"x\" is not a whole number");
        b.fill("[data-key=window]", "1").await;
        b.shot("object-form-check").await;
        accessible(&b, "the check form").await;
        b.click("#object-save").await;
        saved(&b, "the created check", "return document.querySelector('li.object[data-name^=\"ui-made\"]') !== null;").await;
        let (_, checks) = rest(&mesh, &write, "GET", "/api/v1/checks", &[]);
        let made = checks.as_array().unwrap().iter().find(|c| c["name"] == "ui-made").unwrap_or_else(|| panic!("{checks}"));
        assert_eq!(made["probe"]["type"], "tcp", "{made}");
        let made = made["id"].as_u64().unwrap();
        // Edited: only the field changed is sent (the audit shows it alone).
        b.click("li.object[data-name^=\"ui-made\"] button.edit").await;
        b.wait_js("the object form", "return !document.querySelector('#object-editor').hidden;").await;
        b.fill("[data-key=interval]", "20s").await;
        b.click("#object-save").await;
        b.wait_js("the page reloaded", "return document.readyState === 'complete' && document.querySelector('#object-editor').hidden;").await;
        let (_, audit) = rest(&mesh, &write, "GET", &format!("/api/v1/audit?limit=1&object=check/{made}"), &[]);
        assert_eq!(audit["records"][0]["changes"][0]["fields"], json!([{"field": "interval", "before": "10s", "after": "20s"}]), "{audit}");
        // A refusal sits under the field it names, in words.
        b.click("li.object[data-name^=\"ui-made\"] button.edit").await;
        b.fill("[data-key=name]", "").await;
        b.click("#object-save").await;
        let refusal = b.wait_js("the refusal", "return document.querySelector('[data-error-for=name]').textContent || null;").await;
        assert!(!refusal.as_str().unwrap().contains("expected"), "{refusal}");
        b.click("#object-close").await;
        // Deleted after a confirmation naming it (no browser dialog).
        b.click("li.object[data-name^=\"ui-made\"] button.delete").await;
        assert_eq!(b.text("#confirm-title").await.unwrap(), "Delete check ui-made (tcp)?");
        b.click("#confirm-yes").await;
        b.wait_js("the check gone", "return document.readyState === 'complete' && document.querySelector('li.object[data-name^=\"ui-made\"]') === null;").await;

        // A pool: its check chosen by name.
        b.click("button.create[data-kind=pools]").await;
        b.fill("[data-key=name]", "ui-pool").await;
        let checks_offered = b.js("return [...document.querySelector('[data-key=check]').options].map(o => o.text);", vec![]).await;
        assert!(checks_offered.as_array().unwrap().contains(&json!("web-http")), "{checks_offered}");
        b.js("const c = document.querySelector('[data-key=check]'); c.value = [...c.options].find(o => o.text === 'api-tcp').value; document.querySelector('[data-key=failMode]').value = 'static'; return null;", vec![]).await;
        b.fill("[data-key=fallback]", "192.0.2.9").await;
        b.click("#object-save").await;
        saved(&b, "the created pool", "return document.querySelector('li.object[data-name=\"ui-pool\"]') !== null;").await;
        let (_, pools) = rest(&mesh, &write, "GET", "/api/v1/pools", &[]);
        let made = pools.as_array().unwrap().iter().find(|p| p["name"] == "ui-pool").unwrap().clone();
        assert_eq!(made["fallback"], json!(["192.0.2.9"]), "{made}");
        let (_, checks) = rest(&mesh, &write, "GET", "/api/v1/checks", &[]);
        let api_tcp = checks.as_array().unwrap().iter().find(|c| c["name"] == "api-tcp").unwrap()["id"].clone();
        assert_eq!(made["check"], api_tcp, "{made}");
        // A pool-backed record answering from it, and a static MX record
        // whose data is typed per line.
        b.click("button.create[data-kind=records][data-json*=dynamic]").await;
        b.fill("[data-key=name]", "ui.example.test").await;
        b.js("[...document.querySelector('[data-key=\"data.dynamic.pools\"]').options].forEach(o => { o.selected = o.text === 'ui-pool'; }); return null;", vec![]).await;
        // A geo branch: clients in region eu answer from web-eu.
        b.click("[data-key=\"data.dynamic.geo\"] > button").await;
        b.fill("fieldset.branch [data-geo=regions]", "eu").await;
        b.js("[...document.querySelector('fieldset.branch [data-geo=pools]').options].forEach(o => { o.selected = o.text === 'web-eu'; }); return null;", vec![]).await;
        accessible(&b, "a record's form with a geo branch").await;
        b.click("#object-save").await;
        saved(&b, "the created record", "return document.querySelector('li.object[data-name=\"ui.example.test A\"]') !== null;").await;
        b.click("button.create[data-kind=records][data-json*=static]").await;
        b.fill("[data-key=name]", "mx.example.test").await;
        b.js("const t = document.querySelector('[data-key=type]'); t.value = 'MX'; t.dispatchEvent(new Event('change')); return null;", vec![]).await;
        b.fill("[data-key=\"data.static\"]", "ten mail.example.test").await;
        b.click("#object-save").await;
        let said = b.text("[data-error-for=\"data.static\"]").await.unwrap();
        assert_eq!(said, "Records, one per line: \"ten mail.example.test\": preference must be a whole number");
        b.fill("[data-key=\"data.static\"]", "10 mail.example.test").await;
        b.shot("object-form-static-mx").await;
        b.click("#object-save").await;
        saved(&b, "the MX record", "return document.querySelector('li.object[data-name=\"mx.example.test MX\"]') !== null;").await;
        let (_, records) = rest(&mesh, &write, "GET", "/api/v1/records", &[]);
        let mx = records.as_array().unwrap().iter().find(|r| r["name"] == "mx.example.test").unwrap().clone();
        assert_eq!(mx["data"]["static"], json!([{"mx": {"preference": 10, "exchange": "mail.example.test"}}]), "{mx}");
        let ui_rec = records.as_array().unwrap().iter().find(|r| r["name"] == "ui.example.test").unwrap().clone();
        assert_eq!(ui_rec["data"]["dynamic"]["pools"], json!([made["id"]]), "{ui_rec}");
        let web_eu = mesh.agg.pool_id("web-eu");
        assert_eq!(ui_rec["data"]["dynamic"]["geo"], json!([{"regions": ["eu"], "pools": [web_eu]}]), "{ui_rec}");
        // The zone's form shows its SOA field by field; JSON stays one
        // toggle away for what the form does not show. An open form is a
        // link.
        b.click("li.object[data-kind=zones] button.edit").await;
        let link = b.js("return location.pathname + location.search;", vec![]).await;
        assert_eq!(link, json!("/ui/objects?edit=zones/1"));
        b.client.goto(&format!("{base}/ui/objects?edit=zones/1")).await.unwrap();
        b.wait_js("the zone's form from its link", "return !document.querySelector('#object-editor').hidden && document.querySelector('#object-title').textContent === 'Edit zone example.test';").await;
        assert_eq!(b.js("return document.querySelector('[data-key=\"soa.refresh\"]').value;", vec![]).await, json!("3600"));
        b.click("#object-as-json").await;
        let shown = b.js("return JSON.parse(document.querySelector('#object-json').value).soa.refresh;", vec![]).await;
        assert_eq!(shown, json!(3600));
        accessible(&b, "the zone as JSON").await;
        b.click("#object-close").await;
        for (kind, name) in [("records", "ui.example.test A"), ("records", "mx.example.test MX"), ("pools", "ui-pool")] {
            b.click(&format!("li.object[data-kind={kind}][data-name=\"{name}\"] button.delete")).await;
            b.click("#confirm-yes").await;
            b.wait_js("the object gone", &format!("return document.readyState === 'complete' && document.querySelector('li.object[data-name=\"{name}\"]') === null;")).await;
        }

        // Declarative apply: the plan first, then the change on confirmation.
        b.client.goto(&format!("{base}/ui/apply")).await.unwrap();
        let added = config.replace(
            "[[pool.member]]\nname = \"web-us-2\"",
            "[[pool.member]]\nname = \"web-us-3\"\naddress = \"127.0.2.23\"\nport = 80\nenabled = false\n[[pool.member]]\nname = \"web-us-2\"",
        );
        assert_ne!(added, config);
        b.js("document.querySelector('#apply-text').value = arguments[0]; return null;", vec![json!(added)]).await;
        b.click("#apply-plan").await;
        let plan = b.wait_js("the plan", "return !document.querySelector('#apply-result').hidden && document.querySelector('#apply-lines').textContent;").await;
        assert!(plan.as_str().unwrap().contains("web-us-3"), "{plan}");
        assert!(mesh.agg.try_health("web-us", "web-us-3").is_none(), "a plan applied nothing");
        b.shot("apply-plan").await;
        accessible(&b, "apply with its plan").await;
        b.click("#apply-confirm").await;
        b.wait_js("the applied plan", "return document.querySelector('#apply-heading').textContent.startsWith('Applied');").await;
        assert_eq!(mesh.agg.member("web-us", "web-us-3")["enabled"], false);

        // The audit page: the slide-over's History link leads to the
        // member's records, field by field; the filters narrow them.
        b.client.goto(&format!("{base}/ui/")).await.unwrap();
        b.click(&format!("button.member[data-member=\"{us2}\"]")).await;
        b.wait_js("the slide-over", "return !document.querySelector('#slideover').hidden && document.querySelector('#f-name').value === 'web-us-2';").await;
        b.click("#member-history").await;
        b.wait_js("the member's audit records", "return document.querySelector('#audit-records') !== null;").await;
        let records = b.text("#audit-records").await.unwrap();
        assert!(records.contains("ui:e2e") && records.contains("weight: 100 → 150"), "{records}");
        assert_eq!(b.js("return document.querySelector('#audit-object').value;", vec![]).await, json!(format!("member/{us2}")));
        b.shot("audit").await;
        accessible(&b, "audit").await;
        b.fill("#audit-who", "nobody-has-this-name").await;
        b.click("#audit-filter").await;
        b.wait_js("no record", "return document.querySelector('#audit-empty') !== null;").await;
        b.client.goto(&format!("{base}/ui/audit?since=yesterday")).await.unwrap();
        let error = b.text("#audit-error").await.unwrap();
        assert!(error.starts_with("since:"), "{error}");

        // A token scoped to the pool web-us sees its members only.
        b.client.goto(&format!("{base}/ui/")).await.unwrap();
        b.click("#sign-out").await;
        b.wait_js("the sign-in page", "return location.pathname === '/ui/login';").await;
        b.sign_in(&base, &team).await;
        let members = "return [...document.querySelectorAll('button.member .mname')].map(n => n.textContent).sort().join(',');";
        let shown = b.wait_js("the scoped topology", members).await;
        assert_eq!(shown, json!("web-us-1,web-us-2,web-us-3"), "a scoped session's topology");
        let who = b.text("span.who").await.unwrap();
        assert!(who.contains("pools [web-us]"), "{who}");
        b.shot("scoped").await;
        b.client.goto(&format!("{base}/ui/pools/{web_eu}")).await.unwrap();
        let missing = b.text("main").await.unwrap();
        assert!(missing.contains("does not exist"), "{missing}");

        // A read token sees everything and can change nothing.
        b.client.goto(&format!("{base}/ui/")).await.unwrap();
        b.click("#sign-out").await;
        b.wait_js("the sign-in page", "return location.pathname === '/ui/login';").await;
        b.sign_in(&base, &read).await;
        b.click(&format!("button.member[data-member=\"{us2}\"]")).await;
        b.wait_js("the slide-over", "return !document.querySelector('#slideover').hidden && document.querySelector('#f-name').value === 'web-us-2';").await;
        let locked = b.js("return document.querySelector('#member-save').disabled && document.querySelector('#f-weight').disabled;", vec![]).await;
        assert_eq!(locked, json!(true), "a read session's editor is not disabled");
        b.shot("read-only").await;
        accessible(&b, "a read session's slide-over").await;
        let refused = b.js(&format!(
            "return fetch('/ui/api/v1/members/{us2}', {{method: 'PUT', headers: {{'content-type': 'application/json', 'x-csrf-token': document.body.dataset.csrf}}, body: '{{\"weight\": 7}}'}}).then(r => r.status);"
        ), vec![]).await;
        assert_eq!(refused, json!(403));

        // The UI's own figures on /metrics.
        let ca = mesh.agg.operator.as_ref().unwrap().ca.clone();
        let metrics = Command::new("curl").arg("-s").arg("--cacert").arg(ca).arg(format!("{base}/metrics")).output().unwrap();
        let metrics = String::from_utf8_lossy(&metrics.stdout).into_owned();
        let value = |name: &str| -> f64 {
            metrics.lines().find_map(|l| l.strip_prefix(&format!("{name} "))).and_then(|v| v.trim().parse().ok())
                .unwrap_or_else(|| panic!("no {name} in /metrics"))
        };
        assert!(value("gslb_aggregator_ui_sessions") >= 1.0);
        assert!(value("gslb_aggregator_ui_event_streams") >= 1.0);
        assert!(value("gslb_aggregator_ui_refreshes_total") >= 1.0);
        assert!(value("gslb_aggregator_ui_refresh_seconds_total") > 0.0);
        b.close().await;
    });

    // No token ever reached a log.
    for token in [&write, &read] {
        assert!(
            !mesh.agg.proc.stderr.contains(token),
            "a token is in the aggregator's log"
        );
        assert!(
            !mesh.agg.proc.stdout.contains(token),
            "a token is in the aggregator's output"
        );
    }
}

/// Cut `from` (inclusive) up to `to` (exclusive) out of `text`.
fn cut(text: &str, from: &str, to: &str) -> String {
    let start = text.find(from).unwrap_or_else(|| panic!("no {from:?}"));
    let end = start
        + text[start..]
            .find(to)
            .unwrap_or_else(|| panic!("no {to:?}"));
    format!("{}{}", &text[..start], &text[end..])
}

/// Issue 44, the states and controls an on-call operator met wrong: a
/// member failing with its warm-up gate closed is red `unhealthy` (the gate
/// a secondary mark) in the page, gslbctl and the API; sign-in returns to
/// the page asked for; the health log and the probe matrix follow new
/// results without a reload; a number field holding text or nothing is an
/// error by its field; the Apply page's plan is what Apply does (counts,
/// field changes, deletions only with prune, typed confirmation); a read
/// session signs out for good; a page whose stream is down greys its
/// states and says since when.
#[test]
fn the_ui_shows_an_incident_as_it_is_and_refuses_what_it_cannot_do_exactly() {
    // web-eu-2 (threshold 3) fails everywhere with its gate closed.
    let (mut backends, config, mut mesh) = quickstart_mesh("ui-incident", 3);
    let tokens = mesh.dir.join("store/tokens.json");
    let write = mesh.agg.token.clone();
    let read = gslb_e2e::pki::create_token(&tokens, "ui-oncall-reader", "read", None);
    let base = format!("https://{}", mesh.agg.http);
    let (eu1, eu2) = (
        id(&mesh, "web-eu", "web-eu-1"),
        id(&mesh, "web-eu", "web-eu-2"),
    );
    let (web_eu, web_us) = (mesh.agg.pool_id("web-eu"), mesh.agg.pool_id("web-us"));
    wait_until(30, "web-eu-2 down", || {
        mesh.agg.health("web-eu", "web-eu-2") == "down"
    });

    // Item 2 in the API and in gslbctl: health first, the gate beside it.
    let (_, status) = rest(
        &mesh,
        &write,
        "GET",
        &format!("/api/v1/members/{eu2}/status"),
        &[],
    );
    assert_eq!(
        (
            &status["state"],
            &status["label"],
            &status["gate"],
            &status["warming"]
        ),
        (
            &json!("unhealthy"),
            &json!("unhealthy"),
            &json!("warming 0/3"),
            &json!(true)
        ),
        "{status}"
    );
    let listed = mesh
        .agg
        .ctl(&["members", "list", "--pool", &web_eu.to_string()]);
    let row = listed
        .lines()
        .find(|l| l.contains("web-eu-2"))
        .unwrap_or_default();
    assert!(row.contains("unhealthy (warming 0/3)"), "{listed}");
    let pool = mesh.agg.ctl(&["pools", "status", &web_eu.to_string()]);
    assert!(pool.contains("unhealthy (warming 0/3)"), "{pool}");

    let rt = runtime();
    rt.block_on(async {
        let b = Browser::start().await;

        // Item 9: a page asked for without a session comes back after sign-in.
        let log_page = format!("/ui/members/{eu2}/log");
        b.client.goto(&format!("{base}{log_page}")).await.unwrap();
        b.wait_js("the sign-in page with where to return", "return location.pathname === '/ui/login' && location.search.startsWith('?next=');").await;
        b.fill("#token", &write).await;
        b.click("#signin-form button[type=submit]").await;
        b.wait_js("the asked-for page after sign-in", &format!("return location.pathname === '{log_page}' && document.querySelector('#live').textContent === 'live';")).await;

        // Item 2 in the page: red `unhealthy`, the gate as a mark, counted
        // as unhealthy.
        b.client.goto(&format!("{base}/ui/")).await.unwrap();
        b.wait_js("the live topology", "return document.querySelector('#live').textContent === 'live';").await;
        let node = format!("button.member[data-member=\"{eu2}\"]");
        let shown = b.wait_js("web-eu-2 red with its gate", &format!(
            "const n = document.querySelector('{node}'); const s = [n.className, n.querySelector('[data-label]').textContent, n.querySelector('[data-gate]').textContent]; return s[1] === 'unhealthy' ? s : null;"
        )).await;
        assert_eq!(shown, json!([format!("member unhealthy"), "unhealthy", "warming 0/3"]), "{shown}");
        let tally = b.text(&format!("[data-badges=\"{web_eu}\"] .tally")).await.unwrap();
        assert!(tally.contains("unhealthy") && !tally.contains("warming"), "{tally}");
        b.shot("incident-unhealthy-gate-closed").await;

        // Item 13: the overview names what needs attention, each a link.
        b.client.goto(&format!("{base}/ui/overview")).await.unwrap();
        let members = b.text("#overview-members").await.unwrap();
        assert!(members.contains("Members not healthy (1)") && members.contains("web-eu/web-eu-2: unhealthy (warming 0/3)"), "{members}");
        let link = b.js("return document.querySelector('#overview-members a').getAttribute('href');", vec![]).await;
        assert_eq!(link, json!(format!("/ui/members/{eu2}/log")));
        for (id, none) in [("#overview-pools", "Pools not answering normally (0)"), ("#overview-agents", "Agents disconnected (0)"), ("#overview-edges", "Edges behind (0)"), ("#overview-notifications", "Notifications failing (0)")] {
            let text = b.text(id).await.unwrap();
            assert!(text.starts_with(none), "{id}: {text}");
        }
        b.shot("overview").await;
        accessible(&b, "overview").await;
        b.client.goto(&format!("{base}/ui/")).await.unwrap();
        b.wait_js("the live topology", "return document.querySelector('#live').textContent === 'live';").await;

        // Item 3: text or nothing in a number field is an error by that
        // field, and nothing is created.
        b.click(&format!("button.add-member[data-pool=\"{web_us}\"]")).await;
        b.wait_js("the new member's slide-over", "return !document.querySelector('#slideover').hidden;").await;
        b.fill("#f-name", "web-us-8").await;
        b.fill("#f-ipAddress", "127.0.3.28").await;
        b.fill("#f-port", "abc").await;
        b.click("#member-save").await;
        let error = b.wait_js("the port error", "return document.querySelector('[data-error-for=port]').textContent || null;").await;
        assert_eq!(error, json!("Port: \"abc\" is not a whole number"));
        b.shot("number-field-error").await;
        b.fill("#f-port", "80").await;
        b.fill("#f-weight", "").await;
        b.click("#member-save").await;
        let error = b.wait_js("the weight error", "return document.querySelector('[data-error-for=weight]').textContent || null;").await;
        assert_eq!(error, json!("Weight: required: enter a whole number"));
        assert_eq!(b.js("return document.querySelector('[data-error-for=port]').textContent;", vec![]).await, json!(""));
        b.click("#member-close").await;
        assert!(mesh.agg.try_health("web-us", "web-us-8").is_none(), "a member was created");

        // Item 6: the probe matrix follows new results at steady state,
        // each aged from its arrival.
        b.client.goto(&format!("{base}/ui/pools/{web_eu}")).await.unwrap();
        let cell = format!("tr[data-member=\"{eu1}\"] td[data-location=fra1] .age");
        let first = b.wait_js("an aged result", &format!("const a = document.querySelector('{cell}'); return a && Number(a.dataset.at);")).await.as_f64().unwrap();
        b.js("window.notReloaded = true; return null;", vec![]).await;
        let later = b.wait_js("a newer result without a reload", &format!(
            "const a = document.querySelector('{cell}'); return window.notReloaded && a && Number(a.dataset.at) > {first} ? Number(a.dataset.at) : null;"
        )).await.as_f64().unwrap();
        let now = b.js("return Date.now();", vec![]).await.as_f64().unwrap();
        assert!(now - later < 5_000.0, "the newest result shown is {} ms old", now - later);
        b.shot("probe-matrix-live").await;

        // Item 7: the health log shows new entries without a reload.
        b.client.goto(&format!("{base}{log_page}")).await.unwrap();
        b.wait_js("the log's stream", "return document.querySelector('#live').textContent === 'live';").await;
        let rows = "return document.querySelectorAll('table.log tbody tr').length;";
        let before = b.js(rows, vec![]).await.as_u64().unwrap();
        b.js("window.notReloaded = true; return null;", vec![]).await;
        backends[1].restart();
        b.wait_js("a new log entry without a reload", &format!(
            "return window.notReloaded && document.querySelectorAll('table.log tbody tr').length > {before};"
        )).await;
        b.shot("health-log-live").await;

        // Item 5: the plan is what Apply does.
        let doc = cut(&config, "[[pool.member]]\nname = \"web-us-2\"", "\n[[pool]]");
        let doc = cut(&doc, "[[pool]]\nname = \"api\"", "# www:");
        let doc = cut(&doc, "[[record]]\nzone = \"example.test\"\nname = \"api.example.test\"", "[[record]]\nzone = \"example.test\"\nname = \"example.test\"");
        let doc = doc.replacen("weight = 200", "weight = 150", 1);
        b.client.goto(&format!("{base}/ui/apply")).await.unwrap();
        b.js("document.querySelector('#apply-text').value = arguments[0]; document.querySelector('#apply-text').dispatchEvent(new Event('input')); return null;", vec![json!(doc)]).await;
        b.click("#apply-plan").await;
        let heading = b.wait_js("the plan without prune", "return !document.querySelector('#apply-result').hidden && document.querySelector('#apply-heading').textContent;").await;
        assert_eq!(heading, json!("Plan: +0 ~1 −4"));
        let lines = b.text("#apply-lines").await.unwrap();
        assert!(lines.contains("~ member web-us/web-us-1: weight 200 → 150"), "{lines}");
        assert!(lines.contains("deleted only with prune ticked"), "{lines}");
        assert_eq!(b.js("return document.querySelector('#apply-confirm').disabled;", vec![]).await, json!(true), "Apply on with prune off");
        b.shot("apply-plan-prune-off").await;
        b.click("#apply-prune").await;
        b.click("#apply-plan").await;
        b.wait_js("the typed confirmation", "return !document.querySelector('#apply-typed-field').hidden;").await;
        assert_eq!(b.js("return document.querySelector('#apply-confirm').disabled;", vec![]).await, json!(true), "Apply on before the count is typed");
        b.fill("#apply-typed", "delete 3").await;
        assert_eq!(b.js("return document.querySelector('#apply-confirm').disabled;", vec![]).await, json!(true), "Apply on with the wrong count");
        b.fill("#apply-typed", "delete 4").await;
        b.wait_js("Apply on", "return !document.querySelector('#apply-confirm').disabled;").await;
        b.shot("apply-typed-confirmation").await;
        accessible(&b, "apply with a typed confirmation").await;
        b.click("#apply-confirm").await;
        b.wait_js("applied", "return document.querySelector('#apply-heading').textContent.startsWith('Applied +0 ~1 −4');").await;
        assert!(mesh.agg.try_health("web-us", "web-us-2").is_none(), "web-us-2 is still there");
        assert_eq!(mesh.agg.member("web-us", "web-us-1")["weight"], 150);

        // Item 12: pausing and resuming health decisions, confirmed first,
        // visible, and in the audit log under the session's token.
        b.client.goto(&format!("{base}/ui/")).await.unwrap();
        b.wait_js("the live topology", "return document.querySelector('#live').textContent === 'live';").await;
        b.click(&format!("button.pool-decisions[data-pool=\"{web_eu}\"]")).await;
        let asked = b.wait_js("the confirmation", "return !document.querySelector('#confirm').hidden && document.querySelector('#confirm-title').textContent;").await;
        assert_eq!(asked, json!("Pause health decisions for pool web-eu?"));
        b.shot("confirm-pause-pool").await;
        accessible(&b, "the confirmation dialog").await;
        b.click("#confirm-yes").await;
        b.wait_js("the pool's badge", &format!(
            "return document.querySelector('#confirm').hidden && document.querySelector('[data-badges=\"{web_eu}\"]').textContent.includes('decisions paused');"
        )).await;
        let (_, hold) = rest(&mesh, &write, "GET", "/api/v1/decisions", &[]);
        assert_eq!(hold["pools"][0]["poolId"], web_eu, "{hold}");
        let (_, audit) = rest(&mesh, &write, "GET", "/api/v1/audit?limit=1", &[]);
        let record = &audit["records"][0];
        assert!(record["who"].as_str().unwrap_or_default().starts_with("ui:e2e ("), "{audit}");
        assert!(record.to_string().contains("paused"), "{audit}");
        b.click(&format!("button.pool-decisions[data-pool=\"{web_eu}\"]")).await;
        b.wait_js("the resume confirmation", "return !document.querySelector('#confirm').hidden && document.querySelector('#confirm-title').textContent === 'Resume health decisions for pool web-eu?';").await;
        b.click("#confirm-yes").await;
        b.wait_js("the badge gone", &format!(
            "return !document.querySelector('[data-badges=\"{web_eu}\"]').textContent.includes('decisions paused');"
        )).await;
        // Every pool, then Cancel leaves it as it is.
        b.click("#decisions-toggle").await;
        b.wait_js("the global confirmation", "return !document.querySelector('#confirm').hidden;").await;
        b.click("#confirm-yes").await;
        b.wait_js("paused everywhere", "return document.querySelector('#decisions-state').textContent.startsWith('paused for every pool since ');").await;
        let (_, hold) = rest(&mesh, &write, "GET", "/api/v1/decisions", &[]);
        assert_eq!(hold["paused"], true, "{hold}");
        b.shot("decisions-paused").await;
        b.click("#decisions-toggle").await;
        b.wait_js("the resume confirmation", "return !document.querySelector('#confirm').hidden;").await;
        b.click("#confirm-no").await;
        assert_eq!(rest(&mesh, &write, "GET", "/api/v1/decisions", &[]).1["paused"], true, "Cancel resumed");
        b.click("#decisions-toggle").await;
        b.wait_js("the resume confirmation", "return !document.querySelector('#confirm').hidden;").await;
        b.click("#confirm-yes").await;
        b.wait_js("decisions on", "return document.querySelector('#decisions-state').textContent === 'on';").await;
        assert_eq!(rest(&mesh, &write, "GET", "/api/v1/decisions", &[]).1["paused"], false);

        // Item 15: the export is the document Apply takes back unchanged,
        // from the page and from REST, as TOML and as JSON.
        b.client.goto(&format!("{base}/ui/apply")).await.unwrap();
        let exported = b.js("return fetch(document.querySelector('#export-toml').href).then(r => r.text());", vec![]).await;
        let exported = exported.as_str().unwrap().to_owned();
        assert!(exported.contains("[[pool.member]]") && exported.contains("web-us-1"), "{exported}");
        let file = mesh.dir.join("exported.toml");
        std::fs::write(&file, &exported).unwrap();
        let again = mesh.agg.ctl(&["apply", "-f", file.to_str().unwrap(), "--dry-run"]);
        assert!(again.starts_with("no changes"), "{again}");
        let (code, json) = rest(&mesh, &write, "GET", "/api/v1/config", &[]);
        assert_eq!(code, 200, "{json}");
        std::fs::write(mesh.dir.join("exported.json"), json.to_string()).unwrap();
        let data = format!("@{}", mesh.dir.join("exported.json").display());
        let (code, plan) = rest(&mesh, &write, "POST", "/api/v1/config?dryRun=true", &["--data-binary", &data]);
        assert_eq!((code, &plan["plan"]), (200, &json!([])), "{plan}");
        let (code, refused) = rest(&mesh, &write, "GET", "/api/v1/config?format=yaml", &[]);
        assert_eq!(code, 400, "{refused}");
        assert!(refused["error"]["message"].as_str().unwrap_or_default().starts_with("format"), "{refused}");

        // Item 8: a page opened while no stream was open (the hub's last
        // frame is old) never shows a state older than itself.
        let us1 = id(&mesh, "web-us", "web-us-1");
        backends[3].kill();
        wait_until(30, "web-us-1 down", || mesh.agg.health("web-us", "web-us-1") == "down");
        b.client.goto(&format!("{base}/ui/")).await.unwrap();
        b.wait_js("the live topology", "return document.querySelector('#live').textContent === 'live';").await;
        let node = format!("button.member[data-member=\"{us1}\"] [data-label]");
        assert_eq!(b.text(&node).await.unwrap(), "unhealthy", "as rendered");
        let seen = b.wait_js("the stream's snapshot", &format!("return window.gslbLive.seen[{us1}] || null;")).await;
        assert_eq!(seen, json!(["unhealthy"]), "labels web-us-1 showed since the page loaded");

        // Item 1: sign-out ends the session for good, also behind a proxy
        // that rewrites the origin (the CSRF value is what it needs).
        let cookie = b.client.get_named_cookie("gslb_session").await.unwrap().value().to_owned();
        let csrf = b.js("return document.body.dataset.csrf;", vec![]).await.as_str().unwrap().to_owned();
        let proxied = [format!("x-csrf-token: {csrf}"), "Origin: https://gslb.example.org".to_owned()];
        assert_eq!(ui_call(&mesh, &cookie, "DELETE", "/ui/session", &proxied[..1]), 204);
        assert_eq!(ui_call(&mesh, &cookie, "GET", "/ui/api/v1/pools", &[]), 401, "the cookie outlived its sign-out");
        b.sign_in(&base, &write).await;
        let cookie = b.client.get_named_cookie("gslb_session").await.unwrap().value().to_owned();
        let csrf = b.js("return document.body.dataset.csrf;", vec![]).await.as_str().unwrap().to_owned();
        let proxied = [format!("x-csrf-token: {csrf}"), "Origin: https://gslb.example.org".to_owned()];
        assert_eq!(ui_call(&mesh, &cookie, "DELETE", "/ui/session", &proxied), 204, "a sign-out through a proxy");
        assert_eq!(ui_call(&mesh, &cookie, "GET", "/ui/api/v1/pools", &[]), 401);
        assert_eq!(ui_call(&mesh, &cookie, "DELETE", "/ui/session", &["Origin: https://gslb.example.org".to_owned()]), 401);
        b.sign_in(&base, &write).await;
        b.client.goto(&format!("{base}/ui/")).await.unwrap();
        b.click("#sign-out").await;
        b.wait_js("the sign-in page", "return location.pathname === '/ui/login';").await;
        b.sign_in(&base, &read).await;
        let session = b.client.get_named_cookie("gslb_session").await.unwrap().value().to_owned();
        assert_eq!(ui_call(&mesh, &session, "GET", "/ui/api/v1/pools", &[]), 200);
        let locked = b.js("return [...document.querySelectorAll('button.operates')].every(b => b.disabled);", vec![]).await;
        assert_eq!(locked, json!(true), "a read session's incident controls are not disabled");
        b.click("#sign-out").await;
        b.wait_js("the sign-in page", "return location.pathname === '/ui/login';").await;
        assert_eq!(ui_call(&mesh, &session, "GET", "/ui/api/v1/pools", &[]), 401, "the cookie outlived its sign-out");

        // Item 9: with the aggregator gone, the page greys its states and
        // says since when.
        b.sign_in(&base, &read).await;
        mesh.agg.stop();
        let said = b.wait_js("the page to say the stream is down", "return document.body.classList.contains('stream-down') && document.querySelector('#live').textContent;").await;
        assert!(said.as_str().unwrap().starts_with("disconnected since "), "{said}");
        b.shot("stream-down").await;
        accessible(&b, "a page whose stream is down").await;

        // Item 9: the session outlives the restart (the store keeps it,
        // hashed): the page opens signed in, as the same read session.
        let session = b.client.get_named_cookie("gslb_session").await.unwrap().value().to_owned();
        let own = gslb_e2e::pki::cert("aggregator", "agg-127.0.0.1", &["127.0.0.1"]);
        mesh.agg = gslb_e2e::Aggregator::start_tls(&mesh.dir.join("store"), &own, &["--startup-window", "1s"]);
        let base = format!("https://{}", mesh.agg.http);
        b.client.goto(&format!("{base}/ui/overview")).await.unwrap();
        b.wait_js("the page to open signed in", "return location.pathname === '/ui/overview' && document.body.dataset.canWrite === 'false';").await;
        assert_eq!(ui_call(&mesh, &session, "GET", "/ui/api/v1/pools", &[]), 200, "the session did not outlive the restart");
        b.click("#sign-out").await;
        b.wait_js("the sign-in page", "return location.pathname === '/ui/login';").await;
        assert_eq!(ui_call(&mesh, &session, "GET", "/ui/api/v1/pools", &[]), 401, "the cookie outlived its sign-out");
        b.close().await;
    });
}

/// Item 13's filters and item 17: every view is a link (filters, search,
/// the member panel), times are shown local and relative beside UTC, state
/// changes are read out together, the tab has an icon, a phone's width
/// shows everything without sideways scrolling, and a browser set to dark
/// gets a dark page; axe finds nothing in each.
#[test]
fn the_ui_links_every_view_filters_reads_out_changes_and_fits_a_phone_and_the_dark() {
    // web-eu-2 starts down (unhealthy); web-us-* are in region us.
    let (mut backends, _config, mesh) = quickstart_mesh("ui-views", 4);
    let write = mesh.agg.token.clone();
    let base = format!("https://{}", mesh.agg.http);
    let eu2 = id(&mesh, "web-eu", "web-eu-2");
    let us1 = id(&mesh, "web-us", "web-us-1");
    wait_until(30, "web-eu-2 down", || {
        mesh.agg.health("web-eu", "web-eu-2") == "down"
    });
    let rt = runtime();
    rt.block_on(async {
        let b = Browser::start().await;
        b.sign_in(&base, &write).await;

        // The overview's problems link to the topology filtered to them.
        b.client.goto(&format!("{base}/ui/overview")).await.unwrap();
        let link = b.js("return document.querySelector('#overview-members a.filtered').getAttribute('href');", vec![]).await;
        assert_eq!(link, json!("/ui/?state=problems"));
        // Times: UTC as written, local and relative beside it.
        let local = b.wait_js("a local time beside the UTC one", "const l = document.querySelector('#overview-summary time + .local'); return l && l.textContent;").await;
        assert!(local.as_str().unwrap().contains(" local, "), "{local}");
        b.click("#overview-members a.filtered").await;
        let visible = "return [...document.querySelectorAll('button.member')].filter(n => !n.parentElement.hidden && !n.closest('details.pool').hidden).map(n => Number(n.dataset.member));";
        b.wait_js("only the problem shown", &format!("const v = (() => {{ {visible} }})(); return v.length === 1 && v[0] === {eu2} ? v : null;")).await;
        assert_eq!(b.js("return document.querySelector('#state-filter').value;", vec![]).await, json!("problems"));
        b.shot("views-only-problems").await;
        accessible(&b, "the topology filtered to problems").await;

        // A region and a search are links too; the panel of a member is.
        b.client.goto(&format!("{base}/ui/?region=us&q=web-us-1")).await.unwrap();
        b.wait_js("the live topology", "return document.querySelector('#live').textContent === 'live';").await;
        let shown = b.js(visible, vec![]).await;
        let shown: Vec<u64> = serde_json::from_value(shown).unwrap();
        assert!(!shown.is_empty() && shown.iter().all(|m| *m == us1), "{shown:?}");
        b.fill("#search", "web-us").await;
        b.wait_js("the search in the address", "return location.search.includes('q=web-us') && !location.search.includes('web-us-1');").await;
        b.client.goto(&format!("{base}/ui/?member={us1}")).await.unwrap();
        b.wait_js("the member's panel open", "const d = document.querySelector('#slideover'); return !d.hidden && document.querySelector('#slideover-title').textContent === 'Member web-us-1';").await;
        b.click("#member-close").await;
        b.wait_js("the panel gone from the address", "return !location.search.includes('member=');").await;

        // Changes are read out together, by name.
        b.client.goto(&format!("{base}/ui/")).await.unwrap();
        b.wait_js("the live topology", "return document.querySelector('#live').textContent === 'live';").await;
        backends[3].kill();
        let said = b.wait_js("the change read out", "const t = document.querySelector('#announce').textContent; return t.includes('web-us-1 is now unhealthy') ? t : null;").await;
        assert!(said.as_str().unwrap().ends_with('.'), "{said}");

        // Item 15: select members, see the plan by name, apply it at once.
        let us2 = id(&mesh, "web-us", "web-us-2");
        b.click("#select-mode").await;
        b.click(&format!("button.member[data-member=\"{us1}\"]")).await;
        b.click(&format!("button.member[data-member=\"{us2}\"]")).await;
        assert_eq!(b.text("#bulk-count").await.unwrap(), "2 selected");
        b.js("const a = document.querySelector('#bulk-action'); a.value = 'weight'; a.dispatchEvent(new Event('change'));", vec![]).await;
        b.fill("#bulk-weight", "abc").await;
        b.click("#bulk-plan").await;
        assert_eq!(b.text("#bulk-error").await.unwrap(), "Weight: \"abc\" is not a whole number");
        b.fill("#bulk-weight", "150").await;
        b.click("#bulk-plan").await;
        let plan = b.wait_js("the bulk plan", "const h = document.querySelector('#bulk-heading').textContent; return h ? [h, ...[...document.querySelectorAll('#bulk-lines li')].map(l => l.textContent)] : null;").await;
        assert_eq!(plan, json!(["Plan: ~2 \u{2212}0", "~ member web-us/web-us-1: weight 200 \u{2192} 150", "~ member web-us/web-us-2: weight 100 \u{2192} 150"]));
        assert_eq!(mesh.agg.member("web-us", "web-us-1")["weight"], 200, "a plan wrote");
        b.shot("views-bulk-plan").await;
        accessible(&b, "a bulk plan").await;
        b.click("#bulk-apply").await;
        b.wait_js("the bulk change applied", "return document.querySelector('#bulk-heading').textContent.startsWith('Applied 2 changes');").await;
        for name in ["web-us-1", "web-us-2"] {
            assert_eq!(mesh.agg.member("web-us", name)["weight"], 150, "{name}");
        }
        // Item 18: a catalog change costs the page only what changed: the
        // manifest and the one pool, never the whole canvas again.
        let web_us = mesh.agg.pool_id("web-us");
        let fetched = b.wait_js("the changed pool fetched", "const e = performance.getEntriesByType('resource').map(r => new URL(r.name).pathname).filter(p => p.startsWith('/ui/topology')); return e.some(p => p.startsWith('/ui/topology/pools/')) ? e : null;").await;
        let fetched: Vec<String> = serde_json::from_value(fetched).unwrap();
        assert!(fetched.iter().all(|p| p == "/ui/topology/manifest" || *p == format!("/ui/topology/pools/{web_us}")), "{fetched:?}");
        let backup = id(&mesh, "web-eu", "web-eu-backup");
        b.js("const a = document.querySelector('#bulk-action'); a.value = 'delete'; a.dispatchEvent(new Event('change'));", vec![]).await;
        b.click(&format!("button.member[data-member=\"{backup}\"]")).await;
        b.click("#bulk-plan").await;
        b.wait_js("the delete plan", "return document.querySelector('#bulk-lines li')?.textContent === '- member web-eu/web-eu-backup';").await;
        b.click("#bulk-apply").await;
        wait_until(10, "web-eu-backup deleted", || mesh.agg.try_member("web-eu", "web-eu-backup").is_none());
        b.click("#select-mode").await;

        // Pages are gzipped for a browser that takes it; the event stream
        // never is (each event leaves at once).
        let cookie = b.client.get_named_cookie("gslb_session").await.unwrap().value().to_owned();
        let head = |path: &str, max: &str| {
            let ca = mesh.agg.operator.as_ref().unwrap().ca.clone();
            let out = Command::new("curl")
                .args(["-s", "-D", "-", "-o", "/dev/null", "--max-time", max, "--cacert"])
                .arg(ca)
                .args(["-H", "Accept-Encoding: gzip", "-H", &format!("Cookie: gslb_session={cookie}")])
                .arg(format!("https://{}{path}", mesh.agg.http))
                .output()
                .expect("curl");
            String::from_utf8_lossy(&out.stdout).to_ascii_lowercase()
        };
        assert!(head("/ui/", "10").contains("content-encoding: gzip"), "the topology is not compressed");
        let events = head("/ui/events", "2");
        assert!(events.contains("text/event-stream") && !events.contains("content-encoding"), "{events}");

        // The tab's icon is served.
        let icon = b.js("const r = await fetch(document.querySelector('link[rel=icon]').href); return [r.status, r.headers.get('content-type')];", vec![]).await;
        assert_eq!(icon, json!([200, "image/svg+xml"]));

        // A phone: nothing wider than the screen on any page shown here.
        b.client.set_window_size(390, 844).await.unwrap();
        for page in ["/ui/", "/ui/overview", &format!("/ui/members/{eu2}/log")] {
            b.client.goto(&format!("{base}{page}")).await.unwrap();
            let widths = b.wait_js("the page laid out", "return document.readyState === 'complete' ? [document.documentElement.scrollWidth, window.innerWidth] : null;").await;
            let (wide, screen) = (widths[0].as_u64().unwrap(), widths[1].as_u64().unwrap());
            assert!(wide <= screen, "{page} is {wide} px wide on a {screen} px screen");
            accessible(&b, &format!("{page} at 390 px")).await;
        }
        b.shot("views-390px-member-log").await;
        b.client.goto(&format!("{base}/ui/")).await.unwrap();
        b.wait_js("the live topology", "return document.querySelector('#live').textContent === 'live';").await;
        b.shot("views-390px-topology").await;
        b.close().await;

        // Dark: a browser that prefers it gets dark colours, still legible.
        let dark = Browser::start_with(&["--force-dark-mode"]).await;
        dark.sign_in(&base, &write).await;
        dark.client.goto(&format!("{base}/ui/")).await.unwrap();
        dark.wait_js("the live topology", "return document.querySelector('#live').textContent === 'live';").await;
        let scheme = dark.js("return [matchMedia('(prefers-color-scheme: dark)').matches, getComputedStyle(document.body).backgroundColor];", vec![]).await;
        assert_eq!(scheme, json!([true, "rgb(13, 17, 23)"]));
        dark.shot("views-dark-topology").await;
        accessible(&dark, "the topology in the dark").await;
        dark.client.goto(&format!("{base}/ui/overview")).await.unwrap();
        accessible(&dark, "the overview in the dark").await;
        dark.close().await;
    });
}

/// Item 16: pages for TSIG keys, DNSSEC, notifications, zone files and
/// tokens, each doing what gslbctl does, in a real browser with axe.
#[test]
fn the_ui_has_pages_for_keys_dnssec_notifications_zone_files_and_tokens() {
    let (mut backends, _config, mesh) = quickstart_mesh("ui-pages", 5);
    let write = mesh.agg.token.clone();
    let tokens = mesh.dir.join("store/tokens.json");
    let read = gslb_e2e::pki::create_token(&tokens, "ui-pages-reader", "read", None);
    let scoped = gslb_e2e::pki::create_scoped_token(
        &tokens,
        "ui-pages-zone-admin",
        "admin",
        &["example.test"],
        &[],
        None,
    );
    let base = format!("https://{}", mesh.agg.http);
    mesh.agg.ctl(&["dnssec", "enable", "example.test"]);
    let ds = mesh
        .agg
        .ctl(&["dnssec", "ds", "example.test"])
        .trim()
        .to_owned();
    // A target nothing listens at (loopback's discard port): it fails.
    mesh.agg.ctl(&[
        "notifications",
        "create",
        "ops",
        "--kind",
        "webhook",
        "--url",
        "http://127.0.0.1:9/hook/secret-path",
    ]);
    backends[0].kill();
    wait_until(30, "a delivery failing", || {
        mesh.agg.ctl_json(&["notifications", "status"])["targets"][0]["failures"].as_u64()
            >= Some(1)
    });
    let rt = runtime();
    rt.block_on(async {
        let b = Browser::start().await;
        b.sign_in(&base, &write).await;

        // TSIG: made with its secret shown once, then deleted.
        b.client.goto(&format!("{base}/ui/tsig")).await.unwrap();
        b.fill("#tsig-name", "xfr.example.test").await;
        b.click("#tsig-create").await;
        let secret = b.wait_js("the secret shown", "return document.querySelector('#tsig-secret').textContent || null;").await;
        assert!(secret.as_str().unwrap().len() >= 40, "{secret}");
        accessible(&b, "TSIG with a key made").await;
        let listed = mesh.agg.ctl(&["tsig", "list"]);
        assert!(listed.contains("xfr.example.test"), "{listed}");
        b.client.goto(&format!("{base}/ui/tsig")).await.unwrap();
        b.click("li.object[data-name=\"xfr.example.test\"] button.delete").await;
        assert_eq!(b.text("#confirm-title").await.unwrap(), "Delete TSIG key xfr.example.test?");
        b.click("#confirm-yes").await;
        b.wait_js("the key gone", "return document.querySelector('li.object[data-name=\"xfr.example.test\"]') === null;").await;
        assert!(!mesh.agg.ctl(&["tsig", "list"]).contains("xfr.example.test"));

        // DNSSEC: the keys, the DS gslbctl prints, and a rollover started.
        b.client.goto(&format!("{base}/ui/dnssec")).await.unwrap();
        assert_eq!(b.text("section.signed pre.ds").await.unwrap(), ds);
        let rows = b.js("return document.querySelectorAll('section.signed tbody tr').length;", vec![]).await;
        assert_eq!(rows, json!(1));
        b.shot("pages-dnssec").await;
        accessible(&b, "DNSSEC").await;
        b.click("section.signed button.rollover").await;
        b.click("#confirm-yes").await;
        b.wait_js("a second key", "return document.readyState === 'complete' && document.querySelectorAll('section.signed tbody tr').length === 2;").await;

        // Notifications: the failing target, its address without the path.
        b.client.goto(&format!("{base}/ui/notifications")).await.unwrap();
        let row = b.text("#targets tr[data-target=ops]").await.unwrap();
        assert!(row.contains("failing") && row.contains("127.0.0.1:9") && !row.contains("secret-path"), "{row}");
        accessible(&b, "notifications").await;

        // Zone files: the zone downloaded, a record added by import after
        // its plan.
        b.client.goto(&format!("{base}/ui/zonefiles")).await.unwrap();
        let text = b.js("const r = await fetch(document.querySelector('a.download').href); return await r.text();", vec![]).await;
        let text = text.as_str().unwrap().to_owned();
        assert!(text.contains("SOA"), "{text}");
        let added = format!("{text}\nimported.example.test. 300 IN TXT \"from the ui\"\n");
        b.js("document.querySelector('#zonefile-text').value = arguments[0]; document.querySelector('#zonefile-text').dispatchEvent(new Event('input')); return null;", vec![json!(added)]).await;
        b.click("#zonefile-plan").await;
        let plan = b.wait_js("the plan", "return !document.querySelector('#zonefile-result').hidden && document.querySelector('#zonefile-lines').textContent;").await;
        assert!(plan.as_str().unwrap().contains("imported.example.test"), "{plan}");
        b.shot("pages-zonefile-plan").await;
        accessible(&b, "zone files with a plan").await;
        b.click("#zonefile-apply").await;
        b.wait_js("imported", "return document.querySelector('#zonefile-heading').textContent.startsWith('Imported');").await;
        let records = mesh.agg.ctl(&["records", "list"]);
        assert!(records.contains("imported.example.test"), "{records}");

        // Tokens: an admin sees this node's file; a read session is refused.
        b.client.goto(&format!("{base}/ui/tokens")).await.unwrap();
        let names = b.js("return [...document.querySelectorAll('#tokens tbody tr')].map(r => r.dataset.token);", vec![]).await;
        assert!(names.as_array().unwrap().contains(&json!("ui-pages-reader")), "{names}");
        accessible(&b, "tokens").await;
        b.click("#sign-out").await;
        b.wait_js("the sign-in page", "return location.pathname === '/ui/login';").await;
        b.sign_in(&base, &read).await;
        let nav = b.js("return [...document.querySelectorAll('header nav a')].map(a => a.textContent);", vec![]).await;
        assert!(!nav.as_array().unwrap().contains(&json!("Tokens")), "{nav}");
        b.client.goto(&format!("{base}/ui/tokens")).await.unwrap();
        let refused = b.text("main .error").await.unwrap();
        assert!(refused.contains("needs an admin token"), "{refused}");
        b.client.goto(&format!("{base}/ui/tsig")).await.unwrap();
        assert_eq!(b.js("return document.querySelector('#tsig-create').disabled;", vec![]).await, json!(true));
        // An admin token limited to one zone sees no token of the node.
        b.click("#sign-out").await;
        b.wait_js("the sign-in page", "return location.pathname === '/ui/login';").await;
        b.sign_in(&base, &scoped).await;
        b.client.goto(&format!("{base}/ui/tokens")).await.unwrap();
        let refused = b.text("main .error").await.unwrap();
        assert!(refused.contains("the Tokens page"), "{refused}");
        assert_eq!(b.js("return document.querySelector('#tokens');", vec![]).await, Value::Null);
        b.close().await;
    });
}

/// Item 18: above 2,000 members a pool's members are drawn when it is
/// opened, and search asks the server which pools match; the page starts
/// with no member node at all.
#[test]
fn a_large_topology_draws_members_as_pools_open_and_finds_them_through_the_server() {
    let dir = gslb_e2e::temp_dir("ui-large");
    let agg = gslb_e2e::Aggregator::start(&dir.join("store"));
    let mut doc = String::from(gslb_e2e::ZONE);
    for p in 0..21 {
        doc.push_str(&format!("\n[[pool]]\nname = \"p{p}\"\n"));
        for m in 0..100 {
            doc.push_str(&format!(
                "[[pool.member]]\nname = \"m{p}-{m}\"\naddress = \"127.0.6.{}\"\nport = {}\n",
                p + 1,
                1000 + m
            ));
        }
    }
    agg.apply(&doc, &dir);
    let base = format!("http://{}", agg.http);
    let rt = runtime();
    rt.block_on(async {
        let b = Browser::start().await;
        b.sign_in(&base, &agg.token).await;
        b.wait_js("the live topology", "return document.querySelector('#live').textContent === 'live';").await;
        let start = b.js("return [document.querySelector('.canvas').dataset.lazy, document.querySelectorAll('button.member').length, document.querySelectorAll('details.pool').length];", vec![]).await;
        assert_eq!(start, json!(["true", 0, 21]));
        accessible(&b, "a topology of 2,100 members").await;
        // Opening a pool draws its members, with their live labels.
        b.click("details.pool[data-pool] summary").await;
        let drawn = b.wait_js("one pool's members drawn", "const n = document.querySelectorAll('button.member'); return n.length === 100 && [...n].every(x => x.querySelector('[data-label]').textContent !== '') ? n.length : null;").await;
        assert_eq!(drawn, json!(100));
        // Search finds a member in a pool not drawn yet.
        b.fill("#search", "m17-42").await;
        let shown = b.wait_js("the member found", "const t = document.querySelector('#shown').textContent; return t.startsWith('1 member') ? t : null;").await;
        assert_eq!(shown, json!("1 member nodes shown"));
        let visible = b.js("return [...document.querySelectorAll('button.member')].filter(n => !n.parentElement.hidden && !n.closest('details.pool').hidden).map(n => n.querySelector('.mname').textContent);", vec![]).await;
        assert_eq!(visible, json!(["m17-42"]));
        b.shot("large-topology-found").await;
        b.fill("#search", "").await;
        let pools = b.js("return [...document.querySelectorAll('details.pool')].filter(p => !p.hidden).length;", vec![]).await;
        assert_eq!(pools, json!(21));
        b.close().await;
    });
    let _ = std::fs::remove_dir_all(&dir);
}
