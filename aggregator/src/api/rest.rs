//! The REST API at `/api/v1` (seed 000's paths and their siblings), JSON in
//! camelCase. Handlers are thin: they decode, call the same control core as
//! the gRPC service, and encode; errors map to HTTP in one place.

mod audit;
mod decisions;
mod dnssec;
mod error;
mod members;
mod objects;
pub mod openapi;
mod permit;
mod query;
pub(crate) mod status;
mod tsig;
mod zonefile;

use std::sync::Arc;

use axum::Router;
use axum::handler::Handler;
use axum::http::Method;
use axum::routing::{MethodFilter, on};

pub use error::ApiError;

use crate::api::service::Service;

/// Every REST route, for the HTTP listener. Every error, axum's own
/// rejections and unknown paths or methods included, has the JSON shape.
pub fn router(service: Arc<Service>) -> Router {
    let table = table();
    let takes_query = Arc::new(table.takes_query);
    table
        .router
        .route_layer(axum::middleware::from_fn_with_state(
            service.clone(),
            permit::rest_access,
        ))
        .route_layer(axum::middleware::from_fn_with_state(
            takes_query,
            query::refuse_unasked,
        ))
        .fallback(|| async { ApiError::not_found("no such path") })
        .method_not_allowed_fallback(|| async { ApiError::method_not_allowed() })
        .layer(axum::middleware::map_response(error::as_json))
        .with_state(service)
}

/// Every route the router serves, as (method, path): what the
/// authorization test walks, so a route added here is tested there.
pub fn routes() -> Vec<(Method, &'static str)> {
    table().list
}

