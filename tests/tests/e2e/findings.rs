//! Issue 43: defects found from outside, each shown fixed through the real
//! aggregator (and edge) on loopback.

use gslb_e2e::dns::http_request;
use gslb_e2e::{Aggregator, ZONE, temp_dir};

/// The value of header `name` in a raw response head, lower-cased name.
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|line| {
        let (n, v) = line.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// Item 28: every `/ui` reply (unknown paths and errors too) carries the
/// UI's security headers; every REST and operations reply carries
/// `nosniff`.
#[test]
fn every_reply_carries_its_security_headers() {
    let dir = temp_dir("headers");
    let agg = Aggregator::start(&dir);
    let bearer = format!("Bearer {}", agg.token);
    let auth = [("Authorization", bearer.as_str())];
    for path in ["/ui/login", "/ui/no-such-page", "/ui/api/v1/pools", "/ui"] {
        let (code, head, _) = http_request(agg.http, "GET", path, &[], "");
        assert!(code > 0, "{path}");
        assert_eq!(
            header(&head, "x-content-type-options"),
            Some("nosniff"),
            "{path}: {head}"
        );
        assert_eq!(
            header(&head, "x-frame-options"),
            Some("DENY"),
            "{path}: {head}"
        );
        assert!(
            header(&head, "content-security-policy")
                .is_some_and(|v| v.contains("default-src 'none'")),
            "{path}: {head}"
        );
    }
    for path in [
        "/api/v1/pools",
        "/api/v1/no-such-path",
        "/livez",
        "/metrics",
    ] {
        let (code, head, _) = http_request(agg.http, "GET", path, &auth, "");
        assert!(code > 0, "{path}");
        assert_eq!(
            header(&head, "x-content-type-options"),
            Some("nosniff"),
            "{path}: {head}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Item 20: a query parameter a route does not read is refused by name
/// and nothing is written; `POST /api/v1/apply?dryRun=true` plans only.
#[test]
fn unknown_query_parameters_are_refused_and_dry_run_applies_nothing() {
    let dir = temp_dir("query-params");
    let agg = Aggregator::start(&dir);
    agg.apply(ZONE, &dir);
    let pools = |agg: &Aggregator| {
        let (_, pools) = agg.rest("GET", "/api/v1/pools", "");
        pools.as_array().map_or(0, Vec::len)
    };
    let create = r#"{"ops": [{"op": "create", "kind": "pool", "object": {"id": 0, "name": "p", "check": null, "minHealthy": 1, "protectThreshold": 0.0, "failMode": "open"}}]}"#;
    let (code, body) = agg.rest("POST", "/api/v1/apply?dryRun=true", create);
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["dryRun"], true, "{body}");
    assert_eq!(pools(&agg), 0, "a dry run wrote");
    let (code, body) = agg.rest("POST", "/api/v1/pools?dryRun=true", r#"{"name": "q"}"#);
    assert_eq!(code, 400, "{body}");
    assert_eq!(body["error"]["field"], "dryRun", "{body}");
    assert!(
        body.to_string().contains("takes no query parameters"),
        "{body}"
    );
    assert_eq!(pools(&agg), 0, "a refused create wrote");
    // On a route that reads parameters, an unknown one is named too.
    let (code, body) = agg.rest("GET", "/api/v1/records?zoneId=1&bogus=1", "");
    assert_eq!(code, 400, "{body}");
    assert!(body.to_string().contains("bogus"), "{body}");
    let (code, body) = agg.rest("POST", "/api/v1/config?dryrun=true", ZONE);
    assert_eq!(code, 400, "{body}");
    assert!(body.to_string().contains("dryrun"), "{body}");
    // `stale` is the listener's own, accepted on every read.
    let (code, body) = agg.rest("GET", "/api/v1/pools?stale", "");
    assert_eq!(code, 200, "{body}");
    let (code, body) = agg.rest("GET", "/api/v1/records?zoneId=1&stale=true", "");
    assert_eq!(code, 200, "{body}");
    // The apply itself still works.
    let (code, body) = agg.rest("POST", "/api/v1/apply", create);
    assert_eq!(code, 200, "{body}");
    assert_eq!(pools(&agg), 1);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Item 28: `protectThreshold` −0.0 and a subnormal are refused by name.
#[test]
fn a_meaningless_protect_threshold_is_refused() {
    let dir = temp_dir("protect-threshold");
    let agg = Aggregator::start(&dir);
    for t in ["-0.0", "5e-324", "0.00001"] {
        let body = format!(r#"{{"name": "p", "protectThreshold": {t}}}"#);
        let (code, reply) = agg.rest("POST", "/api/v1/pools", &body);
        assert_eq!(code, 400, "{t}: {reply}");
        assert_eq!(reply["error"]["field"], "protectThreshold", "{t}: {reply}");
    }
    let (code, reply) = agg.rest(
        "POST",
        "/api/v1/pools",
        r#"{"name": "p", "protectThreshold": 0.0}"#,
    );
    assert_eq!(code, 201, "{reply}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Sign in to the UI over plain HTTP; the session cookie.
fn ui_session(agg: &Aggregator) -> String {
    gslb_e2e::dns::ui_session(agg.http, &agg.token)
}

/// Open the UI's event stream and read its status line; the socket is kept
/// open (the stream with it) while it lives.
fn open_stream(agg: &Aggregator, cookie: &str) -> (u16, std::net::TcpStream) {
    use std::io::{Read, Write};
    let mut s = std::net::TcpStream::connect(agg.http).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    write!(
        s,
        "GET /ui/events HTTP/1.1\r\nHost: {}\r\nCookie: {cookie}\r\n\r\n",
        agg.http
    )
    .unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && s.read(&mut byte).unwrap_or(0) == 1 {
        head.push(byte[0]);
    }
    let text = String::from_utf8_lossy(&head);
    let code = text
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or(0);
    (code, s)
}

/// Item 15: one session holds at most 8 event streams and one token's
/// sessions 64, so a single read token can no longer take all 1,000.
#[test]
fn ui_event_streams_are_capped_per_session_and_per_token() {
    let dir = temp_dir("ui-streams");
    let agg = Aggregator::start(&dir);
    let first = ui_session(&agg);
    let mut open = Vec::new();
    for i in 0..8 {
        let (code, s) = open_stream(&agg, &first);
        assert_eq!(code, 200, "stream {i}");
        open.push(s);
    }
    let (code, _) = open_stream(&agg, &first);
    assert_eq!(code, 429, "the ninth stream of one session");
    // Seven more sessions of the same token fill its 64.
    let mut last = String::new();
    for _ in 0..7 {
        last = ui_session(&agg);
        for _ in 0..8 {
            let (code, s) = open_stream(&agg, &last);
            assert_eq!(code, 200);
            open.push(s);
        }
    }
    let (code, _) = open_stream(&agg, &ui_session(&agg));
    assert_eq!(code, 429, "the token's 65th stream");
    // A stream closed gives its slot back (once the server sees the close,
    // at the latest on its next keep-alive).
    drop(open.pop());
    let mut reopened = None;
    gslb_e2e::wait_until(40, "a slot given back", || {
        let (code, s) = open_stream(&agg, &last);
        let ok = code == 200;
        if ok {
            reopened = Some(s);
        }
        ok
    });
    drop(reopened);
    drop(open);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Item 27: token guessing is throttled per source: after 10 wrong UI
/// sign-in tokens in 10 s an address is refused (429) for 60 s, even with
/// the right token, and the burst is logged twice (its start, the block),
/// not once per try.
#[test]
fn ui_sign_in_guessing_is_throttled_and_logged_once_per_burst() {
    let dir = temp_dir("guessing");
    let agg = Aggregator::start(&dir);
    let wrong = r#"{"token": "gslb_wrong_0000000000000000"}"#;
    let mut codes = Vec::new();
    for _ in 0..15 {
        let (code, _, _) = http_request(
            agg.http,
            "POST",
            "/ui/session",
            &[("x-gslb-ui", "1")],
            wrong,
        );
        codes.push(code);
    }
    assert!(codes[..10].iter().all(|c| *c == 401), "{codes:?}");
    assert!(codes[11..].iter().all(|c| *c == 429), "{codes:?}");
    let right = format!(r#"{{"token": "{}"}}"#, agg.token);
    let (code, _, body) = http_request(
        agg.http,
        "POST",
        "/ui/session",
        &[("x-gslb-ui", "1")],
        &right,
    );
    assert_eq!(code, 429, "blocked even with the right token: {body}");
    assert!(body.contains("too many wrong tokens"), "{body}");
    gslb_e2e::wait_until(10, "the block logged", || {
        agg.proc.stderr.contains("refused for 60 s")
    });
    assert_eq!(
        agg.proc.stderr.count("refused a UI sign-in"),
        1,
        "one line per burst"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Item 26: gslbctl never prints raw terminal escapes from a document
/// or a server's error: they come out escaped (`\u{1b}`).
#[test]
fn gslbctl_escapes_what_a_document_smuggles_into_its_errors() {
    let dir = temp_dir("ctl-escape");
    let agg = Aggregator::start(&dir);
    let doc = format!("{ZONE}\n[[pool]]\nname = \"p\"\n\"\\u001b[31mred\\u202e\" = 1\n");
    let file = dir.join("escape.toml");
    std::fs::write(&file, doc).unwrap();
    let (ok, _, err) = agg.try_ctl(&["apply", "-f", file.to_str().unwrap()]);
    assert!(!ok, "{err}");
    assert!(
        !err.contains('\u{1b}') && !err.contains('\u{202e}'),
        "raw escapes: {err:?}"
    );
    assert!(err.contains("\\u{1b}"), "shown escaped: {err}");
    let _ = std::fs::remove_dir_all(&dir);
}
