//! The operational endpoints: `/healthz`, `/readyz` and `/metrics`, on a listener of their own
//! (`--ops-addr`: [`api_ops_router`] for the API, `cms_http_server::ops_router` for gateways) and on the REST
//! listener, where `/metrics` answers as [`MetricsOnRest`] says (docs/decisions.md, "Probes
//! and metrics on a listener of their own").

#[cfg(test)]
mod tests;

use super::auth::bearer;
use super::error::ApiError;
use super::{AppState, readyz, render_metrics};
use axum::Router;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use cms_http_server::{prometheus_text, request_metrics};

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
                Some(given) if same_secret(given.as_bytes(), token.as_bytes()) => Ok(()),
                _ => Err(ApiError::Unauthenticated),
            },
            MetricsOnRest::Nobody => Err(ApiError::NotFound("Not Found.".into())),
        }
    }
}

/// Equal, in a time that does not tell how much of `given` was right.
fn same_secret(given: &[u8], secret: &[u8]) -> bool {
    given.len() == secret.len() && given.iter().zip(secret).fold(0, |d, (a, b)| d | (a ^ b)) == 0
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
/// nothing else (404).
pub fn api_ops_router(state: AppState) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(render_metrics))
        .fallback(|| async { ApiError::NotFound("Not Found.".into()) })
        .layer(axum::middleware::from_fn(request_metrics::record))
        .with_state(state)
}
