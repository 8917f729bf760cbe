//! One list/get/create/update/delete path for the object kinds gslbctl
//! edits whole (zones, record sets, pools, checks): a kind names its calls
//! and its table, and the steps are written once. Members have their own
//! path (their pool, and a status column in every table).

use gslb_proto::pb;
use gslb_shared::validate::ValidationError;
use gslb_shared::{Check, Pool, RecordSet, Zone};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::{
    Action, Client, CtlError, Output, converted, deleted, no_status, object, read_object, render,
    view_of,
};
use gslb_shared::defaults::{Kind, base, to_json};

/// What one call returns.
type Call<T> = Result<T, tonic::Status>;

/// An object kind as gslbctl reads and writes it.
pub(super) trait Crud:
    Sized + Serialize + DeserializeOwned + TryFrom<Self::Wire, Error = ValidationError>
{
    /// Its protobuf message.
    type Wire: Clone + for<'a> From<&'a Self>;
    /// Its defaults, which a create starts from.
    const KIND: Kind;
    /// Its name in "deleted …" lines.
    const NAME: &'static str;
    /// Its name in "… have no status".
    const PLURAL: &'static str;

    /// All of them (record sets: of `zone`, when given).
    async fn list(c: &mut Client, zone: Option<u64>) -> Call<Vec<Self::Wire>>;
    /// One.
    async fn get(c: &mut Client, id: u64) -> Call<Self::Wire>;
    /// Create one; the server's copy.
    async fn create(c: &mut Client, wire: Self::Wire) -> Call<Self::Wire>;
    /// Replace one; the server's copy.
    async fn update(c: &mut Client, wire: Self::Wire) -> Call<Self::Wire>;
    /// Delete one.
    async fn delete(c: &mut Client, id: u64) -> Call<pb::DeleteResponse>;
    /// Its table (or JSON).
    fn table(items: &[Self], out: Output) -> String;
    /// Its status, for kinds that have one.
    async fn status(_c: &mut Client, _id: u64, _out: Output) -> Result<String, CtlError> {
        Err(no_status(Self::PLURAL))
    }
}

/// Run `action` on kind `T`; the text to print.
pub(super) async fn run<T: Crud>(
    c: &mut Client,
    action: Action,
    out: Output,
) -> Result<String, CtlError> {
    let show = |wire: T::Wire| -> Result<String, CtlError> {
        Ok(T::table(&converted::<_, T>(&[wire])?, out))
    };
    match action {
        Action::List { zone, .. } => {
            Ok(T::table(&converted::<_, T>(&T::list(c, zone).await?)?, out))
        }
        Action::Get { id } => show(T::get(c, id).await?),
        Action::Create { file, .. } => {
            let new: T = object(base(T::KIND), read_object(&file)?, 0)?;
            show(T::create(c, T::Wire::from(&new)).await?)
        }
        Action::Update { id, file } => {
            let current: T = converted(&[T::get(c, id).await?])?.remove(0);
            let changed: T = object(to_json(&current), read_object(&file)?, id)?;
            show(T::update(c, T::Wire::from(&changed)).await?)
        }
        Action::Delete { id } => Ok(deleted(T::NAME, T::delete(c, id).await?)),
        Action::Status { id } => T::status(c, id, out).await,
    }
}

fn by_id(id: u64) -> pb::IdRequest {
    pb::IdRequest { id }
}

impl Crud for Zone {
    type Wire = pb::Zone;
    const KIND: Kind = Kind::Zone;
    const NAME: &'static str = "zone";
    const PLURAL: &'static str = "zones";

    async fn list(c: &mut Client, _zone: Option<u64>) -> Call<Vec<pb::Zone>> {
        Ok(c.list_zones(pb::ListRequest::default())
            .await?
            .into_inner()
            .zones)
    }
    async fn get(c: &mut Client, id: u64) -> Call<pb::Zone> {
        Ok(c.get_zone(by_id(id)).await?.into_inner())
    }
    async fn create(c: &mut Client, wire: pb::Zone) -> Call<pb::Zone> {
        Ok(c.create_zone(wire).await?.into_inner())
    }
    async fn update(c: &mut Client, wire: pb::Zone) -> Call<pb::Zone> {
        Ok(c.update_zone(wire).await?.into_inner())
    }
    async fn delete(c: &mut Client, id: u64) -> Call<pb::DeleteResponse> {
        Ok(c.delete_zone(by_id(id)).await?.into_inner())
    }
    fn table(items: &[Zone], out: Output) -> String {
        render::zones(items, out)
    }
}

