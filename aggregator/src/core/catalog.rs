//! The rules for changing the catalog: every write is validated — the object
//! on its own and every reference it makes — before anything changes, ids
//! are assigned here, every accepted change bumps the version, and a batch
//! of changes (a declarative `apply`) is all-or-nothing.
//!
//! Pure: no store, no clock. The service persists the [`Change`]s it returns.

mod cuts;
mod hostnames;
mod index;
mod signing;

use gslb_shared::validate::{self, ValidationError};
use gslb_shared::*;
use index::{Indexes, ObjectIndex};
use serde::{Deserialize, Serialize};
pub use signing::{KeyMaker, fill_keys};

/// A configured object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "kind", content = "object")]
pub enum Object {
    /// A zone.
    Zone(Zone),
    /// A record set.
    Record(RecordSet),
    /// A pool.
    Pool(Pool),
    /// A member.
    Member(Member),
    /// A health check.
    Check(Check),
    /// A TSIG key.
    TsigKey(TsigKey),
    /// A notification target.
    Notifier(Notifier),
}

/// The OpenAPI schema of [`Object`] (`{"kind": "zone", "object": {...}}`),
/// written out because utoipa reads a type named `Object` as its own
/// free-form object.
pub struct ObjectSchema;

impl utoipa::PartialSchema for ObjectSchema {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::ToSchema;
        use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Type};
        let kind = |kind: &str, schema: std::borrow::Cow<'static, str>| {
            ObjectBuilder::new()
                .property(
                    "kind",
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .enum_values(Some([kind])),
                )
                .property("object", utoipa::openapi::Ref::from_schema_name(schema))
                .required("kind")
                .required("object")
        };
        OneOfBuilder::new()
            .item(kind("zone", Zone::name()))
            .item(kind("record", RecordSet::name()))
            .item(kind("pool", Pool::name()))
            .item(kind("member", Member::name()))
            .item(kind("check", Check::name()))
            .item(kind("tsigKey", TsigKey::name()))
            .item(kind("notifier", Notifier::name()))
            .description(Some("A catalog object: its kind and the object"))
            .into()
    }
}

impl utoipa::ToSchema for ObjectSchema {
    fn name() -> std::borrow::Cow<'static, str> {
        std::borrow::Cow::Borrowed("CatalogObject")
    }
}

/// The id of a configured object.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    Serialize,
    Deserialize,
    utoipa::ToSchema,
)]
#[serde(rename_all = "camelCase", tag = "kind", content = "id")]
pub enum ObjectRef {
    /// A zone.
    Zone(ZoneId),
    /// A record set.
    Record(RecordSetId),
    /// A pool.
    Pool(PoolId),
    /// A member.
    Member(MemberId),
    /// A health check.
    Check(CheckId),
    /// A TSIG key.
    TsigKey(TsigKeyId),
    /// A notification target.
    Notifier(NotifierId),
}

impl std::fmt::Display for ObjectRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ObjectRef::Zone(id) => write!(f, "zone {id}"),
            ObjectRef::Record(id) => write!(f, "record set {id}"),
            ObjectRef::Pool(id) => write!(f, "pool {id}"),
            ObjectRef::Member(id) => write!(f, "member {id}"),
            ObjectRef::Check(id) => write!(f, "check {id}"),
            ObjectRef::TsigKey(id) => write!(f, "TSIG key {id}"),
            ObjectRef::Notifier(id) => write!(f, "notification target {id}"),
        }
    }
}

impl Object {
    /// Its id.
    pub fn reference(&self) -> ObjectRef {
        match self {
            Object::Zone(z) => ObjectRef::Zone(z.id),
            Object::Record(r) => ObjectRef::Record(r.id),
            Object::Pool(p) => ObjectRef::Pool(p.id),
            Object::Member(m) => ObjectRef::Member(m.id),
            Object::Check(c) => ObjectRef::Check(c.id),
            Object::TsigKey(k) => ObjectRef::TsigKey(k.id),
            Object::Notifier(n) => ObjectRef::Notifier(n.id),
        }
    }

    fn set_id(&mut self, id: u64) {
        match self {
            Object::Zone(z) => z.id = ZoneId(id),
            Object::Record(r) => r.id = RecordSetId(id),
            Object::Pool(p) => p.id = PoolId(id),
            Object::Member(m) => m.id = MemberId(id),
            Object::Check(c) => c.id = CheckId(id),
            Object::TsigKey(k) => k.id = TsigKeyId(id),
            Object::Notifier(n) => n.id = NotifierId(id),
        }
    }

    /// The object as views show it: a TSIG key's secret left out (it is
    /// shown once, to the client that created it), and a zone's private
    /// keys (never shown).
    pub fn redacted(&self) -> Self {
        match self {
            Object::TsigKey(k) => Object::TsigKey(k.redacted()),
            Object::Notifier(n) => Object::Notifier(n.redacted()),
            Object::Zone(z) => Object::Zone(z.redacted()),
            other => other.clone(),
        }
    }
}

/// What views of an object show: everything but secrets (TSIG secrets,
/// zones' private keys).
pub trait Shown: Clone {
    /// The object as a view shows it.
    fn shown(&self) -> std::borrow::Cow<'_, Self> {
        std::borrow::Cow::Borrowed(self)
    }
}

