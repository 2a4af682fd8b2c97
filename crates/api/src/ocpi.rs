//! OCPI 2.2.1 in the CPO role (docs/ocpi.md): the endpoints eMSPs call, under `/ocpi`. Every
//! request is authenticated by the party's credentials token ([`auth`]); every answer is an
//! OCPI envelope ([`reply`]), errors included, with the request's `X-Request-ID` and
//! `X-Correlation-ID` echoed.

pub(crate) mod auth;
pub(crate) mod client;
pub(crate) mod reply;

mod cdrs;
mod commands;
pub(crate) mod connections;
pub(crate) mod credentials;
mod locations;
mod sessions;
mod tariffs;
mod tokens;
mod versions;

use crate::http::AppState;
use axum::Router;
use axum::http::{HeaderName, HeaderValue};
use reply::OcpiError;

const REQUEST_ID: HeaderName = HeaderName::from_static("x-request-id");
const CORRELATION_ID: HeaderName = HeaderName::from_static("x-correlation-id");

/// Every OCPI endpoint, under `/ocpi`.
pub fn router() -> Router<AppState> {
    let modules = Router::new()
        .merge(versions::routes())
        .merge(credentials::routes())
        .merge(locations::routes())
        .merge(tariffs::routes())
        .merge(tokens::routes())
        .merge(sessions::routes())
        .merge(cdrs::routes())
        .merge(commands::routes())
        .fallback(|| async { OcpiError::not_found("No such OCPI endpoint.") })
        .method_not_allowed_fallback(|| async {
            OcpiError::invalid("The method is not allowed on this OCPI endpoint.")
        })
        .layer(axum::middleware::from_fn(refuse_unreadable))
        .layer(axum::middleware::from_fn(request_ids));
    Router::new().nest("/ocpi", modules)
}

/// The REST API's refusal of a NUL in the address (crate::http::unreadable), in OCPI's
/// envelope.
async fn refuse_unreadable(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    use crate::http::{NUL_IN_QUERY, Unreadable, unreadable};
    use axum::response::IntoResponse;
    match unreadable(request.uri()) {
        Some(Unreadable::Path) => OcpiError::not_found("Not Found.").into_response(),
        Some(Unreadable::Query) => OcpiError::invalid(NUL_IN_QUERY).into_response(),
        None => next.run(request).await,
    }
}

/// Echoes `X-Request-ID` and `X-Correlation-ID` (2.2.1 part I, "Request and correlation
/// headers"), each made up (a UUID) when the request came without it.
async fn request_ids(
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> axum::response::Response {
    let (request_id, correlation_id) = {
        let id = |name: &HeaderName| {
            request.headers().get(name).cloned().unwrap_or_else(|| {
                let made = uuid::Uuid::new_v4().to_string();
                HeaderValue::from_str(&made).expect("a UUID is a header value")
            })
        };
        (id(&REQUEST_ID), id(&CORRELATION_ID))
    };
    let mut response = next.run(request).await;
    let headers = response.headers_mut();
    headers.insert(REQUEST_ID, request_id);
    headers.insert(CORRELATION_ID, correlation_id);
    response
}
