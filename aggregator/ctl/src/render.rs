//! What gslbctl prints: a table per kind, or JSON.

use gslb_proto::pb;
use gslb_shared::status::{MemberState, MemberStatusView, PoolStatusView};
use gslb_shared::*;
use serde_json::{Value, json};

use super::Output;
use super::table::render;
use gslb_proto::convert::{decisions_json, failure_name, health_name};
use gslb_shared::defaults::to_json;

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default() + "\n"
}

fn list<T: serde::Serialize>(items: &[T]) -> String {
    pretty(&Value::Array(items.iter().map(to_json).collect()))
}

/// `up`, `down` or `unknown` (a wire value).
pub fn health_word(health: i32) -> String {
    health_name(health).as_str().unwrap_or("unknown").to_owned()
}

/// `up`, `down` or `unknown`.
fn health_of(health: Health) -> &'static str {
    match health {
        Health::Up => "up",
        Health::Down => "down",
        Health::Unknown => "unknown",
    }
}

fn region(r: &Option<Region>) -> String {
    r.as_ref().map_or_else(|| "-".into(), ToString::to_string)
}

/// Zones.
pub fn zones(items: &[Zone], out: Output) -> String {
    if out == Output::Json {
        return list(items);
    }
    let rows = items
        .iter()
        .map(|z| {
            vec![
                z.id.to_string(),
                z.apex.to_string(),
                z.ns.iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(","),
                z.default_ttl.to_string(),
            ]
        })
        .collect::<Vec<_>>();
    render(&["ID", "APEX", "NS", "TTL"], &rows)
}

/// Record sets.
pub fn records(items: &[RecordSet], out: Output) -> String {
    if out == Output::Json {
        return list(items);
    }
    let rows = items
        .iter()
        .map(|r| {
            let data = match &r.data {
                RecordData::Dynamic(d) => {
                    let pools = d
                        .pools
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(",");
                    format!(
                        "{:?} pools={pools} geo={} firstN={}",
                        d.steering,
                        d.geo.len(),
                        d.first_n
                    )
                    .to_lowercase()
                }
                RecordData::Static(rdata) => serde_json::to_string(rdata).unwrap_or_default(),
            };
            vec![
                r.id.to_string(),
                r.name.to_string(),
                r.rtype.to_string(),
                r.ttl.to_string(),
                data,
            ]
        })
        .collect::<Vec<_>>();
    render(&["ID", "NAME", "TYPE", "TTL", "DATA"], &rows)
}

/// Pools.
pub fn pools(items: &[Pool], out: Output) -> String {
    if out == Output::Json {
        return list(items);
    }
    let rows = items
        .iter()
        .map(|p| {
            vec![
                p.id.to_string(),
                p.name.clone(),
                p.check.map_or_else(|| "-".into(), |c| c.to_string()),
                p.min_healthy.to_string(),
                p.protect_threshold.to_string(),
                format!("{:?}", p.fail_mode).to_lowercase(),
                p.slow_start
                    .map_or_else(|| "-".into(), |d| humantime::format_duration(d).to_string()),
            ]
        })
        .collect::<Vec<_>>();
    render(
        &[
            "ID",
            "NAME",
            "CHECK",
            "MIN-HEALTHY",
            "PROTECT",
            "FAIL-MODE",
            "SLOW-START",
        ],
        &rows,
    )
}

/// Checks.
pub fn checks(items: &[Check], out: Output) -> String {
    if out == Output::Json {
        return list(items);
    }
    let rows = items
        .iter()
        .map(|c| {
            vec![
                c.id.to_string(),
                c.name.clone(),
                c.probe.protocol().into(),
                humantime::format_duration(c.interval).to_string(),
                humantime::format_duration(c.timeout).to_string(),
                format!("{}/{}", c.rise, c.fall),
                if c.locations.is_empty() {
                    "all".into()
                } else {
                    c.locations
                        .iter()
                        .map(ToString::to_string)
                        .collect::<Vec<_>>()
                        .join(",")
                },
            ]
        })
        .collect::<Vec<_>>();
    render(
        &[
            "ID",
            "NAME",
            "PROTOCOL",
            "INTERVAL",
            "TIMEOUT",
            "RISE/FALL",
            "LOCATIONS",
        ],
        &rows,
    )
}