impl Shown for Zone {
    fn shown(&self) -> std::borrow::Cow<'_, Self> {
        match self.dnssec {
            Some(_) => std::borrow::Cow::Owned(self.redacted()),
            None => std::borrow::Cow::Borrowed(self),
        }
    }
}

impl Shown for TsigKey {
    fn shown(&self) -> std::borrow::Cow<'_, Self> {
        std::borrow::Cow::Owned(self.redacted())
    }
}

impl Shown for Notifier {
    fn shown(&self) -> std::borrow::Cow<'_, Self> {
        std::borrow::Cow::Owned(self.redacted())
    }
}

impl Shown for RecordSet {}
impl Shown for Pool {}
impl Shown for Member {}
impl Shown for Check {}

/// Give every TSIG key and webhook target created without a secret one
/// from `generate` (called where writes enter, before they are validated
/// and replicated, so every replica stores the same secret).
pub fn fill_secrets(ops: &mut [Op], mut generate: impl FnMut() -> Vec<u8>) {
    for op in ops {
        match op.inner_mut() {
            Op::Create(Object::TsigKey(k)) if k.secret.is_empty() => {
                k.secret = Secret(generate());
            }
            Op::Create(Object::Notifier(n))
                if n.secret.is_empty() && n.kind == NotifierKind::Webhook =>
            {
                n.secret = Secret(generate());
            }
            _ => {}
        }
    }
}

/// Bytes of a secret the server generates: HMAC-SHA256's output length.
pub const GENERATED_SECRET_BYTES: usize = 32;

/// One requested write.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "camelCase", tag = "op")]
pub enum Op {
    /// Create; the server assigns the id (see [`CatalogState::prepare`]).
    #[schema(value_type = ObjectSchema)]
    Create(Object),
    /// Replace an existing object.
    #[schema(value_type = ObjectSchema)]
    Update(Object),
    /// Delete an existing object.
    Delete(ObjectRef),
    /// Change some fields of an existing object: `fields` (model names)
    /// are laid over the object as it stands when this write is validated,
    /// so concurrent patches of different fields all survive.
    Patch {
        /// The object.
        target: ObjectRef,
        /// The fields to set, by their model names; the rest keep their value.
        #[schema(value_type = Object)]
        fields: serde_json::Map<String, serde_json::Value>,
    },
    /// Carry out `write` only if its object's revision is still `revision`
    /// (a precondition: `If-Match`, `expectedRevision`, `--if-revision`).
    #[serde(rename_all = "camelCase")]
    IfRevision {
        /// The revision the client read.
        revision: u64,
        /// The update, patch or delete to carry out.
        #[schema(value_type = Object)]
        write: Box<Op>,
    },
    /// Put a deleted object back under its old id (a rollback). Made by
    /// the server only: never read from a client's request.
    #[serde(skip_deserializing)]
    #[schema(value_type = ObjectSchema)]
    Restore(Object),
    /// Replace a signed zone's keys with `keys` if they are still `from`
    /// (a rollover step). Made by the server only: never read from a
    /// client's request.
    #[serde(skip_deserializing)]
    Rekey {
        /// The zone.
        zone: ZoneId,
        /// The keys the step was computed from.
        from: Vec<SigningKey>,
        /// The keys after it.
        keys: Vec<SigningKey>,
    },
}

impl Op {
    /// The write itself, under any precondition.
    pub fn inner(&self) -> &Op {
        match self {
            Op::IfRevision { write, .. } => write.inner(),
            op => op,
        }
    }

    /// The write itself, under any precondition.
    pub fn inner_mut(&mut self) -> &mut Op {
        match self {
            Op::IfRevision { write, .. } => write.inner_mut(),
            op => op,
        }
    }

    /// This write under the precondition that its object is still at
    /// `revision` (none: unconditional).
    pub fn guarded(self, revision: Option<u64>) -> Op {
        match revision {
            None => self,
            Some(revision) => Op::IfRevision {
                revision,
                write: Box::new(self),
            },
        }
    }
}

/// One applied write, as stored and published.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Change {
    /// The catalog version this change produced.
    pub version: u64,
    /// The object written (with its id), or the one deleted.
    pub what: Written,
}

/// What a change did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Written {
    /// Created or replaced.
    Upserted(Box<Object>),
    /// Removed.
    Deleted(ObjectRef),
}

/// A validated write, not yet applied.
#[derive(Debug, Clone, PartialEq)]
pub struct Prepared {
    /// The change it makes.
    pub change: Change,
    /// The id counter after it.
    pub last_id: u64,
}