/// The router and its route list, built together so they cannot differ.
struct Table {
    router: Router<Arc<Service>>,
    list: Vec<(Method, &'static str)>,
    /// The routes that read a query string; every other route refuses one.
    takes_query: query::Routes,
}

impl Table {
    fn add<H, T>(mut self, method: Method, path: &'static str, handler: H) -> Self
    where
        H: Handler<T, Arc<Service>>,
        T: 'static,
    {
        let filter = MethodFilter::try_from(method.clone()).unwrap_or(MethodFilter::GET);
        self.router = self.router.route(path, on(filter, handler));
        self.list.push((method, path));
        self
    }

    /// The route added last reads a query string (its parameters are a
    /// struct that refuses unknown fields).
    fn with_query(mut self) -> Self {
        if let Some(route) = self.list.last() {
            self.takes_query.insert(route.clone());
        }
        self
    }

    /// A route whose body may be up to `limit` bytes (axum's default is
    /// 2 MiB).
    fn add_large<H, T>(
        mut self,
        method: Method,
        path: &'static str,
        handler: H,
        limit: usize,
    ) -> Self
    where
        H: Handler<T, Arc<Service>>,
        T: 'static,
    {
        let filter = MethodFilter::try_from(method.clone()).unwrap_or(MethodFilter::GET);
        let route = on(filter, handler).layer(axum::extract::DefaultBodyLimit::max(limit));
        self.router = self.router.route(path, route);
        self.list.push((method, path));
        self
    }
}

fn table() -> Table {
    Table {
        router: Router::new(),
        list: Vec::new(),
        takes_query: query::Routes::default(),
    }
    .add(Method::GET, "/api/v1/openapi.json", openapi::openapi_json)
    .add(Method::GET, "/api/v1/zones", objects::list_zones)
    .add(Method::POST, "/api/v1/zones", objects::create_zone)
    .add(Method::GET, "/api/v1/zones/{id}", objects::get_zone)
    .add(Method::PUT, "/api/v1/zones/{id}", objects::update_zone)
    .add(Method::DELETE, "/api/v1/zones/{id}", objects::delete_zone)
    .add(
        Method::POST,
        "/api/v1/zones/{id}/dnssec/rollover",
        dnssec::rollover,
    )
    .add(
        Method::POST,
        "/api/v1/zones/{id}/dnssec/ds-seen",
        dnssec::ds_seen,
    )
    .add(Method::GET, "/api/v1/records", objects::list_records)
    .with_query()
    .add(Method::POST, "/api/v1/records", objects::create_record)
    .add(Method::GET, "/api/v1/records/{id}", objects::get_record)
    .add(Method::PUT, "/api/v1/records/{id}", objects::update_record)
    .add(
        Method::DELETE,
        "/api/v1/records/{id}",
        objects::delete_record,
    )
    .add(Method::GET, "/api/v1/pools", objects::list_pools)
    .add(Method::POST, "/api/v1/pools", objects::create_pool)
    .add(Method::GET, "/api/v1/pools/{id}", objects::get_pool)
    .add(Method::PUT, "/api/v1/pools/{id}", objects::update_pool)
    .add(Method::DELETE, "/api/v1/pools/{id}", objects::delete_pool)
    .add(
        Method::GET,
        "/api/v1/pools/{id}/status",
        status::pool_status,
    )
    .add(Method::GET, "/api/v1/pools/{id}/members", members::list)
    .add(Method::POST, "/api/v1/pools/{id}/members", members::create)
    .add(Method::GET, "/api/v1/members/{id}", members::get)
    .add(Method::PUT, "/api/v1/members/{id}", members::update)
    .add(Method::DELETE, "/api/v1/members/{id}", members::delete)
    .add(
        Method::GET,
        "/api/v1/members/{id}/status",
        status::member_status,
    )
    .add(
        Method::GET,
        "/api/v1/members/{id}/logs",
        status::member_logs,
    )
    .with_query()
    .add(
        Method::PUT,
        "/api/v1/members/{id}/health",
        members::manual_health,
    )
    .add(
        Method::POST,
        "/api/v1/members/{id}/heartbeat",
        members::heartbeat,
    )
    .add(Method::GET, "/api/v1/checks", objects::list_checks)
    .add(Method::POST, "/api/v1/checks", objects::create_check)
    .add(Method::GET, "/api/v1/checks/{id}", objects::get_check)
    .add(Method::PUT, "/api/v1/checks/{id}", objects::update_check)
    .add(Method::DELETE, "/api/v1/checks/{id}", objects::delete_check)
    .add(Method::GET, "/api/v1/tsig-keys", tsig::list)
    .add(Method::POST, "/api/v1/tsig-keys", tsig::create)
    .add(Method::GET, "/api/v1/tsig-keys/{id}", tsig::get)
    .add(Method::PUT, "/api/v1/tsig-keys/{id}", tsig::update)
    .add(Method::DELETE, "/api/v1/tsig-keys/{id}", tsig::delete)
    .add(Method::GET, "/api/v1/notifiers", objects::list_notifiers)
    .add(Method::POST, "/api/v1/notifiers", objects::create_notifier)
    .add(Method::GET, "/api/v1/notifiers/{id}", objects::get_notifier)
    .add(
        Method::PUT,
        "/api/v1/notifiers/{id}",
        objects::update_notifier,
    )
    .add(
        Method::DELETE,
        "/api/v1/notifiers/{id}",
        objects::delete_notifier,
    )
    .add(
        Method::GET,
        "/api/v1/notifications/status",
        objects::notification_status,
    )
    .add(Method::GET, "/api/v1/explain", status::explain)
    .with_query()
    .add(Method::POST, "/api/v1/apply", objects::apply)
    .with_query()
    .add(Method::POST, "/api/v1/config", objects::apply_config)
    .with_query()
    .add(Method::GET, "/api/v1/config", objects::export_config)
    .with_query()
    .add_large(
        Method::POST,
        "/api/v1/zonefile",
        zonefile::import,
        crate::core::zonefile::MAX_ZONE_FILE_BYTES,
    )
    .with_query()
    .add(Method::GET, "/api/v1/zonefile", zonefile::export)
    .with_query()
    .add(Method::GET, "/api/v1/agents", status::agents)
    .add(Method::GET, "/api/v1/edges", status::edges)
    .with_query()
    .add(Method::GET, "/api/v1/audit", audit::list)
    .with_query()
    .add(Method::GET, "/api/v1/diff", audit::diff)
    .with_query()
    .add(Method::POST, "/api/v1/rollback", audit::rollback)
    .with_query()
    .add(Method::GET, "/api/v1/decisions", decisions::get)
    .add(Method::PUT, "/api/v1/decisions", decisions::set_all)
    .add(
        Method::PUT,
        "/api/v1/pools/{id}/decisions",
        decisions::set_pool,
    )
}
