//! What every handler reaches: the store, the caches, the dispatcher of actions, the live
//! streams' places and the process's readiness, behind one `Arc`.

use super::{MetricsOnRest, StreamSlots};
use crate::ingest::cache::LatestValueCache;
use cms_store::Store;
use metrics_exporter_prometheus::PrometheusHandle;
use std::sync::Arc;

/// What every handler reaches, behind one `Arc`: axum clones the state for every extractor
/// and middleware of every request, and a clone is then one counter, not one per field (the
/// cancellation token's takes a lock).
#[derive(Clone)]
pub struct AppState(Arc<Shared>);

impl AppState {
    pub fn new(shared: Shared) -> Self {
        AppState(Arc::new(shared))
    }
}

impl std::ops::Deref for AppState {
    type Target = Shared;

    fn deref(&self) -> &Shared {
        &self.0
    }
}

pub struct Shared {
    pub store: Store,
    pub cache: Arc<LatestValueCache>,
    /// Every charger's connection and statuses, for the fleet views.
    pub fleet: Arc<crate::ingest::fleet::FleetState>,
    pub metrics: PrometheusHandle,
    /// What `/readyz` answers, kept in memory (crate::readiness).
    pub ready: Arc<crate::readiness::Readiness>,
    /// The gateway of this process (`cms up`), which reads each change before it is answered.
    pub gateway: crate::control::gateway_in_process::GatewaySlot,
    /// Where chargers' last frames and connection attempts are read.
    pub diagnostics: crate::control::diagnostics::DiagnosticsSlot,
    /// Takes actions for chargers and hands out how they ended.
    pub dispatch: Arc<crate::control::actions::Dispatch>,
    /// Cancelled when the listener stops: what outlives a request (a live stream) ends then,
    /// or the server would wait for it.
    pub closing: tokio_util::sync::CancellationToken,
    /// Verified tokens and charger access held in memory.
    pub access: Arc<crate::http::access::AccessCache>,
    /// The chargers lists' rows, checked against the store on each read.
    pub charger_rows: Arc<crate::http::charger_rows::ChargerRows>,
    /// The live streams' places, by user and in all.
    pub streams: Arc<StreamSlots>,
    /// Whether the REST listener speaks TLS (the console's origin is then `https`).
    pub tls: bool,
    /// Whether `/readyz` and `/metrics` have a listener of their own (`--ops-addr`).
    pub ops_listener: bool,
    /// Whom `/metrics` answers on the REST listener.
    pub metrics_on_rest: MetricsOnRest,
    /// Whether webhook URLs may name private addresses, over http too (`--webhook-allow-private`).
    pub webhook_allow_private: bool,
    /// How cms speaks OCPI with providers.
    pub ocpi: crate::OcpiSettings,
}
