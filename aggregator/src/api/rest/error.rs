//! The one place where errors become HTTP responses: a status code and
//! `{"error": {"code", "message", "field"?}}`.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use gslb_shared::validate::ValidationError;
use serde::Serialize;

use crate::core::catalog::CatalogError;
use crate::core::control::ControlError;
use gslb_engine::EngineError;

/// An API failure.
#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    code: &'static str,
    message: String,
    field: Option<String>,
    /// The object's revision now, on a failed precondition.
    current: Option<u64>,
}

/// Every error's body.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorBody<'a> {
    /// What went wrong.
    error: ErrorDetail<'a>,
}

/// What went wrong.
#[derive(Serialize, utoipa::ToSchema)]
pub struct ErrorDetail<'a> {
    /// invalid_argument, not_found, failed_precondition, unavailable,
    /// unauthenticated, permission_denied, method_not_allowed, ...
    code: &'a str,
    /// The field and the rule, or what is missing.
    message: &'a str,
    /// The field refused, for invalid_argument.
    #[serde(skip_serializing_if = "Option::is_none")]
    field: Option<&'a str>,
    /// The object's (or the catalog's) version now, when a precondition
    /// failed (412): read it again, or send this to overwrite.
    #[serde(rename = "currentRevision", skip_serializing_if = "Option::is_none")]
    current_revision: Option<u64>,
}

impl ApiError {
    /// 400 naming a field.
    pub fn invalid(field: impl Into<String>, rule: impl Into<String>) -> Self {
        let field = field.into();
        let rule = rule.into();
        Self {
            status: StatusCode::BAD_REQUEST,
            code: "invalid_argument",
            message: format!("{field}: {rule}"),
            field: Some(field),
            current: None,
        }
    }

    /// 404.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::NOT_FOUND,
            code: "not_found",
            message: message.into(),
            field: None,
            current: None,
        }
    }

    /// 405.
    pub fn method_not_allowed() -> Self {
        Self {
            status: StatusCode::METHOD_NOT_ALLOWED,
            code: "method_not_allowed",
            message: "this path does not take that method".into(),
            field: None,
            current: None,
        }
    }

    /// 412: a precondition (`If-Match`, `expectVersion`) failed.
    pub fn stale(message: String, current: u64) -> Self {
        Self {
            status: StatusCode::PRECONDITION_FAILED,
            code: "failed_precondition",
            message,
            field: None,
            current: Some(current),
        }
    }

    /// 403: the caller's token may not do this (its role or its scope).
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::FORBIDDEN,
            code: "permission_denied",
            message: message.into(),
            field: None,
            current: None,
        }
    }

    fn conflict(message: String) -> Self {
        Self {
            status: StatusCode::CONFLICT,
            code: "failed_precondition",
            message,
            field: None,
            current: None,
        }
    }
}

impl From<ValidationError> for ApiError {
    fn from(err: ValidationError) -> Self {
        let field = err.errors.first().map(|e| e.field.clone());
        Self {
            status: StatusCode::BAD_REQUEST,
            code: "invalid_argument",
            message: err.to_string(),
            field,
            current: None,
        }
    }
}

impl From<ControlError> for ApiError {
    fn from(err: ControlError) -> Self {
        match err {
            ControlError::Catalog(CatalogError::Invalid(v)) => v.into(),
            ControlError::Catalog(CatalogError::NotFound(r)) => {
                ApiError::not_found(format!("{r} does not exist"))
            }
            ControlError::Catalog(e @ CatalogError::InUse { .. }) => {
                ApiError::conflict(e.to_string())
            }
            ControlError::Catalog(
                ref e @ (CatalogError::Stale { current, .. } | CatalogError::Moved { current, .. }),
            ) => ApiError::stale(e.to_string(), current),
            ControlError::Catalog(e @ CatalogError::InBatch { .. }) => {
                let message = e.to_string();
                let CatalogError::InBatch { error, .. } = e else {
                    unreachable!()
                };
                let mut inner = ApiError::from(ControlError::Catalog(*error));
                inner.message = message;
                inner
            }
            ControlError::Engine(
                e @ (EngineError::UnknownMember(_) | EngineError::UnknownCheck(_)),
            ) => ApiError::not_found(e.to_string()),
            ControlError::Engine(e) => ApiError::conflict(e.to_string()),
            ControlError::Scope(e) => ApiError::forbidden(e.to_string()),
            ControlError::Store(e) => Self {
                status: StatusCode::SERVICE_UNAVAILABLE,
                code: "unavailable",
                message: format!("not stored: {e}"),
                field: None,
                current: None,
            },
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = ErrorBody {
            error: ErrorDetail {
                code: self.code,
                message: &self.message,
                field: self.field.as_deref(),
                current_revision: self.current,
            },
        };
        (self.status, Json(body)).into_response()
    }
}

/// Give an error response that is not JSON (axum's rejections of a path
/// parameter, a body too large, a wrong content type) the JSON shape.
pub async fn as_json(response: Response) -> Response {
    let status = response.status();
    let json = response
        .headers()
        .get(axum::http::header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if status.as_u16() < 400 || json {
        return response;
    }
    // Rejection texts are short; anything longer is cut.
    let body = axum::body::to_bytes(response.into_body(), 4096)
        .await
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&body).trim().to_owned();
    let code = match status {
        StatusCode::BAD_REQUEST | StatusCode::UNPROCESSABLE_ENTITY => "invalid_argument",
        StatusCode::NOT_FOUND => "not_found",
        StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
        StatusCode::PAYLOAD_TOO_LARGE => "too_large",
        StatusCode::UNSUPPORTED_MEDIA_TYPE => "unsupported_media_type",
        _ if status.is_server_error() => "internal",
        _ => "failed_precondition",
    };
    let message = if text.is_empty() {
        status.canonical_reason().unwrap_or("error").to_owned()
    } else {
        text
    };
    let body = ErrorBody {
        error: ErrorDetail {
            code,
            message: &message,
            field: None,
            current_revision: None,
        },
    };
    (status, Json(body)).into_response()
}

/// Decode a JSON body, naming the field path of any error.
pub fn decode<T: serde::de::DeserializeOwned>(body: &[u8]) -> Result<T, ApiError> {
    // Strict first: duplicate keys and trailing text are errors.
    let value = crate::core::strict_json::parse(body).map_err(|e| {
        ApiError::invalid("body", e.split(" at line ").next().unwrap_or(&e).to_owned())
    })?;
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let field = if path == "." { "body".to_owned() } else { path };
        // serde's " at line L column C" points into the merged document, not
        // into what the client sent; the field path says where.
        let message = e.into_inner().to_string();
        let message = message
            .split(" at line ")
            .next()
            .unwrap_or(&message)
            .to_owned();
        ApiError::invalid(field, message)
    })
}