/// A refused write.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CatalogError {
    /// A field broke a rule (INVALID_ARGUMENT / 400).
    #[error("{0}")]
    Invalid(ValidationError),
    /// The object does not exist (NOT_FOUND / 404).
    #[error("{0} does not exist")]
    NotFound(ObjectRef),
    /// The object is still used by others (FAILED_PRECONDITION / 409).
    #[error("{what} is in use: {by}")]
    InUse {
        /// The object.
        what: ObjectRef,
        /// Who uses it.
        by: String,
    },
    /// A precondition failed: the object changed since the client read it
    /// (FAILED_PRECONDITION / 412). Nothing was written.
    #[error(
        "{what} is at revision {current}, not {expected}: it changed since you read it; read it again and retry"
    )]
    Stale {
        /// The object.
        what: ObjectRef,
        /// The revision the client expected.
        expected: u64,
        /// Its revision now.
        current: u64,
    },
    /// The catalog moved since a plan was made (FAILED_PRECONDITION / 412).
    #[error(
        "the catalog is at version {current}, not {expected} (the plan's): changed since: {changed}; plan again"
    )]
    Moved {
        /// The catalog version the plan was made against.
        expected: u64,
        /// The catalog version now.
        current: u64,
        /// What changed since (objects and their revisions).
        changed: String,
    },
    /// In a batch: which operation failed (0-based), and why.
    #[error("{}: {error}", what.clone().unwrap_or_else(|| format!("operation {index}")))]
    InBatch {
        /// Index of the failing operation.
        index: usize,
        /// Its error.
        error: Box<CatalogError>,
        /// What the operation was, when a plan names it
        /// (`record www.example.test CNAME`).
        what: Option<String>,
    },
}

/// The largest id the server hands out: 2^53 - 1, so clients that read
/// JSON numbers as doubles (JavaScript) read every id exactly.
pub const MAX_ID: u64 = (1 << 53) - 1;

/// Refuse a create that names its own id: ids are assigned by the server
/// only (a client id of u64::MAX once wrapped the counter to 0, the
/// "assign me one" value, and every later create failed).
pub fn refuse_client_ids(ops: &[Op]) -> Result<(), CatalogError> {
    for (index, op) in ops.iter().enumerate() {
        if let Op::Create(object) = op.inner()
            && object_id(object) != 0
        {
            let error = Box::new(client_id(object_id(object)));
            return Err(if ops.len() == 1 {
                *error
            } else {
                CatalogError::InBatch {
                    index,
                    error,
                    what: None,
                }
            });
        }
    }
    Ok(())
}

fn client_id(id: u64) -> CatalogError {
    invalid(
        "id",
        format!("ids are assigned by the server; leave id out (or 0) on create, not {id}"),
    )
}

fn invalid(field: &str, rule: impl Into<String>) -> CatalogError {
    CatalogError::Invalid(ValidationError::single(field, rule))
}

/// The catalog with its version and id counter.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CatalogState {
    /// Every configured object.
    pub catalog: Catalog,
    /// Version of the last accepted change.
    pub version: u64,
    /// Last id handed out.
    pub last_id: u64,
    /// Edge epoch: raised by each deliberate reset (`gslbctl reset-edges`).
    #[serde(default)]
    pub epoch: u64,
    /// Health decisions an operator has paused (`gslbctl decisions pause`).
    #[serde(default)]
    pub hold: DecisionHold,
    /// Each object's revision: the version of its last change. An object
    /// written before revisions were kept has none (read as 0).
    #[serde(default, with = "revisions")]
    pub revisions: Map<ObjectRef, u64>,
    /// The version of the catalog's last change (health decisions move
    /// `version`, not this): what a plan is made against.
    #[serde(default)]
    pub catalog_version: u64,
    /// Members by pool, name and endpoint; record sets by name.
    #[serde(skip)]
    pub(crate) index: ObjectIndex,
}

/// Health decisions held by an operator, for every pool or pool by pool,
/// each with the time it was paused (ms since the Unix epoch). While a
/// member's pool is held, the engine changes none of its health; results
/// are still taken in (see docs/semantics.md "Pausing decisions").
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DecisionHold {
    /// Every pool is held, since then.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub all_since_ms: Option<u64>,
    /// Pools held one by one, each since then.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub pools: std::collections::BTreeMap<PoolId, u64>,
}

impl DecisionHold {
    /// True when decisions for `pool`'s members are held.
    pub fn holds(&self, pool: PoolId) -> bool {
        self.all_since_ms.is_some() || self.pools.contains_key(&pool)
    }

    /// Pause (`paused`) or resume every pool (`pool` none) or one pool at
    /// `now_ms`. Pausing what is paused keeps its time. Resuming every pool
    /// lifts the global hold only; pools held one by one stay held.
    pub fn set(&mut self, pool: Option<PoolId>, paused: bool, now_ms: u64) {
        match (pool, paused) {
            (None, true) => drop(self.all_since_ms.get_or_insert(now_ms)),
            (None, false) => self.all_since_ms = None,
            (Some(p), true) => drop(self.pools.entry(p).or_insert(now_ms)),
            (Some(p), false) => drop(self.pools.remove(&p)),
        }
    }

    /// The pools held one by one, in id order.
    pub fn pool_ids(&self) -> Vec<PoolId> {
        self.pools.keys().copied().collect()
    }
}

impl CatalogState {
    /// Apply one write; on error nothing changed.
    pub fn apply(&mut self, op: Op) -> Result<Change, CatalogError> {
        let prepared = self.prepare(op)?;
        Ok(self.commit(prepared))
    }

