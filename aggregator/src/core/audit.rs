//! The audit log: one record per write an operator (or the aggregator
//! itself) made or tried — who, from where, what, the objects touched with
//! their images before and after (secrets redacted), and the version it
//! produced or why it was refused. Records travel in the same commit as
//! the write they describe (one fsync, or one Raft entry), so a write that
//! was acknowledged always has its record. Pure: building records, the
//! field-level difference of two images, filtering, the history of
//! versions. The store numbers, keeps and trims them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::core::catalog::{CatalogState, Change, Object, ObjectRef, Op, Written};

/// Who is writing, for the records of the writes they make.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Attribution {
    /// The identity: `token:NAME (ID)`, `cert:NAME`, `ui:NAME`, or
    /// `aggregator` for the server's own writes (rollovers, expiries).
    pub who: String,
    /// The caller's address, when known.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub source: String,
    /// The operation: `PUT /api/v1/members/3`, `AdminService/UpdateMember`.
    pub operation: String,
    /// The zones and pools the caller's token is limited to (none: not
    /// limited). Checked by the core on every write; never stored.
    #[serde(skip)]
    pub scope: Option<std::sync::Arc<crate::core::scope::Scope>>,
}

impl Attribution {
    /// The server's own writes.
    pub fn internal(operation: &str) -> Self {
        Attribution {
            who: "aggregator".into(),
            source: String::new(),
            operation: operation.into(),
            scope: None,
        }
    }
}

/// One object a write touched: its image before and after (redacted;
/// `None` where it did not exist).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Touched {
    /// The object.
    pub object: ObjectRef,
    /// It before the write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub before: Option<Object>,
    /// It after the write.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<Object>,
}

/// One audit record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditRecord {
    /// Its number in the log (given by the store; 0 until stored).
    #[serde(default)]
    pub seq: u64,
    /// When, ms since the Unix epoch.
    pub at_ms: u64,
    /// Who, from where, and the operation.
    #[serde(flatten)]
    pub by: Attribution,
    /// The version the write produced; `None` when it was refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    /// Why it was refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refused: Option<String>,
    /// What it did beyond objects (a manual health, a pause), in words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub detail: String,
    /// The objects it touched.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changes: Vec<Touched>,
    /// The objects a refused write named.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub objects: Vec<ObjectRef>,
}

/// Most records the log keeps unless configured (`--audit-keep`).
pub const DEFAULT_KEEP: u64 = 50_000;
/// Longest the log keeps a record unless configured (`--audit-days`): 90 days.
pub const DEFAULT_MAX_AGE_MS: u64 = 90 * 24 * 3600 * 1000;
/// Most records one read returns.
pub const MAX_PAGE: usize = 1_000;

impl AuditRecord {
    /// The record of an accepted write: `changes` made against `before`
    /// (the state the write was validated on), at `version`.
    pub fn accepted(
        by: Attribution,
        at_ms: u64,
        before: &CatalogState,
        changes: &[Change],
        version: u64,
    ) -> Self {
        AuditRecord {
            seq: 0,
            at_ms,
            by,
            version: Some(version),
            refused: None,
            detail: String::new(),
            changes: touched(before, changes),
            objects: Vec::new(),
        }
    }

    /// The record of a refused write that named `objects`.
    pub fn refused(by: Attribution, at_ms: u64, why: String, objects: Vec<ObjectRef>) -> Self {
        AuditRecord {
            seq: 0,
            at_ms,
            by,
            version: None,
            refused: Some(why),
            detail: String::new(),
            changes: Vec::new(),
            objects,
        }
    }

    /// The record of an operator action that is not a catalog change.
    pub fn action(by: Attribution, at_ms: u64, detail: String, version: Option<u64>) -> Self {
        AuditRecord {
            seq: 0,
            at_ms,
            by,
            version,
            refused: None,
            detail,
            changes: Vec::new(),
            objects: Vec::new(),
        }
    }
}

