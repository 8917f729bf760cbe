//! `gslbctl explain` as a readable trace: one line per selection step, in
//! words, with pools and members by name. The raw steps stay available
//! with `-o json`. A step this version does not know is shown as its JSON.

use std::collections::HashMap;

use gslb_proto::pb;
use serde_json::Value;

/// Names by id, and the words for ids it lacks.
struct Names<'a>(&'a HashMap<u64, String>);

impl Names<'_> {
    /// The name of the object `id` holds, or `#ID`.
    fn of(&self, id: &Value) -> String {
        match id.as_u64() {
            Some(n) => self.0.get(&n).cloned().unwrap_or_else(|| format!("#{n}")),
            None => id.to_string(),
        }
    }

    /// `a, b, c` of a list of ids; `none` when empty.
    fn list(&self, ids: &Value) -> String {
        let names: Vec<String> = items(ids).iter().map(|id| self.of(id)).collect();
        if names.is_empty() {
            "none".into()
        } else {
            names.join(", ")
        }
    }

    /// `name (what), …` of `[id, what]` pairs.
    fn pairs(&self, pairs: &Value, what: impl Fn(&str) -> String) -> String {
        let shown: Vec<String> = items(pairs)
            .iter()
            .map(|p| {
                let reason = p[1].as_str().unwrap_or("?");
                format!("{} ({})", self.of(&p[0]), what(reason))
            })
            .collect();
        shown.join(", ")
    }
}

fn items(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], Vec::as_slice)
}

/// A time in µs as milliseconds.
fn millis(us: &Value) -> String {
    us.as_f64().map_or_else(
        || "unmeasured".into(),
        |us| format!("{:.1} ms", us / 1000.0),
    )
}

/// Why a member is not a candidate, in words.
fn exclusion(reason: &str) -> String {
    match reason {
        "disabled" => "disabled".into(),
        "zeroWeight" => "weight 0".into(),
        "warming" => "warming up".into(),
        "otherFamily" => "other address family".into(),
        other => other.into(),
    }
}

/// What an outcome (`{"kind": …}`) means.
fn outcome(o: &Value, names: &Names) -> String {
    let pool = names.of(&o["pool"]);
    match o["kind"].as_str() {
        Some("pool") if o["protected"] == true => {
            format!("pool {pool} answered, under its protection threshold")
        }
        Some("pool") => format!("pool {pool} answered"),
        Some("failOpen") => format!("no pool eligible: every candidate of pool {pool} (fail open)"),
        Some("failStatic") => format!("no pool eligible: pool {pool}'s fallback addresses"),
        Some("noData") => "no pool eligible and nothing to answer: NODATA".into(),
        _ => o.to_string(),
    }
}