    /// Validate one write without changing anything: the change it would
    /// make (version and id included). Apply it with [`CatalogState::commit`]
    /// before any other write, e.g. once it is durable.
    pub fn prepare(&self, op: Op) -> Result<Prepared, CatalogError> {
        let mut last_id = self.last_id;
        let what = match op {
            Op::Create(mut object) => {
                let next = self
                    .last_id
                    .checked_add(1)
                    .filter(|&n| n <= MAX_ID)
                    .ok_or_else(|| {
                        invalid("id", format!("every id up to {MAX_ID} has been used"))
                    })?;
                // 0 asks for the next id; a declarative plan names the
                // next id itself (it reserved it to link references).
                let id = match object_id(&object) {
                    0 => next,
                    id if id == next => id,
                    id => return Err(client_id(id)),
                };
                object.set_id(id);
                if let Object::Zone(z) = &object {
                    signing::has_keys(z)?;
                }
                if self.exists(object.reference()) {
                    return Err(invalid(
                        "id",
                        format!("{} already exists", object.reference()),
                    ));
                }
                self.check_object(&object)?;
                last_id = last_id.max(id);
                Written::Upserted(Box::new(object))
            }
            Op::Update(mut object) => {
                if !self.exists(object.reference()) {
                    return Err(CatalogError::NotFound(object.reference()));
                }
                // A key updated without its secret keeps the one it has
                // (views never show it, so a client cannot send it back).
                if let Object::TsigKey(k) = &mut object
                    && k.secret.is_empty()
                    && let Some(old) = self.catalog.tsig_keys.get(&k.id)
                {
                    k.secret = old.secret.clone();
                }
                if let Object::Notifier(n) = &mut object
                    && let Some(old) = self.catalog.notifiers.get(&n.id)
                {
                    // Views show neither the secret nor the URL's path, so
                    // a client sending them back as shown keeps the real ones.
                    if n.secret.is_empty() && old.kind == n.kind {
                        n.secret = old.secret.clone();
                    }
                    if n.url == shown_url(&old.url) {
                        n.url = old.url.clone();
                    }
                }
                if let Object::Zone(z) = &mut object
                    && let Some(old) = self.catalog.zones.get(&z.id)
                {
                    signing::keep(old, z)?;
                    signing::has_keys(z)?;
                }
                self.check_object(&object)?;
                Written::Upserted(Box::new(object))
            }
            Op::Rekey { zone, from, keys } => {
                let z = signing::rekeyed(self.catalog.zones.get(&zone), zone, &from, keys)?;
                let object = Object::Zone(z);
                self.check_object(&object)?;
                Written::Upserted(Box::new(object))
            }
            Op::Delete(reference) => {
                if !self.exists(reference) {
                    return Err(CatalogError::NotFound(reference));
                }
                self.check_delete(reference)?;
                Written::Deleted(reference)
            }
            Op::Restore(object) => {
                let id = object_id(&object);
                if id == 0 || id > self.last_id {
                    return Err(client_id(id));
                }
                if self.exists(object.reference()) {
                    return Err(invalid(
                        "id",
                        format!("{} already exists", object.reference()),
                    ));
                }
                self.check_object(&object)?;
                Written::Upserted(Box::new(object))
            }
            Op::Patch { target, fields } => {
                return self.prepare(Op::Update(self.patched(target, fields)?));
            }
            Op::IfRevision { revision, write } => {
                let target = match write.as_ref() {
                    Op::Update(object) => object.reference(),
                    Op::Delete(r) | Op::Patch { target: r, .. } => *r,
                    Op::Create(_) | Op::Restore(_) | Op::Rekey { .. } | Op::IfRevision { .. } => {
                        return Err(invalid(
                            "revision",
                            "a precondition goes with an update, a patch or a delete",
                        ));
                    }
                };
                let current = self
                    .revision(target)
                    .ok_or(CatalogError::NotFound(target))?;
                if current != revision {
                    return Err(CatalogError::Stale {
                        what: target,
                        expected: revision,
                        current,
                    });
                }
                return self.prepare(*write);
            }
        };
        Ok(Prepared {
            change: Change {
                version: self.version + 1,
                what,
            },
            last_id,
        })
    }

    /// Apply a prepared write (prepared against this very state).
    pub fn commit(&mut self, prepared: Prepared) -> Change {
        let Prepared { change, last_id } = prepared;
        match &change.what {
            Written::Upserted(object) => self.put(object.as_ref().clone()),
            Written::Deleted(r) => self.remove(*r),
        }
        self.note(&change);
        self.last_id = last_id;
        self.version = change.version;
        change
    }

    /// Record `change`'s version as its object's revision and the
    /// catalog's version (again after a Raft store renumbered it).
    pub fn note(&mut self, change: &Change) {
        match &change.what {
            Written::Upserted(object) => {
                self.revisions.insert(object.reference(), change.version);
            }
            Written::Deleted(r) => drop(self.revisions.remove(r)),
        }
        self.catalog_version = change.version;
    }

    /// An existing object's revision (0 when it was written before
    /// revisions were kept); `None` when it does not exist.
    pub fn revision(&self, r: ObjectRef) -> Option<u64> {
        self.exists(r)
            .then(|| self.revisions.get(&r).copied().unwrap_or(0))
    }

    /// The object `r`, as stored (secrets included).
    pub fn object(&self, r: ObjectRef) -> Option<Object> {
        let c = &self.catalog;
        match r {
            ObjectRef::Zone(id) => c.zones.get(&id).cloned().map(Object::Zone),
            ObjectRef::Record(id) => c.records.get(&id).cloned().map(Object::Record),
            ObjectRef::Pool(id) => c.pools.get(&id).cloned().map(Object::Pool),
            ObjectRef::Member(id) => c.members.get(&id).cloned().map(Object::Member),
            ObjectRef::Check(id) => c.checks.get(&id).cloned().map(Object::Check),
            ObjectRef::TsigKey(id) => c.tsig_keys.get(&id).cloned().map(Object::TsigKey),
            ObjectRef::Notifier(id) => c.notifiers.get(&id).cloned().map(Object::Notifier),
        }
    }

