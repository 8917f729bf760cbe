//! The atomic batch write: proto ops to catalog ops and back.

use gslb_proto::pb;
use gslb_shared::validate::ValidationError;
use gslb_shared::*;
use tonic::Status;

use crate::api::service::status::invalid;
use crate::core::catalog::{Change, Object, ObjectRef, Op, Written};

fn at(index: usize, err: ValidationError) -> Status {
    invalid(ValidationError {
        errors: err
            .errors
            .into_iter()
            .map(|e| gslb_shared::validate::FieldError {
                field: format!("ops[{index}].{}", e.field),
                rule: e.rule,
            })
            .collect(),
    })
}

fn object(o: pb::Object) -> Result<Object, ValidationError> {
    use pb::object::Kind;
    let missing = || {
        ValidationError::single(
            "object",
            "must hold a zone, recordSet, pool, member, check, tsigKey or notifier",
        )
    };
    Ok(match o.kind.ok_or_else(missing)? {
        Kind::Zone(x) => Object::Zone(x.try_into()?),
        Kind::RecordSet(x) => Object::Record(x.try_into()?),
        Kind::Pool(x) => Object::Pool(x.try_into()?),
        Kind::Member(x) => Object::Member(x.try_into()?),
        Kind::Check(x) => Object::Check(x.try_into()?),
        Kind::TsigKey(x) => Object::TsigKey(x.try_into()?),
        Kind::Notifier(x) => Object::Notifier(x.try_into()?),
    })
}

fn reference(r: pb::ObjectRef) -> Result<ObjectRef, ValidationError> {
    use pb::object_ref::Kind;
    Ok(
        match r.kind.ok_or_else(|| {
            ValidationError::single(
                "delete",
                "must name a zone, recordSet, pool, member, check, tsigKey or notifier",
            )
        })? {
            Kind::Zone(id) => ObjectRef::Zone(ZoneId(id)),
            Kind::RecordSet(id) => ObjectRef::Record(RecordSetId(id)),
            Kind::Pool(id) => ObjectRef::Pool(PoolId(id)),
            Kind::Member(id) => ObjectRef::Member(MemberId(id)),
            Kind::Check(id) => ObjectRef::Check(CheckId(id)),
            Kind::TsigKey(id) => ObjectRef::TsigKey(TsigKeyId(id)),
            Kind::Notifier(id) => ObjectRef::Notifier(NotifierId(id)),
        },
    )
}

/// Proto ops to catalog ops, naming `ops[i].field` on a bad one.
pub fn ops_from_pb(ops: Vec<pb::WriteOp>) -> Result<Vec<Op>, Status> {
    use pb::write_op::Op as P;
    ops.into_iter()
        .enumerate()
        .map(|(i, op)| {
            let op = op
                .op
                .ok_or_else(|| ValidationError::single("op", "must be create, update or delete"))
                .map_err(|e| at(i, e))?;
            match op {
                P::Create(o) => object(o).map(Op::Create),
                P::Update(o) => object(o).map(Op::Update),
                P::Delete(r) => reference(r).map(Op::Delete),
            }
            .map_err(|e| at(i, e))
        })
        .collect()
}

fn object_to_pb(o: &Object) -> pb::Object {
    use pb::object::Kind;
    let kind = match o {
        Object::Zone(x) => Kind::Zone(x.into()),
        Object::Record(x) => Kind::RecordSet(x.into()),
        Object::Pool(x) => Kind::Pool(x.into()),
        Object::Member(x) => Kind::Member(x.into()),
        Object::Check(x) => Kind::Check(x.into()),
        Object::TsigKey(x) => Kind::TsigKey(x.into()),
        Object::Notifier(x) => Kind::Notifier(x.into()),
    };
    pb::Object { kind: Some(kind) }
}

fn reference_to_pb(r: &ObjectRef) -> pb::ObjectRef {
    use pb::object_ref::Kind;
    let kind = match *r {
        ObjectRef::Zone(id) => Kind::Zone(id.0),
        ObjectRef::Record(id) => Kind::RecordSet(id.0),
        ObjectRef::Pool(id) => Kind::Pool(id.0),
        ObjectRef::Member(id) => Kind::Member(id.0),
        ObjectRef::Check(id) => Kind::Check(id.0),
        ObjectRef::TsigKey(id) => Kind::TsigKey(id.0),
        ObjectRef::Notifier(id) => Kind::Notifier(id.0),
    };
    pb::ObjectRef { kind: Some(kind) }
}

/// Applied changes as proto ops.
pub fn changes_to_pb(changes: &[Change]) -> Vec<pb::WriteOp> {
    use pb::write_op::Op as P;
    changes
        .iter()
        .map(|c| pb::WriteOp {
            op: Some(match &c.what {
                Written::Upserted(o) => P::Update(object_to_pb(o)),
                Written::Deleted(r) => P::Delete(reference_to_pb(r)),
            }),
        })
        .collect()
}
