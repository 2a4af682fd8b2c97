//! The OCPP-J gateway: terminates charger websockets in shards, answers each CALL, publishes
//! every charger message and connection event to the bus keyed by charger identity, and sends
//! chargers the actions the API puts on the bus.
//!
//! A tour, in the order a connection meets it: `shard` accepts it (under the connection cap of
//! `capacity`), `handshake` reads the upgrade and checks the charger against the in-memory
//! `directory` (`registry`), `session` runs the websocket until it ends: each frame goes through
//! `calls` (parse, validate, answer, make the record) and out to the bus. Actions for chargers
//! come the other way: `commands` follows the commands topic into the inbox of the session they
//! are addressed to, and the session's action calls (`action_calls.rs`) send them one at a time and report how
//! each ended.
#![forbid(unsafe_code)]

mod action_calls;
mod actions;
mod admission;
mod authorization;
mod boot_configuration;
mod capacity;
mod charger_action;
/// The frame path: public for its benchmark (`benches/frame_path.rs`).
pub mod charger_calls;
pub mod charger_calls_v201;
mod chunks;
mod diagnostics;
/// The default bytes of frames kept per charger (`--charger-frames-bytes`).
pub use diagnostics::FRAME_BYTES as CHARGER_FRAMES_BYTES;
mod directory;
mod ended;
mod events;
mod follow;
#[doc(hidden)]
pub mod fuzzing;
mod handshake;
mod identity;
mod liveness;
mod metrics;
mod record_time;
mod registry;
mod relay;
mod session;
mod shard;
mod stream;
mod tls_listener;
mod transactions;

pub use authorization::{
    AUTHORIZE_TIMEOUT, Authority, Authorized, IdTagDirectory, Verdict, open_authority,
};
pub use capacity::default_max_connections;
pub use charger_action::ChargerAction;
pub use diagnostics::{Attempt, GatewayDiagnostics, KeptFrame, RefusedBecause};
pub use directory::{ChargerDirectory, DirectoryError, Registration};
pub use follow::{Materialised, follow};
pub use identity::{ChargerIdentity, IdentityError, MAX_IDENTITY_LEN};
pub use metrics::DisconnectReason;
pub use registry::{Refresh, RegistryDirectory};
pub use relay::{
    CHARGER_BYTES as RELAY_CHARGER_BYTES, LeaderCalls, TOTAL_BYTES as RELAY_TOTAL_BYTES,
};
pub use tls_listener::{GatewayTls, TrustedProxies};

/// How chargers may reach the gateway besides plain ws: its own wss listener, and load
/// balancers that terminate TLS for it; and what a profile-3 certificate must name.
#[derive(Clone, Default)]
pub struct GatewaySecurity {
    pub tls: Option<GatewayTls>,
    pub proxies: Option<TrustedProxies>,
    /// The charging station operator's name a profile-3 charger's certificate must hold as its
    /// subject O (`--tls-client-organization`; OCPP 2.0.1 Part 2, A00.FR.404); `None`: O is
    /// not checked.
    pub client_organization: Option<String>,
}
pub use transactions::TransactionIds;

use bytes::Bytes;
use cms_bus::{Publisher, Subscriber, Topics};
use cms_ocpp::OcppVersion;
use dashmap::DashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_util::sync::CancellationToken;

/// When a charger message that carries data is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AckAfter {
    /// Once the bus acknowledged its record (for Kafka: the broker has it). Nothing answered
    /// is lost.
    Broker,
    /// As soon as it is received and valid: lower latency, but a record the bus then fails to
    /// take is lost although the charger was told it was taken.
    Receive,
}

