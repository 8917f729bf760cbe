//! The REST API at `/api/v1` (seed 000's paths and their siblings), JSON in
//! camelCase. Handlers are thin: they decode, call the same control core as
//! the gRPC service, and encode; errors map to HTTP in one place.

mod error;
mod members;
mod objects;
pub(crate) mod status;

use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post, put};

pub use error::ApiError;

use crate::service::Service;

/// Every REST route, for the HTTP listener.
pub fn router(service: Arc<Service>) -> Router {
    Router::new()
        .route(
            "/api/v1/zones",
            get(objects::list_zones).post(objects::create_zone),
        )
        .route(
            "/api/v1/zones/{id}",
            get(objects::get_zone)
                .put(objects::update_zone)
                .delete(objects::delete_zone),
        )
        .route(
            "/api/v1/records",
            get(objects::list_records).post(objects::create_record),
        )
        .route(
            "/api/v1/records/{id}",
            get(objects::get_record)
                .put(objects::update_record)
                .delete(objects::delete_record),
        )
        .route(
            "/api/v1/pools",
            get(objects::list_pools).post(objects::create_pool),
        )
        .route(
            "/api/v1/pools/{id}",
            get(objects::get_pool)
                .put(objects::update_pool)
                .delete(objects::delete_pool),
        )
        .route("/api/v1/pools/{id}/status", get(status::pool_status))
        .route(
            "/api/v1/pools/{id}/members",
            get(members::list).post(members::create),
        )
        .route(
            "/api/v1/members/{id}",
            get(members::get)
                .put(members::update)
                .delete(members::delete),
        )
        .route("/api/v1/members/{id}/status", get(status::member_status))
        .route("/api/v1/members/{id}/logs", get(status::member_logs))
        .route("/api/v1/members/{id}/health", put(members::manual_health))
        .route("/api/v1/members/{id}/heartbeat", post(members::heartbeat))
        .route(
            "/api/v1/checks",
            get(objects::list_checks).post(objects::create_check),
        )
        .route(
            "/api/v1/checks/{id}",
            get(objects::get_check)
                .put(objects::update_check)
                .delete(objects::delete_check),
        )
        .route("/api/v1/explain", get(status::explain))
        .route("/api/v1/apply", post(objects::apply))
        .route("/api/v1/config", post(objects::apply_config))
        .route("/api/v1/agents", get(status::agents))
        .route("/api/v1/edges", get(status::edges))
        .with_state(service)
}