    /// `target` as it stands with `fields` laid over it: the merge happens
    /// here, against the current state, never against a caller's copy.
    fn patched(
        &self,
        target: ObjectRef,
        mut fields: serde_json::Map<String, serde_json::Value>,
    ) -> Result<Object, CatalogError> {
        let current = self.object(target).ok_or(CatalogError::NotFound(target))?;
        let id = object_id(&current);
        if let Some(given) = fields.remove("id").filter(|v| !v.is_null())
            && given.as_u64() != Some(id)
        {
            return Err(invalid(
                "id",
                format!("must be the id in the path or message ({id}), not {given}"),
            ));
        }
        let mut whole = serde_json::to_value(&current).unwrap_or_default();
        let mut laid = match whole.get_mut("object").map(serde_json::Value::take) {
            Some(serde_json::Value::Object(map)) => map,
            _ => serde_json::Map::new(),
        };
        // null resets a field to its default (as if the object were
        // written without it); anything else replaces it.
        for (key, value) in fields {
            if value.is_null() {
                laid.remove(&key);
            } else {
                laid.insert(key, value);
            }
        }
        laid.insert("id".into(), serde_json::Value::from(id));
        let laid = serde_json::Value::Object(laid);
        let decoded = |e| CatalogError::Invalid(e);
        let object = match current {
            Object::Zone(_) => {
                Object::Zone(gslb_shared::defaults::decode("", laid).map_err(decoded)?)
            }
            Object::Record(_) => {
                Object::Record(gslb_shared::defaults::decode("", laid).map_err(decoded)?)
            }
            Object::Pool(_) => {
                Object::Pool(gslb_shared::defaults::decode("", laid).map_err(decoded)?)
            }
            Object::Member(_) => {
                Object::Member(gslb_shared::defaults::decode("", laid).map_err(decoded)?)
            }
            Object::Check(_) => {
                Object::Check(gslb_shared::defaults::decode("", laid).map_err(decoded)?)
            }
            Object::TsigKey(_) => {
                Object::TsigKey(gslb_shared::defaults::decode("", laid).map_err(decoded)?)
            }
            Object::Notifier(_) => {
                Object::Notifier(gslb_shared::defaults::decode("", laid).map_err(decoded)?)
            }
        };
        Ok(object)
    }

    /// What changed in the catalog after version `since`: the objects
    /// written since, with their revisions (deletions are not listed:
    /// the audit log has them). At most `limit` named.
    pub fn changed_since(&self, since: u64, limit: usize) -> String {
        let mut changed: Vec<(u64, ObjectRef)> = self
            .revisions
            .iter()
            .filter(|(_, v)| **v > since)
            .map(|(r, v)| (*v, *r))
            .collect();
        changed.sort();
        let mut text: Vec<String> = changed
            .iter()
            .take(limit)
            .map(|(v, r)| format!("{r} (revision {v})"))
            .collect();
        if changed.len() > limit {
            text.push(format!("and {} more", changed.len() - limit));
        }
        if text.is_empty() {
            "objects deleted (see gslbctl audit)".to_owned()
        } else {
            text.join(", ")
        }
    }

    /// Apply every write or none: on the first error the state is unchanged.
    pub fn apply_all(&mut self, ops: Vec<Op>) -> Result<Vec<Change>, CatalogError> {
        let mut trial = self.clone();
        let mut changes = Vec::with_capacity(ops.len());
        for (index, op) in ops.into_iter().enumerate() {
            let change = trial.apply(op).map_err(|error| CatalogError::InBatch {
                index,
                error: Box::new(error),
                what: None,
            })?;
            changes.push(change);
        }
        *self = trial;
        Ok(changes)
    }

    /// True when the object exists.
    pub fn exists(&self, r: ObjectRef) -> bool {
        let c = &self.catalog;
        match r {
            ObjectRef::Zone(id) => c.zones.contains_key(&id),
            ObjectRef::Record(id) => c.records.contains_key(&id),
            ObjectRef::Pool(id) => c.pools.contains_key(&id),
            ObjectRef::Member(id) => c.members.contains_key(&id),
            ObjectRef::Check(id) => c.checks.contains_key(&id),
            ObjectRef::TsigKey(id) => c.tsig_keys.contains_key(&id),
            ObjectRef::Notifier(id) => c.notifiers.contains_key(&id),
        }
    }

