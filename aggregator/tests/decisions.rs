//! Health decisions of the real `gslb-aggregator` driven from outside:
//! scripted agents, one per location, send chosen outcomes over the agent
//! protocol cycle by cycle, and the member's status is read back over the
//! admin API (black-box, as an operator's network would drive it).
#![allow(clippy::unwrap_used)]

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use gslb_proto::pb;
use gslb_shared::*;
use tokio::sync::mpsc;

mod support;

use gslb_proto::link::{TokenAdminClient, admin_client};
use support::http::{http_call, http_get};
use support::process::{Aggregator, start_with};

const INTERVAL_MS: u64 = 500;

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// Wait for the next cycle to begin (a clock condition); its number.
async fn next_cycle() -> u64 {
    let next = now_ms() / INTERVAL_MS + 1;
    let at = next * INTERVAL_MS + 20;
    tokio::time::sleep(Duration::from_millis(at.saturating_sub(now_ms()))).await;
    next
}

/// Check 1 (tcp, 500 ms, `window`), pool 2, member 3. Returns the admin client.
async fn configure(a: &Aggregator, window: u32) -> TokenAdminClient {
    let mut c = admin_client(&a.grpc, &a.token).await.unwrap();
    let mut check = Check::new(CheckId(0), "tcp", Probe::Tcp(StreamProbe::default()));
    check.interval = Duration::from_millis(INTERVAL_MS);
    check.timeout = Duration::from_millis(200);
    check.window = window;
    c.create_check(pb::Check::from(&check)).await.unwrap();
    let mut pool = Pool::new(PoolId(0), "web");
    pool.check = Some(CheckId(1));
    c.create_pool(pb::Pool::from(&pool)).await.unwrap();
    c.create_member(pb::Member::from(&Member::new(
        MemberId(0),
        PoolId(2),
        "web-1",
        "127.0.0.11".parse().unwrap(),
        80,
    )))
    .await
    .unwrap();
    c
}

/// One scripted location's result stream.
struct Location {
    tx: mpsc::Sender<pb::AgentMessage>,
    _inbound: tonic::Streaming<pb::AggregatorMessage>,
    seq: u64,
}

impl Location {
    async fn connect(a: &Aggregator, name: &str) -> Location {
        let (_, tx, inbound) =
            support::agent::register(&a.grpc, name, &format!("{name}-scripted")).await;
        Location {
            tx,
            _inbound: inbound,
            seq: 0,
        }
    }

    async fn report(&mut self, cycle: u64, pass: bool) {
        self.seq += 1;
        let result = pb::ProbeResult {
            member_id: 3,
            check_id: 1,
            cycle,
            failure: if pass {
                0
            } else {
                pb::FailReason::Refused as i32
            },
            latency_us: 250,
            detail: String::new(),
        };
        self.tx
            .send(pb::AgentMessage {
                msg: Some(pb::agent_message::Msg::Results(pb::ResultBatch {
                    seq: self.seq,
                    results: vec![result],
                    dropped: 0,
                })),
            })
            .await
            .unwrap();
    }
}

async fn status(c: &mut TokenAdminClient) -> pb::MemberStatus {
    c.get_member_status(pb::IdRequest {
        id: 3,
        ..Default::default()
    })
    .await
    .unwrap()
    .into_inner()
}

