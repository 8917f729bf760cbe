//! Web UI figures (run by `scripts/bench-ui.sh`), in headless Chromium
//! against the real aggregator over TLS:
//!
//! 1. Page load → topology drawn at MEMBERS members (default 1,000, in
//!    pools of 100): the server-rendered canvas at DOMContentLoaded, and
//!    every node's live state from the event stream's snapshot; median and
//!    worst of LOADS loads.
//! 2. Transition → DOM update over FLIPS flips (default 50) of one member's
//!    manual health: from the transition's time in the health log to the
//!    browser's update of the node (both wall clock, one machine); p50 and
//!    p99. Once back to back (each flip as soon as the page showed the
//!    last, so most land in the hub's pause between refreshes, as under
//!    steady ingest), once 300 ms apart (the hub idle when they come).
#![allow(clippy::unwrap_used, clippy::print_stdout, missing_docs)]

use std::fmt::Write as _;

use gslb_e2e::bench::{env, percentile};
use gslb_e2e::browser::Browser;
use gslb_e2e::{Aggregator, temp_dir};
use serde_json::json;

fn document(members: usize) -> String {
    let mut doc = String::from(gslb_e2e::ZONE);
    let pools = members.div_ceil(100);
    for p in 0..pools {
        let _ = write!(doc, "\n[[pool]]\nname = \"p{p}\"\n");
        for m in 0..100.min(members - p * 100) {
            let _ = write!(
                doc,
                "[[pool.member]]\nname = \"m{p}-{m}\"\naddress = \"127.0.4.{}\"\nport = {}\n",
                p % 250 + 1,
                1000 + m
            );
        }
    }
    doc.push_str("\n[[pool]]\nname = \"flip\"\n[[pool.member]]\nname = \"flipper\"\naddress = \"127.0.5.1\"\nport = 80\n");
    doc
}

fn main() {
    let members = env("MEMBERS", 1000);
    let flips = env("FLIPS", 50);
    let loads = env("LOADS", 5);
    let dir = temp_dir("bench-ui");
    let own = gslb_e2e::pki::cert("aggregator", "agg-127.0.0.1", &["127.0.0.1"]);
    let agg = Aggregator::start_tls(&dir.join("store"), &own, &["--startup-window", "1s"]);
    agg.apply(&document(members), &dir);
    let flipper = agg.member("flip", "flipper")["id"].as_u64().unwrap();
    let base = format!("https://{}", agg.http);
    let total = members + 1;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let b = Browser::start().await;
        b.sign_in(&base, &agg.token).await;

        let (mut drawn, mut live) = (Vec::new(), Vec::new());
        for _ in 0..loads {
            b.client.goto(&format!("{base}/ui/")).await.unwrap();
            b.wait_js(
                "every node's live state",
                &format!("return window.gslbLive && Object.keys(window.gslbLive.shown).length >= {total};"),
            )
            .await;
            let t = b
                .js(
                    "const n = performance.getEntriesByType('navigation')[0];
                     const last = Math.max(...Object.values(window.gslbLive.shown).map(s => s.at)) - performance.timeOrigin;
                     return [n.domContentLoadedEventEnd, last, document.querySelectorAll('button.member').length];",
                    vec![],
                )
                .await;
            assert_eq!(t[2].as_u64().unwrap() as usize, total, "nodes drawn");
            drawn.push(t[0].as_f64().unwrap());
            live.push(t[1].as_f64().unwrap());
        }
        // What an operator sees at this size: pools collapsed, then a search.
        b.shot("topology-1000").await;
        b.fill("#search", "m7-4").await;
        b.shot("topology-1000-search").await;
        drawn.sort_by(f64::total_cmp);
        live.sort_by(f64::total_cmp);
        println!(
            "ui page_load members={total} loads={loads} topology_drawn_ms_p50={:.0} max={:.0} live_states_ms_p50={:.0} max={:.0}",
            percentile(&drawn, 50.0),
            drawn[drawn.len() - 1],
            percentile(&live, 50.0),
            live[live.len() - 1]
        );

        for gap_ms in [0u64, 300] {
            let mut delays = Vec::new();
            for i in 0..flips {
                tokio::time::sleep(std::time::Duration::from_millis(gap_ms)).await;
                let (health, label) = if i % 2 == 0 { ("down", "unhealthy") } else { ("up", "healthy") };
                let at = b
                    .js(
                        "const [id, health] = arguments;
                         return (async () => {
                         const put = await fetch('/ui/api/v1/members/' + id + '/health', {method: 'PUT',
                           headers: {'content-type': 'application/json', 'x-csrf-token': document.body.dataset.csrf},
                           body: JSON.stringify({health})});
                         if (!put.ok) return 'PUT ' + put.status;
                         const log = await (await fetch('/ui/api/v1/members/' + id + '/logs?limit=1')).json();
                         return log.entries[log.entries.length - 1].atMs;
                         })();",
                        vec![json!(flipper), json!(health)],
                    )
                    .await;
                let at = at.as_f64().unwrap_or_else(|| panic!("flip {i}: {at}"));
                let shown = b
                    .wait_js(
                        "the node's update",
                        &format!(
                            "const s = window.gslbLive.shown[{flipper}]; return s && s.label === '{label}' && s.at >= {at} - 1 ? s.at : null;"
                        ),
                    )
                    .await;
                delays.push(shown.as_f64().unwrap() - at);
            }
            delays.sort_by(f64::total_cmp);
            println!(
                "ui transition_to_dom flips={flips} gap_ms={gap_ms} p50_ms={:.1} p99_ms={:.1} max_ms={:.1}",
                percentile(&delays, 50.0),
                percentile(&delays, 99.0),
                delays[delays.len() - 1]
            );
        }
        b.close().await;
    });
    drop(agg);
    let _ = std::fs::remove_dir_all(&dir);
}