    /// Every object, cloned, in kind then id order.
    pub fn objects(&self) -> impl Iterator<Item = Object> + '_ {
        let c = &self.catalog;
        (c.zones.values().cloned().map(Object::Zone))
            .chain(c.records.values().cloned().map(Object::Record))
            .chain(c.pools.values().cloned().map(Object::Pool))
            .chain(c.members.values().cloned().map(Object::Member))
            .chain(c.checks.values().cloned().map(Object::Check))
            .chain(c.tsig_keys.values().cloned().map(Object::TsigKey))
            .chain(c.notifiers.values().cloned().map(Object::Notifier))
    }

    /// Store an already-validated object (also used when loading from disk).
    pub fn put(&mut self, object: Object) {
        let c = &mut self.catalog;
        match object {
            Object::Zone(z) => drop(c.zones.insert(z.id, z)),
            Object::Record(r) => {
                if let Some(index) = self.index.0.get_mut() {
                    if let Some(old) = c.records.get(&r.id) {
                        index.drop_record(old);
                    }
                    index.add_record(&r);
                }
                c.records.insert(r.id, r);
            }
            Object::Pool(p) => drop(c.pools.insert(p.id, p)),
            Object::Member(m) => {
                if let Some(index) = self.index.0.get_mut() {
                    if let Some(old) = c.members.get(&m.id) {
                        index.drop_member(old);
                    }
                    index.add(&m);
                }
                c.members.insert(m.id, m);
            }
            Object::Check(k) => drop(c.checks.insert(k.id, k)),
            Object::TsigKey(k) => drop(c.tsig_keys.insert(k.id, k)),
            Object::Notifier(n) => drop(c.notifiers.insert(n.id, n)),
        }
    }

    /// Remove an object (also used when loading from disk).
    pub fn remove(&mut self, r: ObjectRef) {
        let c = &mut self.catalog;
        match r {
            ObjectRef::Zone(id) => drop(c.zones.remove(&id)),
            ObjectRef::Record(id) => {
                if let Some(old) = c.records.remove(&id)
                    && let Some(index) = self.index.0.get_mut()
                {
                    index.drop_record(&old);
                }
            }
            ObjectRef::Pool(id) => {
                c.pools.remove(&id);
                // A deleted pool's hold goes with it.
                self.hold.pools.remove(&id);
            }
            ObjectRef::Member(id) => {
                if let Some(old) = c.members.remove(&id)
                    && let Some(index) = self.index.0.get_mut()
                {
                    index.drop_member(&old);
                }
            }
            ObjectRef::Check(id) => drop(c.checks.remove(&id)),
            ObjectRef::TsigKey(id) => drop(c.tsig_keys.remove(&id)),
            ObjectRef::Notifier(id) => drop(c.notifiers.remove(&id)),
        }
    }

    /// The indexes, built on first use (one pass over members and records).
    fn indexes(&self) -> &Indexes {
        self.index.0.get_or_init(|| {
            let mut index = Indexes::default();
            for m in self.catalog.members.values() {
                index.add(m);
            }
            for r in self.catalog.records.values() {
                index.add_record(r);
            }
            index
        })
    }

    /// Build the indexes now, so later reads (and copies of this
    /// state) never pay for them.
    pub fn build_index(&self) {
        self.indexes();
    }

    /// The member of `pool` named `name`, if any.
    fn member_named(&self, pool: PoolId, name: &str) -> Option<MemberId> {
        self.indexes()
            .by_name
            .get(&(pool, gslb_shared::validate::name_key(name)))
            .copied()
    }

    /// The ids of a pool's members, in id order: the pool's size, whatever
    /// the catalog's.
    pub fn pool_member_ids(&self, pool: PoolId) -> impl Iterator<Item = MemberId> + '_ {
        let first = (pool, MemberId(0));
        let last = (pool, MemberId(u64::MAX));
        self.indexes()
            .by_pool
            .range(first..=last)
            .map(|(_, id)| *id)
    }

    /// A pool's members, in id order.
    pub fn pool_members(&self, pool: PoolId) -> impl Iterator<Item = &Member> + '_ {
        self.pool_member_ids(pool)
            .filter_map(|id| self.catalog.members.get(&id))
    }

    fn check_object(&self, object: &Object) -> Result<(), CatalogError> {
        let c = &self.catalog;
        match object {
            Object::Zone(z) => {
                validate::zone(z).map_err(CatalogError::Invalid)?;
                self.check_transfer_keys(&z.transfer)?;
                if let Some(old) = c.zones.get(&z.id)
                    && old.apex != z.apex
                {
                    return Err(invalid("apex", "cannot change; create a new zone"));
                }
                if let Some(other) = c.zones.values().find(|o| o.apex == z.apex && o.id != z.id) {
                    return Err(invalid(
                        "apex",
                        format!("zone {} already serves {}", other.id, z.apex),
                    ));
                }
                // A zone inside another served zone is allowed (its names
                // are answered from it, the longest apex wins), but not
                // over records of the parent it would hide.
                if let Some(hidden) = c.records.values().find(|r| {
                    r.zone != z.id
                        && r.name.is_in_zone(&z.apex)
                        && !delegation_at(r, &z.apex)
                        && c.zones
                            .get(&r.zone)
                            .is_some_and(|p| z.apex.is_in_zone(&p.apex))
                }) {
                    return Err(invalid(
                        "apex",
                        format!(
                            "record set {} ({} {}) of zone {} is at or below {}: it would be hidden; move or delete it first",
                            hidden.id, hidden.name, hidden.rtype, hidden.zone, z.apex
                        ),
                    ));
                }
                Ok(())
            }
            Object::Record(r) => {
                let zone = c
                    .zones
                    .get(&r.zone)
                    .ok_or_else(|| invalid("zone", format!("zone {} does not exist", r.zone)))?;
                validate::record(r, zone).map_err(CatalogError::Invalid)?;
                // At and below a child zone's apex, a parent's record is
                // never answered: the child zone serves those names. Only
                // the delegation's NS and DS sets may be at its apex (the
                // parent's side of the cut; DS is answered from it).
                if let Some(child) = c.zones.values().find(|z| {
                    z.id != zone.id && z.apex.is_in_zone(&zone.apex) && r.name.is_in_zone(&z.apex)
                }) && !delegation_at(r, &child.apex)
                {
                    return Err(invalid(
                        "name",
                        format!(
                            "{} is at or below {}, served by zone {}: write it there (only the delegation's NS and DS sets may be at its apex)",
                            r.name, child.apex, child.id
                        ),
                    ));
                }
                if let RecordData::Dynamic(d) = &r.data
                    && let Some(missing) = d.all_pools().find(|p| !c.pools.contains_key(*p))
                {
                    return Err(invalid(
                        "data.dynamic.pools",
                        format!("pool {missing} does not exist"),
                    ));
                }
                self.check_cuts(r, zone)?;
                self.check_hostnames(object)?;
                for other in self
                    .indexes()
                    .records_at(&r.name)
                    .filter(|&id| id != r.id)
                    .filter_map(|id| c.records.get(&id))
                {
                    if other.rtype == r.rtype {
                        return Err(invalid(
                            "name",
                            format!(
                                "{} already has a {:?} record set ({})",
                                r.name, r.rtype, other.id
                            ),
                        ));
                    }
                    if other.rtype == RecordType::Cname || r.rtype == RecordType::Cname {
                        return Err(invalid(
                            "type",
                            format!("a CNAME at {} cannot coexist with other types", r.name),
                        ));
                    }
                }
                Ok(())
            }
            Object::Pool(p) => {
                validate::pool(p).map_err(CatalogError::Invalid)?;
                // Names are what declarative documents key pools by.
                let key = gslb_shared::validate::name_key(&p.name);
                if let Some(other) = (c.pools.values())
                    .find(|o| o.id != p.id && gslb_shared::validate::name_key(&o.name) == key)
                {
                    return Err(invalid(
                        "name",
                        format!("pool {} is already named {:?}", other.id, p.name),
                    ));
                }
                if let Some(check) = p.check
                    && !c.checks.contains_key(&check)
                {
                    return Err(invalid("check", format!("check {check} does not exist")));
                }
                Ok(())
            }
            Object::Member(m) => {
                validate::member(m).map_err(CatalogError::Invalid)?;
                if !c.pools.contains_key(&m.pool) {
                    return Err(invalid("pool", format!("pool {} does not exist", m.pool)));
                }
                // Names are what declarative documents key members by.
                if let Some(other) = self.member_named(m.pool, &m.name)
                    && other != m.id
                {
                    return Err(invalid(
                        "name",
                        format!(
                            "member {other} of pool {} is already named {:?}",
                            m.pool, m.name
                        ),
                    ));
                }
                // Two members at one endpoint would answer one address twice.
                if let Some(&other) =
                    (self.indexes().by_endpoint).get(&(m.pool, m.address.clone(), m.port))
                    && other != m.id
                {
                    return Err(invalid(
                        "address",
                        format!(
                            "member {other} of pool {} already has address {} and port {}: \
                             one endpoint may be a member of a pool once",
                            m.pool, m.address, m.port
                        ),
                    ));
                }
                self.check_hostnames(object)?;
                Ok(())
            }
            Object::TsigKey(k) => {
                validate::tsig_key(k).map_err(CatalogError::Invalid)?;
                if let Some(other) = c.tsig_key(&k.name).filter(|o| o.id != k.id) {
                    return Err(invalid(
                        "name",
                        format!("TSIG key {} is already named {}", other.id, k.name),
                    ));
                }
                if let Some(old) = c.tsig_keys.get(&k.id)
                    && old.name != k.name
                    && let Some(z) = self.zone_using_key(&old.name)
                {
                    return Err(invalid(
                        "name",
                        format!(
                            "zone {} ({}) names the key {}: rename it there first",
                            z.id, z.apex, old.name
                        ),
                    ));
                }
                Ok(())
            }
            Object::Notifier(n) => {
                validate::notifier(n).map_err(CatalogError::Invalid)?;
                let key = gslb_shared::validate::name_key(&n.name);
                if let Some(other) = (c.notifiers.values())
                    .find(|o| o.id != n.id && gslb_shared::validate::name_key(&o.name) == key)
                {
                    return Err(invalid(
                        "name",
                        format!(
                            "notification target {} is already named {:?}",
                            other.id, n.name
                        ),
                    ));
                }
                self.check_filter(&n.filter)
            }
            Object::Check(k) => {
                validate::check(k).map_err(CatalogError::Invalid)?;
                let key = gslb_shared::validate::name_key(&k.name);
                if let Some(other) = (c.checks.values())
                    .find(|o| o.id != k.id && gslb_shared::validate::name_key(&o.name) == key)
                {
                    return Err(invalid(
                        "name",
                        format!("check {} is already named {:?}", other.id, k.name),
                    ));
                }
                Ok(())
            }
        }
    }

    fn check_delete(&self, r: ObjectRef) -> Result<(), CatalogError> {
        let c = &self.catalog;
        let in_use = |by: String| Err(CatalogError::InUse { what: r, by });
        match r {
            ObjectRef::Zone(id) => match c.records.values().find(|x| x.zone == id) {
                Some(x) => in_use(format!("record set {} ({}) is in it", x.id, x.name)),
                None => Ok(()),
            },
            ObjectRef::Pool(id) => {
                if let Some(m) = self.pool_member_ids(id).next() {
                    return in_use(format!("member {m} belongs to it"));
                }
                let uses = |x: &&RecordSet| match &x.data {
                    RecordData::Dynamic(d) => {
                        d.pools.contains(&id) || d.geo.iter().any(|b| b.pools.contains(&id))
                    }
                    RecordData::Static(_) => false,
                };
                match c.records.values().find(uses) {
                    Some(x) => in_use(format!("record set {} ({}) answers from it", x.id, x.name)),
                    None => Ok(()),
                }
            }
            ObjectRef::Check(id) => match c.pools.values().find(|p| p.check == Some(id)) {
                Some(p) => in_use(format!("pool {} ({}) uses it", p.id, p.name)),
                None => Ok(()),
            },
            ObjectRef::Record(id) => match c.records.get(&id).and_then(|x| self.orphan_of(x)) {
                Some(ds) => in_use(format!(
                    "record set {} ({} DS) needs this delegation: delete it first",
                    ds.id, ds.name
                )),
                None => Ok(()),
            },
            ObjectRef::TsigKey(id) => match c
                .tsig_keys
                .get(&id)
                .and_then(|k| self.zone_using_key(&k.name))
            {
                Some(z) => in_use(format!("zone {} ({}) transfers with it", z.id, z.apex)),
                None => Ok(()),
            },
            // A filter names pools and members by name: deleting one
            // leaves a name that matches nothing, as a typo would have.
            ObjectRef::Member(_) | ObjectRef::Notifier(_) => Ok(()),
        }
    }

    /// A filter's zones, pools and members must exist when it is written
    /// (a typo would otherwise silence the target).
    fn check_filter(&self, filter: &NotifyFilter) -> Result<(), CatalogError> {
        let c = &self.catalog;
        for (i, apex) in filter.zones.iter().enumerate() {
            if !c.zones.values().any(|z| &z.apex == apex) {
                return Err(invalid(
                    &format!("filter.zones[{i}]"),
                    format!("zone {apex} does not exist"),
                ));
            }
        }
        for (i, name) in filter.pools.iter().enumerate() {
            if !c.pools.values().any(|p| &p.name == name) {
                return Err(invalid(
                    &format!("filter.pools[{i}]"),
                    format!("pool {name:?} does not exist"),
                ));
            }
        }
        for (i, name) in filter.members.iter().enumerate() {
            if !c.members.values().any(|m| &m.name == name) {
                return Err(invalid(
                    &format!("filter.members[{i}]"),
                    format!("no member is named {name:?}"),
                ));
            }
        }
        Ok(())
    }

    /// A zone whose transfer settings name the key `name`.
    fn zone_using_key(&self, name: &DnsName) -> Option<&Zone> {
        self.catalog.zones.values().find(|z| {
            let t = &z.transfer;
            t.allow.iter().any(|p| &p.key == name)
                || t.notify.iter().any(|n| n.key.as_ref() == Some(name))
        })
    }

    /// Every key a zone's transfer settings name must exist.
    fn check_transfer_keys(&self, t: &Transfer) -> Result<(), CatalogError> {
        let allow =
            (t.allow.iter().enumerate()).map(|(i, p)| (format!("transfer.allow[{i}].key"), &p.key));
        let notify = (t.notify.iter().enumerate())
            .filter_map(|(i, n)| Some((format!("transfer.notify[{i}].key"), n.key.as_ref()?)));
        for (field, key) in allow.chain(notify) {
            if self.catalog.tsig_key(key).is_none() {
                return Err(invalid(
                    &field,
                    format!("TSIG key {key} does not exist; create it with gslbctl tsig create"),
                ));
            }
        }
        Ok(())
    }
}

