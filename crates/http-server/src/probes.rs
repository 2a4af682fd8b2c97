//! The probes and metrics of a process without the REST API (a gateway): `/healthz`,
//! `/readyz` from a readiness the process keeps in memory, and `/metrics` in Prometheus' text.

use crate::request_metrics;
use axum::Router;
use axum::http::StatusCode;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::get;
use metrics_exporter_prometheus::PrometheusHandle;
use std::sync::Arc;

/// The recorder's text, as Prometheus scrapes it.
pub fn prometheus_text(metrics: &PrometheusHandle) -> impl IntoResponse + use<> {
    (
        [(CONTENT_TYPE, "text/plain; version=0.0.4")],
        metrics.render(),
    )
}

/// `/healthz`, `/readyz` (200 while `ready()` says so, else 503) and `/metrics` alone; any
/// other path is 404 with the REST API's error shape.
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
        .fallback(|| async {
            let body = serde_json::json!({"message": "Not Found."});
            (StatusCode::NOT_FOUND, axum::Json(body))
        })
        .layer(axum::middleware::from_fn(request_metrics::record))
}
