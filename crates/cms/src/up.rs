//! `cms up`: the whole service in one process on embedded defaults: gateway shards, the
//! in-process bus, the materialiser and the REST API over SQLite in the data directory.

use crate::action_args::ActionArgs;
use crate::counts::at_least_one;
use crate::duration::{parse_duration, positive_duration};
use crate::observability::{self, LogFormat};
use crate::ops_args::{RestOpsArgs, StreamArgs};
use crate::registry_feed;
use crate::store_args::StoreArgs;
use crate::tls_args::{HttpTlsArgs, ListenAddr, OcppTlsArgs, listen_addr};
use cms_api::{Api, ApiConfig, LocalListConfig, SmartChargingConfig};
use cms_bus::{Bus, BusError, InProcessBus, InProcessConfig, Topics};
use cms_gateway::{AckAfter, Gateway, GatewayConfig, LeaderCalls};
use cms_http_server::HttpLimits;
use cms_ocpp::OcppVersion;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Clone, clap::Args)]
pub struct UpArgs {
    #[command(flatten)]
    pub store: StoreArgs,
    /// REST API, /healthz, /readyz and /metrics (with --ops-addr, /healthz alone of the
    /// three, and /metrics for --metrics-token).
    #[arg(long, env = "CMS_HTTP_ADDR", default_value = "127.0.0.1:8080")]
    pub http_addr: SocketAddr,
    /// Where chargers connect: ws://OCPP_ADDR/ocpp/{identity}; `off` for wss only.
    #[arg(long, env = "CMS_OCPP_ADDR", default_value = "127.0.0.1:9000", value_parser = listen_addr)]
    pub ocpp_addr: ListenAddr,
    #[command(flatten)]
    pub ocpp_tls: OcppTlsArgs,
    #[command(flatten)]
    pub gateway: GatewayArgs,
    #[command(flatten)]
    pub http: HttpArgs,
    #[command(flatten)]
    pub http_tls: HttpTlsArgs,
    #[command(flatten)]
    pub ops: RestOpsArgs,
    #[command(flatten)]
    pub streams: StreamArgs,
    #[command(flatten)]
    pub actions: ActionArgs,
    #[command(flatten)]
    pub quotas: crate::quota_args::QuotaArgs,
    /// Entries the REST API's access cache holds at most, of each kind (verified tokens,
    /// charger access, site access, chargers lists; a few hundred bytes each): past it the
    /// least recently used entries of the users who hold the most are forgotten.
    #[arg(long, env = "CMS_ACCESS_CACHE_ENTRIES", value_parser = crate::counts::at_least_one,
        default_value_t = cms_api::DEFAULT_ACCESS_CACHE_ENTRIES)]
    pub access_cache_entries: usize,
    #[arg(long, env = "CMS_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,
    /// How many nice levels below the charger sessions everything else runs (the REST API, the
    /// materialiser, the store's threads), so that under full load chargers are answered
    /// first; 0 runs every thread alike. Linux only.
    #[arg(long, env = "CMS_API_NICE", default_value_t = 10,
        value_parser = clap::value_parser!(u8).range(0..=19))]
    pub api_nice: u8,
    /// A gateway silent (no beacon) this long is taken for dead, and the chargers it still
    /// holds for disconnected. Keep it several of the gateways' `--gateway-beacon-interval`
    /// (the defaults: six), so that a beacon or two late judges no one.
    #[arg(long, env = "CMS_GATEWAY_TIMEOUT", default_value = "60s", value_parser = positive_duration)]
    pub gateway_timeout: Duration,
    #[command(flatten)]
    pub webhooks: crate::webhook_args::WebhookArgs,
    #[command(flatten)]
    pub ocpi: crate::ocpi_args::OcpiArgs,
    #[command(flatten)]
    pub station_ca: crate::station_ca_args::StationCaArgs,
}

