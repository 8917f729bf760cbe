//! The admin gRPC service: CRUD for zones, record sets, pools, members and
//! checks; status; health logs; explain; manual health; ephemeral members;
//! agents and edges. Every call goes through the control core, so gRPC and
//! REST share one implementation and one set of rules.

mod apply;
mod audit;
mod ephemeral;
mod kinds;
pub mod views;

use std::sync::Arc;

use gslb_proto::pb;
use gslb_proto::pb::admin_service_server::AdminService;
use gslb_proto::revised::Revised;
use gslb_shared::*;
use tonic::{Request, Response, Status};

use super::status::invalid;
use super::{Service, now, off_worker};
use crate::core::catalog::CatalogState;
use crate::core::catalog::{Change, Object, ObjectRef, Op, Written};
use gslb_engine::Input;
use kinds::{Kind, shown_pb};

/// The `AdminService` gRPC service.
#[derive(Debug, Clone)]
pub struct Admin(pub Arc<Service>);

type Reply<T> = Result<Response<T>, Status>;

impl Admin {
    async fn write(&self, op: Op) -> Result<Change, Status> {
        Ok(self.0.write_one(op).await?)
    }

    /// Create an object of kind `K` from its message; it as stored.
    async fn create<K: Kind>(&self, r: Request<K::Pb>) -> Reply<K::Pb> {
        let object = K::try_from(r.into_inner()).map_err(invalid)?.object();
        self.upserted::<K>(self.write(Op::Create(object)).await?)
    }

    /// Replace an object of kind `K`, or with an `update_mask` change only
    /// the fields it names (merged in the core against the object as it
    /// then stands); with `expected_revision`, only if it is still at that
    /// revision. It as stored.
    async fn update<K: Kind>(&self, r: Request<K::Pb>) -> Reply<K::Pb> {
        let mut message = r.into_inner();
        let (expected, mask) = message.take_guard();
        let object = K::try_from(message).map_err(invalid)?.object();
        let op = if mask.is_empty() {
            Op::Update(object)
        } else {
            masked::<K>(object, &mask)?
        };
        self.upserted::<K>(
            self.write(op.guarded((expected != 0).then_some(expected)))
                .await?,
        )
    }

    fn upserted<K: Kind>(&self, change: Change) -> Reply<K::Pb> {
        match change.what {
            // A TSIG key's secret is shown to the call that created it
            // (update_tsig_key clears it); a zone's private keys never.
            Written::Upserted(object) => {
                let object = match *object {
                    Object::Zone(z) => Object::Zone(z.redacted()),
                    other => other,
                };
                let mut pb: K::Pb = K::of(&object)
                    .map(Into::into)
                    .ok_or_else(|| Status::internal("unexpected object kind"))?;
                pb.set_revision(change.version);
                Ok(Response::new(pb))
            }
            Written::Deleted(_) => Err(Status::internal("a create or update deleted something")),
        }
    }

    /// The zone a rollover command wrote, as views show it.
    fn rekeyed(&self, change: Option<Change>) -> Reply<pb::Zone> {
        let change = change.ok_or_else(|| Status::internal("a rollover command wrote nothing"))?;
        self.upserted::<Zone>(change)
    }

    /// Read an object of kind `K` from the published view, with its revision.
    fn get<K: Kind>(&self, r: Request<pb::IdRequest>) -> Reply<K::Pb> {
        let id = r.into_inner().id;
        let reference = K::reference(id);
        let view = self.0.view();
        visible(&view, reference)?;
        let mut pb: K::Pb = K::find(view.catalog(), id)
            .map(|x| (&*x.shown()).into())
            .ok_or_else(|| Status::not_found(format!("{reference} does not exist")))?;
        pb.set_revision(view.state().revision(reference).unwrap_or(0));
        Ok(Response::new(pb))
    }

    /// Delete an object of kind `K` (with `expected_revision`, only if it
    /// is still at that revision).
    async fn delete_of<K: Kind>(&self, r: Request<pb::IdRequest>) -> Reply<pb::DeleteResponse> {
        let r = r.into_inner();
        self.delete(K::reference(r.id), r.expected_revision).await
    }