#[derive(Debug, Clone)]
pub struct GatewayConfig {
    /// The plain (ws) listener; `None` to serve wss only.
    pub ocpp_addr: Option<SocketAddr>,
    /// Threads, each with its own runtime and listener (SO_REUSEPORT); default = cores.
    pub shards: usize,
    /// Names this gateway in records and in the chargers' `server` field.
    pub node_id: String,
    pub topics: Topics,
    /// The version a station offering both OCPP 1.6 and 2.0.1 gets (`--ocpp-preferred-version`).
    pub ocpp_preferred_version: OcppVersion,
    /// The heartbeat interval given to chargers in the BootNotification answer.
    pub heartbeat_interval: Duration,
    /// How often a websocket ping is sent.
    pub ping_interval: Duration,
    /// A connection with no frame and no pong for this long is closed.
    pub idle_timeout: Duration,
    /// Largest frame (and message) accepted; a larger one closes the connection with 1009.
    pub max_frame_size: usize,
    pub handshake_timeout: Duration,
    pub ack_after: AckAfter,
    /// Connections at once in this process, handshakes included; past it a newcomer is answered
    /// 503 before any upgrade. Default: [`default_max_connections`], from the open-file limit.
    pub max_connections: usize,
    /// Whether a charger's configuration is read after each BootNotification (GetConfiguration
    /// of a 1.6 charger, GetBaseReport of a 2.0.1 station).
    pub read_configuration_at_boot: bool,
    /// At most this many of those reads start a second in this gateway (the rest wait their
    /// turn, in the order their chargers booted); `0` for no limit.
    pub configuration_reads_per_second: u32,
    /// For the calls the gateway makes of its own accord: how long one may wait to be sent,
    /// and how long the charger has to answer it. (The API sets both for the actions it takes.)
    pub command_ttl: Duration,
    pub command_timeout: Duration,
    /// Certificate authorities the proxy relay trusts besides the public roots (PEM).
    pub proxy_ca_file: Option<std::path::PathBuf>,
    /// The payload bytes a relayed charger's queued calls may hold, and all of this process's
    /// (docs/proxy.md, "Bounded").
    pub relay_charger_bytes: usize,
    pub relay_total_bytes: usize,
    /// The calls a leader proxy server may send a charger (docs/proxy.md).
    pub relay_leader_calls: LeaderCalls,
    /// The key the API seals secret requests with on the bus (`--secrets-key`); without it an
    /// action carrying one fails `SecretUnreadable` instead of being sent.
    pub secrets_key: Option<cms_bus::SecretsKey>,
    /// How often the gateway publishes that it is alive (`gateway_alive`): taken between 100 ms
    /// and a day.
    pub beacon_interval: Duration,
    /// The frames both ways kept per charger for `GET .../messages` (`--charger-frames-kept`);
    /// 0 keeps none.
    pub frames_kept: usize,
    /// The bytes those frames may hold per charger (`--charger-frames-bytes`, at least one
    /// frame's cut, `diagnostics::FRAME_CUT`): the ring's memory.
    pub frames_bytes: usize,
    /// Run first on each shard's thread, before its runtime (threads it starts later inherit
    /// what it sets): `cms` sets the shards' scheduling policy there (docs/decisions.md, "The
    /// shards in batches").
    pub on_shard_start: fn(),
    /// How long an Authorize of an OCPI token waits for its eMSP's real-time authorisation
    /// (`--ocpi-authorize-timeout`; docs/ocpi.md, "Tokens").
    pub ocpi_authorize_timeout: Duration,
}

impl GatewayConfig {
    pub fn new(ocpp_addr: Option<SocketAddr>, node_id: String, topics: Topics) -> Self {
        GatewayConfig {
            ocpp_addr,
            shards: std::thread::available_parallelism().map_or(1, |n| n.get()),
            node_id,
            topics,
            ocpp_preferred_version: OcppVersion::V201,
            heartbeat_interval: Duration::from_secs(300),
            ping_interval: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(180),
            max_frame_size: 64 * 1024,
            handshake_timeout: Duration::from_secs(10),
            ack_after: AckAfter::Broker,
            max_connections: default_max_connections(),
            read_configuration_at_boot: true,
            configuration_reads_per_second: 1_000,
            command_ttl: Duration::from_secs(60),
            command_timeout: Duration::from_secs(30),
            proxy_ca_file: None,
            relay_charger_bytes: RELAY_CHARGER_BYTES,
            relay_total_bytes: RELAY_TOTAL_BYTES,
            relay_leader_calls: LeaderCalls::default(),
            secrets_key: None,
            beacon_interval: Duration::from_secs(10),
            frames_kept: 200,
            frames_bytes: diagnostics::FRAME_BYTES,
            on_shard_start: || {},
            ocpi_authorize_timeout: authorization::AUTHORIZE_TIMEOUT,
        }
    }