/// Gateway settings, shared by `cms up` and (later) `cms gateway`.
#[derive(Debug, Clone, clap::Args)]
pub struct GatewayArgs {
    /// Connection shards (threads with their own listener); default: one per core.
    #[arg(long, env = "CMS_SHARDS")]
    pub shards: Option<usize>,
    /// The OCPP version a station that offers both (subprotocols `ocpp2.0.1` and `ocpp1.6`)
    /// speaks with cms: `2.0.1` or `1.6`. A station offering one of them gets that one.
    #[arg(
        long,
        env = "CMS_OCPP_PREFERRED_VERSION",
        value_enum,
        default_value = "2.0.1"
    )]
    pub ocpp_preferred_version: OcppVersionArg,
    /// Heartbeat interval given to chargers at boot.
    #[arg(long, env = "CMS_HEARTBEAT_INTERVAL", default_value = "300s", value_parser = parse_duration)]
    pub heartbeat_interval: Duration,
    /// How often the gateway pings each charger.
    #[arg(long, env = "CMS_WS_PING_INTERVAL", default_value = "60s", value_parser = parse_duration)]
    pub ws_ping_interval: Duration,
    /// A charger silent (no frame, no pong) this long is disconnected.
    #[arg(long, env = "CMS_WS_IDLE_TIMEOUT", default_value = "180s", value_parser = parse_duration)]
    pub ws_idle_timeout: Duration,
    /// Largest websocket frame accepted, in bytes; larger closes the connection with 1009.
    #[arg(long, env = "CMS_MAX_FRAME_SIZE", default_value_t = 64 * 1024)]
    pub max_frame_size: usize,
    /// Charger connections at once in this process, handshakes included; past it a newcomer
    /// is answered 503 with Retry-After before the upgrade. Default: the open-file limit
    /// (`ulimit -n`) less 1,000 files for the store, the bus and the HTTP listener.
    #[arg(long, env = "CMS_MAX_CONNECTIONS", value_parser = at_least_one)]
    pub max_connections: Option<usize>,
    /// This gateway's name in records and in the chargers' `server` field; default: hostname.
    #[arg(long, env = "CMS_NODE_ID")]
    pub node_id: Option<String>,
    /// When a charger message that carries data is answered: once the bus has its record
    /// (`broker`, nothing answered is lost) or as soon as it is valid (`receive`).
    #[arg(long, env = "CMS_ACK_AFTER", value_enum, default_value = "broker")]
    pub ack_after: AckAfterArg,
    /// Topics are named `<prefix>.ocpp.messages`, `<prefix>.ocpp.connections`,
    /// `<prefix>.chargers.registry`, `<prefix>.ocpp.commands` and
    /// `<prefix>.ocpp.command-results`.
    #[arg(long, env = "CMS_TOPIC_PREFIX", default_value = "cms")]
    pub topic_prefix: String,
    /// Read each charger's configuration after its BootNotification (a 1.6 charger's with
    /// GetConfiguration, a 2.0.1 station's base report with GetBaseReport), so that `GET
    /// .../settings` shows it.
    #[arg(long, env = "CMS_READ_CONFIGURATION_AT_BOOT", default_value_t = true,
        action = clap::ArgAction::Set)]
    pub read_configuration_at_boot: bool,
    /// At most this many of those reads start a second in this gateway process; while a fleet
    /// boots faster, the rest wait their turn in boot order. `0`: no limit.
    #[arg(
        long,
        env = "CMS_CONFIGURATION_READS_PER_SECOND",
        default_value_t = 1_000
    )]
    pub configuration_reads_per_second: u32,
    /// Certificate authorities (PEM) to trust for `wss` proxy servers, besides the public
    /// roots: chargers with proxy servers are relayed to them (docs/proxy.md).
    #[arg(long, env = "CMS_PROXY_CA_FILE", value_name = "FILE")]
    pub proxy_ca_file: Option<std::path::PathBuf>,
    /// Payload bytes a relayed charger's calls may hold while they wait for its proxy servers
    /// (each call counted once per server it waits for); past it a call is dropped for the
    /// server it does not fit, and counted.
    #[arg(long, env = "CMS_RELAY_CHARGER_BYTES", value_parser = at_least_one,
        default_value_t = cms_gateway::RELAY_CHARGER_BYTES)]
    pub relay_charger_bytes: usize,
    /// The same over all the relayed chargers of this gateway process.
    #[arg(long, env = "CMS_RELAY_TOTAL_BYTES", value_parser = at_least_one,
        default_value_t = cms_gateway::RELAY_TOTAL_BYTES)]
    pub relay_total_bytes: usize,
    /// The calls a charger's leader proxy server may send it: OCPP 1.6 or 2.0.1 names,
    /// comma-separated (a name of both versions counts for both), or `none`. Others are answered
    /// `SecurityError` and never reach the charger; a change of a security setting (1.6's
    /// AuthorizationKey, SecurityProfile, ...; 2.0.1's SecurityCtrlr) never does, whatever the
    /// list.
    #[arg(long, env = "CMS_RELAY_LEADER_CALLS", value_name = "CALLS",
        default_value_t = LeaderCalls::default(), value_parser = LeaderCalls::parse)]
    pub relay_leader_calls: LeaderCalls,
    /// On SIGTERM or SIGINT: turn unready, stop accepting, then close the chargers' sessions
    /// one by one spread evenly over this period (never slower than 100 a second), so that they
    /// reconnect to the other gateways at a bounded rate; `0` closes them all at once. A second
    /// signal closes the rest at once.
    #[arg(long, env = "CMS_DRAIN_PERIOD", default_value = "30s", value_parser = parse_duration)]
    pub drain_period: Duration,
    /// How often the gateway publishes that it is alive (`gateway_alive` on the connections
    /// topic): the API takes a gateway silent past its `--gateway-timeout` for dead.
    #[arg(long, env = "CMS_GATEWAY_BEACON_INTERVAL", default_value = "10s", value_parser = positive_duration)]
    pub gateway_beacon_interval: Duration,
    /// How the kernel schedules the shards' threads: `batch` (SCHED_BATCH: a shard woken by a
    /// frame waits for the running thread's turn to end instead of preempting it, so frames
    /// gather and are read together) or `normal` (SCHED_OTHER, as every other thread). Linux
    /// only; no privilege needed either way.
    #[arg(
        long,
        env = "CMS_SHARD_SCHEDULING",
        value_enum,
        default_value = "batch"
    )]
    pub shard_scheduling: ShardScheduling,
    /// The last frames both ways the gateway keeps of each charger, in memory, for `GET
    /// /api/v3/chargers/{uuid}/messages` (each cut at 4 KiB); `0` keeps none.
    #[arg(long, env = "CMS_CHARGER_FRAMES_KEPT", default_value_t = 200)]
    pub charger_frames_kept: usize,
    /// The bytes of those frames kept per charger at most (the oldest go first): the memory
    /// each charger's frames cost the gateway. At least 4096 (one frame's cut).
    #[arg(long, env = "CMS_CHARGER_FRAMES_BYTES",
          default_value_t = cms_gateway::CHARGER_FRAMES_BYTES as u32,
          value_parser = clap::value_parser!(u32).range(4096..=16_777_216))]
    pub charger_frames_bytes: u32,
    /// How long an Authorize with an OCPI token whose whitelist is ALLOWED_OFFLINE or NEVER
    /// waits for the eMSP's real-time authorisation; past it ALLOWED_OFFLINE is answered from
    /// cms's copy of the token and NEVER Invalid (docs/ocpi.md, "Tokens").
    #[arg(long, env = "CMS_OCPI_AUTHORIZE_TIMEOUT", default_value = "2s",
        value_parser = positive_duration)]
    pub ocpi_authorize_timeout: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ShardScheduling {
    Batch,
    Normal,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OcppVersionArg {
    #[value(name = "2.0.1")]
    V201,
    #[value(name = "1.6")]
    V16,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AckAfterArg {
    Broker,
    Receive,
}

impl GatewayArgs {
    pub fn config(&self, ocpp_addr: Option<SocketAddr>, actions: &ActionArgs) -> GatewayConfig {
        let node_id = self.node_id.clone().unwrap_or_else(hostname);
        let mut config =
            GatewayConfig::new(ocpp_addr, node_id, Topics::with_prefix(&self.topic_prefix));
        if let Some(shards) = self.shards {
            config.shards = shards.max(1);
        }
        config.ocpp_preferred_version = match self.ocpp_preferred_version {
            OcppVersionArg::V201 => OcppVersion::V201,
            OcppVersionArg::V16 => OcppVersion::V16,
        };
        config.heartbeat_interval = self.heartbeat_interval;
        config.ping_interval = self.ws_ping_interval;
        config.idle_timeout = self.ws_idle_timeout;
        config.max_frame_size = self.max_frame_size;
        if let Some(max) = self.max_connections {
            config.max_connections = max;
        }
        config.ack_after = match self.ack_after {
            AckAfterArg::Broker => AckAfter::Broker,
            AckAfterArg::Receive => AckAfter::Receive,
        };
        config.read_configuration_at_boot = self.read_configuration_at_boot;
        config.configuration_reads_per_second = self.configuration_reads_per_second;
        config.command_ttl = actions.action_ttl;
        config.command_timeout = actions.action_timeout;
        config.secrets_key = actions.secrets_key.clone();
        config.proxy_ca_file = self.proxy_ca_file.clone();
        config.relay_charger_bytes = self.relay_charger_bytes;
        config.relay_total_bytes = self.relay_total_bytes;
        config.relay_leader_calls = self.relay_leader_calls;
        config.beacon_interval = self.gateway_beacon_interval;
        config.frames_kept = self.charger_frames_kept;
        config.frames_bytes = self.charger_frames_bytes as usize;
        config.ocpi_authorize_timeout = self.ocpi_authorize_timeout;
        config.on_shard_start = match self.shard_scheduling {
            ShardScheduling::Batch => crate::priority::shard_in_batches,
            ShardScheduling::Normal => || {},
        };
        config
    }
}

/// Limits of an HTTP listener, shared by `cms up`, `cms api` and `cms gateway` (its probes and
/// metrics).
#[derive(Debug, Clone, clap::Args)]
pub struct HttpArgs {
    /// HTTP connections served at once; past it a new one is answered 503 with Retry-After.
    #[arg(long, env = "CMS_HTTP_MAX_CONNECTIONS", value_parser = at_least_one,
        default_value_t = cms_http_server::DEFAULT_MAX_CONNECTIONS)]
    pub http_max_connections: usize,
    /// Time a client has to send a request head, and an idle kept-alive connection its next
    /// one, before the connection is closed.
    #[arg(long, env = "CMS_HTTP_HEADER_TIMEOUT", default_value = "10s", value_parser = parse_duration)]
    pub http_header_timeout: Duration,
    /// Time a whole request may take, body and handler: past it the answer is 408 (the body
    /// had not arrived) or 503.
    #[arg(long, env = "CMS_HTTP_REQUEST_TIMEOUT", default_value = "30s", value_parser = parse_duration)]
    pub http_request_timeout: Duration,
}

