//! The object kinds the admin API creates, reads, updates and deletes, so
//! one generic path serves them all (`Admin::create::<Zone>` and so on).

use gslb_proto::pb;
use gslb_shared::validate::ValidationError;
use gslb_shared::*;

use crate::core::catalog::{Object, ObjectRef, Shown};
use gslb_proto::revised::Revised;

/// One kind of catalog object as the admin API carries it.
pub trait Kind: Sized + Shown + TryFrom<Self::Pb, Error = ValidationError> {
    /// Its protobuf message.
    type Pb: Send + 'static + for<'a> From<&'a Self> + gslb_proto::revised::Revised;
    /// Wrap it as a catalog object.
    fn object(self) -> Object;
    /// It, if `object` is of this kind.
    fn of(object: &Object) -> Option<&Self>;
    /// A reference to the object of this kind with `id`.
    fn reference(id: u64) -> ObjectRef;
    /// The object of this kind with `id` in `catalog`.
    fn find(catalog: &Catalog, id: u64) -> Option<&Self>;
    /// The model field a field of its message sets (its name in an
    /// `update_mask`), if the message has such a field.
    fn model_field(proto: &str) -> Option<&'static str>;
    /// Its reference.
    fn reference_of(&self) -> ObjectRef;
}

/// `x` as a view shows it (secrets left out), with its revision.
pub fn shown_pb<K: Kind>(state: &crate::core::catalog::CatalogState, x: &K) -> K::Pb {
    let mut pb: K::Pb = (&*x.shown()).into();
    pb.set_revision(state.revision(x.reference_of()).unwrap_or(0));
    pb
}

/// The model field each field of a message sets, where the names differ
/// from the message's in more than case.
fn renamed(proto: &str) -> Option<&'static str> {
    Some(match proto {
        "pool_id" => "pool",
        "zone_id" => "zone",
        "check_id" => "check",
        "ephemeral" => "kind",
        "transfer_allow" | "transfer_notify" => "transfer",
        "type" | "type_code" => "type",
        "static_data" | "dynamic" => "data",
        "slow_start_ms" => "slowStart",
        "interval_ms" => "interval",
        "timeout_ms" => "timeout",
        "latency_threshold_ms" => "latencyThreshold",
        "none" | "icmp" | "tcp" | "udp" | "http" | "https" | "mysql" | "dns" | "grpc" => "probe",
        _ => return None,
    })
}

/// The model's (camelCase) name of a message field.
fn camel(proto: &'static str) -> &'static str {
    match proto {
        "default_ttl" => "defaultTtl",
        "ns_ttl" => "nsTtl",
        "min_healthy" => "minHealthy",
        "protect_threshold" => "protectThreshold",
        "fail_mode" => "failMode",
        "warmup_threshold" => "warmupThreshold",
        "rewarm_after_down" => "rewarmAfterDown",
        "probe_address" => "probeAddress",
        other => other,
    }
}

macro_rules! model_fields {
    ($proto:expr, [$($field:literal),* $(,)?]) => {{
        let name: &str = $proto;
        let model = |f: &'static str| renamed(f).unwrap_or_else(|| camel(f));
        // A message field's name, or the model's (camelCase, as the
        // FieldMask's JSON form and gslbctl's files spell it).
        [$($field),*]
            .into_iter()
            .find(|f| *f == name)
            .or_else(|| [$($field),*].into_iter().find(|f| model(f) == name))
            .map(model)
    }};
}

macro_rules! kind {
    ($ty:ty, $pb:ty, $variant:ident, $id:ident, $map:ident, [$($field:literal),* $(,)?]) => {
        impl Kind for $ty {
            type Pb = $pb;
            fn object(self) -> Object {
                Object::$variant(self)
            }
            fn of(object: &Object) -> Option<&Self> {
                match object {
                    Object::$variant(x) => Some(x),
                    _ => None,
                }
            }
            fn reference(id: u64) -> ObjectRef {
                ObjectRef::$variant($id(id))
            }
            fn find(catalog: &Catalog, id: u64) -> Option<&Self> {
                catalog.$map.get(&$id(id))
            }
            fn model_field(proto: &str) -> Option<&'static str> {
                model_fields!(proto, [$($field),*])
            }
            fn reference_of(&self) -> ObjectRef {
                ObjectRef::$variant(self.id)
            }
        }
    };
}

kind!(
    Zone,
    pb::Zone,
    Zone,
    ZoneId,
    zones,
    [
        "apex",
        "soa",
        "ns",
        "default_ttl",
        "ns_ttl",
        "transfer_allow",
        "transfer_notify",
        "dnssec"
    ]
);
kind!(
    RecordSet,
    pb::RecordSet,
    Record,
    RecordSetId,
    records,
    [
        "zone_id",
        "name",
        "type",
        "ttl",
        "static_data",
        "dynamic",
        "type_code"
    ]
);
kind!(
    Pool,
    pb::Pool,
    Pool,
    PoolId,
    pools,
    [
        "name",
        "check_id",
        "min_healthy",
        "protect_threshold",
        "fail_mode",
        "fallback",
        "slow_start_ms"
    ]
);
kind!(
    Member,
    pb::Member,
    Member,
    MemberId,
    members,
    [
        "pool_id",
        "name",
        "address",
        "port",
        "weight",
        "priority",
        "region",
        "enabled",
        "backup",
        "warmup_threshold",
        "rewarm_after_down",
        "ephemeral"
    ]
);
kind!(
    Check,
    pb::Check,
    Check,
    CheckId,
    checks,
    [
        "name",
        "none",
        "icmp",
        "tcp",
        "udp",
        "http",
        "https",
        "mysql",
        "dns",
        "grpc",
        "port",
        "interval_ms",
        "timeout_ms",
        "rise",
        "fall",
        "window",
        "locations",
        "probe_address",
        "control",
        "damping",
        "retries",
        "latency_threshold_ms",
        "inverted"
    ]
);
kind!(
    TsigKey,
    pb::TsigKey,
    TsigKey,
    TsigKeyId,
    tsig_keys,
    ["name", "algorithm", "secret"]
);
kind!(
    Notifier,
    pb::Notifier,
    Notifier,
    NotifierId,
    notifiers,
    ["name", "kind", "url", "filter", "secret"]
);