/// One step in words.
fn step(kind: &str, d: &Value, names: &Names) -> String {
    let pool = || format!("pool {}", names.of(&d["pool"]));
    match kind {
        "branch" => {
            let branch = d["geoBranch"].as_u64().map_or_else(
                || "default branch".to_owned(),
                |n| format!("geo branch {n}"),
            );
            let mut client = Vec::new();
            if let Some(region) = d["region"].as_str() {
                client.push(format!("region {region}"));
            }
            for key in ["country", "continent", "subdivision"] {
                if let Some(code) = d["place"][key].as_str() {
                    client.push(format!("{key} {code}"));
                }
            }
            if let Some(asn) = d["place"]["asn"].as_u64() {
                client.push(format!("AS{asn}"));
            }
            let client = if client.is_empty() {
                String::new()
            } else {
                format!(" for client {}", client.join(", "))
            };
            format!("{branch}{client}: pools {}", names.list(&d["pools"]))
        }
        "missingPool" => format!("{} does not exist: skipped", pool()),
        "candidates" => {
            let mut text = format!("{}: candidates {}", pool(), names.list(&d["candidates"]));
            if !items(&d["excluded"]).is_empty() {
                text += &format!("; left out {}", names.pairs(&d["excluded"], exclusion));
            }
            let ramping: Vec<String> = items(&d["ramping"])
                .iter()
                .map(|r| {
                    format!(
                        "{} at {}% (weight {} of {})",
                        names.of(&r["member"]),
                        r["percent"],
                        r["effectiveWeight"],
                        r["weight"]
                    )
                })
                .collect();
            if !ramping.is_empty() {
                text += &format!("; slow start {}", ramping.join(", "));
            }
            text
        }
        "healthy" => {
            let mut text = format!("{}: healthy {}", pool(), names.list(&d["healthy"]));
            if !items(&d["unhealthy"]).is_empty() {
                text += &format!(
                    "; not healthy {}",
                    names.pairs(&d["unhealthy"], str::to_owned)
                );
            }
            text
        }
        "backup" if d["usingBackups"] == true => format!(
            "{}: no primary is healthy, backups answer: {}",
            pool(),
            names.list(&d["chosen"])
        ),
        "backup" => format!("{}: chosen {}", pool(), names.list(&d["chosen"])),
        "minHealthy" => {
            let (usable, min) = (d["usable"].as_u64(), d["minHealthy"].as_u64());
            let met = usable >= min;
            format!(
                "{}: {} usable, at least {} needed: {}",
                pool(),
                d["usable"],
                d["minHealthy"],
                if met { "met" } else { "not met" }
            )
        }
        "protection" => {
            let threshold = d["threshold"].as_f64().unwrap_or(0.0);
            if threshold == 0.0 {
                return format!("{}: off (threshold 0)", pool());
            }
            format!(
                "{}: {} of {} candidates healthy, threshold {:.0}%: {}",
                pool(),
                d["healthy"],
                d["candidates"],
                threshold * 100.0,
                if d["protected"] == true {
                    "every candidate answered, healthy or not"
                } else {
                    "not applied"
                }
            )
        }
        "poolVerdict" => {
            let verdict = &d["verdict"];
            let words = if verdict["eligible"]["protected"] == true {
                "eligible, under its protection threshold"
            } else if verdict.get("eligible").is_some() {
                "eligible"
            } else {
                "not eligible"
            };
            format!("{}: {words}", pool())
        }
        "allFailed" => format!(
            "fail mode {}: {}",
            d["mode"].as_str().unwrap_or("?"),
            outcome(&d["outcome"], names)
        ),
        "latency" => {
            let from = if d["locations"].is_array() {
                let locations: Vec<&str> = items(&d["locations"])
                    .iter()
                    .filter_map(Value::as_str)
                    .collect();
                locations.join(", ")
            } else {
                "every location".into()
            };
            let region = d["region"].as_str().map_or_else(
                || "client region unknown".to_owned(),
                |r| format!("region {r}"),
            );
            let compared: Vec<String> = items(&d["compared"])
                .iter()
                .map(|c| {
                    let kept = if c["kept"] == true { "kept" } else { "dropped" };
                    format!(
                        "{} {} ({kept})",
                        names.of(&c["member"]),
                        millis(&c["rttMicros"])
                    )
                })
                .collect();
            if d["fastestMicros"].is_null() {
                return format!(
                    "{region}, times from {from}: no member measured, every one answered"
                );
            }
            format!(
                "{region}, times from {from}: fastest {}, answered up to {}: {}",
                millis(&d["fastestMicros"]),
                millis(&d["limitMicros"]),
                compared.join(", ")
            )
        }
        "answer" => {
            let steering = match d["steering"].as_str() {
                Some("roundrobin") => "round robin",
                Some(other) => other,
                None => "?",
            };
            let first = match d["firstN"].as_u64() {
                Some(0) | None => "all".to_owned(),
                Some(n) => format!("first {n}"),
            };
            let answers: Vec<String> = items(&d["answers"])
                .iter()
                .map(|a| match (a["address"].as_str(), a["member"].is_null()) {
                    (Some(ip), false) => format!("{ip} ({})", names.of(&a["member"])),
                    (Some(ip), true) => ip.to_owned(),
                    (None, _) => names.of(&a["member"]),
                })
                .collect();
            format!(
                "{steering}, {first}: {}",
                if answers.is_empty() {
                    "nothing".into()
                } else {
                    answers.join(", ")
                }
            )
        }
        _ => d.to_string(),
    }
}

/// Labels are padded to this width (`min-healthy`), so texts line up.
const LABEL: usize = 11;

/// The label a step's line starts with.
fn label(kind: &str) -> &str {
    match kind {
        "missingPool" => "missing",
        "minHealthy" => "min-healthy",
        "poolVerdict" => "verdict",
        "allFailed" => "all failed",
        other => other,
    }
}

