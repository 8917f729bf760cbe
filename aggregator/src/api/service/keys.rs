//! Key rollover commands on the service: a step computed from the
//! published view's keys and written as `Op::Rekey` (refused when the
//! keys changed meanwhile). Operators start rollovers and confirm a new
//! DS here; the rollover driver (`api::rollover`) writes its due steps
//! through [`Service::rekey`].

use gslb_shared::clock::now_secs;
use gslb_shared::rollover;
use gslb_shared::{KeyRole, SigningKey, ZoneId, ZoneSigning};

use super::Service;
use crate::core::catalog::{Change, Op};
use crate::core::control::ControlError;

fn refused(rule: String) -> ControlError {
    crate::core::catalog::CatalogError::Invalid(gslb_shared::validate::ValidationError::single(
        "dnssec", rule,
    ))
    .into()
}

impl Service {
    /// Write the keys `step` makes of zone `id`'s current ones (nothing when
    /// it makes none).
    pub async fn rekey(
        &self,
        id: ZoneId,
        step: impl FnOnce(&ZoneSigning) -> Result<Option<Vec<SigningKey>>, String>,
    ) -> Result<Option<Change>, ControlError> {
        let view = self.view();
        let Some(z) = view.catalog().zones.get(&id) else {
            return Err(crate::core::catalog::CatalogError::NotFound(
                crate::core::catalog::ObjectRef::Zone(id),
            )
            .into());
        };
        let Some(s) = &z.dnssec else {
            return Err(refused(format!("zone {} is not signed", z.apex)));
        };
        let Some(keys) = step(s).map_err(refused)? else {
            return Ok(None);
        };
        let op = Op::Rekey {
            zone: id,
            from: s.keys.clone(),
            keys,
        };
        drop(view);
        self.write_one(op).await.map(Some)
    }

    /// Start a rollover of zone `id`'s `role` key on demand.
    pub async fn start_rollover(
        &self,
        id: ZoneId,
        role: KeyRole,
    ) -> Result<Option<Change>, ControlError> {
        self.rekey(id, |s| {
            let new = crate::api::secrets::new_key(s.algorithm, role)
                .ok_or_else(|| "the server could not make a key; try again".to_owned())?;
            rollover::start(s, role, new, now_secs()).map(Some)
        })
        .await
    }

    /// The operator saw zone `id`'s new DS at the parent.
    pub async fn ds_seen(&self, id: ZoneId) -> Result<Option<Change>, ControlError> {
        self.rekey(id, |s| rollover::ds_seen(s, now_secs()).map(Some))
            .await
    }
}
