//! Connection events: a charger connected, or its session ended and why; and, for a charger
//! relayed to proxy servers, each upstream connected or lost.

use crate::metrics::DisconnectReason;
use bytes::Bytes;
use chrono::{DateTime, Utc};
use cms_bus::{ConnectionEvent as Event, Record};
use cms_ocpp::OcppVersion;
use std::time::Duration;

pub enum ConnectionEvent {
    Connected {
        remote_addr: String,
        /// The version agreed in the handshake: the event's `subprotocol`.
        version: OcppVersion,
    },
    Disconnected {
        reason: DisconnectReason,
    },
    Upstream {
        /// The server's place in the charger's list of proxy servers.
        position: usize,
        /// Its URL without credentials: the password stays off the bus.
        websocket_url: String,
        connected: bool,
    },
}

/// Where connection events go: the connections topic, in the name of this gateway.
#[derive(Clone)]
pub struct EventTarget {
    pub topic: &'static str,
    pub node: Bytes,
}

/// The record of a connection event: key = identity, value = a small JSON document.
pub fn connection_record(
    target: &EventTarget,
    identity_key: &Bytes,
    session: &Bytes,
    event: ConnectionEvent,
    now: DateTime<Utc>,
) -> Record {
    let at = crate::record_time::record_time(now);
    let identity = String::from_utf8_lossy(identity_key).into_owned();
    let session_text = String::from_utf8_lossy(session).into_owned();
    let gateway = String::from_utf8_lossy(&target.node).into_owned();
    let event = match event {
        ConnectionEvent::Connected {
            remote_addr,
            version,
        } => Event::Connected {
            identity,
            session: session_text,
            gateway,
            at,
            remote_addr,
            subprotocol: version.subprotocol().to_string(),
        },
        ConnectionEvent::Disconnected { reason } => Event::Disconnected {
            identity,
            session: session_text,
            gateway,
            at,
            reason: reason.as_str().to_string(),
        },
        ConnectionEvent::Upstream {
            position,
            websocket_url,
            connected,
        } => Event::Upstream {
            identity,
            session: session_text,
            gateway,
            at,
            position: i64::try_from(position).unwrap_or(i64::MAX),
            websocket_url,
            status: if connected {
                "connected"
            } else {
                "disconnected"
            }
            .to_string(),
        },
    };
    event.record(
        target.topic,
        identity_key.clone(),
        target.node.clone(),
        Some(session.clone()),
    )
}

/// The record a gateway publishes as it starts: every session it held before (a crash says
/// nothing of them) is over. Keyed by the gateway's node id; consumers take offline the
/// chargers still shown online from this gateway since before `at` (docs/bus.md).
pub fn gateway_started_record(
    target: &EventTarget,
    beacon_interval: Duration,
    now: DateTime<Utc>,
) -> Record {
    let (gateway, at, beacon_interval_ms) = gateway_fields(target, beacon_interval, now);
    let event = Event::GatewayStarted {
        gateway,
        at,
        beacon_interval_ms,
    };
    event.record(target.topic, target.node.clone(), target.node.clone(), None)
}

/// The beacon a gateway publishes every `beacon_interval` while it runs: it is alive at `at`.
/// Keyed like its start; consumers take a gateway silent for several intervals for dead, and
/// its chargers for disconnected (docs/bus.md).
pub fn gateway_alive_record(
    target: &EventTarget,
    beacon_interval: Duration,
    now: DateTime<Utc>,
) -> Record {
    let (gateway, at, beacon_interval_ms) = gateway_fields(target, beacon_interval, now);
    let event = Event::GatewayAlive {
        gateway,
        at,
        beacon_interval_ms,
    };
    event.record(target.topic, target.node.clone(), target.node.clone(), None)
}

/// What a record of the gateway itself says: its node id, the time and how often it beacons.
fn gateway_fields(
    target: &EventTarget,
    beacon_interval: Duration,
    now: DateTime<Utc>,
) -> (String, String, Option<u64>) {
    let gateway = String::from_utf8_lossy(&target.node).into_owned();
    let at = crate::record_time::record_time(now);
    let interval_ms = u64::try_from(beacon_interval.as_millis()).unwrap_or(u64::MAX);
    (gateway, at, Some(interval_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_beacon_is_keyed_by_the_gateway_and_says_when_and_how_often() {
        let target = EventTarget {
            topic: "cms.ocpp.connections",
            node: Bytes::from_static(b"gw-1"),
        };
        let now = DateTime::parse_from_rfc3339("2026-11-21T10:00:00.5Z")
            .unwrap()
            .with_timezone(&Utc);
        let record = gateway_alive_record(&target, Duration::from_secs(10), now);
        assert_eq!(record.topic, "cms.ocpp.connections");
        assert_eq!(&record.key[..], b"gw-1");
        assert_eq!(record.header_str("event"), Some("gateway_alive"));
        assert_eq!(record.header_str("gateway"), Some("gw-1"));
        assert_eq!(
            record.header_str("received_at"),
            Some("2026-11-21T10:00:00.500000Z")
        );
        let value: serde_json::Value = serde_json::from_slice(&record.value).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"event": "gateway_alive", "gateway": "gw-1",
                "at": "2026-11-21T10:00:00.500000Z", "beacon_interval_ms": 10000})
        );
        let started = gateway_started_record(&target, Duration::from_secs(10), now);
        let value: serde_json::Value = serde_json::from_slice(&started.value).unwrap();
        assert_eq!(value["event"], "gateway_started");
        assert_eq!(value["beacon_interval_ms"], 10000);
    }
}
