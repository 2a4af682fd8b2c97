//! Relaying a charger to other central systems, its proxy servers (docs/proxy.md): the gateway
//! that holds the charger's socket keeps one outbound websocket per proxy server and sends each
//! of them every CALL the charger makes, as a charge point would.
//!
//! A follower's answers are taken and dropped, and its own calls refused (`SecurityError`),
//! never reaching the charger. The leader (the proxy server with role `leader` of a charger
//! whose vendor role is `ROLE_FOLLOWER`) answers the charger: its answer to each relayed call
//! is handed back to the session, which waits for it at most [`LEADER_WAIT`] and answers
//! itself when it does not come (or the leader is down); its calls reach the charger when
//! [`LeaderCalls`] allows them. Bounded: each upstream has a queue of [`QUEUE`] calls, and the
//! calls queued hold no more bytes than the charger's budget and the gateway's ([`budget`]);
//! what does not fit (the upstream slow or down) is dropped for that upstream, counted, and
//! never slows the charger.

mod budget;
mod leader_calls;
mod upstream;

pub use budget::{CHARGER_BYTES, GatewayBudget, TOTAL_BYTES};
pub use leader_calls::LeaderCalls;

use crate::actions::ActionInbox;
use crate::charger_action::ChargerAction;
use crate::events::EventTarget;
use bytes::Bytes;
use cms_bus::ProxySetup;
use cms_ocpp::{OcppVersion, v16, v201};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::protocol::WebSocketConfig;
use tokio_util::sync::CancellationToken;

/// Calls waiting for an upstream: enough to ride out a reconnect of a few seconds at a
/// charger's usual pace, small enough that 100,000 relayed chargers stay bounded.
pub const QUEUE: usize = 64;

/// How long a charger's call waits for the leader's answer before cms answers it itself:
/// well within the 30 s or more chargers give a central system.
pub const LEADER_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// One charger CALL to relay: its action and its payload (the charger's own bytes); for the
/// leader, where its answer goes; while it is queued, the bytes it holds of the budgets (none
/// for the replay's calls, which the session keeps anyway).
#[derive(Debug)]
pub struct Relayed {
    pub action: ChargerAction,
    pub payload: Bytes,
    pub answer_to: Option<oneshot::Sender<LeaderAnswer>>,
    pub held: Option<budget::Held>,
}

/// The leader's answer to a relayed call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaderAnswer {
    /// A CALLRESULT: its payload as JSON text.
    Result(String),
    /// A CALLERROR.
    Error { code: String, description: String },
}

/// What an upstream that (re)connects is told first, so that one that restarted learns the
/// charger is there: its last BootNotification, and its last StatusNotification per connector
/// (1.6) or per EVSE and connector (2.0.1). A session speaks one version, so all are of one.
#[derive(Default)]
pub struct Replay {
    boot: Option<(ChargerAction, Bytes)>,
    statuses: BTreeMap<(u64, u64), (ChargerAction, Bytes)>,
}

/// Whether a call is kept for the replay: only a boot or a status is, so that the replay's
/// lock is not taken per meter value.
fn replayed(action: ChargerAction) -> bool {
    matches!(
        action,
        ChargerAction::V16(v16::Action::BootNotification | v16::Action::StatusNotification)
            | ChargerAction::V201(
                v201::Action::BootNotification | v201::Action::StatusNotification
            )
    )
}

impl Replay {
    /// Keeps `payload`, which must be bytes of its own (see `Relay::relay`), not a slice of a
    /// shard's chunk.
    fn note(&mut self, action: ChargerAction, payload: &Bytes) {
        let place = |payload: &Bytes, evse: &str, connector: &str| {
            let value = serde_json::from_slice::<serde_json::Value>(payload).ok()?;
            let evse = match evse {
                "" => 0,
                name => value[name].as_u64()?,
            };
            Some((evse, value[connector].as_u64()?))
        };
        let status_at = match action {
            ChargerAction::V16(v16::Action::BootNotification)
            | ChargerAction::V201(v201::Action::BootNotification) => {
                self.boot = Some((action, payload.clone()));
                return;
            }
            ChargerAction::V16(v16::Action::StatusNotification) => {
                place(payload, "", "connectorId")
            }
            ChargerAction::V201(v201::Action::StatusNotification) => {
                place(payload, "evseId", "connectorId")
            }
            _ => None,
        };
        if let Some(at) = status_at {
            self.statuses.insert(at, (action, payload.clone()));
        }
    }

    fn calls(&self) -> Vec<Relayed> {
        let call = |(action, payload): &(ChargerAction, Bytes)| Relayed {
            action: *action,
            payload: payload.clone(),
            answer_to: None,
            held: None,
        };
        let boot = self.boot.iter().map(call);
        boot.chain(self.statuses.values().map(call)).collect()
    }
}

