//! The REST API and the operational endpoints of the HTTP listener.

mod auth;
mod chargers;
mod error;
mod pagination;

pub use error::ApiError;

use crate::cache::LatestValueCache;
use axum::Router;
use axum::extract::State;
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::get;
use cms_store::Store;
use metrics_exporter_prometheus::PrometheusHandle;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Clone)]
pub struct AppState {
    pub store: Store,
    pub cache: Arc<LatestValueCache>,
    pub metrics: PrometheusHandle,
    /// Set once the listener serves; `/readyz` answers 503 before.
    pub ready: Arc<AtomicBool>,
}

pub fn router(state: AppState) -> Router {
    let api = Router::new()
        .route("/api/v3/chargers", get(chargers::list))
        .route(
            "/api/v3/chargers/{charger_uuid}/connectors/{connector_id}/latest-metervalue",
            get(chargers::latest_meter_value),
        )
        .method_not_allowed_fallback(|| async { ApiError::MethodNotAllowed });
    Router::new()
        .merge(api)
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(readyz))
        .route("/metrics", get(render_metrics))
        .fallback(|| async { ApiError::NotFound("Not Found.".into()) })
        .with_state(state)
}

async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    if state.ready.load(Ordering::Relaxed) && state.store.ping().await {
        (StatusCode::OK, "ready\n")
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "not ready\n")
    }
}

async fn render_metrics(State(state): State<AppState>) -> impl IntoResponse {
    prometheus_text(&state.metrics)
}

fn prometheus_text(metrics: &PrometheusHandle) -> impl IntoResponse + use<> {
    (
        [(CONTENT_TYPE, "text/plain; version=0.0.4")],
        metrics.render(),
    )
}

/// `/healthz`, `/readyz` and `/metrics` alone, for processes without the REST API (gateways).
pub fn ops_router(metrics: PrometheusHandle, ready: Arc<dyn Fn() -> bool + Send + Sync>) -> Router {
    Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route(
            "/readyz",
            get(move || {
                let ready = ready();
                async move {
                    match ready {
                        true => (StatusCode::OK, "ready\n"),
                        false => (StatusCode::SERVICE_UNAVAILABLE, "not ready\n"),
                    }
                }
            }),
        )
        .route(
            "/metrics",
            get(move || {
                let text = prometheus_text(&metrics);
                async move { text }
            }),
        )
}
