//! The API's errors in the reference's shapes: `{"message": ...}` plus, for validation, an
//! `errors` map keyed by field. Server-side detail is logged, never sent.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;
use std::collections::BTreeMap;

#[derive(Debug)]
pub enum ApiError {
    /// A body that is not a JSON object, or cannot be read.
    BadRequest(String),
    /// A body over the limit (`input::BODY_LIMIT`).
    PayloadTooLarge,
    Unauthenticated,
    Forbidden,
    /// Forbidden, saying why (a licence the feature needs).
    ForbiddenBecause(String),
    NotFound(String),
    MethodNotAllowed,
    /// The request cannot be carried out in the resource's present state (a charger that is
    /// not connected cannot be sent an action).
    Conflict(String),
    Validation(BTreeMap<String, Vec<String>>),
    /// What this process cannot serve.
    NotImplemented(String),
    /// A gateway did not answer in time (a charger's frames asked over the bus).
    GatewayTimeout(String),
    Internal(String),
}

impl ApiError {
    /// A validation failure of one field.
    pub fn invalid(field: &str, message: impl Into<String>) -> Self {
        ApiError::Validation(BTreeMap::from([(field.to_string(), vec![message.into()])]))
    }

    pub fn status_code(&self) -> StatusCode {
        match self {
            ApiError::BadRequest(_) => StatusCode::BAD_REQUEST,
            ApiError::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ApiError::Unauthenticated => StatusCode::UNAUTHORIZED,
            ApiError::Forbidden | ApiError::ForbiddenBecause(_) => StatusCode::FORBIDDEN,
            ApiError::NotFound(_) => StatusCode::NOT_FOUND,
            ApiError::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ApiError::Conflict(_) => StatusCode::CONFLICT,
            ApiError::Validation(_) => StatusCode::UNPROCESSABLE_ENTITY,
            ApiError::NotImplemented(_) => StatusCode::NOT_IMPLEMENTED,
            ApiError::GatewayTimeout(_) => StatusCode::GATEWAY_TIMEOUT,
            ApiError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }
}

impl From<cms_store::StoreError> for ApiError {
    fn from(e: cms_store::StoreError) -> Self {
        match e {
            // Keyed by the quota's name: `{"chargers": ["The team has reached its quota of
            // 50000 chargers."]}`.
            cms_store::StoreError::QuotaReached(reached) => {
                ApiError::invalid(reached.quota.name(), reached.to_string())
            }
            e => ApiError::Internal(e.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let status = self.status_code();
        let body = match self {
            ApiError::BadRequest(message) => json!({"message": message}),
            ApiError::PayloadTooLarge => json!({"message": "The request body is too large."}),
            ApiError::Unauthenticated => json!({"message": "Unauthenticated."}),
            ApiError::Forbidden => json!({"message": "This action is unauthorized."}),
            ApiError::NotFound(message)
            | ApiError::Conflict(message)
            | ApiError::NotImplemented(message)
            | ApiError::GatewayTimeout(message)
            | ApiError::ForbiddenBecause(message) => {
                json!({"message": message})
            }
            ApiError::MethodNotAllowed => {
                json!({"message": "The method is not supported for this route."})
            }
            ApiError::Validation(errors) => {
                // Laravel's summary: the first message, plus how many more there are.
                let first = errors
                    .values()
                    .flatten()
                    .next()
                    .cloned()
                    .unwrap_or_default();
                let more = errors
                    .values()
                    .map(Vec::len)
                    .sum::<usize>()
                    .saturating_sub(1);
                let message = match more {
                    0 => first,
                    1 => format!("{first} (and 1 more error)"),
                    n => format!("{first} (and {n} more errors)"),
                };
                json!({"message": message, "errors": errors})
            }
            ApiError::Internal(detail) => {
                tracing::error!(%detail, "request failed");
                json!({"message": "Server Error"})
            }
        };
        (status, Json(body)).into_response()
    }
}