    async fn delete(&self, r: ObjectRef, expected: u64) -> Reply<pb::DeleteResponse> {
        let change = self
            .write(Op::Delete(r).guarded((expected != 0).then_some(expected)))
            .await?;
        let id = match r {
            ObjectRef::Zone(i) => i.0,
            ObjectRef::Record(i) => i.0,
            ObjectRef::Pool(i) => i.0,
            ObjectRef::Member(i) => i.0,
            ObjectRef::Check(i) => i.0,
            ObjectRef::TsigKey(i) => i.0,
            ObjectRef::Notifier(i) => i.0,
        };
        Ok(Response::new(pb::DeleteResponse {
            id,
            version: change.version,
        }))
    }

    /// Register an ephemeral member; the member as stored.
    async fn register(&self, member: pb::Member) -> Result<pb::Member, Status> {
        let member = Member::try_from(member).map_err(invalid)?;
        if !member.is_ephemeral() {
            return Err(Status::invalid_argument(
                "ephemeral: required when registering an ephemeral member",
            ));
        }
        self.upserted::<Member>(self.write(Op::Create(Object::Member(member))).await?)
            .map(Response::into_inner)
    }

    async fn list<R: Send + 'static>(
        &self,
        get: impl FnOnce(&CatalogState, &Seen) -> R + Send + 'static,
    ) -> Reply<R> {
        // A long list is rendered off the worker, never on the core; the
        // caller's scope is taken here (the task that knows it stays).
        let view = self.0.view();
        let seen = Seen(crate::api::caller::scope());
        Ok(Response::new(
            off_worker(move || get(view.state(), &seen)).await,
        ))
    }
}

/// What a caller may see: everything, or its scope's objects.
struct Seen(Option<Arc<crate::core::scope::Scope>>);

impl Seen {
    fn has(&self, state: &CatalogState, target: ObjectRef) -> bool {
        crate::api::caller::sees(self.0.as_deref(), &state.catalog, target)
    }
}

/// Refuse `target` when the caller's scope does not cover it.
fn visible(view: &crate::core::control::View, target: ObjectRef) -> Result<(), Status> {
    match crate::api::caller::scope() {
        Some(scope) => (scope.see(view.catalog(), &target))
            .map_err(|e| Status::permission_denied(e.to_string())),
        None => Ok(()),
    }
}

/// A masked update as a patch of the named fields: the message is
/// converted whole (it must be valid), and only the masked fields' values
/// are sent to the core, which lays them over the object as it stands.
fn masked<K: Kind>(object: Object, mask: &[String]) -> Result<Op, Status> {
    let target = object.reference();
    let whole = match serde_json::to_value(&object) {
        Ok(serde_json::Value::Object(mut map)) => match map.remove("object") {
            Some(serde_json::Value::Object(fields)) => fields,
            _ => serde_json::Map::new(),
        },
        _ => serde_json::Map::new(),
    };
    let mut fields = serde_json::Map::new();
    for path in mask {
        let key = K::model_field(path).ok_or_else(|| {
            Status::invalid_argument(format!(
                "update_mask: {path:?} is not a field of this message (give top-level field names, e.g. weight)"
            ))
        })?;
        // A field left out of the object's JSON is at its default: null
        // resets it in the core.
        let value = whole.get(key).cloned().unwrap_or(serde_json::Value::Null);
        fields.insert(key.to_owned(), value);
    }
    Ok(Op::Patch { target, fields })
}