/// The STATUS column: seed 000's label, health first (`unhealthy`, with
/// the closed gate's `warming X/N` beside it), as the UI shows it.
fn status_word(m: &Member, s: &MemberStatusView) -> String {
    let state = MemberState::of(m.enabled, s.health, s.warming);
    let label = state.label(s.warmup_passes, s.warmup_threshold);
    match state.gate_mark(s.warming, s.warmup_passes, s.warmup_threshold) {
        Some(gate) => format!("{label} ({gate})"),
        None => label,
    }
}

/// `ID NAME IP PORT W PRI STATUS REGION` and notes: `warmup:N` when a
/// threshold is set, `decisions paused` while an operator holds its health.
pub fn members(rows: &[(Member, MemberStatusView)], out: Output) -> String {
    if out == Output::Json {
        let items: Vec<Value> = rows
            .iter()
            .map(|(m, s)| {
                let mut v = to_json(m);
                v["status"] = to_json(s);
                v
            })
            .collect();
        return pretty(&Value::Array(items));
    }
    let table: Vec<Vec<String>> = rows
        .iter()
        .map(|(m, s)| {
            let mut notes = Vec::new();
            if m.warmup_threshold > 0 {
                notes.push(format!("warmup:{}", m.warmup_threshold));
            }
            if s.decisions_paused {
                notes.push("decisions paused".to_owned());
            }
            if let Some(percent) = s.ramp {
                let weight = gslb_shared::model::ramped_weight(m.weight, s.ramp);
                notes.push(format!("slow start {percent}% (weight {weight})"));
            }
            vec![
                m.id.to_string(),
                m.name.clone(),
                m.address.to_string(),
                m.port.to_string(),
                m.weight.to_string(),
                m.priority.to_string(),
                status_word(m, s),
                region(&m.region),
                notes.join(" "),
            ]
        })
        .collect();
    render(
        &[
            "ID", "NAME", "IP", "PORT", "W", "PRI", "STATUS", "REGION", "",
        ],
        &table,
    )
}

/// One member's status.
pub fn member_status(s: &MemberStatusView, out: Output) -> String {
    if out == Output::Json {
        return pretty(&to_json(s));
    }
    let mut text = render(
        &[
            "MEMBER",
            "HEALTH",
            "SINCE",
            "SCORE",
            "WARMING",
            "PROTECTED",
            "FAIL-OPEN",
            "MANUAL",
            "DECISIONS",
        ],
        &[vec![
            s.member_id.to_string(),
            health_of(s.health).to_owned(),
            if s.since_ms == 0 {
                "-".to_owned()
            } else {
                crate::time::at_ms(s.since_ms)
            },
            s.score.map_or_else(|| "-".into(), |v| format!("{v:.2}")),
            if s.warming {
                format!("{}/{}", s.warmup_passes, s.warmup_threshold)
            } else {
                "no".into()
            },
            s.protected.to_string(),
            s.fail_open.to_string(),
            s.manual.map_or("-", health_of).to_owned(),
            decisions_word(s.decisions_paused).into(),
        ]],
    );
    if let Some(percent) = s.ramp {
        text.push_str(&format!(
            "slow start: {percent}% of its weight, rising in 10% steps\n"
        ));
    }
    if !s.locations.is_empty() {
        let rows: Vec<Vec<String>> = s
            .locations
            .iter()
            .map(|l| {
                let result = l.failure.map_or("pass", |f| f.as_str()).to_owned();
                let note = if l.quarantined {
                    "quarantined"
                } else if l.stale {
                    "stale"
                } else {
                    ""
                };
                vec![
                    l.location.clone(),
                    l.cycle.to_string(),
                    result,
                    format!("{}us", l.latency_us),
                    l.rtt_us.map_or_else(String::new, |us| format!("{us}us")),
                    note.into(),
                ]
            })
            .collect();
        text.push('\n');
        text.push_str(&render(
            &["LOCATION", "CYCLE", "RESULT", "LATENCY", "RTT", ""],
            &rows,
        ));
    }
    text
}

