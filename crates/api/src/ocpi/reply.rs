//! OCPI answers: the envelope around data, pages with their headers, and errors with their
//! OCPI status code. A bad request is a 4xx with a 2xxx code, never a 500 (a store failure is a
//! 500 with 3000, as the spec's server error).

use crate::http::ApiError;
use axum::Json;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use cms_ocpi::envelope::Envelope;
use cms_ocpi::page::PageQuery;
use cms_ocpi::status;
use serde::Serialize;
use serde::de::DeserializeOwned;

/// An OCPI failure: the HTTP status and the envelope's code and message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OcpiError {
    pub http: StatusCode,
    pub code: u32,
    pub message: String,
}

impl OcpiError {
    /// 400, 2001: invalid or missing parameters, or a malformed body.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, status::INVALID_PARAMETERS, message)
    }
    /// 401, 2000: no credentials token, or one no party has.
    pub fn unauthorized() -> Self {
        Self::new(
            StatusCode::UNAUTHORIZED,
            status::CLIENT_ERROR,
            "Unknown or missing credentials token.",
        )
    }
    /// 405, 2000: a party that has not registered calls a module (only versions and
    /// credentials take token A).
    pub fn not_registered() -> Self {
        Self::new(
            StatusCode::METHOD_NOT_ALLOWED,
            status::CLIENT_ERROR,
            "Register first: this token may only read versions and post credentials.",
        )
    }
    /// 404, 2000: no such object (or one of another party, which is never told apart).
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, status::CLIENT_ERROR, message)
    }
    /// 404, 2003: unknown location.
    pub fn unknown_location() -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            status::UNKNOWN_LOCATION,
            "Unknown location.",
        )
    }
    /// 404, 2004: unknown token.
    pub fn unknown_token() -> Self {
        Self::new(
            StatusCode::NOT_FOUND,
            status::UNKNOWN_TOKEN,
            "Unknown token.",
        )
    }
    /// 500, 3000: cms failed (the store).
    pub fn server(message: impl Into<String>) -> Self {
        Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            status::SERVER_ERROR,
            message,
        )
    }
    pub fn new(http: StatusCode, code: u32, message: impl Into<String>) -> Self {
        OcpiError {
            http,
            code,
            message: message.into(),
        }
    }
}

impl IntoResponse for OcpiError {
    fn into_response(self) -> Response {
        let body = Envelope::<()>::failure(self.code, self.message);
        (self.http, Json(body)).into_response()
    }
}

impl From<cms_store::StoreError> for OcpiError {
    fn from(e: cms_store::StoreError) -> Self {
        tracing::error!(error = %e, "an OCPI request failed in the store");
        OcpiError::server("The store failed; try again.")
    }
}

impl From<ApiError> for OcpiError {
    fn from(e: ApiError) -> Self {
        let response = e.into_response();
        let http = response.status();
        let code = if http.is_client_error() {
            status::CLIENT_ERROR
        } else {
            status::SERVER_ERROR
        };
        OcpiError::new(http, code, http.canonical_reason().unwrap_or("Failed"))
    }
}

/// 200, 1000 with `data`.
pub fn ok<T: Serialize>(data: T) -> Response {
    Json(Envelope::success(data)).into_response()
}

/// 200, 1000 without data.
pub fn done() -> Response {
    Json(Envelope::<()>::empty_success()).into_response()
}

/// 200, 1000 with one page of a list: `items` are the page, `total` all there are; `url` the
/// list's own address (the `Link` header's base).
pub fn page<T: Serialize>(query: &PageQuery, url: &str, total: u64, items: Vec<T>) -> Response {
    let mut headers = HeaderMap::new();
    for (name, value) in query.headers(url, total) {
        if let Ok(value) = HeaderValue::from_str(&value) {
            headers.insert(HeaderName::from_static(lower(name)), value);
        }
    }
    (headers, Json(Envelope::success(items))).into_response()
}

fn lower(name: &'static str) -> &'static str {
    match name {
        "X-Total-Count" => "x-total-count",
        "X-Limit" => "x-limit",
        _ => "link",
    }
}

/// A JSON body read as `T`; anything else is 2001 naming what is wrong.
pub fn body<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, OcpiError> {
    serde_json::from_slice(bytes).map_err(|e| OcpiError::invalid(format!("Invalid body: {e}")))
}
