//! One list/get/create/update/delete path for every object kind gslbctl
//! edits (zones, record sets, pools, checks, members): a kind names its
//! calls and how it is shown, and the steps are written once. Members add
//! their pool (listing and creating need it) and a status column.

use gslb_proto::pb;
use gslb_shared::validate::ValidationError;
use gslb_shared::{Check, Member, Pool, RecordSet, Zone};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::{
    Action, Client, CtlError, Output, converted, deleted, member_rows, no_status, object,
    read_object, render, view_of,
};
use gslb_proto::revised::Revised;
use gslb_shared::defaults::{Kind, base, to_json};

/// What one call returns.
type Call<T> = Result<T, tonic::Status>;

/// What a list or a create is about: the zone of record sets, the pool of
/// members.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Scope {
    /// `--zone`.
    pub zone: Option<u64>,
    /// `--pool`.
    pub pool: Option<u64>,
}

/// An object kind as gslbctl reads and writes it.
pub(super) trait Crud:
    Sized + Serialize + DeserializeOwned + TryFrom<Self::Wire, Error = ValidationError>
{
    /// Its protobuf message.
    type Wire: Clone + for<'a> From<&'a Self> + gslb_proto::revised::Revised;
    /// Its defaults, which a create starts from.
    const KIND: Kind;
    /// Its name in "deleted …" lines.
    const NAME: &'static str;
    /// Its name in "… have no status".
    const PLURAL: &'static str;

    /// All of them in `scope`.
    async fn list(c: &mut Client, scope: Scope) -> Result<Vec<Self::Wire>, CtlError>;
    /// One.
    async fn get(c: &mut Client, id: u64) -> Call<Self::Wire>;
    /// Create one; the server's copy.
    async fn create(c: &mut Client, wire: Self::Wire) -> Call<Self::Wire>;
    /// Replace one; the server's copy.
    async fn update(c: &mut Client, wire: Self::Wire) -> Call<Self::Wire>;
    /// Delete one (if still at revision `expected`; 0: any).
    async fn delete(c: &mut Client, id: u64, expected: u64) -> Call<pb::DeleteResponse>;
    /// Its table (or JSON) of `items`.
    async fn show(c: &mut Client, items: Vec<Self::Wire>, out: Output) -> Result<String, CtlError>;
    /// Its listing in `scope`: the table of [`Crud::list`] unless a kind
    /// reads more at once.
    async fn listing(c: &mut Client, scope: Scope, out: Output) -> Result<String, CtlError> {
        let items = Self::list(c, scope).await?;
        Self::show(c, items, out).await
    }
    /// What a create adds to the written fields from its scope.
    fn scoped(_patch: &mut Map<String, Value>, _scope: Scope) -> Result<(), CtlError> {
        Ok(())
    }
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
    match action {
        Action::List { zone, pool } => T::listing(c, Scope { zone, pool }, out).await,
        Action::Get { id } => {
            let one = T::get(c, id).await?;
            let revision = one.revision();
            let shown = T::show(c, vec![one], out).await?;
            Ok(with_revision(shown, revision, out))
        }
        Action::Create { file, pool } => {
            let mut patch = read_object(&file)?;
            T::scoped(&mut patch, Scope { zone: None, pool })?;
            let new: T = object(base(T::KIND), patch, 0)?;
            let created = T::create(c, T::Wire::from(&new)).await?;
            T::show(c, vec![created], out).await
        }
        Action::Update {
            id,
            file,
            if_revision,
        } => {
            let current: T = converted(&[T::get(c, id).await?])?.remove(0);
            let mut patch = read_object(&file)?;
            // A revision in the file is a precondition, as --if-revision.
            let in_file = patch.remove("revision").and_then(|v| v.as_u64());
            // Only the fields the file names are sent as changed: the
            // server merges them into the object as it stands then, so a
            // colleague's change to another field is kept.
            let mask: Vec<String> = patch.keys().filter(|k| *k != "id").cloned().collect();
            let changed: T = object(to_json(&current), patch, id)?;
            let mut wire = T::Wire::from(&changed);
            wire.guard(if_revision.or(in_file).unwrap_or(0), mask);
            let updated = T::update(c, wire).await?;
            T::show(c, vec![updated], out).await
        }
        Action::Delete { id, if_revision } => Ok(deleted(
            T::NAME,
            T::delete(c, id, if_revision.unwrap_or(0)).await?,
        )),
        Action::Status { id } => T::status(c, id, out).await,
    }
}

/// One object's text with its revision: a last line of a table, a
/// `revision` field in JSON.
fn with_revision(shown: String, revision: u64, out: Output) -> String {
    if out == Output::Json
        && let Ok(Value::Array(mut items)) = serde_json::from_str::<Value>(&shown)
        && let Some(Value::Object(first)) = items.first_mut()
    {
        first.insert("revision".into(), Value::from(revision));
        return format!("{:#}\n", Value::Array(items));
    }
    format!("{shown}revision {revision}\n")
}

fn by_id(id: u64) -> pb::IdRequest {
    pb::IdRequest {
        id,
        ..Default::default()
    }
}

fn guarded(id: u64, expected_revision: u64) -> pb::IdRequest {
    pb::IdRequest {
        id,
        expected_revision,
    }
}

impl Crud for Zone {
    type Wire = pb::Zone;
    const KIND: Kind = Kind::Zone;
    const NAME: &'static str = "zone";
    const PLURAL: &'static str = "zones";