#[tonic::async_trait]
impl AdminService for Admin {
    async fn create_zone(&self, r: Request<pb::Zone>) -> Reply<pb::Zone> {
        self.create::<Zone>(r).await
    }
    async fn update_zone(&self, r: Request<pb::Zone>) -> Reply<pb::Zone> {
        self.update::<Zone>(r).await
    }
    async fn delete_zone(&self, r: Request<pb::IdRequest>) -> Reply<pb::DeleteResponse> {
        self.delete_of::<Zone>(r).await
    }
    async fn get_zone(&self, r: Request<pb::IdRequest>) -> Reply<pb::Zone> {
        self.get::<Zone>(r)
    }
    async fn start_rollover(&self, r: Request<pb::RolloverRequest>) -> Reply<pb::Zone> {
        let r = r.into_inner();
        let role: KeyRole =
            (r.role.parse()).map_err(|e: String| Status::invalid_argument(format!("role: {e}")))?;
        let change = self.0.start_rollover(ZoneId(r.zone_id), role).await?;
        self.rekeyed(change)
    }
    async fn confirm_ds_seen(&self, r: Request<pb::IdRequest>) -> Reply<pb::Zone> {
        let id = ZoneId(r.into_inner().id);
        let change = self.0.ds_seen(id).await?;
        self.rekeyed(change)
    }
    async fn create_tsig_key(&self, r: Request<pb::TsigKey>) -> Reply<pb::TsigKey> {
        self.create::<TsigKey>(r).await
    }
    async fn update_tsig_key(&self, r: Request<pb::TsigKey>) -> Reply<pb::TsigKey> {
        let mut key = self.update::<TsigKey>(r).await?;
        key.get_mut().secret.clear();
        Ok(key)
    }
    async fn delete_tsig_key(&self, r: Request<pb::IdRequest>) -> Reply<pb::DeleteResponse> {
        self.delete_of::<TsigKey>(r).await
    }
    async fn list_tsig_keys(&self, _r: Request<pb::ListRequest>) -> Reply<pb::TsigKeyList> {
        self.list(|c, _| pb::TsigKeyList {
            keys: (c.catalog.tsig_keys.values())
                .map(|k| shown_pb(c, k))
                .collect(),
        })
        .await
    }
    async fn create_notifier(&self, r: Request<pb::Notifier>) -> Reply<pb::Notifier> {
        self.create::<Notifier>(r).await
    }
    async fn update_notifier(&self, r: Request<pb::Notifier>) -> Reply<pb::Notifier> {
        let mut target = self.update::<Notifier>(r).await?;
        target.get_mut().secret.clear();
        Ok(target)
    }
    async fn delete_notifier(&self, r: Request<pb::IdRequest>) -> Reply<pb::DeleteResponse> {
        self.delete_of::<Notifier>(r).await
    }
    async fn list_notifiers(&self, _r: Request<pb::ListRequest>) -> Reply<pb::NotifierList> {
        self.list(|c, _| pb::NotifierList {
            notifiers: (c.catalog.notifiers.values())
                .map(|n| shown_pb(c, n))
                .collect(),
        })
        .await
    }
    async fn get_notification_status(
        &self,
        _r: Request<pb::ListRequest>,
    ) -> Reply<pb::NotificationStatus> {
        let service = Arc::clone(&self.0);
        off_worker(move || crate::api::service::deliveries::status(&service))
            .await
            .map(|v| Response::new(v.into()))
            .map_err(|e| Status::unavailable(e.to_string()))
    }
    async fn list_zones(&self, _r: Request<pb::ListRequest>) -> Reply<pb::ZoneList> {
        self.list(|c, seen| pb::ZoneList {
            zones: (c.catalog.zones.values())
                .filter(|z| seen.has(c, ObjectRef::Zone(z.id)))
                .map(|z| shown_pb(c, z))
                .collect(),
        })
        .await
    }

    async fn create_record_set(&self, r: Request<pb::RecordSet>) -> Reply<pb::RecordSet> {
        self.create::<RecordSet>(r).await
    }
    async fn update_record_set(&self, r: Request<pb::RecordSet>) -> Reply<pb::RecordSet> {
        self.update::<RecordSet>(r).await
    }
    async fn delete_record_set(&self, r: Request<pb::IdRequest>) -> Reply<pb::DeleteResponse> {
        self.delete_of::<RecordSet>(r).await
    }
    async fn get_record_set(&self, r: Request<pb::IdRequest>) -> Reply<pb::RecordSet> {
        self.get::<RecordSet>(r)
    }
    async fn list_record_sets(&self, r: Request<pb::ListRequest>) -> Reply<pb::RecordSetList> {
        let zone = r.into_inner().zone_id;
        self.list(move |c, seen| pb::RecordSetList {
            records: (c.catalog.records.values())
                .filter(|x| zone == 0 || x.zone.0 == zone)
                .filter(|x| seen.has(c, ObjectRef::Record(x.id)))
                .map(|x| shown_pb(c, x))
                .collect(),
        })
        .await
    }

