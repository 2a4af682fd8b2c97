//! Connection events: a charger connected, or its session ended and why.

use crate::Shared;
use crate::metrics::DisconnectReason;
use bytes::Bytes;
use chrono::{DateTime, Utc};
use cms_bus::{Header, Record};
use std::borrow::Cow;

pub enum ConnectionEvent {
    Connected { remote_addr: String },
    Disconnected { reason: DisconnectReason },
}

/// The record of a connection event: key = identity, value = a small JSON document.
pub fn connection_record(
    shared: &Shared,
    identity_key: &Bytes,
    session: &Bytes,
    event: ConnectionEvent,
    now: DateTime<Utc>,
) -> Record {
    let at = crate::record_time::record_time(now);
    let identity = String::from_utf8_lossy(identity_key);
    let session_text = String::from_utf8_lossy(session);
    let node = String::from_utf8_lossy(&shared.node);
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
    };
    Record {
        topic: Cow::Borrowed(shared.topics.connections),
        key: identity_key.clone(),
        headers: vec![
            Header::new("event", name),
            Header::new("received_at", at),
            Header::new("gateway", shared.node.clone()),
            Header::new("session", session.clone()),
        ],
        value: Bytes::from(value.to_string()),
    }
}
