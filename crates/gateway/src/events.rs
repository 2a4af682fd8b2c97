//! Connection events: a charger connected, or its session ended and why; and, for a charger
//! relayed to proxy servers, each upstream connected or lost.

use crate::metrics::DisconnectReason;
use bytes::Bytes;
use chrono::{DateTime, Utc};
use cms_bus::{Header, Headers, Record};
use std::borrow::Cow;
use std::time::Duration;

pub enum ConnectionEvent {
    Connected {
        remote_addr: String,
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
    let identity = String::from_utf8_lossy(identity_key);
    let session_text = String::from_utf8_lossy(session);
    let node = String::from_utf8_lossy(&target.node);
    let (name, value) = match &event {
        ConnectionEvent::Connected { remote_addr } => (
            "connected",
            serde_json::json!({
                "event": "connected", "identity": identity, "session": session_text,
                "gateway": node, "at": at, "remote_addr": remote_addr, "subprotocol": "ocpp1.6",
            }),
        ),
        ConnectionEvent::Disconnected { reason } => (
            "disconnected",
            serde_json::json!({
                "event": "disconnected", "identity": identity, "session": session_text,
                "gateway": node, "at": at, "reason": reason.as_str(),
            }),
        ),
        ConnectionEvent::Upstream {
            position,
            websocket_url,
            connected,
        } => (
            "upstream",
            serde_json::json!({
                "event": "upstream", "identity": identity, "session": session_text,
                "gateway": node, "at": at, "position": position, "websocket_url": websocket_url,
                "status": if *connected { "connected" } else { "disconnected" },
            }),
        ),
    };
    Record {
        topic: Cow::Borrowed(target.topic),
        key: identity_key.clone(),
        headers: Headers::from_iter([
            Header::new("event", name),
            Header::new("received_at", at),
            Header::new("gateway", target.node.clone()),
            Header::new("session", session.clone()),
        ]),
        value: Bytes::from(value.to_string()),
    }
}

/// The record a gateway publishes as it starts: every session it held before (a crash says
/// nothing of them) is over. Keyed by the gateway's node id; consumers take offline the
/// chargers still shown online from this gateway since before `at` (docs/bus.md).
pub fn gateway_started_record(
    target: &EventTarget,
    beacon_interval: Duration,
    now: DateTime<Utc>,
) -> Record {
    gateway_record(target, "gateway_started", beacon_interval, now)
}

/// The beacon a gateway publishes every `beacon_interval` while it runs: it is alive at `at`.
/// Keyed like its start; consumers take a gateway silent for several intervals for dead, and
/// its chargers for disconnected (docs/bus.md).
pub fn gateway_alive_record(
    target: &EventTarget,
    beacon_interval: Duration,
    now: DateTime<Utc>,
) -> Record {
    gateway_record(target, "gateway_alive", beacon_interval, now)
}

/// A record of the gateway itself: `event`, its node id, the time and how often it beacons.
fn gateway_record(
    target: &EventTarget,
    event: &'static str,
    beacon_interval: Duration,
    now: DateTime<Utc>,
) -> Record {
    let at = crate::record_time::record_time(now);
    let node = String::from_utf8_lossy(&target.node);
    let interval_ms = u64::try_from(beacon_interval.as_millis()).unwrap_or(u64::MAX);
    let value = serde_json::json!({
        "event": event, "gateway": node, "at": at, "beacon_interval_ms": interval_ms,
    });
    Record {
        topic: Cow::Borrowed(target.topic),
        key: target.node.clone(),
        headers: Headers::from_iter([
            Header::new("event", event),
            Header::new("received_at", at),
            Header::new("gateway", target.node.clone()),
        ]),
        value: Bytes::from(value.to_string()),
    }
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