    async fn list(c: &mut Client, _scope: Scope) -> Result<Vec<pb::Zone>, CtlError> {
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
    async fn delete(c: &mut Client, id: u64, expected: u64) -> Call<pb::DeleteResponse> {
        Ok(c.delete_zone(guarded(id, expected)).await?.into_inner())
    }
    async fn show(_c: &mut Client, items: Vec<pb::Zone>, out: Output) -> Result<String, CtlError> {
        Ok(render::zones(&converted::<_, Zone>(&items)?, out))
    }
}

impl Crud for RecordSet {
    type Wire = pb::RecordSet;
    const KIND: Kind = Kind::Record;
    const NAME: &'static str = "record set";
    const PLURAL: &'static str = "records";

    async fn list(c: &mut Client, scope: Scope) -> Result<Vec<pb::RecordSet>, CtlError> {
        let request = pb::ListRequest {
            zone_id: scope.zone.unwrap_or(0),
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
    async fn delete(c: &mut Client, id: u64, expected: u64) -> Call<pb::DeleteResponse> {
        Ok(c.delete_record_set(guarded(id, expected))
            .await?
            .into_inner())
    }
    async fn show(
        _c: &mut Client,
        items: Vec<pb::RecordSet>,
        out: Output,
    ) -> Result<String, CtlError> {
        Ok(render::records(&converted::<_, RecordSet>(&items)?, out))
    }
}

impl Crud for Pool {
    type Wire = pb::Pool;
    const KIND: Kind = Kind::Pool;
    const NAME: &'static str = "pool";
    const PLURAL: &'static str = "pools";

    async fn list(c: &mut Client, _scope: Scope) -> Result<Vec<pb::Pool>, CtlError> {
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
    async fn delete(c: &mut Client, id: u64, expected: u64) -> Call<pb::DeleteResponse> {
        Ok(c.delete_pool(guarded(id, expected)).await?.into_inner())
    }
    async fn show(_c: &mut Client, items: Vec<pb::Pool>, out: Output) -> Result<String, CtlError> {
        Ok(render::pools(&converted::<_, Pool>(&items)?, out))
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

    async fn list(c: &mut Client, _scope: Scope) -> Result<Vec<pb::Check>, CtlError> {
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
    async fn delete(c: &mut Client, id: u64, expected: u64) -> Call<pb::DeleteResponse> {
        Ok(c.delete_check(guarded(id, expected)).await?.into_inner())
    }
    async fn show(_c: &mut Client, items: Vec<pb::Check>, out: Output) -> Result<String, CtlError> {
        Ok(render::checks(&converted::<_, Check>(&items)?, out))
    }
}

impl Crud for Member {
    type Wire = pb::Member;
    const KIND: Kind = Kind::Member;
    const NAME: &'static str = "member";
    const PLURAL: &'static str = "members";

    async fn list(c: &mut Client, scope: Scope) -> Result<Vec<pb::Member>, CtlError> {
        let pool_id = member_pool(scope, "list")?;
        // An unknown pool is an error, not an empty list.
        c.get_pool(by_id(pool_id)).await?;
        let request = pb::ListRequest {
            pool_id,
            ..Default::default()
        };
        Ok(c.list_members(request).await?.into_inner().members)
    }
    async fn get(c: &mut Client, id: u64) -> Call<pb::Member> {
        Ok(c.get_member(by_id(id)).await?.into_inner())
    }
    async fn create(c: &mut Client, wire: pb::Member) -> Call<pb::Member> {
        Ok(c.create_member(wire).await?.into_inner())
    }
    async fn update(c: &mut Client, wire: pb::Member) -> Call<pb::Member> {
        Ok(c.update_member(wire).await?.into_inner())
    }
    async fn delete(c: &mut Client, id: u64, expected: u64) -> Call<pb::DeleteResponse> {
        Ok(c.delete_member(guarded(id, expected)).await?.into_inner())
    }
    async fn show(c: &mut Client, items: Vec<pb::Member>, out: Output) -> Result<String, CtlError> {
        Ok(render::members(&member_rows(c, items).await?, out))
    }
    async fn listing(c: &mut Client, scope: Scope, out: Output) -> Result<String, CtlError> {
        let list = Self::list(c, scope).await?;
        let pool_id = member_pool(scope, "list")?;
        // Every member's status in one call (one per member made a list
        // quadratic over calls).
        let status = c.get_pool_status(by_id(pool_id)).await?.into_inner();
        let pool_status: gslb_shared::status::PoolStatusView = view_of(&status)?;
        let mut statuses: std::collections::HashMap<u64, _> = pool_status
            .members
            .into_iter()
            .map(|s| (s.member_id, s))
            .collect();
        let rows: Vec<_> = converted::<_, Member>(&list)?
            .into_iter()
            // A member created or deleted between the two calls is left
            // out of this list.
            .filter_map(|m| statuses.remove(&m.id.0).map(|s| (m, s)))
            .collect();
        Ok(render::members(&rows, out))
    }
    fn scoped(patch: &mut Map<String, Value>, scope: Scope) -> Result<(), CtlError> {
        patch.insert("pool".into(), member_pool(scope, "create")?.into());
        Ok(())
    }
    async fn status(c: &mut Client, id: u64, out: Output) -> Result<String, CtlError> {
        let status = c.get_member_status(by_id(id)).await?.into_inner();
        Ok(render::member_status(&view_of(&status)?, out))
    }
}

/// The pool a members `verb` needs.
fn member_pool(scope: Scope, verb: &str) -> Result<u64, CtlError> {
    scope
        .pool
        .ok_or_else(|| CtlError::Input(format!("members {verb} needs --pool POOL_ID")))
}
