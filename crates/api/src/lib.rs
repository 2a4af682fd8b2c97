//! The API process: materialises the gateway's records into the latest-value cache and the
//! store, and serves the REST API of the reference from them.
#![forbid(unsafe_code)]

mod control;
mod http;
mod ingest;
mod ocpi;
mod readiness;

use cms_http_server::{HttpLimits, OPS_LIMITS, Served, serve_as, serve_with};
pub use cms_store::actions::ActionTimes;
pub use control::actions::{
    Dispatch, Named, charger_version, command_of_row, named, new_action, validate_request,
};
pub use control::certificates::{StationCertificatesConfig, StationSigner};
pub use control::diagnostics::{ChargerDiagnostics, ConnectionAttempt, Frame, FramesRead};
pub use control::gateway_in_process::GatewayInProcess;
pub use control::local_lists::LocalListConfig;
pub use control::registry::{RegistryPublisher, id_tag_entry, party_link, registry_state};
pub use control::smart_charging::SmartChargingConfig;
#[doc(hidden)]
pub use http::error_responses;
pub use http::fuzzing;
pub use http::id_tag_input::{id_tag_from_record, is_id_tag};
pub use http::{
    ActionBody, ApiError, DEFAULT_STREAM_MAX_LIFE, DEFAULT_STREAMS_PER_USER, StreamLimits,
};
pub use ingest::cache::{LatestReading, LatestValueCache};

use bytes::Bytes;
use cms_bus::{Bus, Topics};
use cms_store::Store;
use control::diagnostics::DiagnosticsSlot;
use control::gateway_in_process::GatewaySlot;
use control::{actions, local_lists, price_display, smart_charging};
use http::access;
use ingest::{
    connection_attempts, gateway_liveness, heartbeat_overdue, latest_follower, materialiser,
};
use metrics_exporter_prometheus::PrometheusHandle;
use readiness::Readiness;
use std::net::SocketAddr;
use std::sync::Arc;
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
    /// How long the actions this API takes may wait, and the charger to answer them.
    pub action_times: ActionTimes,
    /// HTTPS for the listener; plain HTTP when `None`.
    pub tls: Option<cms_tls::ServerTls>,
    /// How the keeper of the chargers' local authorization lists paces itself.
    pub local_lists: LocalListConfig,
    /// How the smart charging balancer paces itself.
    pub smart_charging: SmartChargingConfig,
    /// Meter-value changes a live stream may fall behind before it is dropped.
    pub stream_buffer: usize,
    /// How many live streams, per user and in all, and for how long.
    pub streams: StreamLimits,
    /// A listener of its own for `/healthz`, `/readyz` and `/metrics` (`--ops-addr`).
    pub ops_addr: Option<SocketAddr>,
    /// The token `/metrics` on the REST listener answers (`--metrics-token`).
    pub metrics_token: Option<String>,
    /// Whether to follow every charger's readings outside the consumer group as well
    /// (crate::ingest::latest_follower): for replicas that share the group (`cms api`), not for a
    /// process that is the whole group (`cms up`).
    pub follow_latest_values: bool,
    /// A gateway whose last beacon is older than this is taken for dead: the sessions it still
    /// holds end (crate::ingest::gateway_liveness). Several of the gateways' beacon intervals.
    pub gateway_timeout: std::time::Duration,
    /// The key requests carrying a secret are sealed with for the gateways (`--secrets-key`):
    /// without it, changes of secret configuration keys are refused.
    pub secrets_key: Option<cms_bus::SecretsKey>,
    /// Entries the access cache holds at most, of each kind (tokens, charger access, site
    /// access, chargers lists): past it the least used of the biggest holders are forgotten.
    pub access_cache_entries: usize,
    /// What the gateways tell chargers to heartbeat at (`--heartbeat-interval`): a charger
    /// online but silent for longer (and a grace) is listed stale in the fleet overview.
    pub heartbeat_interval: std::time::Duration,
    /// How teams' webhooks are delivered (`--webhook-*`).
    pub webhooks: WebhookDelivery,
    /// OCPI 2.2.1 with the teams' providers (docs/ocpi.md).
    pub ocpi: OcpiSettings,
    /// How stations' certificates are signed and renewed (`--station-ca-*`, `--station-cert-*`).
    pub station_certificates: StationCertificatesConfig,
}

