//! The API process: materialises the gateway's records into the latest-value cache and the
//! store, and serves the REST API of the reference from them.
#![forbid(unsafe_code)]

mod cache;
mod http;
mod materialiser;
mod normalise;
mod registry;
pub mod serve;

pub use cache::{LatestReading, LatestValueCache};
pub use http::{ApiError, ops_router};
pub use registry::RegistryPublisher;
pub use serve::{HttpLimits, serve};

use bytes::Bytes;
use cms_bus::{Bus, Topics};
use cms_store::Store;
use metrics_exporter_prometheus::PrometheusHandle;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

/// The consumer group of the API replicas of a deployment: `<topic prefix>-api` (`cms-api` by
/// default), so deployments sharing a cluster under different prefixes do not share a group.
pub fn consumer_group(topics: &Topics) -> String {
    let prefix = topics
        .messages
        .strip_suffix(".ocpp.messages")
        .unwrap_or("cms");
    format!("{prefix}-api")
}

pub struct ApiConfig {
    pub http_addr: SocketAddr,
    pub topics: Topics,
    /// What the HTTP listener lets one client have: connections, time for a request.
    pub http_limits: HttpLimits,
}

/// A running API: HTTP listener plus materialiser.
pub struct Api {
    local_addr: SocketAddr,
    stop_http: CancellationToken,
    http: JoinHandle<()>,
    materialiser: JoinHandle<()>,
}

#[derive(Debug, thiserror::Error)]
pub enum ApiStartError {
    #[error("cannot listen on {addr}: {source}")]
    Listen {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error(transparent)]
    Bus(#[from] cms_bus::BusError),
    #[error(transparent)]
    Store(#[from] cms_store::StoreError),
}

impl Api {
    /// Subscribes to the bus, warms the cache from the store, and starts serving.
    pub async fn start(
        config: ApiConfig,
        store: Store,
        bus: &dyn Bus,
        metrics: PrometheusHandle,
    ) -> Result<Api, ApiStartError> {
        let subscriber = bus.subscribe(&consumer_group(&config.topics), &config.topics.all())?;
        let cache = Arc::new(LatestValueCache::default());
        for stored in store.latest_meter_values().await? {
            let reading = LatestReading {
                measured_at: stored.measured_at,
                meter_value: Bytes::from(stored.meter_value),
            };
            cache.offer(&stored.identity, stored.connector_id as u32, reading);
        }
        let materialiser = materialiser::Materialiser {
            store: store.clone(),
            cache: cache.clone(),
            topics: config.topics,
        };
        let materialiser = tokio::spawn(materialiser.run(subscriber));
        let listener = tokio::net::TcpListener::bind(config.http_addr)
            .await
            .map_err(|source| ApiStartError::Listen {
                addr: config.http_addr,
                source,
            })?;
        let local_addr = listener
            .local_addr()
            .map_err(|source| ApiStartError::Listen {
                addr: config.http_addr,
                source,
            })?;
        let ready = Arc::new(AtomicBool::new(false));
        let router = http::router(http::AppState {
            store,
            cache,
            metrics,
            ready: ready.clone(),
        });
        let stop_http = CancellationToken::new();
        let stop = stop_http.clone();
        let limits = config.http_limits;
        let http = tokio::spawn(serve(listener, router, limits, stop.cancelled_owned()));
        ready.store(true, Ordering::Relaxed);
        tracing::info!(
            addr = %local_addr,
            max_connections = limits.max_connections,
            "REST API listening"
        );
        Ok(Api {
            local_addr,
            stop_http,
            http,
            materialiser,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Waits for the materialiser to drain the (closed) bus, then stops serving HTTP.
    pub async fn shutdown(self) {
        let _ = self.materialiser.await;
        self.stop_http.cancel();
        let _ = self.http.await;
    }
}