    /// Small buffers: at tungstenite's defaults (128 KiB each) 100k idle chargers would cost
    /// gigabytes. Most OCPP frames fit 1 KiB (a 3-sample MeterValues is ~530 bytes); the read
    /// buffer grows for a larger one. Measured with 10k idle chargers: 1 KiB instead of 2 KiB
    /// saves ~1.2 KiB of RSS per connection.
    fn websocket_config(&self) -> WebSocketConfig {
        WebSocketConfig::default()
            .read_buffer_size(1024)
            .write_buffer_size(0)
            .max_write_buffer_size(self.max_frame_size * 2 + 64 * 1024)
            .max_message_size(Some(self.max_frame_size))
            .max_frame_size(Some(self.max_frame_size))
    }
}

/// The longest a drain waits between two closes: at least 100 chargers a second go, however
/// long the period, so a gateway with few chargers stops in N/100 s.
pub const DRAIN_MAX_STEP: Duration = Duration::from_millis(10);

/// What every shard shares.
pub(crate) struct Shared {
    config: GatewayConfig,
    ws_config: WebSocketConfig,
    node: Bytes,
    topics: Topics,
    bus: Arc<dyn Publisher>,
    directory: Arc<RegistryDirectory>,
    /// What the sessions of relayed chargers share.
    relay: relay::RelayContext,
    /// Answers for id tags (Authorize, StartTransaction, StopTransaction).
    authority: authorization::Authority,
    /// Live sessions by charger: a newer connection replaces the older one.
    sessions: DashMap<ChargerIdentity, session::SessionEntry>,
    /// Sessions that ended here lately (or were replaced).
    ended: ended::EndedSessions,
    /// Connections (not only sessions) at once, over all shards.
    capacity: cms_listener::ConnectionCap,
    /// Load balancers trusted to terminate TLS and forward client certificates.
    proxies: Option<TrustedProxies>,
    /// The operator's name profile-3 certificates must hold as subject O, if checked.
    client_organization: Option<String>,
    transaction_ids: transactions::TransactionIds,
    /// Each charger's last frames and connection attempts (`diagnostics.rs`).
    diagnostics: diagnostics::Diagnostics,
    metrics: metrics::GatewayMetrics,
    /// The configuration reads after boots: spaced, and skipped for oversized configurations.
    boot_configuration: boot_configuration::BootConfigurationReads,
    /// Cancelled: every session closes at once (and the listeners stop).
    shutdown: CancellationToken,
    /// Cancelled: the listeners stop; the sessions go on (a child of `shutdown`).
    stop_accepting: CancellationToken,
}

/// A running gateway.
pub struct Gateway {
    local_addr: Option<SocketAddr>,
    tls_addr: Option<SocketAddr>,
    shared: Arc<Shared>,
    shards: Vec<std::thread::JoinHandle<()>>,
    tls: Option<std::thread::JoinHandle<()>>,
    commands: tokio::task::JoinHandle<()>,
    /// Publishing the start and the beacons.
    liveness: tokio::task::JoinHandle<()>,
}

/// The beacon intervals taken: a zero interval would be a busy loop (and tokio refuses it), one
/// past the clock's range a panic; a day is silence enough.
const BEACON_INTERVALS: (Duration, Duration) =
    (Duration::from_millis(100), Duration::from_secs(86_400));