    async fn create_pool(&self, r: Request<pb::Pool>) -> Reply<pb::Pool> {
        self.create::<Pool>(r).await
    }
    async fn update_pool(&self, r: Request<pb::Pool>) -> Reply<pb::Pool> {
        self.update::<Pool>(r).await
    }
    async fn delete_pool(&self, r: Request<pb::IdRequest>) -> Reply<pb::DeleteResponse> {
        self.delete_of::<Pool>(r).await
    }
    async fn get_pool(&self, r: Request<pb::IdRequest>) -> Reply<pb::Pool> {
        self.get::<Pool>(r)
    }
    async fn list_pools(&self, _r: Request<pb::ListRequest>) -> Reply<pb::PoolList> {
        self.list(|c, seen| pb::PoolList {
            pools: (c.catalog.pools.values())
                .filter(|p| seen.has(c, ObjectRef::Pool(p.id)))
                .map(|p| shown_pb(c, p))
                .collect(),
        })
        .await
    }

    async fn create_member(&self, r: Request<pb::Member>) -> Reply<pb::Member> {
        self.create::<Member>(r).await
    }
    async fn update_member(&self, r: Request<pb::Member>) -> Reply<pb::Member> {
        self.update::<Member>(r).await
    }
    async fn delete_member(&self, r: Request<pb::IdRequest>) -> Reply<pb::DeleteResponse> {
        self.delete_of::<Member>(r).await
    }
    async fn get_member(&self, r: Request<pb::IdRequest>) -> Reply<pb::Member> {
        self.get::<Member>(r)
    }
    async fn list_members(&self, r: Request<pb::ListRequest>) -> Reply<pb::MemberList> {
        let pool = r.into_inner().pool_id;
        if pool == 0 {
            return self
                .list(|c, seen| pb::MemberList {
                    members: (c.catalog.members.values())
                        .filter(|m| seen.has(c, ObjectRef::Member(m.id)))
                        .map(|m| shown_pb(c, m))
                        .collect(),
                })
                .await;
        }
        // One pool: its members from the index, not a scan of all.
        let view = self.0.view();
        visible(&view, ObjectRef::Pool(PoolId(pool)))?;
        Ok(Response::new(
            off_worker(move || {
                let state = view.state();
                pb::MemberList {
                    members: (state.pool_members(PoolId(pool)))
                        .map(|m| shown_pb(state, m))
                        .collect(),
                }
            })
            .await,
        ))
    }

    async fn create_check(&self, r: Request<pb::Check>) -> Reply<pb::Check> {
        self.create::<Check>(r).await
    }
    async fn update_check(&self, r: Request<pb::Check>) -> Reply<pb::Check> {
        self.update::<Check>(r).await
    }
    async fn delete_check(&self, r: Request<pb::IdRequest>) -> Reply<pb::DeleteResponse> {
        self.delete_of::<Check>(r).await
    }
    async fn get_check(&self, r: Request<pb::IdRequest>) -> Reply<pb::Check> {
        self.get::<Check>(r)
    }
    async fn list_checks(&self, _r: Request<pb::ListRequest>) -> Reply<pb::CheckList> {
        self.list(|c, seen| pb::CheckList {
            checks: (c.catalog.checks.values())
                .filter(|k| seen.has(c, ObjectRef::Check(k.id)))
                .map(|k| shown_pb(c, k))
                .collect(),
        })
        .await
    }

    async fn get_member_status(&self, r: Request<pb::IdRequest>) -> Reply<pb::MemberStatus> {
        let id = MemberId(r.into_inner().id);
        visible(&self.0.view(), ObjectRef::Member(id))?;
        views::member_status(&self.0, id, now())
            .await
            .map(|s| Response::new((&s).into()))
    }

