//! Records of `<prefix>.ocpp.messages`: a CALL a charger sent, its payload as the value and
//! what the gateway knows of it in the headers. Written from the gateway's shared bytes (no
//! copy, no heap: this is every frame's path), read back as a [`ChargerMessage`].

use crate::contract::header;
use crate::{Header, Headers, Record};
use bytes::Bytes;
use serde::{Deserialize, Serialize};

/// A charger message's headers, as a consumer reads them (docs/bus.md shows them as a JSON
/// object). The gateway writes every field that applies; only `action` is needed to read a
/// record, so that one of another producer is read as far as it goes.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChargerMessage<'a> {
    /// The OCPP action, e.g. `MeterValues`.
    pub action: &'a str,
    #[serde(default)]
    pub message_id: Option<&'a str>,
    /// When the gateway received the frame, in record time form.
    #[serde(default)]
    pub received_at: Option<&'a str>,
    /// The gateway's node id.
    #[serde(default)]
    pub gateway: Option<&'a str>,
    /// The websocket session, as in the connection events.
    #[serde(default)]
    pub session: Option<&'a str>,
    /// e.g. `ocpp1.6`.
    #[serde(default)]
    pub ocpp_version: Option<&'a str>,
    /// MeterValues: the payload's connectorId.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connector_id: Option<&'a str>,
    /// MeterValues: the newest sample's time, in record time form (text order is time order).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measured_at: Option<&'a str>,
    /// StartTransaction: the transactionId the gateway answered with; 2.0.1 TransactionEvent:
    /// the station's own (a string: [`Self::transaction_id`] reads only 1.6's numbers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transaction_id: Option<&'a str>,
    /// StartTransaction: the idTagInfo status the gateway answered with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_tag_status: Option<&'a str>,
    /// 2.0.1 TransactionEvent: `Started`, `Updated` or `Ended`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub event_type: Option<&'a str>,
}

impl<'a> ChargerMessage<'a> {
    /// The headers of a charger message record; `None` without an `action`.
    pub fn of(record: &'a Record) -> Option<ChargerMessage<'a>> {
        let text = |name| record.header_str(name);
        Some(ChargerMessage {
            action: text(header::ACTION)?,
            message_id: text(header::MESSAGE_ID),
            received_at: text(header::RECEIVED_AT),
            gateway: text(header::GATEWAY),
            session: text(header::SESSION),
            ocpp_version: text(header::OCPP_VERSION),
            connector_id: text(header::CONNECTOR_ID),
            measured_at: text(header::MEASURED_AT),
            transaction_id: text(header::TRANSACTION_ID),
            id_tag_status: text(header::ID_TAG_STATUS),
            event_type: text(header::EVENT_TYPE),
        })
    }

    /// The transactionId the gateway gave a StartTransaction.
    pub fn transaction_id(&self) -> Option<i64> {
        self.transaction_id?.parse().ok()
    }
}

/// The headers every charger message has, from the gateway's shared bytes. Six, and the two a
/// MeterValues or StartTransaction adds: all inside the record ([`Headers`]).
pub fn message_headers(
    action: &'static str,
    message_id: Bytes,
    received_at: Bytes,
    gateway: Bytes,
    session: Bytes,
    ocpp_version: &'static str,
) -> Headers {
    let mut headers = Headers::new();
    headers.push(Header::new(header::ACTION, action));
    headers.push(Header::new(header::MESSAGE_ID, message_id));
    headers.push(Header::new(header::RECEIVED_AT, received_at));
    headers.push(Header::new(header::GATEWAY, gateway));
    headers.push(Header::new(header::SESSION, session));
    headers.push(Header::new(header::OCPP_VERSION, ocpp_version));
    headers
}

/// A MeterValues record's headers: its connector, and its newest sample's time if it has one.
pub fn push_reading_headers(
    headers: &mut Headers,
    connector_id: Bytes,
    measured_at: Option<Bytes>,
) {
    headers.push(Header::new(header::CONNECTOR_ID, connector_id));
    if let Some(measured_at) = measured_at {
        headers.push(Header::new(header::MEASURED_AT, measured_at));
    }
}

/// A StartTransaction record's headers: the transactionId and idTagInfo status it was given.
pub fn push_start_headers(headers: &mut Headers, transaction_id: i32, id_tag_status: &'static str) {
    headers.push(Header::new(
        header::TRANSACTION_ID,
        transaction_id.to_string(),
    ));
    headers.push(Header::new(header::ID_TAG_STATUS, id_tag_status));
}

/// An Authorize record's header when the tag was refused: the idTagInfo status it was given.
pub fn push_authorize_refused(headers: &mut Headers, id_tag_status: &'static str) {
    headers.push(Header::new(header::ID_TAG_STATUS, id_tag_status));
}

/// A 2.0.1 TransactionEvent record's headers: which event, the station's own transaction id
/// (a string), the EVSE and the newest reading's time when the event has them, and the
/// idTokenInfo status answered when it carried an idToken.
pub fn push_transaction_event_headers(
    headers: &mut Headers,
    event_type: &'static str,
    transaction_id: Bytes,
    evse_id: Option<Bytes>,
    measured_at: Option<Bytes>,
    id_token_status: Option<&'static str>,
) {
    headers.push(Header::new(header::EVENT_TYPE, event_type));
    headers.push(Header::new(header::TRANSACTION_ID, transaction_id));
    if let Some(evse_id) = evse_id {
        headers.push(Header::new(header::CONNECTOR_ID, evse_id));
    }
    if let Some(measured_at) = measured_at {
        headers.push(Header::new(header::MEASURED_AT, measured_at));
    }
    if let Some(status) = id_token_status {
        headers.push(Header::new(header::ID_TAG_STATUS, status));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::borrow::Cow;

    #[test]
    fn written_headers_read_back_as_a_charger_message() {
        let mut headers = message_headers(
            "MeterValues",
            Bytes::from_static(b"4f1c"),
            Bytes::from_static(b"2026-11-21T10:00:00.123456Z"),
            Bytes::from_static(b"gw-1"),
            Bytes::from_static(b"s-1"),
            "ocpp1.6",
        );
        push_reading_headers(&mut headers, Bytes::from_static(b"1"), None);
        assert!(
            !headers.spilled(),
            "a reading's record holds its headers itself"
        );
        let mut event = headers.clone();
        event.truncate(6);
        push_transaction_event_headers(
            &mut event,
            "Updated",
            Bytes::from_static(b"tx-1"),
            Some(Bytes::from_static(b"1")),
            Some(Bytes::from_static(b"2026-11-21T10:00:00.123456Z")),
            None,
        );
        assert!(
            !event.spilled(),
            "a 2.0.1 reading in a transaction holds its headers itself"
        );
        let record = Record {
            topic: Cow::Borrowed("cms.ocpp.messages"),
            key: Bytes::from_static(b"CP-1"),
            headers,
            value: Bytes::from_static(b"{}"),
        };
        let message = ChargerMessage::of(&record).unwrap();
        assert_eq!(message.action, "MeterValues");
        assert_eq!(message.received_at, Some("2026-11-21T10:00:00.123456Z"));
        assert_eq!(message.connector_id, Some("1"));
        assert_eq!(message.measured_at, None);
        assert_eq!(message.transaction_id(), None);
    }
}
