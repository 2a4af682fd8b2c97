//! `cms api`: the REST API alone, consuming the charger topics from Kafka as the consumer group
//! `cms-api` (replicas share the partitions) and publishing the charger registry for gateways.

use crate::action_args::ActionArgs;
use crate::kafka::KafkaArgs;
use crate::observability::{self, LogFormat};
use crate::ops_args::{RestOpsArgs, StreamArgs};
use crate::store_args::StoreArgs;
use crate::tls_args::HttpTlsArgs;
use crate::up::HttpArgs;
use cms_api::{Api, ApiConfig, LocalListConfig, RegistryPublisher, SmartChargingConfig};
use cms_bus::{Bus, Topics};
use std::net::SocketAddr;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Clone, clap::Args)]
pub struct ApiCmdArgs {
    #[command(flatten)]
    pub kafka: KafkaArgs,
    #[command(flatten)]
    pub store: StoreArgs,
    /// REST API, /healthz, /readyz and /metrics (with --ops-addr, /healthz alone of the
    /// three, and /metrics for --metrics-token).
    #[arg(long, env = "CMS_HTTP_ADDR", default_value = "127.0.0.1:8080")]
    pub http_addr: SocketAddr,
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
    /// A gateway silent (no beacon) this long is taken for dead, and the chargers it still
    /// holds for disconnected. Keep it several of the gateways' `--gateway-beacon-interval`
    /// (the defaults: six), so that a beacon or two late judges no one.
    #[arg(long, env = "CMS_GATEWAY_TIMEOUT", default_value = "60s",
        value_parser = crate::duration::positive_duration)]
    pub gateway_timeout: std::time::Duration,
    /// The heartbeat interval the gateways give chargers (their `--heartbeat-interval`): a
    /// charger online but silent longer than it, and half of it again, is listed stale in the
    /// fleet overview.
    #[arg(long, env = "CMS_HEARTBEAT_INTERVAL", default_value = "300s",
        value_parser = crate::duration::positive_duration)]
    pub heartbeat_interval: std::time::Duration,
    #[command(flatten)]
    pub webhooks: crate::webhook_args::WebhookArgs,
    #[command(flatten)]
    pub ocpi: crate::ocpi_args::OcpiArgs,
    #[command(flatten)]
    pub station_ca: crate::station_ca_args::StationCaArgs,
    /// Must match the gateways' prefix.
    #[arg(long, env = "CMS_TOPIC_PREFIX", default_value = "cms")]
    pub topic_prefix: String,
    #[arg(long, env = "CMS_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,
}

pub async fn run(args: ApiCmdArgs) -> Result<(), String> {
    let http_limits = args.http.limits();
    let streams = args.streams.limits(http_limits.max_connections)?;
    observability::init_logs(args.log_format);
    let metrics = observability::metrics();
    let store = args.quotas.open(&args.store).await?;
    let topics = Topics::with_prefix(&args.topic_prefix);
    let stop_tls = CancellationToken::new();
    let bus = args.kafka.connect("cms-api", &topics).await?;
    let api_config = ApiConfig {
        http_addr: args.http_addr,
        topics,
        http_limits,
        action_times: args.actions.times(),
        secrets_key: args.actions.secrets_key.clone(),
        local_lists: LocalListConfig::default(),
        smart_charging: SmartChargingConfig::default(),
        tls: args.http_tls.server_tls(&stop_tls)?,
        stream_buffer: args.streams.stream_buffer,
        streams,
        ops_addr: args.ops.ops.ops_addr,
        metrics_token: args.ops.metrics_token.clone(),
        follow_latest_values: true,
        gateway_timeout: args.gateway_timeout,
        access_cache_entries: args.access_cache_entries,
        heartbeat_interval: args.heartbeat_interval,
        webhooks: args.webhooks.delivery(),
        ocpi: args.ocpi.settings(),
        station_certificates: args.station_ca.config()?,
    };
    let api = Api::start(api_config, store.clone(), Arc::new(bus.clone()), metrics)
        .await
        .map_err(|e| e.to_string())?;
    let stop_registry = CancellationToken::new();
    let registry = tokio::spawn(
        RegistryPublisher {
            store: store.clone(),
            bus: Arc::new(bus.clone()),
            topics,
            secrets_key: args.actions.secrets_key.clone(),
        }
        .run(stop_registry.clone()),
    );
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
    crate::shutdown::signal().await;
    tracing::info!("shutting down");
    stop_registry.cancel();
    stop_tls.cancel();
    let _ = registry.await;
    bus.close();
    api.shutdown().await;
    store.close().await;
    tracing::info!("stopped");
    Ok(())
}