/// A pool's status.
pub fn pool_status(s: &PoolStatusView, out: Output) -> String {
    if out == Output::Json {
        return pretty(&json!({
            "poolId": s.pool_id, "eligible": s.eligible, "protected": s.protected, "failOpen": s.fail_open,
            "decisionsPaused": s.decisions_paused,
            "members": s.members.iter().map(to_json).collect::<Vec<_>>(),
        }));
    }
    let head = format!(
        "pool {}: eligible={} protected={} failOpen={} decisions={}\n",
        s.pool_id,
        s.eligible,
        s.protected,
        s.fail_open,
        decisions_word(s.decisions_paused)
    );
    let rows: Vec<Vec<String>> = s
        .members
        .iter()
        .map(|m| {
            let state = match &m.gate {
                Some(gate) => format!("{} ({gate})", m.label),
                None => m.label.clone(),
            };
            vec![
                m.member_id.to_string(),
                health_of(m.health).to_owned(),
                m.score.map_or_else(|| "-".into(), |v| format!("{v:.2}")),
                state,
            ]
        })
        .collect();
    head + &render(&["MEMBER", "HEALTH", "SCORE", "STATE"], &rows)
}

/// Every pool at a glance.
pub fn overview(pools: &[(String, PoolStatusView)], out: Output) -> String {
    if out == Output::Json {
        let items: Vec<Value> = pools
            .iter()
            .map(|(name, s)| json!({"pool": name, "poolId": s.pool_id, "eligible": s.eligible, "protected": s.protected, "failOpen": s.fail_open,
                "decisionsPaused": s.decisions_paused,
                "healthy": s.members.iter().filter(|m| m.healthy && !m.warming).count(), "members": s.members.len()}))
            .collect();
        return pretty(&Value::Array(items));
    }
    let rows: Vec<Vec<String>> = pools
        .iter()
        .map(|(name, s)| {
            let healthy = s.members.iter().filter(|m| m.healthy && !m.warming).count();
            vec![
                s.pool_id.to_string(),
                name.clone(),
                format!("{healthy}/{}", s.members.len()),
                s.eligible.to_string(),
                s.protected.to_string(),
                s.fail_open.to_string(),
                decisions_word(s.decisions_paused).into(),
            ]
        })
        .collect();
    render(
        &[
            "ID",
            "POOL",
            "HEALTHY",
            "ELIGIBLE",
            "PROTECTED",
            "FAIL-OPEN",
            "DECISIONS",
        ],
        &rows,
    )
}

/// `paused` while an operator holds a pool's health, else `on`.
fn decisions_word(paused: bool) -> &'static str {
    if paused { "paused" } else { "on" }
}

/// The operator's hold in words, with the times it was set.
fn decisions_state(e: &pb::EngineStatus) -> String {
    let at = crate::time::at_ms;
    let mut parts = Vec::new();
    if e.paused_since_ms != 0 {
        parts.push(format!(
            "paused for every pool since {}",
            at(e.paused_since_ms)
        ));
    }
    for p in &e.paused_pools {
        parts.push(format!(
            "paused for pool {} since {}",
            p.pool_id,
            at(p.since_ms)
        ));
    }
    if parts.is_empty() {
        "on (gslbctl decisions pause holds health as it is)".into()
    } else {
        parts.join("; ")
    }
}

/// The operator's hold alone (`gslbctl decisions`).
pub fn decisions(e: &pb::EngineStatus, out: Output) -> String {
    if out == Output::Json {
        return pretty(&decisions_json(e.paused_since_ms, &e.paused_pools));
    }
    render(&["DECISIONS"], &[vec![decisions_state(e)]])
}

/// The health engine's settings and state.
pub fn engine(e: &pb::EngineStatus, out: Output) -> String {
    let quarantined = if e.quarantined.is_empty() {
        "none".to_owned()
    } else {
        e.quarantined.join(", ")
    };
    if out == Output::Json {
        return pretty(&json!({
            "decisionsEnabled": e.decisions_enabled, "cycleGraceMs": e.cycle_grace_ms,
            "decisions": decisions_json(e.paused_since_ms, &e.paused_pools),
            "quarantine": {
                "enabled": e.quarantine_enabled, "roundMs": e.quarantine_round_ms,
                "minSamples": e.quarantine_min_samples, "locationFail": e.quarantine_location_fail,
                "othersFailMax": e.quarantine_others_fail_max, "cleanRounds": e.quarantine_clean_rounds,
                "quarantined": e.quarantined,
            },
        }));
    }
    let gate = if e.decisions_enabled {
        "open (health decisions on)"
    } else {
        "closed (no health changes until fresh results have arrived)"
    };
    let mut rows = vec![
        vec!["startup gate".into(), gate.into()],
        vec!["decisions".into(), decisions_state(e)],
        vec!["cycle grace".into(), format!("{} ms", e.cycle_grace_ms)],
        vec![
            "quarantine".into(),
            if e.quarantine_enabled { "on" } else { "off" }.into(),
        ],
    ];
    if e.quarantine_enabled {
        rows.push(vec![
            "quarantine rule".into(),
            format!(
                "a location failing >= {} of its checks while the others fail <= {}",
                e.quarantine_location_fail, e.quarantine_others_fail_max
            ),
        ]);
        rows.push(vec![
            "quarantine round".into(),
            format!(
                "{} ms, >= {} samples; released after {} clean rounds",
                e.quarantine_round_ms, e.quarantine_min_samples, e.quarantine_clean_rounds
            ),
        ]);
    }
    rows.push(vec!["quarantined".into(), quarantined]);
    render(&["ENGINE", "STATE"], &rows)
}