/// What every relay of a gateway shares.
#[derive(Clone)]
pub struct RelayContext {
    /// The TLS client for `wss` upstreams.
    pub tls: Arc<rustls::ClientConfig>,
    /// The chargers' websocket settings: small buffers (at tungstenite's 128 KiB default each
    /// read of an upstream's answer zeroed its buffer, 9% of the CPU when relaying), the same
    /// frame limits.
    pub ws_config: WebSocketConfig,
    /// The gateway's shutdown.
    pub shutdown: CancellationToken,
    /// Where each upstream's state is told (the connections topic), for the proxy resource;
    /// the sessions' own connection events go there too.
    pub bus: Arc<dyn cms_bus::Publisher>,
    pub events: EventTarget,
    /// The bytes queued calls may hold, per charger and over the gateway.
    pub budget: Arc<GatewayBudget>,
    /// What a leader may make a charger do, and the count of its calls refused
    /// (`cms_proxy_leader_calls_refused_total`, registered at start).
    pub leader_calls: LeaderCalls,
    pub leader_refusals: metrics::Counter,
}

/// One upstream as the session sees it: where its calls queue, and whether it is up.
struct Queue {
    calls: mpsc::Sender<Relayed>,
    budget: Arc<budget::UpstreamBudget>,
    state: Arc<AtomicU8>,
    leader: bool,
    /// Set when a wait for this leader's answer ran out, cleared when it answers again: until
    /// then the charger is answered by cms at once, not after another wait.
    lagging: Arc<AtomicBool>,
}

/// An upstream's state: connecting for the first time (a charger's first calls wait for the
/// leader to be there, as they would for a central system it dialled itself), up, or down
/// (since a connection failed or ended; calls are answered by cms until it is up again).
pub const CONNECTING: u8 = 0;
pub const UP: u8 = 1;
pub const DOWN: u8 = 2;

/// The relay of one charger's session: its upstreams, stopped when it is dropped.
pub struct Relay {
    identity: Box<str>,
    setup: ProxySetup,
    queues: Vec<Queue>,
    budget: Arc<budget::ChargerBudget>,
    /// Kept handles: a metric looked up by name on every frame costs a hash and a lock.
    queued: metrics::Counter,
    replay: Arc<Mutex<Replay>>,
    stop: CancellationToken,
}

