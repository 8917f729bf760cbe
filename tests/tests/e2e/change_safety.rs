//! Change safety through the real aggregator: two clients updating
//! different fields of one member at the same moment never lose either
//! write (REST and gRPC, a single node and a 3-node cluster through a
//! leader kill, writes sent to the followers and forwarded), and a stale
//! precondition is refused with nothing written.

use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

use gslb_e2e::cluster::Cluster;
use gslb_e2e::dns::http_request;
use gslb_e2e::{Aggregator, temp_dir};
use gslb_proto::pb;
use gslb_proto::pb::admin_service_client::AdminServiceClient;
use serde_json::{Value, json};

/// Rounds of two concurrent writers.
const ROUNDS: u32 = 200;

/// A REST call with `token` to the HTTP listener at `http`:
/// (status, headers as text, parsed body).
fn rest(
    http: std::net::SocketAddr,
    token: &str,
    method: &str,
    path: &str,
    extra: &[(&str, &str)],
    body: &str,
) -> (u16, String, Value) {
    let auth = format!("Bearer {token}");
    let mut headers = vec![("Authorization", auth.as_str())];
    headers.extend_from_slice(extra);
    let (code, head, body) = http_request(http, method, path, &headers, body);
    (
        code,
        head,
        serde_json::from_str(&body).unwrap_or(Value::Null),
    )
}

/// A check, a pool and one member over REST; the member's id.
fn member(http: std::net::SocketAddr, token: &str) -> u64 {
    let (code, _, _) = rest(
        http,
        token,
        "POST",
        "/api/v1/checks",
        &[],
        r#"{"name":"tcp","probe":{"type":"tcp"}}"#,
    );
    assert_eq!(code, 201);
    let (code, _, pool) = rest(
        http,
        token,
        "POST",
        "/api/v1/pools",
        &[],
        r#"{"name":"web","check":1}"#,
    );
    assert_eq!(code, 201, "{pool}");
    let path = format!("/api/v1/pools/{}/members", pool["id"]);
    let (code, _, m) = rest(
        http,
        token,
        "POST",
        &path,
        &[],
        r#"{"name":"web-1","ipAddress":"127.0.0.1","port":8080}"#,
    );
    assert_eq!(code, 201, "{m}");
    m["id"].as_u64().unwrap()
}