/// A health log.
pub fn log(log: &pb::HealthLog, out: Output) -> String {
    let entries: Vec<Value> = log
        .entries
        .iter()
        .map(|e| {
            json!({"atMs": e.at_ms, "at": crate::time::at_ms(e.at_ms), "from": health_name(e.from), "to": health_name(e.to), "reason": e.reason, "cycle": e.cycle,
                "evidence": e.evidence.iter().map(|ev| json!({"location": ev.location, "outcome": ev.outcome, "failure": failure_name(ev.failure)})).collect::<Vec<_>>()})
        })
        .collect();
    if out == Output::Json {
        return pretty(&Value::Array(entries));
    }
    // One row per entry with its reason, then one per location of its
    // evidence: locations and results line up down the whole log.
    let mut rows: Vec<Vec<String>> = Vec::new();
    for e in &log.entries {
        let change = if e.from == 0 && e.to == 0 {
            "-".into()
        } else {
            format!("{} → {}", health_word(e.from), health_word(e.to))
        };
        let result = |ev: &pb::Evidence| match failure_name(ev.failure).as_str() {
            Some(f) => format!("{} ({f})", ev.outcome),
            None => ev.outcome.clone(),
        };
        let (location, outcome) = e.evidence.first().map_or_else(
            || ("-".into(), String::new()),
            |ev| (ev.location.clone(), result(ev)),
        );
        rows.push(vec![
            crate::time::at_ms(e.at_ms),
            change,
            location,
            outcome,
            e.reason.clone(),
        ]);
        for ev in e.evidence.iter().skip(1) {
            rows.push(vec![
                String::new(),
                String::new(),
                ev.location.clone(),
                result(ev),
                String::new(),
            ]);
        }
    }
    render(&["AT", "CHANGE", "LOCATION", "RESULT", "REASON"], &rows)
}

/// Explain.
pub fn explain(r: &pb::ExplainResponse, out: Output) -> String {
    if out == Output::Json {
        let steps: Vec<Value> = r
            .steps
            .iter()
            .map(|s| serde_json::from_str(&s.detail_json).unwrap_or(Value::Null))
            .collect();
        let client =
            gslb_shared::status::ExplainClientView::from(r.client.clone().unwrap_or_default());
        return pretty(
            &json!({"outcome": serde_json::from_str::<Value>(&r.outcome).unwrap_or(Value::Null), "answers": r.answers, "steps": steps, "client": client}),
        );
    }
    crate::explain::render(r)
}

/// An apply's plan.
pub fn plan(r: &pb::ApplyConfigResponse, out: Output) -> String {
    if out == Output::Json {
        return pretty(
            &json!({"plan": r.plan, "notes": r.notes, "applied": r.applied, "version": r.version, "catalogVersion": r.catalog_version}),
        );
    }
    let mut text: String = r
        .plan
        .iter()
        .chain(&r.notes)
        .map(|l| format!("{l}\n"))
        .collect();
    if r.plan.is_empty() {
        text.push_str("no changes\n");
    }
    text.push_str(&if r.applied {
        format!("applied: {} changes, version {}\n", r.plan.len(), r.version)
    } else {
        format!(
            "planned against catalog version {v} (apply with --expect-version {v} to refuse it if the catalog moves)\n\
             dry run: {} changes, nothing applied\n",
            r.plan.len(),
            v = r.catalog_version,
        )
    });
    text
}