impl Crud for RecordSet {
    type Wire = pb::RecordSet;
    const KIND: Kind = Kind::Record;
    const NAME: &'static str = "record set";
    const PLURAL: &'static str = "records";

    async fn list(c: &mut Client, zone: Option<u64>) -> Call<Vec<pb::RecordSet>> {
        let request = pb::ListRequest {
            zone_id: zone.unwrap_or(0),
            ..Default::default()
        };
        Ok(c.list_record_sets(request).await?.into_inner().records)
    }
    async fn get(c: &mut Client, id: u64) -> Call<pb::RecordSet> {
        Ok(c.get_record_set(by_id(id)).await?.into_inner())
    }
    async fn create(c: &mut Client, wire: pb::RecordSet) -> Call<pb::RecordSet> {
        Ok(c.create_record_set(wire).await?.into_inner())
    }
    async fn update(c: &mut Client, wire: pb::RecordSet) -> Call<pb::RecordSet> {
        Ok(c.update_record_set(wire).await?.into_inner())
    }
    async fn delete(c: &mut Client, id: u64) -> Call<pb::DeleteResponse> {
        Ok(c.delete_record_set(by_id(id)).await?.into_inner())
    }
    fn table(items: &[RecordSet], out: Output) -> String {
        render::records(items, out)
    }
}

impl Crud for Pool {
    type Wire = pb::Pool;
    const KIND: Kind = Kind::Pool;
    const NAME: &'static str = "pool";
    const PLURAL: &'static str = "pools";

    async fn list(c: &mut Client, _zone: Option<u64>) -> Call<Vec<pb::Pool>> {
        Ok(c.list_pools(pb::ListRequest::default())
            .await?
            .into_inner()
            .pools)
    }
    async fn get(c: &mut Client, id: u64) -> Call<pb::Pool> {
        Ok(c.get_pool(by_id(id)).await?.into_inner())
    }
    async fn create(c: &mut Client, wire: pb::Pool) -> Call<pb::Pool> {
        Ok(c.create_pool(wire).await?.into_inner())
    }
    async fn update(c: &mut Client, wire: pb::Pool) -> Call<pb::Pool> {
        Ok(c.update_pool(wire).await?.into_inner())
    }
    async fn delete(c: &mut Client, id: u64) -> Call<pb::DeleteResponse> {
        Ok(c.delete_pool(by_id(id)).await?.into_inner())
    }
    fn table(items: &[Pool], out: Output) -> String {
        render::pools(items, out)
    }
    async fn status(c: &mut Client, id: u64, out: Output) -> Result<String, CtlError> {
        let status = c.get_pool_status(by_id(id)).await?.into_inner();
        Ok(render::pool_status(&view_of(&status)?, out))
    }
}

impl Crud for Check {
    type Wire = pb::Check;
    const KIND: Kind = Kind::Check;
    const NAME: &'static str = "check";
    const PLURAL: &'static str = "checks";

    async fn list(c: &mut Client, _zone: Option<u64>) -> Call<Vec<pb::Check>> {
        Ok(c.list_checks(pb::ListRequest::default())
            .await?
            .into_inner()
            .checks)
    }
    async fn get(c: &mut Client, id: u64) -> Call<pb::Check> {
        Ok(c.get_check(by_id(id)).await?.into_inner())
    }
    async fn create(c: &mut Client, wire: pb::Check) -> Call<pb::Check> {
        Ok(c.create_check(wire).await?.into_inner())
    }
    async fn update(c: &mut Client, wire: pb::Check) -> Call<pb::Check> {
        Ok(c.update_check(wire).await?.into_inner())
    }
    async fn delete(c: &mut Client, id: u64) -> Call<pb::DeleteResponse> {
        Ok(c.delete_check(by_id(id)).await?.into_inner())
    }
    fn table(items: &[Check], out: Output) -> String {
        render::checks(items, out)
    }
}