/// How cms speaks OCPI with providers (docs/ocpi.md).
#[derive(Debug, Clone)]
pub struct OcpiSettings {
    /// The address eMSPs reach cms's OCPI endpoints at, e.g. `https://cms.example.com`
    /// (`--ocpi-public-url`); `None`: the request's own scheme and `Host`.
    pub public_url: Option<String>,
    /// Parties' URLs may be `http` and name private addresses (`--ocpi-allow-private`).
    pub allow_private: bool,
    /// One push attempt's time-out (`--ocpi-push-timeout`).
    pub push_timeout: std::time::Duration,
    /// The waits before each retry of a push (`--ocpi-retry-delays`).
    pub retry_delays: Vec<std::time::Duration>,
    /// How often running sessions are pushed (`--ocpi-session-interval`).
    pub session_interval: std::time::Duration,
}

impl Default for OcpiSettings {
    fn default() -> Self {
        OcpiSettings {
            public_url: None,
            allow_private: false,
            push_timeout: std::time::Duration::from_secs(10),
            retry_delays: cms_roaming::RETRY_DELAYS.to_vec(),
            session_interval: std::time::Duration::from_secs(60),
        }
    }
}

/// This process's OCPI dispatcher: one of the API processes pushes at a time (a lease in the
/// store, held under a name of this process's own).
fn ocpi_dispatcher(settings: &OcpiSettings) -> cms_roaming::DispatcherConfig {
    let node = format!("api-{}", uuid::Uuid::new_v4().simple());
    let mut config = cms_roaming::DispatcherConfig::new(node, settings.allow_private);
    config.push_timeout = settings.push_timeout;
    config.retry_delays = settings.retry_delays.clone();
    config.session_interval = settings.session_interval;
    config
}

/// How teams' webhooks are delivered (docs/events.md).
#[derive(Debug, Clone)]
pub struct WebhookDelivery {
    /// URLs may be `http` and name private addresses (`--webhook-allow-private`).
    pub allow_private: bool,
    /// One attempt's time-out (`--webhook-timeout`).
    pub attempt_timeout: std::time::Duration,
    /// The waits before each retry (`--webhook-retry-delays`).
    pub retry_delays: Vec<std::time::Duration>,
}

impl Default for WebhookDelivery {
    fn default() -> Self {
        WebhookDelivery {
            allow_private: false,
            attempt_timeout: std::time::Duration::from_secs(10),
            retry_delays: cms_webhooks::dispatcher::RETRY_DELAYS.to_vec(),
        }
    }
}

/// This process's webhook dispatcher: one of the API processes delivers at a time (a lease in
/// the store, held under a name of this process's own).
fn webhook_dispatcher(delivery: &WebhookDelivery) -> cms_webhooks::DispatcherConfig {
    let node = format!("api-{}", uuid::Uuid::new_v4().simple());
    let mut config = cms_webhooks::DispatcherConfig::new(node, delivery.allow_private);
    config.attempt_timeout = delivery.attempt_timeout;
    config.retry_delays = delivery.retry_delays.clone();
    config
}

/// The default of [`ApiConfig::stream_buffer`].
pub const DEFAULT_STREAM_BUFFER: usize = 4096;
/// The default of [`ApiConfig::heartbeat_interval`], the gateways' own.
pub const DEFAULT_HEARTBEAT_INTERVAL: std::time::Duration = std::time::Duration::from_secs(300);
/// The default of [`ApiConfig::access_cache_entries`].
pub const DEFAULT_ACCESS_CACHE_ENTRIES: usize = access::DEFAULT_CAPACITY;

