//! The one place where errors become gRPC statuses.

use gslb_shared::validate::ValidationError;
use tonic::Status;

use crate::catalog::CatalogError;
use crate::control::ControlError;
use gslb_engine::EngineError;
use crate::store::StoreError;

/// A peer sent something that does not convert: INVALID_ARGUMENT naming it.
pub fn invalid(err: ValidationError) -> Status {
    Status::invalid_argument(err.to_string())
}

fn catalog(err: &CatalogError) -> Status {
    match err {
        CatalogError::Invalid(v) => Status::invalid_argument(v.to_string()),
        CatalogError::NotFound(_) => Status::not_found(err.to_string()),
        CatalogError::InUse { .. } => Status::failed_precondition(err.to_string()),
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
            }) => crate::cluster::gate::not_leader(Some(hint.clone())),
            ControlError::Store(e) => Status::unavailable(format!("not stored: {e}")),
        }
    }
}
