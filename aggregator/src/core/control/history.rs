//! History from the audit log: what changed between two catalog versions,
//! and a rollback that plans the catalog back to an earlier version and
//! applies it as an ordinary write (its own audit record, its own
//! precondition).

use super::{Control, ControlError};
use crate::core::audit::{self, FieldChange, Touched};
use crate::core::catalog::{CatalogError, Object, ObjectRef, Op};
use crate::core::declarative::Plan;
use crate::core::store::Store;
use gslb_engine::Timestamp;
use gslb_shared::validate::ValidationError;

/// One object's net change between two versions, field by field.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectDiff {
    /// The object.
    pub object: ObjectRef,
    /// `created`, `updated` or `deleted`.
    pub action: &'static str,
    /// Its name (or apex, or record name and type), for people.
    pub name: String,
    /// The fields that differ.
    pub fields: Vec<FieldChange>,
}

fn refused(field: &str, rule: String) -> ControlError {
    CatalogError::Invalid(ValidationError::single(field, rule)).into()
}

/// A name for people: a zone's apex, a record's name and type, the rest's
/// name.
pub fn label(object: &Object) -> String {
    match object {
        Object::Zone(z) => z.apex.to_string(),
        Object::Record(r) => format!("{} {}", r.name, r.rtype),
        Object::Pool(p) => p.name.clone(),
        Object::Member(m) => m.name.clone(),
        Object::Check(c) => c.name.clone(),
        Object::TsigKey(k) => k.name.to_string(),
        Object::Notifier(n) => n.name.clone(),
    }
}

/// Each net change as a diff.
pub fn diffs(net: &[Touched]) -> Vec<ObjectDiff> {
    net.iter()
        .map(|t| ObjectDiff {
            object: t.object,
            action: match (&t.before, &t.after) {
                (None, _) => "created",
                (_, None) => "deleted",
                _ => "updated",
            },
            name: (t.after.as_ref().or(t.before.as_ref()))
                .map(label)
                .unwrap_or_default(),
            fields: audit::diff(t.before.as_ref(), t.after.as_ref()),
        })
        .collect()
}

/// One audit record as people read it: each object's change field by field.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RecordView {
    /// Its number in the log.
    pub seq: u64,
    /// When, ms since the Unix epoch.
    pub at_ms: u64,
    /// Who.
    pub who: String,
    /// From where.
    pub source: String,
    /// The operation.
    pub operation: String,
    /// The version it produced (none when refused).
    pub version: Option<u64>,
    /// Why it was refused.
    pub refused: Option<String>,
    /// What it did beyond objects.
    pub detail: String,
    /// The objects it touched.
    pub changes: Vec<ObjectDiff>,
    /// The objects a refused write named (`KIND/ID`).
    pub objects: Vec<String>,
}

impl From<&audit::AuditRecord> for RecordView {
    fn from(r: &audit::AuditRecord) -> Self {
        RecordView {
            seq: r.seq,
            at_ms: r.at_ms,
            who: r.by.who.clone(),
            source: r.by.source.clone(),
            operation: r.by.operation.clone(),
            version: r.version,
            refused: r.refused.clone(),
            detail: r.detail.clone(),
            changes: diffs(&r.changes),
            objects: r.objects.iter().map(|o| audit::object_path(*o)).collect(),
        }
    }
}

/// The net changes of the catalog after version `from` up to `to`
/// (inclusive; `current` when `None`), from the audit log in `store`.
/// Refused when the log no longer reaches back to `from`.
pub fn net_changes(
    store: &dyn Store,
    current: u64,
    from: u64,
    to: Option<u64>,
) -> Result<Vec<Touched>, ControlError> {
    let to = to.unwrap_or(current);
    if from > to {
        return Err(refused(
            "from",
            format!("must not be after to ({from} > {to})"),
        ));
    }
    let (records, complete) = store.audit_after(from)?;
    if !complete {
        return Err(refused(
            "from",
            format!(
                "the audit log no longer reaches back to version {from} (trimmed by --audit-keep or --audit-days)"
            ),
        ));
    }
    let upto: Vec<_> = records
        .into_iter()
        .filter(|r| r.version.is_some_and(|v| v <= to))
        .collect();
    Ok(audit::net(&upto))
}

impl Control {
    /// The net changes of the catalog after version `from` up to `to`
    /// (see [`net_changes`]).
    pub fn net_changes(&self, from: u64, to: Option<u64>) -> Result<Vec<Touched>, ControlError> {
        net_changes(self.store.as_ref(), self.state.catalog_version, from, to)
    }
}

impl Control {
    /// Plan the catalog back to version `to` and, unless `dry_run`, apply
    /// it as one write; with `expect`, only if the catalog is still at that
    /// version. The plan's lines and the version after it.
    pub fn rollback(
        &mut self,
        to: u64,
        dry_run: bool,
        expect: Option<u64>,
        now: Timestamp,
    ) -> Result<(Plan, u64), ControlError> {
        self.expect_catalog(expect)?;
        if to >= self.state.catalog_version {
            return Err(refused(
                "version",
                format!(
                    "the catalog is at version {}: roll back to an earlier one",
                    self.state.catalog_version
                ),
            ));
        }
        let net = self.net_changes(to, None)?;
        let ops = audit::rollback_ops(&self.state, &net).map_err(|e| refused("version", e))?;
        let lines = ops.iter().map(|op| self.line(op)).collect();
        let plan = Plan {
            ops,
            lines,
            notes: Vec::new(),
        };
        self.carry_out(plan, dry_run, now)
    }

    /// A plan line for a rollback's write.
    fn line(&self, op: &Op) -> String {
        let current = |r: ObjectRef| self.state.object(r);
        match op {
            Op::Restore(o) => format!("+ {} ({}) restored", o.reference(), label(o)),
            Op::Update(o) => {
                let fields: Vec<String> = audit::diff(current(o.reference()).as_ref(), Some(o))
                    .into_iter()
                    .map(|f| f.field)
                    .collect();
                format!("~ {} ({}): {}", o.reference(), label(o), fields.join(", "))
            }
            Op::Delete(r) => {
                let name = current(*r).map(|o| label(&o)).unwrap_or_default();
                format!("- {r} ({name})")
            }
            other => format!("{other:?}"),
        }
    }
}
