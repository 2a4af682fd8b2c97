//! Records of `<prefix>.ocpp.connections`: a charger's session opening and closing, its
//! upstreams (proxy.md), and each gateway's start and beacons (docs/bus.md).

use crate::contract::{CONTRACT_VERSION_TEXT, header};
use crate::{Header, Headers, Record};
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// A connection event: the JSON value of a connections record, named by its `event` field.
/// The gateway writes every field; a consumer reads records missing the optional ones as the
/// API always has (an absent `at` is read as now, an absent `gateway` as empty).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum ConnectionEvent {
    /// A charger's session opened.
    Connected {
        #[serde(default)]
        identity: String,
        session: String,
        #[serde(default)]
        gateway: String,
        #[serde(default)]
        at: String,
        #[serde(default)]
        remote_addr: String,
        #[serde(default)]
        subprotocol: String,
    },
    /// A charger's session ended, and why (`closed_by_charger`, `replaced`, ...).
    Disconnected {
        #[serde(default)]
        identity: String,
        session: String,
        #[serde(default)]
        gateway: String,
        #[serde(default)]
        at: String,
        #[serde(default)]
        reason: String,
    },
    /// One of a relayed charger's proxy servers connected or was lost.
    Upstream {
        #[serde(default)]
        identity: String,
        session: String,
        #[serde(default)]
        gateway: String,
        #[serde(default)]
        at: String,
        /// The server's place in the charger's list of proxy servers.
        position: i64,
        /// Its URL without credentials.
        #[serde(default)]
        websocket_url: String,
        /// `connected` or `disconnected`.
        status: String,
    },
    /// A connection that gave this identity was turned away before any session began, and
    /// why (`wrong_password`, `tls_required`, ...: the reasons of `GET
    /// /api/v3/chargers/{uuid}/connection-attempts`). Published at most 100 a second per
    /// gateway; no session.
    Refused {
        #[serde(default)]
        identity: String,
        #[serde(default)]
        gateway: String,
        #[serde(default)]
        at: String,
        #[serde(default)]
        remote_addr: String,
        reason: String,
    },
    /// A gateway started: every session it held before is over. Keyed by its node id.
    GatewayStarted {
        gateway: String,
        #[serde(default)]
        at: String,
        /// How often it beacons; absent from a gateway of a version before the beacons.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        beacon_interval_ms: Option<u64>,
    },
    /// A gateway's beacon: it was alive, and held its sessions, at `at`.
    GatewayAlive {
        gateway: String,
        #[serde(default)]
        at: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        beacon_interval_ms: Option<u64>,
    },
}

impl ConnectionEvent {
    /// The `event` name, also the record's `event` header.
    pub fn name(&self) -> &'static str {
        match self {
            ConnectionEvent::Connected { .. } => "connected",
            ConnectionEvent::Disconnected { .. } => "disconnected",
            ConnectionEvent::Upstream { .. } => "upstream",
            ConnectionEvent::Refused { .. } => "refused",
            ConnectionEvent::GatewayStarted { .. } => "gateway_started",
            ConnectionEvent::GatewayAlive { .. } => "gateway_alive",
        }
    }

    /// When it happened, in record time form (empty if a producer left it out).
    pub fn at(&self) -> &str {
        match self {
            ConnectionEvent::Connected { at, .. }
            | ConnectionEvent::Disconnected { at, .. }
            | ConnectionEvent::Upstream { at, .. }
            | ConnectionEvent::Refused { at, .. }
            | ConnectionEvent::GatewayStarted { at, .. }
            | ConnectionEvent::GatewayAlive { at, .. } => at,
        }
    }

    /// Its record: keyed by `key` (the charger identity, or the gateway's node id for the
    /// gateway's own events), with the `event`, `received_at`, `gateway`, `session` (for a
    /// charger's events) and `contract_version` headers.
    pub fn record(
        &self,
        topic: &'static str,
        key: Bytes,
        gateway: Bytes,
        session: Option<Bytes>,
    ) -> Record {
        let mut headers = Headers::new();
        headers.push(Header::new(header::EVENT, self.name()));
        headers.push(Header::new(header::RECEIVED_AT, self.at().to_string()));
        headers.push(Header::new(header::GATEWAY, gateway));
        if let Some(session) = session {
            headers.push(Header::new(header::SESSION, session));
        }
        headers.push(Header::new(header::CONTRACT_VERSION, CONTRACT_VERSION_TEXT));
        let value = serde_json::to_vec(self).expect("connection events serialise");
        Record {
            topic: Cow::Borrowed(topic),
            key,
            headers,
            value: Bytes::from(value),
        }
    }

    /// The event a connections record carries; `None` for a record that is not one.
    pub fn of(record: &Record) -> Option<ConnectionEvent> {
        serde_json::from_slice(&record.value).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_event_reads_back_from_its_record_with_the_contract_version() {
        let event = ConnectionEvent::Disconnected {
            identity: "CP-1".into(),
            session: "s-1".into(),
            gateway: "gw-1".into(),
            at: "2026-11-21T10:00:00.000000Z".into(),
            reason: "replaced".into(),
        };
        let record = event.record(
            "cms.ocpp.connections",
            Bytes::from_static(b"CP-1"),
            Bytes::from_static(b"gw-1"),
            Some(Bytes::from_static(b"s-1")),
        );
        assert_eq!(record.header_str(header::EVENT), Some("disconnected"));
        assert_eq!(record.header_str(header::SESSION), Some("s-1"));
        assert_eq!(record.header_str(header::CONTRACT_VERSION), Some("1"));
        assert_eq!(ConnectionEvent::of(&record), Some(event));
    }

    #[test]
    fn a_start_without_a_beacon_interval_is_an_older_gateways() {
        let value =
            br#"{"event":"gateway_started","gateway":"gw-1","at":"2026-11-21T10:00:00.000000Z"}"#;
        let event: ConnectionEvent = serde_json::from_slice(value).unwrap();
        assert!(matches!(
            event,
            ConnectionEvent::GatewayStarted {
                beacon_interval_ms: None,
                ..
            }
        ));
        assert_eq!(
            serde_json::to_vec(&event).unwrap(),
            value,
            "written as read"
        );
    }
}