/// A running API: HTTP listener plus materialiser.
pub struct Api {
    local_addr: SocketAddr,
    /// The ops listener, with `--ops-addr`.
    ops: Option<OpsListener>,
    /// `/readyz`'s answer: 503 until `mark_ready`, and while the consumer has not caught up
    /// with the bus or the store does not answer.
    ready: Arc<Readiness>,
    /// The gateway of this process, once it has one (`cms up`).
    gateway: GatewaySlot,
    /// Where chargers' diagnostics are read.
    diagnostics: DiagnosticsSlot,
    stop_http: CancellationToken,
    http: JoinHandle<()>,
    materialiser: JoinHandle<()>,
    /// Every charger's readings into the cache, in a replica of several (ends with the bus).
    latest_follower: Option<JoinHandle<()>>,
    stop_actions: CancellationToken,
    /// Following the access change log and the reports, relaying the command line's actions,
    /// sweeping overdue ones, delivering webhooks, pushing to OCPI parties, telling of chargers overdue with their heartbeat, keeping the chargers' local lists, balancing the smart charging
    /// sites, ending the sessions of silent gateways, pinging the store for `/readyz`, keeping
    /// the fleet's state.
    action_tasks: [JoinHandle<()>; 14],
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

/// Offers every reading the store holds to the cache (newer ones held are kept).
async fn warm(store: &Store, cache: &LatestValueCache) -> Result<(), cms_store::StoreError> {
    for stored in store.latest_meter_values().await? {
        let reading = LatestReading {
            measured_at: stored.measured_at,
            meter_value: Bytes::from(stored.meter_value),
        };
        cache.offer(&stored.identity, stored.connector_id as u32, reading);
    }
    Ok(())
}

impl Api {
    /// Subscribes to the bus, warms the cache from the store, and starts serving.
    pub async fn start(
        config: ApiConfig,
        store: Store,
        bus: Arc<dyn Bus>,
        metrics: PrometheusHandle,
    ) -> Result<Api, ApiStartError> {
        let subscriber = bus.subscribe(
            &consumer_group(&config.topics),
            &config.topics.consumed_by_api(),
        )?;
        let ready = Arc::new(Readiness::new(
            subscriber.caught_up(),
            readiness::store_answers(&store).await,
        ));
        let cache = Arc::new(LatestValueCache::with_stream_buffer(config.stream_buffer));
        let fleet = Arc::new(ingest::fleet::FleetState::new(config.heartbeat_interval));
        // Followed before the store is read, so that no reading falls between the two; and the
        // store read again a little later, for the readings published before the follow began
        // that the group's materialisers had not written yet.
        let latest_follower = match config.follow_latest_values {
            true => {
                let messages = bus.follow(&[config.topics.messages]).await?;
                let (store_again, cache_again) = (store.clone(), cache.clone());
                tokio::spawn(async move {
                    tokio::time::sleep(latest_follower::STORE_READ_AGAIN_AFTER).await;
                    if let Err(e) = warm(&store_again, &cache_again).await {
                        tracing::warn!(error = %e, "cannot read the latest meter values again");
                    }
                });
                Some(tokio::spawn(latest_follower::follow_latest_values(
                    messages,
                    config.topics,
                    cache.clone(),
                    fleet.clone(),
                )))
            }
            false => None,
        };
        warm(&store, &cache).await?;
        fleet.read_all(&store).await?;
        let dispatch = Arc::new(Dispatch::new(
            store.clone(),
            bus.clone(),
            config.topics,
            config.action_times,
            config.secrets_key.clone(),
        ));
        let materialiser =
            materialiser::Materialiser::new(store.clone(), cache.clone(), config.topics)
                .keeping(fleet.clone())
                .showing_prices(price_display::start(dispatch.clone()))
                .signing_certificates(control::certificates::start(
                    dispatch.clone(),
                    config.station_certificates.signer.clone(),
                ));
        let materialiser = tokio::spawn(materialiser.run(subscriber));
        let reports = bus.follow(&[config.topics.command_results]).await?;
        let frames = Arc::new(control::frames_from_bus::FramesFromBus::new(
            bus.clone(),
            config.topics,
        ));
        let stop_actions = CancellationToken::new();
        let access = Arc::new(access::AccessCache::new(config.access_cache_entries));
        let action_tasks = [
            tokio::spawn(access::follow_changes(
                store.clone(),
                access.clone(),
                stop_actions.clone(),
            )),
            tokio::spawn(actions::follow_reports(
                dispatch.clone(),
                frames.clone(),
                reports,
            )),
            tokio::spawn(actions::relay_cli_actions(
                dispatch.clone(),
                stop_actions.clone(),
            )),
            tokio::spawn(actions::sweep_overdue(store.clone(), stop_actions.clone())),
            tokio::spawn(control::reservations::sweep_expired(
                store.clone(),
                stop_actions.clone(),
            )),
            tokio::spawn(cms_webhooks::run(
                store.clone(),
                webhook_dispatcher(&config.webhooks),
                stop_actions.clone(),
            )),
            tokio::spawn(cms_roaming::run(
                store.clone(),
                ocpi_dispatcher(&config.ocpi),
                stop_actions.clone(),
            )),
            tokio::spawn(gateway_liveness::sweep_silent_gateways(
                store.clone(),
                config.gateway_timeout,
                stop_actions.clone(),
            )),
            tokio::spawn(heartbeat_overdue::sweep(
                store.clone(),
                ingest::fleet::stale_after(config.heartbeat_interval),
                stop_actions.clone(),
            )),
            tokio::spawn(local_lists::keep_local_lists(
                dispatch.clone(),
                config.local_lists,
                stop_actions.clone(),
            )),
            tokio::spawn(smart_charging::balance_sites(
                dispatch.clone(),
                config.smart_charging,
                stop_actions.clone(),
            )),
            tokio::spawn(control::certificates::renew_certificates(
                dispatch.clone(),
                config.station_certificates.clone(),
                stop_actions.clone(),
            )),
            tokio::spawn(readiness::check_store(
                store.clone(),
                ready.clone(),
                stop_actions.clone(),
            )),
            tokio::spawn(ingest::fleet::keep(
                store.clone(),
                fleet.clone(),
                stop_actions.clone(),
            )),
        ];
        let (listener, local_addr) = bind(config.http_addr).await?;
        let ops_listener = match config.ops_addr {
            Some(addr) => Some(bind(addr).await?),
            None => None,
        };
        let gateway = GatewaySlot::default();
        let diagnostics = DiagnosticsSlot::default();
        // A replica without a gateway of its own (`cms api`): the connection attempts every
        // gateway puts on the connections topic, followed outside any group.
        if config.follow_latest_values {
            let connections = bus.follow(&[config.topics.connections]).await?;
            let attempts = Arc::new(connection_attempts::AttemptsFromBus::default());
            let from_bus = control::frames_from_bus::FromBus {
                attempts: attempts.clone(),
                frames,
            };
            let _ = diagnostics.set(Arc::new(from_bus));
            tokio::spawn(connection_attempts::follow(connections, attempts));
        }
        let stop_http = CancellationToken::new();
        let state = http::AppState::new(http::Shared {
            store,
            cache,
            fleet,
            metrics,
            ready: ready.clone(),
            gateway: gateway.clone(),
            diagnostics: diagnostics.clone(),
            dispatch,
            closing: stop_http.clone(),
            access,
            charger_rows: Arc::default(),
            streams: http::StreamSlots::new(config.streams),
            tls: config.tls.is_some(),
            ops_listener: ops_listener.is_some(),
            metrics_on_rest: http::MetricsOnRest::new(ops_listener.is_some(), config.metrics_token),
            webhook_allow_private: config.webhooks.allow_private,
            ocpi: config.ocpi.clone(),
        });
        let ops = ops_listener.map(|(listener, addr)| {
            let router = http::api_ops_router(state.clone());
            let stop = CancellationToken::new();
            let until = stop.clone().cancelled_owned();
            let task = tokio::spawn(serve_as("ops", listener, router, OPS_LIMITS, None, until));
            tracing::info!(%addr, "probes and metrics listening");
            OpsListener { addr, stop, task }
        });
        let router = http::router(state, ocpi::connections::routes(), ocpi::router());
        let stop = stop_http.clone();
        let limits = config.http_limits;
        let served = Served {
            name: "http",
            limits,
            tls: config.tls,
            rewrite: Some(http::with_lowercase_uuids),
        };
        let http = tokio::spawn(serve_with(listener, router, served, stop.cancelled_owned()));
        tracing::info!(
            addr = %local_addr,
            max_connections = limits.max_connections,
            "REST API listening"
        );
        Ok(Api {
            local_addr,
            ops,
            ready,
            gateway,
            diagnostics,
            stop_http,
            http,
            materialiser,
            latest_follower,
            stop_actions,
            action_tasks,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The ops listener's address, with `--ops-addr`.
    pub fn ops_addr(&self) -> Option<SocketAddr> {
        self.ops.as_ref().map(|ops| ops.addr)
    }

    /// From now on `/readyz` says 200 once the consumer has caught up with the bus, while the
    /// store answers: call it once everything the process serves is up (in `cms up`, the OCPP
    /// listeners too, or a charger started at readiness may be refused).
    pub fn mark_ready(&self) {
        self.ready.mark(true);
    }

    /// From now on `/readyz` says 503 again: the process is stopping (its gateway draining).
    pub fn mark_unready(&self) {
        self.ready.mark(false);
    }

    /// The gateway of this process (`cms up`): from now on a change made through the REST API
    /// is answered once `gateway` has read it. Set once.
    pub fn answer_once_read_by(&self, gateway: Arc<dyn GatewayInProcess>) {
        if self.gateway.set(gateway).is_err() {
            tracing::warn!("the API already answers once another gateway has read its changes");
        }
    }

    /// Where `GET .../messages` and `.../connection-attempts` read (`cms up`: its gateway).
    /// Set once.
    pub fn read_diagnostics_from(&self, diagnostics: Arc<dyn ChargerDiagnostics>) {
        if self.diagnostics.set(diagnostics).is_err() {
            tracing::warn!("the API already reads chargers' diagnostics elsewhere");
        }
    }

    /// Waits for the materialiser to drain the (closed) bus, then stops serving HTTP and the
    /// actions' background work, and last the ops listener.
    pub async fn shutdown(self) {
        let _ = self.materialiser.await;
        if let Some(follower) = self.latest_follower {
            let _ = follower.await;
        }
        self.stop_http.cancel();
        let _ = self.http.await;
        self.stop_actions.cancel();
        for task in self.action_tasks {
            let _ = task.await;
        }
        // Last: the probes answer (`/readyz` 503) while the rest stops.
        if let Some(ops) = self.ops {
            ops.stop.cancel();
            let _ = ops.task.await;
        }
    }
}

/// The listener of `/healthz`, `/readyz` and `/metrics` alone (`--ops-addr`).
struct OpsListener {
    addr: SocketAddr,
    stop: CancellationToken,
    task: JoinHandle<()>,
}

async fn bind(addr: SocketAddr) -> Result<(tokio::net::TcpListener, SocketAddr), ApiStartError> {
    let listen = |source| ApiStartError::Listen { addr, source };
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(listen)?;
    let local_addr = listener.local_addr().map_err(listen)?;
    Ok((listener, local_addr))
}