/// True for a parent's side of the delegation to a child zone at
/// `child_apex`: a static NS or DS set owned by that apex.
fn delegation_at(r: &RecordSet, child_apex: &DnsName) -> bool {
    &r.name == child_apex
        && matches!(r.rtype, RecordType::Ns | RecordType::Ds)
        && matches!(r.data, RecordData::Static(_))
}

fn object_id(object: &Object) -> u64 {
    match object {
        Object::Zone(z) => z.id.0,
        Object::Record(r) => r.id.0,
        Object::Pool(p) => p.id.0,
        Object::Member(m) => m.id.0,
        Object::Check(c) => c.id.0,
        Object::TsigKey(k) => k.id.0,
        Object::Notifier(n) => n.id.0,
    }
}

/// Revisions as a list of pairs: JSON map keys must be strings, and an
/// [`ObjectRef`] is an object.
mod revisions {
    use super::{Map, ObjectRef};
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(map: &Map<ObjectRef, u64>, s: S) -> Result<S::Ok, S::Error> {
        let pairs: Vec<(&ObjectRef, &u64)> = map.iter().collect();
        pairs.serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Map<ObjectRef, u64>, D::Error> {
        let pairs: Vec<(ObjectRef, u64)> = Vec::deserialize(d)?;
        Ok(pairs.into_iter().collect())
    }
}