/// The existing object a write names (none for a create).
pub fn named(op: &Op) -> Option<ObjectRef> {
    match op.inner() {
        Op::Update(o) | Op::Restore(o) => Some(o.reference()),
        Op::Delete(r) | Op::Patch { target: r, .. } => Some(*r),
        Op::Rekey { zone, .. } => Some(ObjectRef::Zone(*zone)),
        Op::Create(_) | Op::IfRevision { .. } => None,
    }
}

/// Each change's object before and after, in order; a batch that touches
/// one object twice shows each step.
pub fn touched(before: &CatalogState, changes: &[Change]) -> Vec<Touched> {
    let mut latest: BTreeMap<ObjectRef, Option<Object>> = BTreeMap::new();
    changes
        .iter()
        .map(|change| {
            let (object, after) = match &change.what {
                Written::Upserted(o) => (o.reference(), Some(o.redacted())),
                Written::Deleted(r) => (*r, None),
            };
            let was = latest
                .get(&object)
                .cloned()
                .unwrap_or_else(|| before.object(object).map(|o| o.redacted()));
            latest.insert(object, after.clone());
            Touched {
                object,
                before: was,
                after,
            }
        })
        .collect()
}

/// One field that differs between two images: its path (`weight`,
/// `soa.refresh`), and its value before and after (absent: `None`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FieldChange {
    /// Where in the object.
    pub field: String,
    /// The value before.
    pub before: Option<Value>,
    /// The value after.
    pub after: Option<Value>,
}

/// The fields that differ between `before` and `after`, by path, nested
/// objects walked (lists compared whole).
pub fn diff(before: Option<&Object>, after: Option<&Object>) -> Vec<FieldChange> {
    // An object that does not exist is an empty one: a create lists
    // every field it set, a delete every field it had.
    let image = |o: Option<&Object>| {
        o.and_then(|o| serde_json::to_value(o).ok())
            .and_then(|mut v| v.get_mut("object").map(Value::take))
            .unwrap_or_else(|| Value::Object(serde_json::Map::new()))
    };
    let mut out = Vec::new();
    walk("", &image(before), &image(after), &mut out);
    out
}

fn walk(at: &str, before: &Value, after: &Value, out: &mut Vec<FieldChange>) {
    if before == after {
        return;
    }
    if let (Value::Object(b), Value::Object(a)) = (before, after) {
        let keys: std::collections::BTreeSet<&String> = b.keys().chain(a.keys()).collect();
        for key in keys {
            let path = if at.is_empty() {
                key.clone()
            } else {
                format!("{at}.{key}")
            };
            let null = Value::Null;
            walk(
                &path,
                b.get(key).unwrap_or(&null),
                a.get(key).unwrap_or(&null),
                out,
            );
        }
        return;
    }
    let some = |v: &Value| (!v.is_null()).then(|| v.clone());
    out.push(FieldChange {
        field: at.to_owned(),
        before: some(before),
        after: some(after),
    });
}

/// What a read of the log asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuditQuery {
    /// Records at or after this time (ms since the Unix epoch).
    #[serde(default)]
    pub since_ms: Option<u64>,
    /// Only records touching this object.
    #[serde(default)]
    pub object: Option<ObjectRef>,
    /// Only records whose identity contains this text.
    #[serde(default)]
    pub who: Option<String>,
    /// Only records numbered below this (the next page of a newest-first read).
    #[serde(default)]
    pub before_seq: Option<u64>,
    /// Only accepted writes (history).
    #[serde(default)]
    pub accepted_only: bool,
    /// At most this many (capped at [`MAX_PAGE`]).
    #[serde(default)]
    pub limit: usize,
    /// Only records of objects in a scoped caller's scope.
    #[serde(skip)]
    pub scope: Option<Judged>,
}

impl AuditQuery {
    /// True when `record` is one the query asks for.
    pub fn matches(&self, record: &AuditRecord) -> bool {
        self.since_ms.is_none_or(|t| record.at_ms >= t)
            && self.before_seq.is_none_or(|s| record.seq < s)
            && (!self.accepted_only || record.version.is_some())
            && self
                .who
                .as_ref()
                .is_none_or(|w| record.by.who.contains(w.as_str()))
            && self.object.is_none_or(|o| {
                record.changes.iter().any(|c| c.object == o) || record.objects.contains(&o)
            })
            && self.scope.as_ref().is_none_or(|j| j.shows(record))
    }