/// Agents.
pub fn agents(list: &pb::AgentList, out: Output) -> String {
    if out == Output::Json {
        let items: Vec<Value> = list.agents.iter().map(|a| json!({"agentId": a.agent_id, "location": a.location, "region": a.region,
            "version": a.version, "connected": a.connected, "assignments": a.assignments, "lastSeenMs": a.last_seen_ms,
            "connectedSinceMs": a.connected_since_ms, "resultsPerSecond": a.results_per_second})).collect();
        return pretty(&Value::Array(items));
    }
    let rows: Vec<Vec<String>> = list
        .agents
        .iter()
        .map(|a| {
            vec![
                a.agent_id.clone(),
                a.location.clone(),
                a.region.clone(),
                a.version.clone(),
                a.connected.to_string(),
                a.assignments.to_string(),
                format!("{:.1}", a.results_per_second),
            ]
        })
        .collect();
    render(
        &[
            "AGENT",
            "LOCATION",
            "REGION",
            "VERSION",
            "CONNECTED",
            "TARGETS",
            "RESULTS/S",
        ],
        &rows,
    )
}

/// Edges.
pub fn edges(list: &pb::EdgeList, out: Output) -> String {
    if out == Output::Json {
        let items: Vec<Value> = list
            .edges
            .iter()
            .map(|e| {
                json!({"edgeId": e.edge_id, "appliedVersion": e.applied_version,
            "lagMs": e.lag_ms, "connected": e.connected, "lastSeenMs": e.last_seen_ms,
            "degraded": !e.skipped.is_empty(), "skipped": e.skipped})
            })
            .collect();
        return pretty(&Value::Array(items));
    }
    let rows: Vec<Vec<String>> = list
        .edges
        .iter()
        .map(|e| {
            vec![
                e.edge_id.clone(),
                e.applied_version.to_string(),
                format!("{}ms", e.lag_ms),
                e.connected.to_string(),
                if e.skipped.is_empty() {
                    "ok".to_owned()
                } else {
                    format!("degraded: {}", e.skipped.join("; "))
                },
            ]
        })
        .collect();
    render(&["EDGE", "VERSION", "LAG", "CONNECTED", "STATE"], &rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn evidence(location: &str, outcome: &str, failure: pb::FailReason) -> pb::Evidence {
        pb::Evidence {
            location: location.into(),
            outcome: outcome.into(),
            failure: failure as i32,
            latency_us: 0,
        }
    }

    /// The whole table, as an operator sees it (times in UTC).
    #[test]
    fn a_health_log_lines_up_times_changes_locations_results_and_reasons() {
        let entries = pb::HealthLog {
            entries: vec![
                pb::HealthLogEntry {
                    member_id: 3,
                    at_ms: 1_796_160_686_938,
                    from: pb::Health::Up as i32,
                    to: pb::Health::Down as i32,
                    reason: "quorum: score 0.00 (cycle 0.00) against rise 0.85 / fall 0.2".into(),
                    evidence: vec![
                        evidence("fra1", "fail", pb::FailReason::Refused),
                        evidence("iad1", "fail", pb::FailReason::Timeout),
                        evidence("sin1-long", "quarantined", pb::FailReason::Unspecified),
                    ],
                    ..Default::default()
                },
                pb::HealthLogEntry {
                    member_id: 3,
                    at_ms: 1_796_160_690_001,
                    from: pb::Health::Down as i32,
                    to: pb::Health::Up as i32,
                    reason: "quorum: score 1.00".into(),
                    ..Default::default()
                },
            ],
        };
        let want = "\
AT                        CHANGE     LOCATION   RESULT          REASON
2026-12-01T21:31:26.938Z  up → down  fra1       fail (refused)  quorum: score 0.00 (cycle 0.00) against rise 0.85 / fall 0.2
                                     iad1       fail (timeout)
                                     sin1-long  quarantined
2026-12-01T21:31:30.001Z  down → up  -                          quorum: score 1.00
";
        assert_eq!(log(&entries, Output::Table), want);
        let json: Value = serde_json::from_str(&log(&entries, Output::Json)).unwrap();
        assert_eq!(json[0]["at"], "2026-12-01T21:31:26.938Z");
        assert_eq!(json[0]["atMs"], 1_796_160_686_938_u64);
    }
}