/// The whole trace: a line per step, then the outcome and the answers.
pub fn render(r: &pb::ExplainResponse) -> String {
    let names = Names(&r.names);
    // Where the client was placed comes first: every branch depends on it.
    let client = (r.client.as_ref())
        .filter(|c| !c.note.is_empty())
        .map(|c| ("client".to_owned(), c.note.clone()));
    let mut lines: Vec<(String, String)> = client
        .into_iter()
        .chain(r.steps.iter().map(|s| {
            let detail = serde_json::from_str::<Value>(&s.detail_json).unwrap_or(Value::Null);
            (label(&s.step).to_owned(), step(&s.step, &detail, &names))
        }))
        .collect();
    let outcome_words = serde_json::from_str::<Value>(&r.outcome)
        .map_or_else(|_| r.outcome.clone(), |o| outcome(&o, &names));
    lines.push(("outcome".into(), outcome_words));
    let answers = if r.answers.is_empty() {
        "none".to_owned()
    } else {
        r.answers.join(" ")
    };
    lines.push(("answers".into(), answers));
    lines
        .iter()
        .map(|(l, text)| {
            let pad = " ".repeat(LABEL.saturating_sub(l.len()));
            format!("{l}{pad}  {}\n", crate::table::clean_line(text))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn response(steps: &[Value], outcome: Value, answers: &[&str]) -> pb::ExplainResponse {
        pb::ExplainResponse {
            steps: steps
                .iter()
                .map(|s| pb::ExplainStep {
                    step: s["step"].as_str().unwrap().to_owned(),
                    detail_json: s.to_string(),
                })
                .collect(),
            answers: answers.iter().map(|a| (*a).to_owned()).collect(),
            outcome: outcome.to_string(),
            names: [(2, "web"), (3, "web-1"), (4, "web-2"), (5, "web-3")]
                .into_iter()
                .map(|(id, n)| (id, n.to_owned()))
                .collect(),
            client: Some(pb::ExplainClient {
                asked: "192.0.2.1".into(),
                note: "192.0.2.1: region eu from geo.txt (prefix /24)".into(),
                ..Default::default()
            }),
        }
    }

    #[test]
    fn a_trace_reads_as_one_line_per_step_in_names() {
        let steps = [
            json!({"step": "branch", "geoBranch": null, "region": "eu", "place": {"country": "DE", "asn": 3320}, "pools": [2]}),
            json!({"step": "candidates", "pool": 2, "candidates": [3, 4], "excluded": [[5, "warming"]],
                   "ramping": [{"member": 4, "percent": 40, "weight": 10, "effectiveWeight": 4}]}),
            json!({"step": "healthy", "pool": 2, "healthy": [3], "unhealthy": [[4, "down"]]}),
            json!({"step": "backup", "pool": 2, "usingBackups": false, "chosen": [3]}),
            json!({"step": "minHealthy", "pool": 2, "usable": 1, "minHealthy": 1}),
            json!({"step": "protection", "pool": 2, "healthy": 1, "candidates": 2, "threshold": 0.0, "protected": false}),
            json!({"step": "poolVerdict", "pool": 2, "verdict": {"eligible": {"protected": false}}}),
            json!({"step": "latency", "region": "eu", "locations": ["fra1"], "fastestMicros": 10200, "limitMicros": 12240,
                   "compared": [{"member": 3, "rttMicros": 10200, "kept": true}]}),
            json!({"step": "answer", "outcome": {"kind": "pool", "pool": 2, "protected": false}, "steering": "latency",
                   "firstN": 0, "answers": [{"member": 3, "address": "192.0.2.1"}]}),
        ];
        let text = render(&response(
            &steps,
            json!({"kind": "pool", "pool": 2, "protected": false}),
            &["192.0.2.1"],
        ));
        let want = "\
client       192.0.2.1: region eu from geo.txt (prefix /24)
branch       default branch for client region eu, country DE, AS3320: pools web
candidates   pool web: candidates web-1, web-2; left out web-3 (warming up); slow start web-2 at 40% (weight 4 of 10)
healthy      pool web: healthy web-1; not healthy web-2 (down)
backup       pool web: chosen web-1
min-healthy  pool web: 1 usable, at least 1 needed: met
protection   pool web: off (threshold 0)
verdict      pool web: eligible
latency      region eu, times from fra1: fastest 10.2 ms, answered up to 12.2 ms: web-1 10.2 ms (kept)
answer       latency, all: 192.0.2.1 (web-1)
outcome      pool web answered
answers      192.0.2.1
";
        assert_eq!(text, want);
    }

    #[test]
    fn failures_protection_and_unknown_ids_are_said_in_words() {
        let steps = [
            json!({"step": "missingPool", "pool": 9}),
            json!({"step": "protection", "pool": 2, "healthy": 1, "candidates": 4, "threshold": 0.5, "protected": true}),
            json!({"step": "minHealthy", "pool": 2, "usable": 0, "minHealthy": 2}),
            json!({"step": "poolVerdict", "pool": 2, "verdict": "ineligible"}),
            json!({"step": "allFailed", "mode": "closed", "outcome": {"kind": "noData"}}),
            json!({"step": "somethingNew", "pool": 2}),
        ];
        let text = render(&response(&steps, json!({"kind": "noData"}), &[]));
        for line in [
            "missing      pool #9 does not exist: skipped\n",
            "protection   pool web: 1 of 4 candidates healthy, threshold 50%: every candidate answered, healthy or not\n",
            "min-healthy  pool web: 0 usable, at least 2 needed: not met\n",
            "verdict      pool web: not eligible\n",
            "all failed   fail mode closed: no pool eligible and nothing to answer: NODATA\n",
            "somethingNew  {\"pool\":2,\"step\":\"somethingNew\"}\n",
            "answers      none\n",
        ] {
            assert!(text.contains(line), "{line:?} in:\n{text}");
        }
    }

    #[test]
    fn names_from_the_server_are_made_safe_for_a_terminal() {
        let mut r = response(
            &[json!({"step": "backup", "pool": 2, "usingBackups": true, "chosen": [3]})],
            json!({"kind": "failOpen", "pool": 2}),
            &[],
        );
        r.names.insert(3, "evil\u{1b}[2J\u{202e}".into());
        let text = render(&r);
        assert!(
            !text.contains('\u{1b}') && !text.contains('\u{202e}'),
            "{text:?}"
        );
        assert!(
            text.contains("backups answer: evil\\u{1b}[2J\\u{202e}"),
            "{text}"
        );
        assert!(
            text.contains("every candidate of pool web (fail open)"),
            "{text}"
        );
    }
}