    /// The number of records to return.
    pub fn page(&self) -> usize {
        match self.limit {
            0 => 100,
            n => n.min(MAX_PAGE),
        }
    }
}

/// A time as queries give it: RFC 3339 (`2026-12-06T20:00:00Z`), or ms
/// since the Unix epoch.
pub fn parse_time(text: &str) -> Option<u64> {
    if let Ok(ms) = text.parse::<u64>() {
        return Some(ms);
    }
    humantime::parse_rfc3339_weak(text)
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_millis() as u64)
}

/// Parse `KIND/ID` (`member/3`, `pool/2`, `record/7`, `zone/1`, `check/4`,
/// `tsigKey/5`, `notifier/6`).
pub fn parse_object(text: &str) -> Result<ObjectRef, String> {
    use gslb_shared::*;
    let (kind, id) = text
        .split_once('/')
        .ok_or_else(|| format!("{text:?}: must be KIND/ID, e.g. member/3"))?;
    let id: u64 = id
        .parse()
        .map_err(|_| format!("{text:?}: the id must be a whole number"))?;
    Ok(match kind {
        "zone" => ObjectRef::Zone(ZoneId(id)),
        "record" => ObjectRef::Record(RecordSetId(id)),
        "pool" => ObjectRef::Pool(PoolId(id)),
        "member" => ObjectRef::Member(MemberId(id)),
        "check" => ObjectRef::Check(CheckId(id)),
        "tsigKey" | "tsig-key" => ObjectRef::TsigKey(TsigKeyId(id)),
        "notifier" => ObjectRef::Notifier(NotifierId(id)),
        other => {
            return Err(format!(
                "{other:?}: the kind must be zone, record, pool, member, check, tsigKey or notifier"
            ));
        }
    })
}

/// Each object's net change over `records` (accepted writes, oldest
/// first): its image before the first of them and after the last; objects
/// that ended as they began are left out.
pub fn net(records: &[AuditRecord]) -> Vec<Touched> {
    let mut by_object: BTreeMap<ObjectRef, Touched> = BTreeMap::new();
    for touched in records.iter().flat_map(|r| &r.changes) {
        by_object
            .entry(touched.object)
            .and_modify(|t| t.after = touched.after.clone())
            .or_insert_with(|| touched.clone());
    }
    by_object
        .into_values()
        .filter(|t| t.before != t.after)
        .collect()
}

/// Where an object kind comes in a rollback: what others refer to first.
fn rank(r: ObjectRef) -> u8 {
    match r {
        ObjectRef::Zone(_) => 0,
        ObjectRef::TsigKey(_) => 1,
        ObjectRef::Check(_) => 2,
        ObjectRef::Pool(_) => 3,
        ObjectRef::Member(_) => 4,
        ObjectRef::Record(_) => 5,
        ObjectRef::Notifier(_) => 6,
    }
}

