//! Relaying a charger to other central systems, its proxy servers (docs/proxy.md): the gateway
//! that holds the charger's socket keeps one outbound websocket per proxy server and sends each
//! of them every CALL the charger makes, as a charge point would.
//!
//! This is the followers' half: cms answers the charger, and a proxy server's answers are taken
//! and dropped; a proxy server's own calls are refused (`SecurityError`), never reaching the
//! charger. Bounded: each upstream has a queue of [`QUEUE`] calls; one that is full (the
//! upstream slow or down) drops what does not fit, counted, and never slows the charger.

mod upstream;

use bytes::Bytes;
use cms_bus::ProxySetup;
use cms_ocpp::v16::Action;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Calls waiting for an upstream: enough to ride out a reconnect of a few seconds at a
/// charger's usual pace, small enough that 100,000 relayed chargers stay bounded.
pub const QUEUE: usize = 64;

/// One charger CALL to relay: its action and its payload (the charger's own bytes).
#[derive(Debug, Clone)]
pub struct Relayed {
    pub action: Action,
    pub payload: Bytes,
}

/// What an upstream that (re)connects is told first, so that one that restarted learns the
/// charger is there: its last BootNotification, and its last StatusNotification per connector.
#[derive(Default)]
pub struct Replay {
    boot: Option<Bytes>,
    statuses: BTreeMap<u64, Bytes>,
}

impl Replay {
    fn note(&mut self, call: &Relayed) {
        match call.action {
            Action::BootNotification => self.boot = Some(call.payload.clone()),
            Action::StatusNotification => {
                let connector = serde_json::from_slice::<serde_json::Value>(&call.payload)
                    .ok()
                    .and_then(|v| v["connectorId"].as_u64());
                if let Some(connector) = connector {
                    self.statuses.insert(connector, call.payload.clone());
                }
            }
            _ => {}
        }
    }

    fn calls(&self) -> Vec<Relayed> {
        let boot = self.boot.iter().map(|payload| Relayed {
            action: Action::BootNotification,
            payload: payload.clone(),
        });
        let statuses = self.statuses.values().map(|payload| Relayed {
            action: Action::StatusNotification,
            payload: payload.clone(),
        });
        boot.chain(statuses).collect()
    }
}

/// What every relay of a gateway shares.
#[derive(Clone)]
pub struct RelayContext {
    /// The TLS client for `wss` upstreams.
    pub tls: Arc<rustls::ClientConfig>,
    /// The gateway's shutdown.
    pub shutdown: CancellationToken,
}

/// The relay of one charger's session: its upstreams, stopped when it is dropped.
pub struct Relay {
    setup: ProxySetup,
    queues: Vec<mpsc::Sender<Relayed>>,
    replay: Arc<Mutex<Replay>>,
    stop: CancellationToken,
}

impl Relay {
    pub fn start(context: &RelayContext, identity: &str, setup: ProxySetup) -> Relay {
        let stop = context.shutdown.child_token();
        let replay = Arc::new(Mutex::new(Replay::default()));
        let queues = setup
            .upstreams
            .iter()
            .map(|upstream| {
                let (queue, calls) = mpsc::channel(QUEUE);
                let link = upstream::Link {
                    websocket_url: upstream.websocket_url.clone(),
                    identity: identity.to_string(),
                    tls: context.tls.clone(),
                    replay: replay.clone(),
                    stop: stop.clone(),
                };
                tokio::spawn(link.run(calls));
                queue
            })
            .collect();
        Relay {
            setup,
            queues,
            replay,
            stop,
        }
    }

    /// The set-up it relays by.
    pub fn setup(&self) -> &ProxySetup {
        &self.setup
    }

    /// Relays one CALL of the charger to every upstream; dropped (and counted) for an upstream
    /// whose queue is full.
    pub fn relay(&self, action: Action, payload: &Bytes) {
        let call = Relayed {
            action,
            payload: payload.clone(),
        };
        self.replay
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .note(&call);
        for queue in &self.queues {
            match queue.try_send(call.clone()) {
                Ok(()) => metrics::counter!("cms_proxy_frames_queued_total").increment(1),
                Err(_) => metrics::counter!("cms_proxy_frames_dropped_total").increment(1),
            }
        }
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

    fn call(action: Action, payload: &'static str) -> Relayed {
        Relayed {
            action,
            payload: Bytes::from_static(payload.as_bytes()),
        }
    }

    #[test]
    fn the_replay_is_the_last_boot_and_the_last_status_of_each_connector() {
        let mut replay = Replay::default();
        replay.note(&call(
            Action::StatusNotification,
            r#"{"connectorId":1,"status":"Available"}"#,
        ));
        replay.note(&call(
            Action::BootNotification,
            r#"{"chargePointModel":"A"}"#,
        ));
        replay.note(&call(Action::MeterValues, r#"{"connectorId":1}"#));
        replay.note(&call(
            Action::StatusNotification,
            r#"{"connectorId":0,"status":"Available"}"#,
        ));
        replay.note(&call(
            Action::StatusNotification,
            r#"{"connectorId":1,"status":"Charging"}"#,
        ));
        replay.note(&call(
            Action::BootNotification,
            r#"{"chargePointModel":"B"}"#,
        ));
        let calls: Vec<(Action, &[u8])> = replay
            .calls()
            .iter()
            .map(|c| (c.action, &c.payload[..]))
            .map(|(a, p)| (a, p.to_vec().leak() as &[u8]))
            .collect();
        assert_eq!(
            calls,
            [
                (
                    Action::BootNotification,
                    &br#"{"chargePointModel":"B"}"#[..]
                ),
                (
                    Action::StatusNotification,
                    br#"{"connectorId":0,"status":"Available"}"#
                ),
                (
                    Action::StatusNotification,
                    br#"{"connectorId":1,"status":"Charging"}"#
                ),
            ]
        );
    }
}
