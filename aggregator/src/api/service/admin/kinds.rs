//! The object kinds the admin API creates, reads, updates and deletes, so
//! one generic path serves them all (`Admin::create::<Zone>` and so on).

use gslb_proto::pb;
use gslb_shared::validate::ValidationError;
use gslb_shared::*;

use crate::core::catalog::{Object, ObjectRef, Shown};

/// One kind of catalog object as the admin API carries it.
pub trait Kind: Sized + Shown + TryFrom<Self::Pb, Error = ValidationError> {
    /// Its protobuf message.
    type Pb: Send + 'static + for<'a> From<&'a Self>;
    /// Wrap it as a catalog object.
    fn object(self) -> Object;
    /// It, if `object` is of this kind.
    fn of(object: &Object) -> Option<&Self>;
    /// A reference to the object of this kind with `id`.
    fn reference(id: u64) -> ObjectRef;
    /// The object of this kind with `id` in `catalog`.
    fn find(catalog: &Catalog, id: u64) -> Option<&Self>;
}

macro_rules! kind {
    ($ty:ty, $pb:ty, $variant:ident, $id:ident, $map:ident) => {
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
        }
    };
}

kind!(Zone, pb::Zone, Zone, ZoneId, zones);
kind!(RecordSet, pb::RecordSet, Record, RecordSetId, records);
kind!(Pool, pb::Pool, Pool, PoolId, pools);
kind!(Member, pb::Member, Member, MemberId, members);
kind!(Check, pb::Check, Check, CheckId, checks);
kind!(TsigKey, pb::TsigKey, TsigKey, TsigKeyId, tsig_keys);
kind!(Notifier, pb::Notifier, Notifier, NotifierId, notifiers);