impl HttpArgs {
    pub fn limits(&self) -> HttpLimits {
        HttpLimits {
            max_connections: self.http_max_connections,
            header_timeout: self.http_header_timeout,
            request_timeout: self.http_request_timeout,
        }
    }
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "cms".to_string())
}

#[derive(Debug, thiserror::Error)]
pub enum UpError {
    #[error(transparent)]
    Store(#[from] cms_store::StoreError),
    #[error(transparent)]
    Api(#[from] cms_api::ApiStartError),
    #[error("cannot listen for chargers: {0}")]
    Gateway(std::io::Error),
    #[error("TLS: {0}")]
    Tls(String),
    #[error(transparent)]
    Bus(#[from] BusError),
    #[error("{0}")]
    Flags(String),
}

/// Runs until SIGTERM or SIGINT, then shuts down in order: unready, chargers first (each told
/// 1001, spread over `--drain-period`; a second signal closes the rest at once), then the bus
/// drains into the store, then the API stops.
pub async fn run(args: UpArgs) -> Result<(), UpError> {
    let http_limits = args.http.limits();
    let streams = args.streams.limits(http_limits.max_connections);
    let streams = streams.map_err(UpError::Flags)?;
    observability::init_logs(args.log_format);
    let metrics = observability::metrics();
    let store = args.store.open().await?.with_quotas(args.quotas.quotas());
    // One process is the API and the gateway: a key of its own unless one is given.
    let mut actions = args.actions.clone();
    actions.secrets_key = Some(
        actions
            .secrets_key
            .unwrap_or_else(cms_bus::SecretsKey::random),
    );
    let gateway_config = args.gateway.config(args.ocpp_addr.0, &actions);
    let topics = gateway_config.topics;
    let stop_tls = CancellationToken::new();
    let ocpp_tls = args.ocpp_tls.security(&stop_tls).map_err(UpError::Tls)?;
    let http_tls = args.http_tls.server_tls(&stop_tls).map_err(UpError::Tls)?;
    let bus = Arc::new(InProcessBus::new(InProcessConfig::default(), &topics.all()));
    let api_config = ApiConfig {
        http_addr: args.http_addr,
        topics,
        http_limits,
        action_times: args.actions.times(),
        secrets_key: actions.secrets_key.clone(),
        local_lists: LocalListConfig::default(),
        smart_charging: SmartChargingConfig::default(),
        tls: http_tls,
        stream_buffer: args.streams.stream_buffer,
        streams,
        ops_addr: args.ops.ops.ops_addr,
        metrics_token: args.ops.metrics_token.clone(),
        follow_latest_values: false,
        gateway_timeout: args.gateway_timeout,
        access_cache_entries: args.access_cache_entries,
        heartbeat_interval: args.gateway.heartbeat_interval,
        webhooks: args.webhooks.delivery(),
        ocpi: args.ocpi.settings(),
        station_certificates: args.station_ca.config().map_err(UpError::Tls)?,
    };
    let api = Api::start(api_config, store.clone(), bus.clone(), metrics).await?;
    let feed = registry_feed::Feed::catch_up(&store).await?;
    let (directory, id_tags) = (feed.registry.clone(), feed.id_tags.clone());
    api.answer_once_read_by(Arc::new(feed.asker()));
    directory.refresh_on_miss(feed.refresher());
    let stop_registry = CancellationToken::new();
    let registry = tokio::spawn(feed.follow(store.clone(), stop_registry.clone()));
    let commands = bus.follow(&[topics.commands]).await?;
    let gateway = Gateway::start(
        gateway_config,
        directory,
        id_tags,
        bus.clone(),
        commands,
        ocpp_tls,
    )
    .map_err(UpError::Gateway)?;
    // After the shards and the TLS threads started (from this thread, at its priority), so
    // that only what starts later inherits the lower one.
    match crate::priority::sessions_first(args.api_nice) {
        Ok(threads) => tracing::debug!(threads, nice = args.api_nice, "the sessions first"),
        Err(e) => tracing::warn!(error = %e, "could not lower the priority of the API's threads"),
    }
    crate::tls_args::print_ocpp_addresses(&gateway);
    api.read_diagnostics_from(Arc::new(crate::diagnostics::FromGateway(
        gateway.diagnostics(),
    )));
    api.mark_ready();
    let scheme = if args.http_tls.http_tls_cert.is_some() {
        "https"
    } else {
        "http"
    };
    if let Some(ops) = api.ops_addr() {
        println!("cms: serving probes and metrics on http://{ops}");
    }
    println!("cms: serving REST on {scheme}://{}", api.local_addr());
    tracing::info!(store = %args.store.describe(), "cms up");
    let mut signals = crate::shutdown::Signals::listen();
    signals.recv().await;
    api.mark_unready();
    tracing::info!(drain_period = ?args.gateway.drain_period, "shutting down: closing charger sessions");
    gateway
        .drain(
            args.gateway.drain_period,
            signals.recv(),
            Duration::from_secs(30),
        )
        .await;
    stop_tls.cancel();
    stop_registry.cancel();
    let _ = registry.await;
    bus.close();
    api.shutdown().await;
    store.close().await;
    tracing::info!("stopped");
    Ok(())
}