impl Gateway {
    /// Binds the OCPP listeners (one ws socket per shard, one wss socket for the TLS runtime)
    /// and starts serving; `commands` follows the commands topic (`Bus::follow`), on the runtime
    /// this is called from.
    pub fn start(
        config: GatewayConfig,
        directory: Arc<RegistryDirectory>,
        id_tags: Arc<IdTagDirectory>,
        bus: Arc<dyn Publisher>,
        commands: Box<dyn Subscriber>,
        security: GatewaySecurity,
    ) -> std::io::Result<Gateway> {
        let GatewaySecurity {
            tls,
            proxies,
            client_organization,
        } = security;
        let shard_count = config.shards.max(1);
        let listeners = match config.ocpp_addr {
            Some(addr) => shard::bind(addr, shard_count)?
                .into_iter()
                .map(Some)
                .collect(),
            None => (0..shard_count).map(|_| None).collect::<Vec<_>>(),
        };
        let local_addr = match listeners.first() {
            Some(Some(listener)) => Some(listener.local_addr()?),
            _ => None,
        };
        let tls_listener = match &tls {
            Some(tls) => Some(shard::bind(tls.addr, 1)?.remove(0)),
            None => None,
        };
        let tls_addr = tls_listener.as_ref().map(|l| l.local_addr()).transpose()?;
        let relay_tls = cms_tls::client_config(config.proxy_ca_file.as_deref())
            .map_err(|e| std::io::Error::other(format!("--proxy-ca-file: {e}")))?;
        let shutdown = CancellationToken::new();
        let ws_config = config.websocket_config();
        let relay = relay::RelayContext {
            tls: relay_tls,
            ws_config,
            shutdown: shutdown.clone(),
            bus: bus.clone(),
            events: events::EventTarget {
                topic: config.topics.connections,
                node: Bytes::from(config.node_id.clone()),
            },
            budget: Arc::new(relay::GatewayBudget::new(
                config.relay_charger_bytes,
                config.relay_total_bytes,
            )),
            leader_calls: config.relay_leader_calls,
            leader_refusals: ::metrics::counter!("cms_proxy_leader_calls_refused_total"),
        };
        // Before any charger is let in: the sessions of this gateway's last run are over. Then
        // beacons, until the sessions are closed at shutdown (each says so itself).
        let liveness = tokio::spawn(liveness::announce(
            bus.clone(),
            relay.events.clone(),
            config
                .beacon_interval
                .clamp(BEACON_INTERVALS.0, BEACON_INTERVALS.1),
            shutdown.clone(),
        ));
        let boot_configuration = boot_configuration::BootConfigurationReads::new(&config);
        let diagnostics = diagnostics::Diagnostics::new(config.frames_kept, config.frames_bytes);
        let authorize_timeout = config.ocpi_authorize_timeout;
        let shared = Arc::new(Shared {
            ws_config,
            capacity: capacity::connection_cap(config.max_connections),
            proxies,
            client_organization,
            node: Bytes::from(config.node_id.clone()),
            topics: config.topics,
            config,
            bus,
            authority: Authority::new(directory.clone(), id_tags)
                .with_authorize_timeout(authorize_timeout),
            relay,
            directory,
            sessions: DashMap::new(),
            ended: Default::default(),
            transaction_ids: Default::default(),
            diagnostics,
            metrics: metrics::GatewayMetrics::new(),
            boot_configuration,
            stop_accepting: shutdown.child_token(),
            shutdown,
        });
        // A change of a connected charger's registration reaches its session (weakly: the
        // registry outlives no gateway, but must not keep one alive).
        let weak = Arc::downgrade(&shared);
        shared.directory.on_change(Box::new(move |identity| {
            let Some(shared) = weak.upgrade() else { return };
            let Ok(identity) = ChargerIdentity::parse(identity) else {
                return;
            };
            if let Some(entry) = shared.sessions.get(&identity) {
                entry.inbox.registration_changed();
            }
        }));
        let (senders, receivers): (Vec<_>, Vec<_>) = (0..shard_count)
            .map(|_| tokio::sync::mpsc::channel(shard::HANDOVER_QUEUE))
            .unzip();
        let shards = listeners
            .into_iter()
            .zip(receivers)
            .enumerate()
            .map(|(i, (listener, handovers))| shard::spawn(i, listener, handovers, shared.clone()))
            .collect::<std::io::Result<_>>()?;
        let tls = match (tls, tls_listener) {
            (Some(tls), Some(listener)) => {
                Some(tls_listener::spawn(listener, tls, shared.clone(), senders)?)
            }
            _ => None,
        };
        let commands = tokio::spawn(actions::follow(shared.clone(), commands));
        tracing::info!(
            addr = ?local_addr,
            tls_addr = ?tls_addr,
            shards = shared.config.shards,
            max_connections = shared.config.max_connections,
            "OCPP gateway listening"
        );
        Ok(Gateway {
            local_addr,
            tls_addr,
            shared,
            shards,
            tls,
            commands,
            liveness,
        })
    }