/// Run `ROUNDS` rounds in which two threads write at the same moment,
/// one `weight = round + 1`, the other `priority = round + 1000`, each
/// retrying (within a deadline) until acknowledged; after each round the
/// member read back must carry both. The rounds that lost a write.
fn rounds(
    write: impl Fn(&'static str, u32) -> bool + Send + Sync + 'static,
    read: impl Fn() -> (u32, u32),
) -> Vec<u32> {
    let write = Arc::new(write);
    let mut lost = Vec::new();
    for round in 0..ROUNDS {
        let barrier = Arc::new(Barrier::new(2));
        let writers: Vec<_> = [("weight", round + 1), ("priority", round + 1000)]
            .into_iter()
            .map(|(field, value)| {
                let (write, barrier) = (Arc::clone(&write), Arc::clone(&barrier));
                std::thread::spawn(move || {
                    barrier.wait();
                    let deadline = Instant::now() + Duration::from_secs(30);
                    while !write(field, value) {
                        assert!(
                            Instant::now() < deadline,
                            "{field} = {value} never acknowledged"
                        );
                        std::thread::sleep(Duration::from_millis(50));
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        if read() != (round + 1, round + 1000) {
            lost.push(round);
        }
    }
    lost
}

fn rest_rounds(http: std::net::SocketAddr, token: String, id: u64) -> Vec<u32> {
    let path = format!("/api/v1/members/{id}");
    let (t, p) = (token.clone(), path.clone());
    rounds(
        move |field, value| {
            let (code, _, body) = rest(
                http,
                &t,
                "PUT",
                &p,
                &[],
                &json!({ field: value }).to_string(),
            );
            assert!(code == 200 || code == 503, "{code}: {body}");
            code == 200
        },
        move || {
            let (code, _, m) = rest(http, &token, "GET", &path, &[], "");
            assert_eq!(code, 200, "{m}");
            (
                m["weight"].as_u64().unwrap() as u32,
                m["priority"].as_u64().unwrap() as u32,
            )
        },
    )
}

#[test]
fn concurrent_updates_of_different_fields_are_never_lost_over_rest_and_grpc() {
    let dir = temp_dir("change-safety");
    let agg = Aggregator::start(&dir);
    let id = member(agg.http, &agg.token);

    let lost = rest_rounds(agg.http, agg.token.clone(), id);
    assert!(
        lost.is_empty(),
        "REST: {} of {ROUNDS} rounds lost a write (first: {:?})",
        lost.len(),
        &lost[..lost.len().min(10)]
    );

    // gRPC: each writer reads the member, changes its field and sends the
    // whole message with an update_mask naming that field (as gslbctl does).
    let runtime = Arc::new(tokio::runtime::Runtime::new().unwrap());
    let (url, token) = (agg.url(), agg.token.clone());
    let client = {
        let runtime = Arc::clone(&runtime);
        move || {
            let (url, token) = (url.clone(), token.clone());
            runtime.block_on(async move {
                let channel = tonic::transport::Endpoint::from_shared(url)
                    .unwrap()
                    .connect()
                    .await
                    .unwrap();
                let bearer: tonic::metadata::MetadataValue<_> =
                    format!("Bearer {token}").parse().unwrap();
                AdminServiceClient::with_interceptor(channel, move |mut r: tonic::Request<()>| {
                    r.metadata_mut().insert("authorization", bearer.clone());
                    Ok(r)
                })
            })
        }
    };
    let (writer, reader) = (client(), client());
    let (rt_w, rt_r) = (Arc::clone(&runtime), Arc::clone(&runtime));
    let lost = rounds(
        move |field, value| {
            let mut c = writer.clone();
            rt_w.block_on(async move {
                let by_id = pb::IdRequest {
                    id,
                    ..Default::default()
                };
                let mut m = c.get_member(by_id).await.unwrap().into_inner();
                match field {
                    "weight" => m.weight = value,
                    _ => m.priority = value,
                }
                m.update_mask = Some(prost_types::FieldMask {
                    paths: vec![field.to_owned()],
                });
                c.update_member(m).await.is_ok()
            })
        },
        move || {
            let mut c = reader.clone();
            rt_r.block_on(async move {
                let m = c
                    .get_member(pb::IdRequest {
                        id,
                        ..Default::default()
                    })
                    .await
                    .unwrap()
                    .into_inner();
                (m.weight, m.priority)
            })
        },
    );
    assert!(
        lost.is_empty(),
        "gRPC: {} of {ROUNDS} rounds lost a write (first: {:?})",
        lost.len(),
        &lost[..lost.len().min(10)]
    );
}

#[test]
fn a_stale_revision_is_refused_with_412_and_nothing_is_written() {
    let dir = temp_dir("change-preconditions");
    let agg = Aggregator::start(&dir);
    let (http, token) = (agg.http, agg.token.as_str());
    let id = member(http, token);
    let path = format!("/api/v1/members/{id}");

    let (code, head, m) = rest(http, token, "GET", &path, &[], "");
    assert_eq!(code, 200);
    let read = m["revision"].as_u64().unwrap();
    assert!(
        head.to_ascii_lowercase()
            .contains(&format!("etag: \"{read}\"")),
        "{head}"
    );

    // A colleague's write moves the revision.
    let (code, _, after) = rest(http, token, "PUT", &path, &[], r#"{"weight":5}"#);
    assert_eq!(code, 200);
    let current = after["revision"].as_u64().unwrap();
    assert!(current > read);

    // The stale If-Match, the stale revision in the body, and a stale delete:
    // 412 naming the current revision, nothing written.
    let stale = format!("\"{read}\"");
    for (method, extra, body) in [
        (
            "PUT",
            vec![("If-Match", stale.as_str())],
            r#"{"weight":9}"#.to_owned(),
        ),
        (
            "PUT",
            vec![],
            json!({"weight": 9, "revision": read}).to_string(),
        ),
        ("DELETE", vec![("If-Match", stale.as_str())], String::new()),
    ] {
        let (code, _, err) = rest(http, token, method, &path, &extra, &body);
        assert_eq!(code, 412, "{method}: {err}");
        assert_eq!(err["error"]["currentRevision"], current, "{err}");
        assert!(
            err["error"]["message"]
                .as_str()
                .unwrap()
                .contains(&format!("revision {current}")),
            "{err}"
        );
        let (_, _, now) = rest(http, token, "GET", &path, &[], "");
        assert_eq!(
            (now["weight"].as_u64(), now["revision"].as_u64()),
            (Some(5), Some(current))
        );
    }
    // gslbctl --if-revision: refused when stale, applied when current.
    let file = dir.join("weight.toml");
    std::fs::write(&file, "weight = 7\n").unwrap();
    let f = file.to_str().unwrap();
    let (ok, _, err) = agg.try_ctl(&[
        "members",
        "update",
        &id.to_string(),
        "-f",
        f,
        "--if-revision",
        &read.to_string(),
    ]);
    assert!(!ok && err.contains(&format!("revision {current}")), "{err}");
    let (ok, out, err) = agg.try_ctl(&[
        "members",
        "update",
        &id.to_string(),
        "-f",
        f,
        "--if-revision",
        &current.to_string(),
    ]);
    assert!(ok, "{out}{err}");
    let (_, _, now) = rest(http, token, "GET", &path, &[], "");
    assert_eq!(now["weight"], 7);
    // The current If-Match deletes.
    let tag = format!("\"{}\"", now["revision"]);
    let (code, _, err) = rest(http, token, "DELETE", &path, &[("If-Match", &tag)], "");
    assert_eq!(code, 204, "{err}");

    // A plan applied after the catalog moved is refused naming what changed.
    let doc = dir.join("doc.toml");
    let text = "[[check]]\nname = \"tcp\"\nprobe = { type = \"tcp\" }\n\
                [[pool]]\nname = \"web\"\ncheck = \"tcp\"\n[[pool]]\nname = \"api\"\n";
    std::fs::write(&doc, text).unwrap();
    let d = doc.to_str().unwrap();
    let plan = agg.ctl(&["apply", "-f", d, "--dry-run"]);
    let planned: u64 = plan
        .split("catalog version ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no catalog version in {plan}"));
    let (code, _, body) = rest(
        http,
        token,
        "PUT",
        "/api/v1/pools/2",
        &[],
        r#"{"minHealthy":2}"#,
    );
    assert_eq!(code, 200, "{body}");
    let (ok, _, err) = agg.try_ctl(&["apply", "-f", d, "--expect-version", &planned.to_string()]);
    assert!(!ok && err.contains("pool 2 (revision"), "{err}");
    let (_, _, pools) = rest(http, token, "GET", "/api/v1/pools", &[], "");
    assert_eq!(
        pools.as_array().unwrap().len(),
        1,
        "nothing applied: {pools}"
    );
    let (code, _, err) = rest(
        http,
        token,
        "POST",
        &format!("/api/v1/config?expectVersion={planned}"),
        &[],
        text,
    );
    assert_eq!(code, 412, "{err}");
    let plan = agg.ctl(&["apply", "-f", d, "--dry-run"]);
    let current = plan
        .split("catalog version ")
        .nth(1)
        .and_then(|t| t.split_whitespace().next())
        .unwrap();
    agg.ctl(&["apply", "-f", d, "--expect-version", current]);
}

#[test]
fn a_cluster_loses_no_concurrent_update_through_a_leader_kill() {
    let dir = temp_dir("change-cluster");
    let cluster = Cluster::start(&dir, 26, 3, &[]);
    let token = cluster.token();
    let leader = cluster.leader(30);
    let id = member(cluster.node(leader).http, &token);

    // Writes go to the followers (each field to a different one while two
    // follow), which forward them to the leader; reads go to the leader.
    // The leader is killed a third of the way through.
    let https: Vec<_> = (1..=3).map(|n| cluster.node(n).http).collect();
    // (leader, killed)
    let current = Arc::new(std::sync::Mutex::new((leader, 0u64)));
    let (writer_leader, t) = (Arc::clone(&current), token.clone());
    let path = format!("/api/v1/members/{id}");
    let (wpath, rpath) = (path.clone(), path);
    let writes = https.clone();
    let killer = {
        let current = Arc::clone(&current);
        move |cluster: &mut Cluster| {
            let (old, _) = *current.lock().unwrap();
            cluster.kill(old);
            let new = cluster.leader(30);
            *current.lock().unwrap() = (new, old);
        }
    };
    let (current_after, https_after, token_after) =
        (Arc::clone(&current), https.clone(), token.clone());
    let cluster_cell = Arc::new(std::sync::Mutex::new(Some(cluster)));
    let cell = Arc::clone(&cluster_cell);
    let done = Arc::new(std::sync::atomic::AtomicU32::new(0));
    let counted = Arc::clone(&done);
    let lost = rounds(
        move |field, value| {
            let (leader, killed) = *writer_leader.lock().unwrap();
            let followers: Vec<u64> = (1..=3).filter(|n| ![leader, killed].contains(n)).collect();
            let node = if field == "weight" {
                followers[0]
            } else {
                *followers.last().unwrap()
            };
            let (code, _, body) = rest(
                writes[(node - 1) as usize],
                &t,
                "PUT",
                &wpath,
                &[],
                &json!({ field: value }).to_string(),
            );
            // A refused write (a follower, no quorum, a dead node) is retried.
            assert!(code != 400 && code != 412, "{code}: {body}");
            code == 200
        },
        move || {
            if counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == ROUNDS / 3 {
                killer(cell.lock().unwrap().as_mut().unwrap());
            }
            let (node, _) = *current.lock().unwrap();
            let (code, _, m) = rest(https[(node - 1) as usize], &token, "GET", &rpath, &[], "");
            assert_eq!(code, 200, "{m}");
            (
                m["weight"].as_u64().unwrap() as u32,
                m["priority"].as_u64().unwrap() as u32,
            )
        },
    );
    assert!(
        lost.is_empty(),
        "cluster: {} of {ROUNDS} rounds lost a write (first: {:?})",
        lost.len(),
        &lost[..lost.len().min(10)]
    );
    // The writes were forwarded: the leader's audit log names the
    // follower that forwarded each and the client it came from.
    let (leader, _) = *current_after.lock().unwrap();
    let (code, _, audit) = rest(
        https_after[(leader - 1) as usize],
        &token_after,
        "GET",
        "/api/v1/audit?limit=1",
        &[],
        "",
    );
    assert_eq!(code, 200, "{audit}");
    let source = audit["records"][0]["source"].as_str().unwrap_or_default();
    assert!(source.contains("(forwarded for 127.0.0.1:"), "{audit}");
    drop(cluster_cell);
}

/// A REST call over HTTPS (curl, trusting `ca`): the status and the body.
fn https(
    http: std::net::SocketAddr,
    ca: &std::path::Path,
    token: &str,
    method: &str,
    path: &str,
    body: &str,
) -> (u16, Value) {
    let mut cmd = std::process::Command::new("curl");
    cmd.args(["-s", "--max-time", "30", "-w", "\n%{http_code}", "--cacert"])
        .arg(ca)
        .args([
            "-X",
            method,
            "-H",
            &format!("Authorization: Bearer {token}"),
        ])
        .args(["-H", "Content-Type: application/json"]);
    if !body.is_empty() {
        cmd.args(["--data", body]);
    }
    let out = cmd.arg(format!("https://{http}{path}")).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let (body, code) = text.rsplit_once('\n').unwrap_or(("", &text));
    (
        code.trim().parse().unwrap_or(0),
        serde_json::from_str(body).unwrap_or(Value::Null),
    )
}

#[test]
fn a_follower_forwards_rest_writes_to_the_leader_over_tls_with_their_preconditions() {
    let dir = temp_dir("change-forward");
    let cluster = Cluster::start_tls(&dir, 28, 3, &[]);
    let token = cluster.token();
    let leader = cluster.leader(30);
    let follower = (1..=3).find(|id| *id != leader).unwrap();
    let node = |id: u64| cluster.node(id);
    let ca = node(leader).operator.as_ref().unwrap().ca.clone();
    let call = |id: u64, method: &str, path: &str, body: &str| {
        https(node(id).http, &ca, &token, method, path, body)
    };
    // Created through the follower: forwarded, answered by the leader.
    let (code, pool) = call(follower, "POST", "/api/v1/pools", r#"{"name": "web"}"#);
    assert_eq!(code, 201, "{pool}");
    let path = format!("/api/v1/pools/{}/members", pool["id"]);
    let (code, m) = call(
        follower,
        "POST",
        &path,
        r#"{"name": "web-1", "ipAddress": "127.0.0.1", "port": 8080}"#,
    );
    assert_eq!(code, 201, "{m}");
    let member = format!("/api/v1/members/{}", m["id"]);
    let revision = m["revision"].as_u64().unwrap();
    // A patch with its precondition, through the follower.
    let (code, v) = call(
        follower,
        "PUT",
        &member,
        &json!({"weight": 5, "revision": revision}).to_string(),
    );
    assert_eq!(code, 200, "{v}");
    // The same precondition again is stale: 412 from the leader, passed
    // back, naming the current revision; nothing written.
    let (code, v) = call(
        follower,
        "PUT",
        &member,
        &json!({"weight": 9, "revision": revision}).to_string(),
    );
    assert_eq!(code, 412, "{v}");
    assert!(
        v["error"]["currentRevision"].as_u64() > Some(revision),
        "{v}"
    );
    let (_, read) = call(leader, "GET", &member, "");
    assert_eq!(read["weight"], 5, "{read}");
    // The leader's audit log names the follower and the client.
    let (code, audit) = call(leader, "GET", "/api/v1/audit?limit=1", "");
    assert_eq!(code, 200, "{audit}");
    let source = audit["records"][0]["source"].as_str().unwrap_or_default();
    let via = node(follower).http.ip().to_string();
    assert!(
        source.starts_with(&via) && source.contains("(forwarded for 127.0.0.1:"),
        "{audit}"
    );
    // A token's role is the leader's to check: a read token's forwarded
    // write is refused there.
    let read_token = gslb_e2e::pki::create_token(&dir.join("tokens.json"), "reader", "read", None);
    let (code, v) = https(
        node(follower).http,
        &ca,
        &read_token,
        "PUT",
        &member,
        r#"{"weight": 1}"#,
    );
    assert_eq!(code, 403, "{v}");
}