    async fn get_pool_status(&self, r: Request<pb::IdRequest>) -> Reply<pb::PoolStatus> {
        let id = PoolId(r.into_inner().id);
        visible(&self.0.view(), ObjectRef::Pool(id))?;
        views::pool_status(&self.0, id, now())
            .await
            .map(|(_, status)| Response::new((&status).into()))
    }

    async fn get_health_log(&self, r: Request<pb::HealthLogRequest>) -> Reply<pb::HealthLog> {
        let r = r.into_inner();
        let limit = if r.limit == 0 {
            100
        } else {
            r.limit.min(1_000)
        } as usize;
        let view = self.0.view();
        visible(&view, ObjectRef::Member(MemberId(r.member_id)))?;
        let entries = view
            .health_log(MemberId(r.member_id), limit)
            .map_err(crate::core::control::ControlError::from)?;
        Ok(Response::new(pb::HealthLog {
            entries: entries.iter().filter_map(views::log_entry).collect(),
        }))
    }

    async fn explain(&self, r: Request<pb::ExplainRequest>) -> Reply<pb::ExplainResponse> {
        let r = r.into_inner();
        self.0.explain(&r).map(Response::new)
    }

    async fn set_manual_health(
        &self,
        r: Request<pb::ManualHealthRequest>,
    ) -> Reply<pb::MemberStatus> {
        let r = r.into_inner();
        let health = gslb_proto::convert::health_from_pb("health", r.health).map_err(invalid)?;
        let member = MemberId(r.member_id);
        self.0
            .call(move |c| c.step(Input::ManualHealth { member, health }, now()))
            .await?;
        views::member_status(&self.0, member, now())
            .await
            .map(|s| Response::new((&s).into()))
    }

    async fn register_ephemeral(&self, r: Request<pb::Member>) -> Reply<pb::Member> {
        self.register(r.into_inner()).await.map(Response::new)
    }

    async fn heartbeat(&self, r: Request<pb::IdRequest>) -> Reply<pb::HeartbeatResponse> {
        let member = MemberId(r.into_inner().id);
        let health = ephemeral::beat(&self.0, member).await?;
        Ok(Response::new(pb::HeartbeatResponse {
            member_id: member.0,
            health,
        }))
    }

    type RegisterEphemeralStreamStream = ephemeral::StateStream;

    async fn register_ephemeral_stream(
        &self,
        r: Request<tonic::Streaming<pb::EphemeralKeepalive>>,
    ) -> Reply<Self::RegisterEphemeralStreamStream> {
        let mut inbound = r.into_inner();
        let first = inbound.message().await?.and_then(|m| m.msg);
        let Some(pb::ephemeral_keepalive::Msg::Register(member)) = first else {
            return Err(Status::invalid_argument(
                "register: the first message must register the member",
            ));
        };
        let member = self.register(member).await?;
        Ok(Response::new(ephemeral::keep(
            self.0.clone(),
            MemberId(member.id),
            inbound,
        )))
    }

    async fn deregister_ephemeral(&self, r: Request<pb::IdRequest>) -> Reply<pb::DeleteResponse> {
        let id = MemberId(r.into_inner().id);
        let ephemeral = self
            .0
            .view()
            .catalog()
            .members
            .get(&id)
            .map(Member::is_ephemeral);
        match ephemeral {
            None => Err(Status::not_found(format!("member {id} does not exist"))),
            Some(false) => Err(Status::failed_precondition(format!(
                "member {id} is persistent; delete it instead"
            ))),
            Some(true) => self.delete(ObjectRef::Member(id), 0).await,
        }
    }

    async fn list_audit(&self, r: Request<pb::AuditRequest>) -> Reply<pb::AuditList> {
        let mut query = audit::query(r.into_inner())?;
        let page = query.page();
        let view = self.0.view();
        query.scope = crate::api::caller::judged(&view);
        let judged = query.scope.clone();
        let records = off_worker(move || view.audit(&query))
            .await
            .map_err(|e| Status::from(crate::core::control::ControlError::from(e)))?;
        let next = if records.len() == page {
            records.last().map_or(0, |r| r.seq)
        } else {
            0
        };
        Ok(Response::new(pb::AuditList {
            records: (records.into_iter())
                .map(|r| match &judged {
                    Some(j) => j.trimmed(r),
                    None => r,
                })
                .map(|r| audit::entry(&crate::core::control::history::RecordView::from(&r)))
                .collect(),
            next_before_seq: next,
        }))
    }