/// Run one cycle in which the first `passing` locations pass; wait until
/// the aggregator has closed it (every location reported, so it closes at
/// once); the status after it.
async fn cycle(
    c: &mut TokenAdminClient,
    locations: &mut [Location],
    passing: usize,
) -> pb::MemberStatus {
    let cycle = next_cycle().await;
    for (i, l) in locations.iter_mut().enumerate() {
        l.report(cycle, i < passing).await;
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let s = status(c).await;
        let closed =
            s.locations.len() == locations.len() && s.locations.iter().all(|l| l.cycle == cycle);
        if closed || tokio::time::Instant::now() > deadline {
            return s;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A real aggregator (started with `args`) with check 1 (`window`), pool
/// 2 and member 3, and five scripted locations that have brought the
/// member up (passing cycles until the startup gate opened).
struct Scenario {
    dir: std::path::PathBuf,
    aggregator: Option<Aggregator>,
    c: TokenAdminClient,
    locations: Vec<Location>,
}

impl Scenario {
    async fn up(name: &str, args: &[&str], window: u32) -> Scenario {
        let dir =
            std::env::temp_dir().join(format!("gslb-decisions-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let a = start_with(&dir, args);
        let mut c = configure(&a, window).await;
        let mut locations = Vec::new();
        for i in 1..=5 {
            locations.push(Location::connect(&a, &format!("loc{i}")).await);
        }
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        while !cycle(&mut c, &mut locations, 5).await.healthy {
            assert!(tokio::time::Instant::now() < deadline, "never came up");
        }
        Scenario {
            dir,
            aggregator: Some(a),
            c,
            locations,
        }
    }
}

impl Scenario {
    /// Kill the aggregator and start it again on the same data directory
    /// (new ports); the scripted locations connect again.
    async fn restart(&mut self, args: &[&str]) {
        drop(self.aggregator.take());
        let a = start_with(&self.dir, args);
        self.c = admin_client(&a.grpc, &a.token).await.unwrap();
        self.locations.clear();
        for i in 1..=5 {
            self.locations
                .push(Location::connect(&a, &format!("loc{i}")).await);
        }
        self.aggregator = Some(a);
    }

    fn aggregator(&self) -> &Aggregator {
        self.aggregator.as_ref().unwrap()
    }
}

impl Drop for Scenario {
    fn drop(&mut self) {
        drop(self.aggregator.take());
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Issue 16 item 3: with a window of 3 and cycle fractions 0.6, 0, 0, the
/// mean is exactly 0.20, which is not below `fall` (0.2): the member holds.
/// Floating-point averaging read 0.19999999999999998 and took it down.
#[tokio::test]
async fn a_window_mean_exactly_at_fall_holds() {
    let mut s = Scenario::up("fall", &["--no-quarantine"], 3).await;
    for line in [
        r#"gslb_aggregator_member_up{pool="web",member="web-1"} 1"#,
        r#"gslb_aggregator_members_by_health{health="up"} 1"#,
        r#"gslb_aggregator_pool_eligible{pool="web"} 1"#,
        r#"gslb_aggregator_pool_fail_open{pool="web"} 0"#,
        r#"gslb_aggregator_agent_connected{agent="loc1-scripted",location="loc1"} 1"#,
    ] {
        wait_for_metric(s.aggregator(), line).await;
    }
    let (c, locations) = (&mut s.c, &mut s.locations);
    for _ in 0..2 {
        cycle(c, locations, 5).await; // window [1, 1, 1]
    }
    cycle(c, locations, 3).await; // [1, 1, 0.6]
    cycle(c, locations, 0).await; // [1, 0.6, 0]
    let at_fall = cycle(c, locations, 0).await; // [0.6, 0, 0]
    assert!(
        at_fall.healthy,
        "a mean of exactly 0.20 is not below fall: {at_fall:?}"
    );
    assert!((at_fall.score.unwrap() - 0.2).abs() < 1e-9);
    let below = cycle(c, locations, 0).await; // [0, 0, 0]
    assert!(!below.healthy, "below fall goes down: {below:?}");
    // The health gauges follow the published view: the only member is
    // down, so the pool (min-healthy 1, fail mode open) is not eligible
    // and answers every member.
    let a = s.aggregator();
    // Issue 23: the health log in RFC 3339 (UTC unless --local), each
    // location's result on a line of its own under the transition.
    let log = gslbctl(a, &["logs", "3"]);
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        ["AT", "CHANGE", "LOCATION", "RESULT", "REASON"],
        "{log}"
    );
    let down = lines
        .iter()
        .position(|l| l.contains("up → down"))
        .expect("the fall is logged");
    let at = lines[down].split("  ").next().unwrap();
    assert!(
        at.len() == 24 && at.ends_with('Z') && at.as_bytes()[10] == b'T',
        "{log}"
    );
    assert!(
        lines[down].contains("  loc1      fail (refused)  quorum: score 0.00"),
        "{log}"
    );
    // Columns in characters (the arrow is 3 bytes).
    let column = |line: &str, word: &str| line.find(word).map(|b| line[..b].chars().count());
    for (i, loc) in ["loc1", "loc2", "loc3", "loc4", "loc5"].iter().enumerate() {
        let line = lines[down + i];
        assert_eq!(column(line, loc), column(lines[0], "LOCATION"), "{log}");
        assert!(
            line.contains(&format!("{loc}      fail (refused)")),
            "{log}"
        );
    }
    // The same instant in the zone TZ names (a POSIX rule: UTC+05:30).
    let local = gslbctl_in(a, "IST-5:30", &["logs", "3", "--local"]);
    let shifted = local.lines().find(|l| l.contains("up → down")).unwrap();
    assert!(
        shifted.split("  ").next().unwrap().ends_with("+05:30"),
        "{local}"
    );
    for line in [
        r#"gslb_aggregator_member_up{pool="web",member="web-1"} 0"#,
        r#"gslb_aggregator_members_by_health{health="down"} 1"#,
        r#"gslb_aggregator_members_by_health{health="up"} 0"#,
        r#"gslb_aggregator_pool_eligible{pool="web"} 0"#,
        r#"gslb_aggregator_pool_fail_open{pool="web"} 1"#,
        r#"gslb_aggregator_pool_protected{pool="web"} 0"#,
    ] {
        wait_for_metric(a, line).await;
    }
}

/// Wait (5 s at most) until the aggregator's `/metrics` has `line`.
async fn wait_for_metric(a: &Aggregator, line: &str) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    loop {
        let (_, metrics) = http_get(&a.http, "/metrics").await;
        if metrics.lines().any(|l| l == line) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no {line} in:\n{metrics}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Five locations up, then every one silent for four cycles (a stall or a
/// blip), then all five report in one cycle with the failing one 60 ms
/// before the others. Issue 16 item 2: the first reporter decided the cycle
/// alone (0.00, the member went down) and the other four were listed as
/// stale although they reported. The cycle waits for every assigned,
/// connected location, and a location that reports is fresh at once.
#[tokio::test]
async fn after_a_silence_the_first_reporter_does_not_decide_alone() {
    let mut s = Scenario::up("stale", &["--no-quarantine"], 1).await;
    let (c, locations) = (&mut s.c, &mut s.locations);
    for _ in 0..4 {
        next_cycle().await; // nobody reports: every location goes stale
    }
    let silent = status(c).await;
    assert!(silent.locations.iter().all(|l| l.stale), "{silent:?}");
    let back = next_cycle().await;
    locations[0].report(back, false).await;
    tokio::time::sleep(Duration::from_millis(60)).await; // the others' transport delay
    for l in &mut locations[1..] {
        l.report(back, true).await;
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    let after = loop {
        let s = status(c).await;
        if s.locations.iter().all(|l| l.cycle == back) && s.score.is_some_and(|x| x > 0.5)
            || tokio::time::Instant::now() > deadline
        {
            break s;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(after.healthy, "4 of 5 passed: {after:?}");
    assert!((after.score.unwrap() - 0.8).abs() < 1e-9, "{after:?}");
    assert!(
        after.locations.iter().all(|l| !l.stale),
        "a location that reported is fresh: {after:?}"
    );
    let log = c
        .get_health_log(pb::HealthLogRequest {
            member_id: 3,
            limit: 10,
        })
        .await
        .unwrap()
        .into_inner();
    assert!(
        log.entries.iter().all(|e| e.to != pb::Health::Down as i32),
        "no down transition: {log:?}"
    );
}

async fn quarantined(c: &mut TokenAdminClient) -> Vec<String> {
    c.get_engine(pb::ListRequest::default())
        .await
        .unwrap()
        .into_inner()
        .quarantined
}

/// Issue 16 items 1 and 4: quarantine thresholds are settings (shown by the
/// engine status), and a quarantined location whose results arrive 150 ms
/// after the others', well inside the cycle's grace, is released after
/// its clean rounds. It used to be left out of the cycle's wait, so all its
/// results were late and it stayed quarantined.
#[tokio::test]
async fn a_quarantined_location_reporting_late_in_the_cycle_is_released() {
    let args = [
        "--quarantine-round",
        "1s",
        "--quarantine-min-samples",
        "2",
        "--quarantine-clean-rounds",
        "1",
    ];
    let mut s = Scenario::up("quar", &args, 1).await;
    let (c, locations) = (&mut s.c, &mut s.locations);
    let engine = c
        .get_engine(pb::ListRequest::default())
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (
            engine.quarantine_round_ms,
            engine.quarantine_min_samples,
            engine.quarantine_clean_rounds
        ),
        (1_000, 2, 1)
    );
    // loc5 alone fails everything: a broken vantage point.
    let mut set_aside = false;
    for _ in 0..20 {
        let s = cycle(c, locations, 4).await;
        assert!(s.healthy, "one broken location never takes it down: {s:?}");
        if quarantined(c).await == ["loc5"] {
            set_aside = true;
            break;
        }
    }
    assert!(set_aside, "loc5 was never quarantined");
    let a = s.aggregator.as_ref().unwrap();
    wait_for_metric(
        a,
        r#"gslb_aggregator_location_quarantined{location="loc5"} 1"#,
    )
    .await;
    wait_for_metric(
        a,
        r#"gslb_aggregator_location_quarantined{location="loc1"} 0"#,
    )
    .await;
    let (c, locations) = (&mut s.c, &mut s.locations);
    // Healed, but its results arrive 150 ms after the others'.
    let mut released = false;
    for _ in 0..20 {
        let k = next_cycle().await;
        for l in &mut locations[..4] {
            l.report(k, true).await;
        }
        tokio::time::sleep(Duration::from_millis(150)).await;
        locations[4].report(k, true).await;
        if quarantined(c).await.is_empty() {
            released = true;
            break;
        }
    }
    assert!(released, "a healed location reporting late is released");
    let a = s.aggregator();
    wait_for_metric(
        a,
        r#"gslb_aggregator_location_quarantined{location="loc5"} 0"#,
    )
    .await;
}

/// `gslbctl ARGS` against the aggregator; its output (it must succeed).
fn gslbctl(a: &Aggregator, args: &[&str]) -> String {
    gslbctl_in(a, "UTC", args)
}

/// [`gslbctl`] with `TZ` set to `tz`.
fn gslbctl_in(a: &Aggregator, tz: &str, args: &[&str]) -> String {
    let out = std::process::Command::new(support::process::gslbctl_bin())
        .env("TZ", tz)
        .arg("--server")
        .arg(&a.grpc)
        .env("GSLB_TOKEN", &a.token)
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "gslbctl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// REST call with the aggregator's token; status and parsed body.
async fn rest(a: &Aggregator, method: &str, path: &str, body: &str) -> (u16, serde_json::Value) {
    let (code, text) = http_call(&a.http, method, path, Some(&a.token), body).await;
    (code, serde_json::from_str(&text).unwrap_or_default())
}

/// Issue 16 item 15: the operator's brake. Paused for every pool, a member
/// whose locations all fail stays up, its results still visible, and the
/// hold shows in gslbctl (status, members list, decisions), REST and
/// metrics. The hold is durable across a restart; lifting the global
/// switch leaves a pool's own hold; the last resume decides at once.
#[tokio::test]
async fn paused_decisions_hold_health_across_a_restart_until_resumed() {
    let args = ["--no-quarantine"];
    let mut s = Scenario::up("pause", &args, 1).await;
    let out = gslbctl(s.aggregator(), &["decisions", "pause"]);
    assert!(out.contains("paused for every pool since"), "{out}");
    for _ in 0..3 {
        let st = cycle(&mut s.c, &mut s.locations, 0).await;
        assert!(st.healthy && st.decisions_paused, "held up: {st:?}");
        assert_eq!(st.score, Some(0.0), "the failures are taken in");
    }
    let a = s.aggregator();
    let members = gslbctl(a, &["members", "list", "--pool", "2"]);
    assert!(
        members.contains("healthy") && members.contains("decisions paused"),
        "{members}"
    );
    let overview = gslbctl(a, &["status"]);
    assert!(
        overview.contains("DECISIONS") && overview.contains("paused for every pool since"),
        "{overview}"
    );
    let (code, member) = rest(a, "GET", "/api/v1/members/3/status", "").await;
    assert_eq!(
        (code, &member["decisionsPaused"]),
        (200, &serde_json::json!(true))
    );
    let (_, pool) = rest(a, "GET", "/api/v1/pools/2/status", "").await;
    assert_eq!(pool["decisionsPaused"], true, "{pool}");
    let (_, metrics) = http_get(&a.http, "/metrics").await;
    assert!(
        metrics.contains("gslb_aggregator_decisions_paused 1"),
        "{metrics}"
    );
    // Refusals name the field or the object; nothing changes.
    let (code, bad) = rest(a, "PUT", "/api/v1/decisions", r#"{"paused":"yes"}"#).await;
    assert_eq!(code, 400, "{bad}");
    assert!(bad.to_string().contains("paused"), "{bad}");
    let (code, _) = rest(a, "PUT", "/api/v1/pools/99/decisions", r#"{"paused":true}"#).await;
    assert_eq!(code, 404);
    // Also held one by one, then a restart: both holds are durable.
    let (code, hold) = rest(a, "PUT", "/api/v1/pools/2/decisions", r#"{"paused":true}"#).await;
    assert_eq!(code, 200, "{hold}");
    assert_eq!(hold["pools"][0]["poolId"], 2, "{hold}");
    s.restart(&args).await;
    let (_, hold) = rest(s.aggregator(), "GET", "/api/v1/decisions", "").await;
    assert_eq!(
        (&hold["paused"], &hold["pools"][0]["poolId"]),
        (&serde_json::json!(true), &serde_json::json!(2)),
        "{hold}"
    );
    // Past the startup gate, still held.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let st = cycle(&mut s.c, &mut s.locations, 0).await;
        assert!(st.healthy, "held across the restart: {st:?}");
        let engine =
            s.c.get_engine(pb::ListRequest::default())
                .await
                .unwrap()
                .into_inner();
        if engine.decisions_enabled {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "startup gate never opened"
        );
    }
    cycle(&mut s.c, &mut s.locations, 0).await;
    assert!(status(&mut s.c).await.healthy);
    // Lifting the global switch leaves the pool's own hold.
    let (code, hold) = rest(
        s.aggregator(),
        "PUT",
        "/api/v1/decisions",
        r#"{"paused":false}"#,
    )
    .await;
    assert_eq!(
        (code, &hold["paused"]),
        (200, &serde_json::json!(false)),
        "{hold}"
    );
    let st = cycle(&mut s.c, &mut s.locations, 0).await;
    assert!(
        st.healthy && st.decisions_paused,
        "pool 2 still held: {st:?}"
    );
    // The last resume decides at once, from the evidence taken in.
    let out = gslbctl(s.aggregator(), &["decisions", "resume", "--pool", "2"]);
    assert!(out.contains("on ("), "{out}");
    let st = status(&mut s.c).await;
    assert!(
        !st.healthy && !st.decisions_paused,
        "down at the resume: {st:?}"
    );
}
