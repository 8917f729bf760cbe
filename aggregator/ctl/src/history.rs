//! `gslbctl audit`, `history`, `diff` and `rollback`: who changed what and
//! when, what changed between two catalog versions, and going back to an
//! earlier one (the plan first; applied as an ordinary write).

use gslb_proto::pb;
use serde_json::{Value, json};

use crate::{Client, CtlError, Output, render, table, time};

/// `gslbctl audit`'s filters.
#[derive(Debug, Clone, clap::Args)]
pub struct AuditArgs {
    /// Records at or after this time: RFC 3339 (2026-12-06T20:00:00Z), or an
    /// age (30m, 2h, 7d).
    #[arg(long)]
    since: Option<String>,
    /// Only records touching this object: KIND/ID (member/3, pool/2).
    #[arg(long)]
    object: Option<String>,
    /// Only records whose identity contains this text (a token's name).
    #[arg(long)]
    who: Option<String>,
    /// Most records.
    #[arg(long, default_value_t = 50)]
    limit: u32,
    /// The next page: records numbered below this (printed after a full page).
    #[arg(long)]
    before: Option<u64>,
}

/// `--since` as ms since the Unix epoch.
fn since_ms(text: &str) -> Result<u64, CtlError> {
    let now = std::time::SystemTime::now();
    let at = match humantime::parse_duration(text) {
        Ok(age) => now.checked_sub(age),
        Err(_) => humantime::parse_rfc3339_weak(text).ok(),
    };
    at.and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as u64)
        .ok_or_else(|| {
            CtlError::Input(format!(
                "--since {text:?}: must be an RFC 3339 time (2026-12-06T20:00:00Z) or an age (30m, 2h, 7d)"
            ))
        })
}

/// The audit log (or, with `accepted_only`, the history of versions).
pub async fn audit(
    c: &mut Client,
    args: AuditArgs,
    accepted_only: bool,
    out: Output,
) -> Result<String, CtlError> {
    let request = pb::AuditRequest {
        since_ms: args
            .since
            .as_deref()
            .map(since_ms)
            .transpose()?
            .unwrap_or(0),
        object: args.object.unwrap_or_default(),
        who: args.who.unwrap_or_default(),
        before_seq: args.before.unwrap_or(0),
        limit: args.limit,
        accepted_only,
    };
    let list = c.list_audit(request).await?.into_inner();
    if out == Output::Json {
        let records: Vec<Value> = list.records.iter().map(record_json).collect();
        return Ok(format!(
            "{:#}\n",
            json!({"records": records, "next": (list.next_before_seq > 0).then_some(list.next_before_seq)})
        ));
    }
    let mut text = String::new();
    if accepted_only {
        let rows: Vec<Vec<String>> = (list.records.iter())
            .map(|r| {
                vec![
                    r.version.map(|v| v.to_string()).unwrap_or_default(),
                    time::at_ms(r.at_ms),
                    r.who.clone(),
                    r.operation.clone(),
                    summary(r),
                ]
            })
            .collect();
        text.push_str(&table::render(
            &["VERSION", "TIME", "WHO", "OPERATION", "CHANGES"],
            &rows,
        ));
    } else {
        for r in &list.records {
            text.push_str(&entry_text(r));
        }
        if list.records.is_empty() {
            text.push_str("no records\n");
        }
    }
    if list.next_before_seq > 0 {
        text.push_str(&format!("more: --before {}\n", list.next_before_seq));
    }
    Ok(text)
}

/// What a record changed, in a few words.
fn summary(r: &pb::AuditEntry) -> String {
    let objects: Vec<String> = (r.changes.iter().take(3))
        .map(|c| format!("{} {} {}", c.action, c.object, c.name))
        .collect();
    let mut text = objects.join("; ");
    if r.changes.len() > 3 {
        text.push_str(&format!("; and {} more", r.changes.len() - 3));
    }
    if text.is_empty() {
        text = r.detail.clone();
    }
    text
}