impl Relay {
    /// Starts the upstreams of the session `session` of `identity`; a leader's calls for the
    /// charger go to the session's `inbox`. `replay` is the session's, kept across set-ups;
    /// `mid_session`: the charger's boot is not among the calls to come, so even a first
    /// connection starts with the replay. The upstreams are spoken to in the charger's
    /// `version`, as the charger would speak to them.
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        context: &RelayContext,
        identity: &str,
        version: OcppVersion,
        session: &str,
        setup: ProxySetup,
        inbox: &Arc<ActionInbox>,
        replay: Arc<Mutex<Replay>>,
        mid_session: bool,
    ) -> Relay {
        let stop = context.shutdown.child_token();
        let budget = budget::ChargerBudget::new(context.budget.clone());
        let queues = setup
            .upstreams
            .iter()
            .enumerate()
            .map(|(position, upstream)| {
                let (queue, calls) = mpsc::channel(QUEUE);
                let state = Arc::new(AtomicU8::new(CONNECTING));
                let lagging = Arc::new(AtomicBool::new(false));
                let link = upstream::Link {
                    websocket_url: upstream.websocket_url.clone(),
                    position,
                    identity: identity.to_string(),
                    version,
                    tls: context.tls.clone(),
                    ws_config: context.ws_config,
                    replay: replay.clone(),
                    replay_first: mid_session,
                    events: upstream::Events {
                        bus: context.bus.clone(),
                        target: context.events.clone(),
                        identity_key: Bytes::copy_from_slice(identity.as_bytes()),
                        session: Bytes::copy_from_slice(session.as_bytes()),
                    },
                    leader: upstream.leader.then(|| upstream::LeaderSide {
                        inbox: inbox.clone(),
                        session: session.to_string(),
                        calls: context.leader_calls,
                        refused: context.leader_refusals.clone(),
                    }),
                    state: state.clone(),
                    lagging: lagging.clone(),
                    stop: stop.clone(),
                };
                tokio::spawn(link.run(calls));
                Queue {
                    calls: queue,
                    budget: budget.upstream(setup.upstreams.len()),
                    state,
                    leader: upstream.leader,
                    lagging,
                }
            })
            .collect();
        Relay {
            identity: identity.into(),
            setup,
            queues,
            budget,
            queued: metrics::counter!("cms_proxy_frames_queued_total"),
            replay,
            stop,
        }
    }

    /// The leader did not answer within [`LEADER_WAIT`]: the charger's next calls are answered
    /// by cms at once until the leader answers again.
    pub fn leader_missed(&self) {
        for queue in self.queues.iter().filter(|q| q.leader) {
            queue.lagging.store(true, Ordering::Release);
        }
    }

    /// The set-up it relays by.
    pub fn setup(&self) -> &ProxySetup {
        &self.setup
    }

    /// Relays one CALL of the charger to every upstream; dropped (and counted) for an upstream
    /// whose queue is full or that the byte budgets have no room for. `Some`: where the
    /// leader's answer will come, when there is a leader, it is connected and it took the call.
    pub fn relay(
        &self,
        action: ChargerAction,
        payload: &Bytes,
    ) -> Option<oneshot::Receiver<LeaderAnswer>> {
        // A copy of its own: a frame's bytes are cut from a chunk its shard shares among tens
        // of frames (`chunks.rs`), and a call may wait in a queue for tens of seconds (an
        // upstream reconnecting), a boot or a status for the connection's life; a slice would
        // keep the whole chunk that long.
        let payload = &Bytes::copy_from_slice(payload);
        if replayed(action) {
            let mut replay = self.replay.lock().unwrap_or_else(PoisonError::into_inner);
            replay.note(action, payload);
        }
        let mut leader_answer = None;
        for queue in &self.queues {
            let (answer_to, answer) = match queue.leader {
                // A leader that is down cannot answer: no point making the charger wait.
                true if queue.state.load(Ordering::Acquire) != DOWN
                    && !queue.lagging.load(Ordering::Acquire) =>
                {
                    let (tx, rx) = oneshot::channel();
                    (Some(tx), Some(rx))
                }
                true => {
                    metrics::counter!("cms_proxy_leader_fallbacks_total").increment(1);
                    (None, None)
                }
                false => (None, None),
            };
            let queued = match queue.budget.admit(payload.len()) {
                Ok(held) => {
                    let call = Relayed {
                        action,
                        payload: payload.clone(),
                        answer_to,
                        held: Some(held),
                    };
                    // A call that does not fit gives its bytes back as it is dropped here.
                    queue.calls.try_send(call).map_err(|_| budget::Over::Queue)
                }
                Err(over) => Err(over),
            };
            match queued {
                Ok(()) => {
                    self.queued.increment(1);
                    leader_answer = leader_answer.or(answer);
                }
                Err(over) => {
                    self.budget.gateway().dropped(&self.identity, over);
                    if queue.leader {
                        metrics::counter!("cms_proxy_leader_fallbacks_total").increment(1);
                    }
                }
            }
        }
        leader_answer
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn replayed_calls(replay: &Replay) -> Vec<(ChargerAction, String)> {
        let calls = replay.calls().into_iter();
        calls
            .map(|c| (c.action, String::from_utf8_lossy(&c.payload).into_owned()))
            .collect()
    }

    #[test]
    fn the_replay_is_the_last_boot_and_the_last_status_of_each_connector() {
        use v16::Action::*;
        let mut replay = Replay::default();
        let mut note = |action, payload: &'static str| {
            replay.note(
                ChargerAction::V16(action),
                &Bytes::from_static(payload.as_bytes()),
            )
        };
        note(
            StatusNotification,
            r#"{"connectorId":1,"status":"Available"}"#,
        );
        note(BootNotification, r#"{"chargePointModel":"A"}"#);
        note(MeterValues, r#"{"connectorId":1}"#);
        note(
            StatusNotification,
            r#"{"connectorId":0,"status":"Available"}"#,
        );
        note(
            StatusNotification,
            r#"{"connectorId":1,"status":"Charging"}"#,
        );
        note(BootNotification, r#"{"chargePointModel":"B"}"#);
        let expected = [
            (BootNotification, r#"{"chargePointModel":"B"}"#),
            (
                StatusNotification,
                r#"{"connectorId":0,"status":"Available"}"#,
            ),
            (
                StatusNotification,
                r#"{"connectorId":1,"status":"Charging"}"#,
            ),
        ];
        let expected = expected.map(|(a, p)| (ChargerAction::V16(a), p.to_string()));
        assert_eq!(replayed_calls(&replay), expected);
    }

    #[test]
    fn a_201_stations_replay_keeps_the_last_status_of_each_evse_and_connector() {
        use v201::Action::*;
        let mut replay = Replay::default();
        let mut note = |action, payload: &'static str| {
            replay.note(
                ChargerAction::V201(action),
                &Bytes::from_static(payload.as_bytes()),
            )
        };
        let status = |evse: u8, connector: u8, status: &str| {
            let text = format!(
                r#"{{"timestamp":"2026-11-29T10:00:00Z","connectorStatus":"{status}","evseId":{evse},"connectorId":{connector}}}"#
            );
            &*Box::leak(text.into_boxed_str())
        };
        note(BootNotification, r#"{"reason":"PowerUp"}"#);
        note(StatusNotification, status(1, 1, "Available"));
        note(StatusNotification, status(2, 1, "Available"));
        note(StatusNotification, status(1, 2, "Available"));
        note(MeterValues, r#"{"evseId":1,"meterValue":[]}"#);
        note(StatusNotification, status(1, 1, "Occupied"));
        let expected = [
            (BootNotification, r#"{"reason":"PowerUp"}"#),
            (StatusNotification, status(1, 1, "Occupied")),
            (StatusNotification, status(1, 2, "Available")),
            (StatusNotification, status(2, 1, "Available")),
        ];
        let expected = expected.map(|(a, p)| (ChargerAction::V201(a), p.to_string()));
        assert_eq!(replayed_calls(&replay), expected);
    }
}