    async fn get_catalog_diff(&self, r: Request<pb::DiffRequest>) -> Reply<pb::DiffResponse> {
        let r = r.into_inner();
        let view = self.0.view();
        let to = if r.to == 0 {
            view.state().catalog_version
        } else {
            r.to
        };
        let judged = crate::api::caller::judged(&view);
        let changes = off_worker(move || view.diff(r.from, Some(to), judged.as_ref())).await?;
        Ok(Response::new(pb::DiffResponse {
            from: r.from,
            to,
            changes: changes.iter().map(audit::change).collect(),
        }))
    }

    async fn rollback(&self, r: Request<pb::RollbackRequest>) -> Reply<pb::ApplyConfigResponse> {
        let r = r.into_inner();
        let (plan, version, catalog_version) = self
            .0
            .call(move |c| {
                c.audited(!r.dry_run, now(), |c| {
                    let (plan, version) =
                        c.rollback(r.version, r.dry_run, r.expect_version, now())?;
                    Ok((plan, version, c.catalog_version()))
                })
            })
            .await?;
        Ok(Response::new(plan_reply(
            plan,
            (version, catalog_version),
            r.dry_run,
        )))
    }

    async fn apply(&self, r: Request<pb::ApplyRequest>) -> Reply<pb::ApplyResponse> {
        let r = r.into_inner();
        let mut ops = apply::ops_from_pb(r.ops)?;
        crate::api::service::deliveries::refuse_denied(&self.0, &ops).await?;
        crate::api::secrets::fill(&mut ops);
        let creates = crate::api::secrets::creates(&ops);
        let (changes, version, catalog_version) = self
            .0
            .call(move |c| {
                c.audited(!r.dry_run, now(), |c| {
                    c.expect_catalog(r.expect_version)?;
                    let (changes, version) = c.apply_ops(ops, r.dry_run, now())?;
                    Ok((changes, version, c.catalog_version()))
                })
            })
            .await?;
        let changes = crate::api::secrets::shown(changes, &creates);
        Ok(Response::new(pb::ApplyResponse {
            applied: apply::changes_to_pb(&changes),
            version,
            catalog_version,
        }))
    }

    async fn apply_config(
        &self,
        r: Request<pb::ApplyConfigRequest>,
    ) -> Reply<pb::ApplyConfigResponse> {
        let mut r = r.into_inner();
        // Parsing a large document is long work: off the worker too.
        let document = std::mem::take(&mut r.document);
        let desired = off_worker(move || crate::core::declarative::parse(&document))
            .await
            .map_err(invalid)?;
        let (plan, version, catalog_version) = self
            .0
            .call(move |c| {
                c.audited(!r.dry_run, now(), |c| {
                    c.expect_catalog(r.expect_version)?;
                    let (plan, version) = c.apply_document(
                        &desired,
                        r.dry_run,
                        r.prune,
                        now(),
                        crate::api::secrets::new_key,
                    )?;
                    Ok((plan, version, c.catalog_version()))
                })
            })
            .await?;
        Ok(Response::new(plan_reply(
            plan,
            (version, catalog_version),
            r.dry_run,
        )))
    }

    async fn import_zone(
        &self,
        r: Request<pb::ImportZoneRequest>,
    ) -> Reply<pb::ApplyConfigResponse> {
        let mut r = r.into_inner();
        let apex = if r.apex.is_empty() {
            None
        } else {
            Some(
                DnsName::parse(&r.apex)
                    .map_err(|e| Status::invalid_argument(format!("apex: {e}")))?,
            )
        };
        let text = std::mem::take(&mut r.text);
        // Reading a large zone is long work: off the worker.
        let options = crate::core::zonefile::Options {
            strip_dnssec: r.strip_dnssec,
        };
        let file = off_worker(move || crate::core::zonefile::read(&text, apex.as_ref(), options))
            .await
            .map_err(invalid)?;
        let (plan, version) = self
            .0
            .call(move |c| {
                c.audited(!r.dry_run, now(), |c| {
                    let (plan, version) = c.import_zone(&file, r.dry_run, r.prune, now())?;
                    Ok((plan, (version, c.catalog_version())))
                })
            })
            .await?;
        Ok(Response::new(plan_reply(plan, version, r.dry_run)))
    }