/// One record: a line saying who did what when and how it ended, then each
/// object's fields, `before → after`.
fn entry_text(r: &pb::AuditEntry) -> String {
    let outcome = match (&r.version, r.refused.is_empty()) {
        (Some(v), _) => format!("version {v}"),
        (None, false) if r.objects.is_empty() => format!("REFUSED: {}", r.refused),
        (None, false) => format!("REFUSED ({}): {}", r.objects.join(", "), r.refused),
        (None, true) => String::new(),
    };
    let from = if r.source.is_empty() {
        String::new()
    } else {
        format!(" from {}", r.source)
    };
    let mut text = table::clean_line(&format!(
        "#{} {} {}{} {} {}",
        r.seq,
        time::at_ms(r.at_ms),
        r.who,
        from,
        r.operation,
        outcome
    ));
    text.push('\n');
    if !r.detail.is_empty() {
        text.push_str(&format!("  {}\n", table::clean_line(&r.detail)));
    }
    text.push_str(&changes_text(&r.changes));
    text
}

fn changes_text(changes: &[pb::ObjectChange]) -> String {
    let mut text = String::new();
    for c in changes {
        text.push_str(&table::clean_line(&format!(
            "  {} {} ({})",
            c.action, c.object, c.name
        )));
        text.push('\n');
        for f in &c.fields {
            let shown = |v: &str| {
                if v.is_empty() {
                    "-".to_owned()
                } else {
                    v.to_owned()
                }
            };
            text.push_str(&table::clean_line(&format!(
                "    {}: {} → {}",
                f.field,
                shown(&f.before),
                shown(&f.after)
            )));
            text.push('\n');
        }
    }
    text
}

fn change_json(c: &pb::ObjectChange) -> Value {
    let parse = |v: &str| serde_json::from_str::<Value>(v).unwrap_or(Value::Null);
    json!({
        "object": c.object, "action": c.action, "name": c.name,
        "fields": c.fields.iter().map(|f| json!({"field": f.field, "before": parse(&f.before), "after": parse(&f.after)})).collect::<Vec<_>>(),
    })
}

fn record_json(r: &pb::AuditEntry) -> Value {
    json!({
        "seq": r.seq, "at": time::at_ms(r.at_ms), "atMs": r.at_ms, "who": r.who, "source": r.source,
        "operation": r.operation, "version": r.version,
        "refused": (!r.refused.is_empty()).then_some(&r.refused),
        "detail": r.detail, "changes": r.changes.iter().map(change_json).collect::<Vec<_>>(),
        "objects": r.objects,
    })
}

/// What changed between two catalog versions.
pub async fn diff(
    c: &mut Client,
    from: u64,
    to: Option<u64>,
    out: Output,
) -> Result<String, CtlError> {
    let d = (c.get_catalog_diff(pb::DiffRequest {
        from,
        to: to.unwrap_or(0),
    }))
    .await?
    .into_inner();
    if out == Output::Json {
        let changes: Vec<Value> = d.changes.iter().map(change_json).collect();
        return Ok(format!(
            "{:#}\n",
            json!({"from": d.from, "to": d.to, "changes": changes})
        ));
    }
    let mut text = format!("from version {} to {}\n", d.from, d.to);
    if d.changes.is_empty() {
        text.push_str("no changes\n");
    }
    text.push_str(&changes_text(&d.changes));
    Ok(text)
}

/// Plan the catalog back to `version`; apply it unless `dry_run`.
pub async fn rollback(
    c: &mut Client,
    version: u64,
    dry_run: bool,
    expect_version: Option<u64>,
    out: Output,
) -> Result<String, CtlError> {
    let r = (c.rollback(pb::RollbackRequest {
        version,
        dry_run,
        expect_version,
    }))
    .await?
    .into_inner();
    Ok(render::plan(&r, out))
}
