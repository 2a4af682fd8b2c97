//! `cms gateway`: the OCPP gateway alone, publishing to Kafka and learning which chargers may
//! connect from the compacted registry topic. Shares nothing with the API but Kafka.

use crate::action_args::ActionArgs;
use crate::kafka::KafkaArgs;
use crate::observability::{self, LogFormat};
use crate::ops_args::OpsArgs;
use crate::tls_args::{HttpTlsArgs, ListenAddr, OcppTlsArgs, listen_addr};
use crate::up::{GatewayArgs, HttpArgs};
use cms_bus::Bus;
use cms_gateway::{Gateway, IdTagDirectory, RegistryDirectory, follow};
use cms_http_server::HttpLimits;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

#[derive(Debug, Clone, clap::Args)]
pub struct GatewayCmdArgs {
    #[command(flatten)]
    pub kafka: KafkaArgs,
    /// Where chargers connect: ws://OCPP_ADDR/ocpp/{identity}; `off` for wss only. Several
    /// gateways may share it.
    #[arg(long, env = "CMS_OCPP_ADDR", default_value = "127.0.0.1:9000", value_parser = listen_addr)]
    pub ocpp_addr: ListenAddr,
    #[command(flatten)]
    pub ocpp_tls: OcppTlsArgs,
    /// /healthz, /readyz (200 once the registry is loaded) and /metrics.
    #[arg(long, env = "CMS_HTTP_ADDR", default_value = "127.0.0.1:9100")]
    pub http_addr: SocketAddr,
    #[command(flatten)]
    pub http: HttpArgs,
    #[command(flatten)]
    pub http_tls: HttpTlsArgs,
    #[command(flatten)]
    pub ops: OpsArgs,
    #[command(flatten)]
    pub gateway: GatewayArgs,
    #[command(flatten)]
    pub actions: ActionArgs,
    #[arg(long, env = "CMS_LOG_FORMAT", value_enum, default_value = "text")]
    pub log_format: LogFormat,
}

/// How long a stopping gateway waits for the broker to take what chargers were answered for.
const FLUSH: Duration = Duration::from_secs(30);

pub async fn run(args: GatewayCmdArgs) -> Result<(), String> {
    observability::init_logs(args.log_format);
    let metrics = observability::metrics();
    let config = args.gateway.config(args.ocpp_addr.0, &args.actions);
    let stop_tls = CancellationToken::new();
    let ocpp_tls = args.ocpp_tls.security(&stop_tls)?;
    let http_tls = args.http_tls.server_tls(&stop_tls)?;
    let topics = config.topics;
    let bus = args.kafka.connect(&config.node_id, &topics).await?;
    let directory = Arc::new(RegistryDirectory::default());
    // The OCPI party links' tokens arrive sealed with the deployment's key.
    let id_tags = Arc::new(IdTagDirectory::opening_with(config.secrets_key.clone()));
    let registry_replay = bus
        .replay(topics.registry)
        .await
        .map_err(|e| e.to_string())?;
    let id_tags_replay = bus
        .replay(topics.id_tags)
        .await
        .map_err(|e| e.to_string())?;
    let followers = [
        tokio::spawn({
            let directory = directory.clone();
            async move { follow(&*directory, registry_replay).await }
        }),
        tokio::spawn({
            let id_tags = id_tags.clone();
            async move { follow(&*id_tags, id_tags_replay).await }
        }),
    ];
    // Ready once both are loaded: before, a known charger would be refused, or its driver's
    // tag answered Invalid.
    // Unready again from the first signal on: a load balancer sends no one here any more.
    let stopping = Arc::new(AtomicBool::new(false));
    let ready = {
        let (directory, id_tags) = (directory.clone(), id_tags.clone());
        let stopping = stopping.clone();
        Arc::new(move || {
            !stopping.load(Ordering::Relaxed) && directory.is_caught_up() && id_tags.is_caught_up()
        })
    };
    let router = cms_http_server::ops_router(metrics.clone(), ready.clone());
    let http = serve_ops("http", args.http_addr, router, args.http.limits(), http_tls).await?;
    // A second listener of the same, with its own small cap (`--ops-addr`).
    let ops = match args.ops.ops_addr {
        Some(addr) => {
            let router = cms_http_server::ops_router(metrics, ready);
            Some(serve_ops("ops", addr, router, cms_http_server::OPS_LIMITS, None).await?)
        }
        None => None,
    };
    // Followed before any charger connects: no action for a session of this gateway can be
    // published before this gateway follows the topic.
    let commands = bus
        .follow(&[topics.commands])
        .await
        .map_err(|e| e.to_string())?;
    let gateway = Gateway::start(
        config,
        directory,
        id_tags,
        Arc::new(bus.clone()),
        commands,
        ocpp_tls,
    )
    .map_err(|e| format!("cannot listen for chargers: {e}"))?;
    crate::tls_args::print_ocpp_addresses(&gateway);
    if let Some(ops) = &ops {
        println!("cms: serving probes and metrics on http://{}", ops.addr);
    }
    println!("cms: serving metrics on http://{}", http.addr);
    let mut signals = crate::shutdown::Signals::listen();
    signals.recv().await;
    // Unready first, then the drain stops accepting and closes the sessions over the period.
    stopping.store(true, Ordering::Relaxed);
    let period = args.gateway.drain_period;
    tracing::info!(drain_period = ?period, "shutting down: closing charger sessions");
    // A second signal ends the drain at once; what chargers were answered for is still flushed.
    gateway.drain(period, signals.recv(), FLUSH).await;
    stop_tls.cancel();
    if let Err(e) = bus.flush(FLUSH).await {
        tracing::error!(error = %e, "records still unacknowledged at shutdown");
    }
    bus.close();
    for follower in followers {
        let _ = follower.await;
    }
    http.stop().await;
    if let Some(ops) = ops {
        ops.stop().await;
    }
    tracing::info!("stopped");
    Ok(())
}

/// A small HTTP server for probes and metrics.
pub struct OpsServer {
    pub addr: SocketAddr,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl OpsServer {
    pub async fn stop(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

/// Serves `router` on `addr`, its metrics labelled `listener=name`.
pub async fn serve_ops(
    name: &'static str,
    addr: SocketAddr,
    router: axum::Router,
    limits: HttpLimits,
    tls: Option<cms_tls::ServerTls>,
) -> Result<OpsServer, String> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let addr = listener.local_addr().map_err(|e| e.to_string())?;
    let stop = CancellationToken::new();
    let until = stop.clone().cancelled_owned();
    let task = tokio::spawn(cms_http_server::serve_as(
        name, listener, router, limits, tls, until,
    ));
    Ok(OpsServer { addr, stop, task })
}
