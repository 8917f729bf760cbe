//! The audit log, diffs and rollback over gRPC: the views of
//! `core::control::history` as messages.

use gslb_proto::pb;
use tonic::Status;

use crate::core::audit::{AuditQuery, object_path, parse_object};
use crate::core::control::history::{ObjectDiff, RecordView};

/// The request as the store's query.
pub fn query(r: pb::AuditRequest) -> Result<AuditQuery, Status> {
    let object = (!r.object.is_empty())
        .then(|| parse_object(&r.object))
        .transpose()
        .map_err(|e| Status::invalid_argument(format!("object: {e}")))?;
    Ok(AuditQuery {
        since_ms: (r.since_ms > 0).then_some(r.since_ms),
        object,
        who: (!r.who.is_empty()).then_some(r.who),
        before_seq: (r.before_seq > 0).then_some(r.before_seq),
        accepted_only: r.accepted_only,
        limit: r.limit as usize,
        scope: None,
    })
}

fn json(value: &Option<serde_json::Value>) -> String {
    value.as_ref().map(ToString::to_string).unwrap_or_default()
}

/// One object's change as a message.
pub fn change(d: &ObjectDiff) -> pb::ObjectChange {
    pb::ObjectChange {
        object: object_path(d.object),
        action: d.action.to_owned(),
        name: d.name.clone(),
        fields: (d.fields.iter())
            .map(|f| pb::FieldChange {
                field: f.field.clone(),
                before: json(&f.before),
                after: json(&f.after),
            })
            .collect(),
    }
}

/// One record as a message.
pub fn entry(r: &RecordView) -> pb::AuditEntry {
    pb::AuditEntry {
        seq: r.seq,
        at_ms: r.at_ms,
        who: r.who.clone(),
        source: r.source.clone(),
        operation: r.operation.clone(),
        version: r.version,
        refused: r.refused.clone().unwrap_or_default(),
        detail: r.detail.clone(),
        changes: r.changes.iter().map(change).collect(),
        objects: r.objects.clone(),
    }
}