    /// Where chargers connect over ws, unless the gateway serves wss only.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.local_addr
    }

    /// Where chargers connect over wss, when TLS is configured.
    pub fn tls_addr(&self) -> Option<SocketAddr> {
        self.tls_addr
    }

    /// Each charger's last frames and connection attempts, for the API of this process.
    pub fn diagnostics(&self) -> GatewayDiagnostics {
        GatewayDiagnostics(Arc::downgrade(&self.shared))
    }

    /// Live sessions now.
    pub fn connected(&self) -> usize {
        self.shared.sessions.len()
    }

    /// Stops accepting, closes every session with 1001 (each publishes its disconnect), and
    /// returns when all shards are done, or after `grace` (sessions still waiting for the bus
    /// to acknowledge a record, when the broker is down, are then abandoned unanswered).
    pub async fn shutdown(self, grace: Duration) {
        self.drain(Duration::ZERO, std::future::pending(), grace)
            .await;
    }

    /// A graceful drain: stops accepting, then closes the live sessions one by one, spread
    /// evenly over `period` (each with 1001, each publishing its disconnect), so that their
    /// chargers reconnect elsewhere at a bounded rate (never slower than one every
    /// [`DRAIN_MAX_STEP`]). Sessions that began meanwhile (their
    /// handshake was under way) are closed at the end. When `hurry` completes first (a second
    /// signal), every session left is closed at once. Then as [`Gateway::shutdown`]: returns
    /// when all shards are done, or `grace` after the drain.
    pub async fn drain(
        self,
        period: Duration,
        hurry: impl std::future::Future<Output = ()>,
        grace: Duration,
    ) {
        let shared = self.shared.clone();
        shared.stop_accepting.cancel();
        let started = tokio::time::Instant::now();
        let live: Vec<(ChargerIdentity, Bytes)> = shared
            .sessions
            .iter()
            .map(|entry| (entry.key().clone(), entry.session.clone()))
            .collect();
        let total = live.len();
        tracing::info!(sessions = total, ?period, "drain started");
        let mut drained = 0usize;
        let in_turn = async {
            if period.is_zero() {
                return;
            }
            // Evenly over the period, but never slower than `DRAIN_MAX_STEP` apart: a handful of
            // chargers is no storm, and need not keep the process a whole period.
            let step = period.div_f64(total.max(1) as f64).min(DRAIN_MAX_STEP);
            for (i, (identity, session)) in live.iter().enumerate() {
                let due = started + step.mul_f64(i as f64);
                if due > tokio::time::Instant::now() {
                    tokio::time::sleep_until(due).await;
                }
                // Out of the map first: a command for it now finds no session to wait in.
                let removed = shared
                    .sessions
                    .remove_if(identity, |_, entry| entry.session == *session);
                if let Some((_, entry)) = removed {
                    let _ = entry.end.send(session::Ending::Drained);
                    shared.metrics.drained.increment(1);
                    drained += 1;
                }
            }
        };
        let cut_short = tokio::select! {
            _ = in_turn => false,
            _ = hurry => true,
        };
        let at_once = shared.sessions.len();
        if cut_short {
            tracing::warn!(
                drained,
                left = at_once,
                "drain cut short by a second signal: closing the rest at once"
            );
        }
        shared.shutdown.cancel();
        let threads: Vec<_> = self.shards.into_iter().chain(self.tls).collect();
        let joined = tokio::task::spawn_blocking(move || {
            for thread in threads {
                let _ = thread.join();
            }
        });
        if tokio::time::timeout(grace, joined).await.is_err() {
            let left = shared.sessions.len();
            tracing::warn!(
                sessions = left,
                "shutdown grace period over; abandoning sessions"
            );
        }
        tracing::info!(
            drained,
            closed_at_once = at_once,
            cut_short,
            took = ?started.elapsed(),
            "drain ended"
        );
        // No session is left to take an action; what is still on the topic the API expires.
        self.commands.abort();
        // Stopped with the sessions (`shutdown`); a beacon still waiting for the bus goes too.
        self.liveness.abort();
    }
}