/// The writes that take `state` back over the net changes `net` (each
/// object to its image before them), in an order the catalog's rules
/// accept one by one: restores and updates referred-to kinds first,
/// deletes last and in reverse; what an order still refuses (a name freed
/// only by a later delete) is retried until nothing moves. Refused with
/// the reason when an object cannot be put back.
pub fn rollback_ops(state: &CatalogState, net: &[Touched]) -> Result<Vec<Op>, String> {
    let mut restores = Vec::new();
    let mut updates = Vec::new();
    let mut deletes = Vec::new();
    for t in net {
        match (&t.before, state.exists(t.object)) {
            (None, true) => deletes.push(Op::Delete(t.object)),
            (None, false) => {}
            (Some(image), exists) => {
                if !exists {
                    restorable(image)?;
                }
                if let (Object::Notifier(then), Some(Object::Notifier(now))) =
                    (image, state.object(t.object))
                    && then.url != now.redacted().url
                {
                    return Err(format!(
                        "notification target {} ({}) has another URL since; history keeps URLs without their path: set it again",
                        then.id, then.name
                    ));
                }
                let image = image.clone();
                if exists {
                    updates.push((rank(t.object), Op::Update(image)));
                } else {
                    restores.push((rank(t.object), Op::Restore(image)));
                }
            }
        }
    }
    restores.sort_by_key(|(rank, _)| *rank);
    updates.sort_by_key(|(rank, _)| *rank);
    deletes.sort_by_key(|op| match op {
        Op::Delete(r) => std::cmp::Reverse(rank(*r)),
        _ => std::cmp::Reverse(0),
    });
    let mut pending: Vec<Op> = (restores.into_iter().map(|(_, op)| op))
        .chain(updates.into_iter().map(|(_, op)| op))
        .chain(deletes)
        .collect();
    let mut trial = state.clone();
    let mut ordered = Vec::with_capacity(pending.len());
    while !pending.is_empty() {
        let waiting = pending.len();
        let mut refused = Vec::new();
        let mut last_error = String::new();
        for op in pending {
            match trial.prepare(op.clone()) {
                Ok(prepared) => {
                    trial.commit(prepared);
                    ordered.push(op);
                }
                Err(e) => {
                    last_error = e.to_string();
                    refused.push(op);
                }
            }
        }
        if refused.len() == waiting {
            // Nothing moved this pass: no order puts these back.
            return Err(last_error);
        }
        pending = refused;
    }
    Ok(ordered)
}

/// Whether a deleted object can be put back from its image (secrets are
/// not kept in history).
fn restorable(image: &Object) -> Result<(), String> {
    match image {
        Object::TsigKey(k) => Err(format!(
            "TSIG key {} ({}) was deleted and its secret is not kept in history: create it again (gslbctl tsig create)",
            k.id, k.name
        )),
        Object::Notifier(n) => Err(format!(
            "notification target {} ({}) was deleted and its secret and URL are not kept in history: create it again",
            n.id, n.name
        )),
        Object::Zone(z) if z.dnssec.is_some() => Err(format!(
            "zone {} ({}) was signed when deleted and its private keys are not kept in history: create it again",
            z.id, z.apex
        )),
        _ => Ok(()),
    }
}

/// `KIND/ID` of an object, as [`parse_object`] reads it.
pub fn object_path(r: ObjectRef) -> String {
    match r {
        ObjectRef::Zone(id) => format!("zone/{id}"),
        ObjectRef::Record(id) => format!("record/{id}"),
        ObjectRef::Pool(id) => format!("pool/{id}"),
        ObjectRef::Member(id) => format!("member/{id}"),
        ObjectRef::Check(id) => format!("check/{id}"),
        ObjectRef::TsigKey(id) => format!("tsigKey/{id}"),
        ObjectRef::Notifier(id) => format!("notifier/{id}"),
    }
}

/// A scope and the catalog it is judged against, for reading the audit
/// log: a record is shown when an object it touched (before or after) or
/// named is in scope in that catalog, with only those objects' changes.
#[derive(Debug, Clone)]
pub struct Judged {
    /// The scope.
    pub scope: std::sync::Arc<crate::core::scope::Scope>,
    /// The catalog (a persistent map: a cheap copy of the current one).
    pub catalog: gslb_shared::model::Catalog,
}

impl PartialEq for Judged {
    fn eq(&self, other: &Self) -> bool {
        self.scope == other.scope
    }
}

impl Eq for Judged {}

impl Judged {
    /// Whether a change of the record is in scope.
    pub fn touched(&self, t: &Touched) -> bool {
        [&t.before, &t.after]
            .into_iter()
            .flatten()
            .any(|o| self.scope.writes(&self.catalog, o))
    }

    /// Whether the record is shown.
    pub fn shows(&self, record: &AuditRecord) -> bool {
        record.changes.iter().any(|t| self.touched(t))
            || record
                .objects
                .iter()
                .any(|o| self.scope.sees(&self.catalog, o))
    }

    /// The record with only the changes in scope.
    pub fn trimmed(&self, mut record: AuditRecord) -> AuditRecord {
        record.changes.retain(|t| self.touched(t));
        record
    }
}
