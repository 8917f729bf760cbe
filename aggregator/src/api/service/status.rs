//! The one place where errors become gRPC statuses.

use gslb_shared::validate::ValidationError;
use tonic::Status;

use crate::core::catalog::CatalogError;
use crate::core::control::ControlError;
use crate::core::store::StoreError;
use gslb_engine::EngineError;

/// A peer sent something that does not convert: INVALID_ARGUMENT naming it.
pub fn invalid(err: ValidationError) -> Status {
    Status::invalid_argument(err.to_string())
}

fn catalog(err: &CatalogError) -> Status {
    match err {
        CatalogError::Invalid(v) => Status::invalid_argument(v.to_string()),
        CatalogError::NotFound(_) => Status::not_found(err.to_string()),
        CatalogError::InUse { .. } | CatalogError::Stale { .. } | CatalogError::Moved { .. } => {
            Status::failed_precondition(err.to_string())
        }
        CatalogError::InBatch { error, .. } => {
            let inner = catalog(error);
            Status::new(inner.code(), err.to_string())
        }
    }
}

fn engine(err: &EngineError) -> Status {
    match err {
        EngineError::UnknownMember(_) | EngineError::UnknownCheck(_) => {
            Status::not_found(err.to_string())
        }
        EngineError::ManualHealthRefused { .. }
        | EngineError::NotEphemeral(_)
        | EngineError::UnknownLocation(_) => Status::failed_precondition(err.to_string()),
        EngineError::TooManyLocations => Status::resource_exhausted(err.to_string()),
    }
}

impl From<ControlError> for Status {
    fn from(err: ControlError) -> Self {
        match &err {
            ControlError::Catalog(e) => catalog(e),
            ControlError::Engine(e) => engine(e),
            ControlError::Store(StoreError::NotReplicated {
                leader: Some(hint), ..
            }) => not_leader(Some(hint.clone())),
            ControlError::Store(e) => Status::unavailable(format!("not stored: {e}")),
            ControlError::Scope(e) => Status::permission_denied(e.to_string()),
        }
    }
}

/// The status a node that does not lead answers with.
pub fn not_leader(hint: Option<crate::replication::cluster::LeaderHint>) -> Status {
    match hint {
        Some((id, addr)) => {
            let mut status = Status::unavailable(format!(
                "this node is not the leader; node {id} at {addr} is (retry there)"
            ));
            if let Ok(value) = addr.parse() {
                status
                    .metadata_mut()
                    .insert(gslb_proto::metadata::LEADER, value);
            }
            status
        }
        None => Status::unavailable(
            "no leader is known (an election is under way or the quorum is lost); retry shortly",
        ),
    }
}