    async fn export_zone(
        &self,
        r: Request<pb::ExportZoneRequest>,
    ) -> Reply<pb::ExportZoneResponse> {
        let apex = DnsName::parse(&r.get_ref().apex)
            .map_err(|e| Status::invalid_argument(format!("apex: {e}")))?;
        if let Some(scope) = crate::api::caller::scope()
            && !scope.zones.contains(apex.as_str())
        {
            return Err(Status::permission_denied(
                scope.outside(format!("zone {apex}")).to_string(),
            ));
        }
        let snapshot = self.0.view().snapshot().clone();
        let shown = apex.clone();
        let text = off_worker(move || crate::core::zonefile::export(&snapshot, &apex))
            .await
            .map_err(|e| Status::internal(e.to_string()))?
            .ok_or_else(|| Status::not_found(format!("no zone {shown}")))?;
        Ok(Response::new(pb::ExportZoneResponse { text }))
    }

    async fn list_agents(&self, _r: Request<pb::ListRequest>) -> Reply<pb::AgentList> {
        Ok(Response::new(views::agents(&self.0)))
    }

    async fn list_edges(&self, _r: Request<pb::ListRequest>) -> Reply<pb::EdgeList> {
        Ok(Response::new(views::edges(&self.0)))
    }

    async fn get_engine(&self, _r: Request<pb::ListRequest>) -> Reply<pb::EngineStatus> {
        Ok(Response::new(
            self.0.call(|c| views::engine(c.engine(), c.hold())).await,
        ))
    }

    async fn set_decisions(&self, r: Request<pb::SetDecisionsRequest>) -> Reply<pb::EngineStatus> {
        let r = r.into_inner();
        let pool = (r.pool_id != 0).then_some(PoolId(r.pool_id));
        let status = self
            .0
            .call(move |c| {
                c.audited(true, now(), |c| c.set_decisions(pool, r.paused, now()))
                    .map_err(Status::from)?;
                Ok::<_, Status>(views::engine(c.engine(), c.hold()))
            })
            .await?;
        Ok(Response::new(status))
    }

    async fn backup_store(&self, _r: Request<pb::BackupRequest>) -> Reply<pb::BackupResponse> {
        let view = self.0.view();
        let backup = off_worker(move || view.backup(now().0))
            .await
            .map_err(|e| Status::from(crate::core::control::ControlError::from(e)))?;
        Ok(Response::new(pb::BackupResponse {
            version: backup.state.version,
            document: backup.encode(),
        }))
    }

    async fn reset_edges(
        &self,
        r: Request<pb::ResetEdgesRequest>,
    ) -> Reply<pb::ResetEdgesResponse> {
        let confirm = r.into_inner().confirm_version;
        let (epoch, version) = self.0.call(move |c| {
            if confirm != c.version() {
                return Err(Status::failed_precondition(format!(
                    "confirmVersion: must be the current version {} (got {confirm}): edges are reset to the catalog of that version",
                    c.version()
                )));
            }
            c.reset_edges(now()).map_err(Status::from)
        })
        .await?;
        Ok(Response::new(pb::ResetEdgesResponse { epoch, version }))
    }
}

/// The reply to a document or zone file apply: the plan, and whether it
/// was applied.
fn plan_reply(
    plan: crate::core::declarative::Plan,
    (version, catalog_version): (u64, u64),
    dry_run: bool,
) -> pb::ApplyConfigResponse {
    pb::ApplyConfigResponse {
        plan: plan.lines,
        version,
        applied: !dry_run,
        notes: plan.notes,
        catalog_version,
    }
}
