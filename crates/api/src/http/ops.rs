//! The operational endpoints: `/healthz`, `/readyz` and `/metrics`, on a listener of their own
//! (`--ops-addr`: [`api_ops_router`] for the API, `cms_http_server::ops_router` for gateways) and on the REST
//! listener, where `/metrics` answers as [`MetricsOnRest`] says (docs/decisions.md, "Probes
//! and metrics on a listener of their own").

#[cfg(test)]
mod tests;

use super::auth::bearer;
use super::error::ApiError;
use super::{AppState, readyz};
use axum::Router;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use cms_http_server::prometheus_text;
use std::sync::Arc;

/// Whom `/metrics` answers on the REST listener.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MetricsOnRest {
    /// Anyone: a single listener (no `--ops-addr`) and no `--metrics-token`, as before.
    Anyone,
    /// Only `Authorization: Bearer <--metrics-token>`; 401 otherwise.
    Token(String),
    /// No one (404): the metrics are on the ops listener and no token is set.
    Nobody,
}

impl MetricsOnRest {
    /// With a token, the token; else no one when an ops listener serves them, else anyone.
    pub fn new(ops_listener: bool, token: Option<String>) -> MetricsOnRest {
        match (token, ops_listener) {
            (Some(token), _) => MetricsOnRest::Token(token),
            (None, true) => MetricsOnRest::Nobody,
            (None, false) => MetricsOnRest::Anyone,
        }
    }

    /// Whether a request with these headers is answered the metrics, or its refusal.
    fn admits(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        match self {
            MetricsOnRest::Anyone => Ok(()),
            MetricsOnRest::Token(token) => match bearer(headers) {
                Some(given)
                    if cms_credentials::constant_time_eq(given.as_bytes(), token.as_bytes()) =>
                {
                    Ok(())
                }
                _ => Err(ApiError::Unauthenticated),
            },
            MetricsOnRest::Nobody => Err(ApiError::NotFound("Not Found.".into())),
        }
    }
}

/// `/healthz`, `/readyz` (unless an ops listener serves it) and `/metrics` on the REST listener.
pub(super) fn on_rest_listener(ops_listener: bool) -> Router<AppState> {
    let router = Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/metrics", get(metrics_on_rest));
    match ops_listener {
        true => router,
        false => router.route("/readyz", get(readyz)),
    }
}

async fn metrics_on_rest(State(state): State<AppState>, headers: HeaderMap) -> Response {
    match state.metrics_on_rest.admits(&headers) {
        Ok(()) => prometheus_text(&state.metrics).into_response(),
        Err(refused) => refused.into_response(),
    }
}

/// The API's ops listener: `/healthz`, `/readyz` and `/metrics` to anyone who reaches it, and
/// nothing else (404): a gateway's probes router, on the API's readiness.
pub fn api_ops_router(state: AppState) -> Router {
    let ready = state.ready.clone();
    cms_http_server::ops_router(state.metrics.clone(), Arc::new(move || ready.is_ready()))
}
