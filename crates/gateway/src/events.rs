//! Connection events: a charger connected, or its session ended and why; and, for a charger
//! relayed to proxy servers, each upstream connected or lost.

use crate::metrics::DisconnectReason;
use bytes::Bytes;
use chrono::{DateTime, Utc};
use cms_bus::{Header, Headers, Record};
use std::borrow::Cow;

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
pub fn gateway_started_record(target: &EventTarget, now: DateTime<Utc>) -> Record {
    let at = crate::record_time::record_time(now);
    let node = String::from_utf8_lossy(&target.node);
    let value = serde_json::json!({"event": "gateway_started", "gateway": node, "at": at});
    Record {
        topic: Cow::Borrowed(target.topic),
        key: target.node.clone(),
        headers: Headers::from_iter([
            Header::new("event", "gateway_started"),
            Header::new("received_at", at),
            Header::new("gateway", target.node.clone()),
        ]),
        value: Bytes::from(value.to_string()),
    }
}
