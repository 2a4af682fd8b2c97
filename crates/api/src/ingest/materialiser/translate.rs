//! A gateway's record as a change of the store: pure translation of the bus contract
//! (cms_bus's charger messages, connection events and reports) into [`StateChange`]s. No I/O:
//! the materialiser and the latest follower both translate through here, and hand the changes
//! to their sinks.

use super::reading::{ReadingUse, reading_change};
use super::{translate_shared, translate_v201};
use crate::ingest::action_reports::report_change;
use crate::ingest::device_model;
use crate::ingest::normalise::{energy_register_wh, rest_meter_values};
use bytes::Bytes;
use chrono::{DateTime, Utc};
use cms_bus::{ChargerMessage, ConnectionEvent, Message, Topics};
use cms_ocpp::v16::{Action, Request, parse_request};
use cms_store::{StateChange, format_record_time};

/// The change a record of the gateway's topics makes; `None` for a record that makes none (or
/// is not one). `now` stands in for a time the record does not give.
pub(crate) fn translate(
    message: &Message,
    topics: &Topics,
    use_of: ReadingUse,
    now: DateTime<Utc>,
) -> Option<StateChange> {
    let record = &message.record;
    let identity = std::str::from_utf8(&record.key).ok()?.to_string();
    if record.topic == topics.connections {
        connection_change(identity, &ConnectionEvent::of(record)?, now)
    } else if record.topic == topics.command_results {
        // A gateway's answer with a charger's frames (for the replica that asked): no report.
        if record.header(cms_bus::header::KIND).is_some() {
            return None;
        }
        let report = cms_bus::report_of(message)?;
        Some(report_change(&report, format_record_time(now)))
    } else if record.topic == topics.messages {
        let told = ChargerMessage::of(record)?;
        let at = record_time(told.received_at, now);
        if told.action == device_model::NOTIFY_REPORT {
            return device_model::report_change(identity, &told, &record.value, at);
        }
        let text = std::str::from_utf8(&record.value).ok()?;
        if let Some(change) = translate_shared::message_change(&identity, told.action, text, &at) {
            return change;
        }
        if told.ocpp_version == Some(translate_v201::OCPP_2_0_1) {
            return translate_v201::message_change(identity, text, at, &told, use_of);
        }
        let action = Action::from_name(told.action)?;
        message_change(identity, action, text, at, &told, use_of)
    } else {
        None
    }
}

fn message_change(
    identity: String,
    action: Action,
    payload: &str,
    at: String,
    told: &ChargerMessage<'_>,
    use_of: ReadingUse,
) -> Option<StateChange> {
    let request = match parse_request(action, payload) {
        Ok(request) => request,
        Err(v) => {
            // The gateway validated it; a record that fails here came from elsewhere.
            tracing::warn!(%identity, action = action.as_str(), error = %v.description, "skipping invalid record");
            return None;
        }
    };
    Some(match request {
        Request::Heartbeat => StateChange::Heartbeat { identity, at },
        Request::BootNotification(boot) => StateChange::Booted {
            identity,
            vendor: boot.charge_point_vendor.into_owned(),
            model: boot.charge_point_model.into_owned(),
            serial_number: boot
                .charge_point_serial_number
                .or(boot.charge_box_serial_number)
                .map(|s| s.into_owned()),
            firmware_version: boot.firmware_version.map(|s| s.into_owned()),
            at,
        },
        Request::StatusNotification(status) => StateChange::Status {
            identity,
            connector_id: status.connector_id.into(),
            status: status.status.as_str().to_string(),
            error: status.error_code.as_str().to_string(),
            info: status.info.map(|s| s.into_owned()),
            vendor_id: status.vendor_id.map(|s| s.into_owned()),
            vendor_error_code: status.vendor_error_code.map(|s| s.into_owned()),
            at,
        },
        Request::MeterValues(values) => {
            let connector_id = i64::from(values.connector_id);
            let register = || energy_register_wh(&values.meter_value);
            let rest = || rest_meter_values(&values.meter_value);
            return reading_change((identity, connector_id, at), use_of, register, rest);
        }
        Request::StartTransaction(start) => StateChange::TransactionStarted {
            identity,
            ocpp_transaction_id: told.transaction_id()?,
            connector_id: start.connector_id.into(),
            id_tag: start.id_tag.into_owned(),
            id_tag_status: told.id_tag_status.map(str::to_string),
            meter_start: start.meter_start.into(),
            reservation_id: start.reservation_id.map(Into::into),
            started_at: format_record_time(start.timestamp),
            at,
        },
        Request::Authorize(authorize) => StateChange::IdTagRefused {
            identity,
            id_tag: authorize.id_tag.into_owned(),
            // The gateway tells only a refusal (an accepted tag's record has no status).
            status: told.id_tag_status?.to_string(),
            at,
        },
        Request::StopTransaction(stop) => StateChange::TransactionStopped {
            identity,
            ocpp_transaction_id: stop.transaction_id.into(),
            meter_stop: stop.meter_stop.into(),
            stopped_at: format_record_time(stop.timestamp),
            reason: stop.reason().as_str().to_string(),
            at,
            signed: super::signed::of_v16(&stop.transaction_data),
        },
        _ => return None,
    })
}

/// The charger's `ocpp_version` (`1.6`, `2.0.1`) for a session of `subprotocol`; `None` for a
/// name no version has, which leaves the one known.
fn ocpp_version(subprotocol: &str) -> Option<String> {
    let version = cms_ocpp::OcppVersion::from_subprotocol(subprotocol)?;
    Some(version.subprotocol().trim_start_matches("ocpp").to_string())
}

/// The change a connection event makes.
pub(super) fn connection_change(
    identity: String,
    event: &ConnectionEvent,
    now: DateTime<Utc>,
) -> Option<StateChange> {
    let at = record_time(Some(event.at()), now);
    Some(match event.clone() {
        ConnectionEvent::Connected {
            session,
            gateway,
            subprotocol,
            ..
        } => StateChange::Connected {
            identity,
            session,
            server: gateway,
            at,
            ocpp_version: ocpp_version(&subprotocol),
        },
        ConnectionEvent::Disconnected { session, .. } => StateChange::Disconnected {
            identity,
            session,
            at,
        },
        ConnectionEvent::Upstream {
            session,
            position,
            status,
            ..
        } => StateChange::UpstreamState {
            identity,
            session,
            position,
            connected: status == "connected",
            at,
        },
        // A gateway's record of itself (keyed by its node id): its start, or its beacon.
        ConnectionEvent::GatewayStarted {
            gateway,
            beacon_interval_ms,
            ..
        } if !gateway.is_empty() => StateChange::GatewayStarted {
            server: gateway,
            at,
            // A gateway that beacons says how often as it starts; one of an older version
            // does not.
            beacons: beacon_interval_ms.is_some(),
        },
        ConnectionEvent::GatewayAlive { gateway, .. } if !gateway.is_empty() => {
            StateChange::GatewayAlive {
                server: gateway,
                at,
            }
        }
        // A refused connection changes nothing of the charger (the API replicas keep it in
        // memory, crate::ingest::connection_attempts).
        ConnectionEvent::GatewayStarted { .. }
        | ConnectionEvent::GatewayAlive { .. }
        | ConnectionEvent::Refused { .. } => {
            return None;
        }
    })
}

/// A gateway timestamp in record form (`now`, if absent or unreadable).
fn record_time(text: Option<&str>, now: DateTime<Utc>) -> String {
    let parsed = text.and_then(|t| DateTime::parse_from_rfc3339(t).ok());
    format_record_time(parsed.map_or(now, |t| t.with_timezone(&Utc)))
}

/// The latest reading a MeterValue change (or a 2.0.1 TransactionEvent naming its EVSE) holds,
/// as the cache keeps it.
pub(crate) fn latest_reading(
    change: &StateChange,
) -> Option<(&str, u32, crate::ingest::cache::LatestReading)> {
    let (identity, connector_id, meter_value, measured_at) = match change {
        StateChange::MeterValue {
            identity,
            connector_id,
            meter_value,
            measured_at,
            ..
        } => (identity, connector_id, meter_value, measured_at),
        StateChange::TransactionEvent(event) => {
            let (meter_value, measured_at) = event.latest.as_ref()?;
            (
                &event.identity,
                event.evse_id.as_ref()?,
                meter_value,
                measured_at,
            )
        }
        _ => return None,
    };
    let reading = crate::ingest::cache::LatestReading {
        measured_at: measured_at.clone(),
        meter_value: Bytes::from(meter_value.clone()),
    };
    Some((identity, u32::try_from(*connector_id).ok()?, reading))
}

#[cfg(test)]
mod tests {
    use super::*;
    use bytes::Bytes;
    use cms_bus::{Header, Headers, Record, header};
    use std::borrow::Cow;

    fn authorize(headers: Vec<Header>) -> Message {
        let topics = Topics::with_prefix("t");
        let mut all = vec![
            Header::new(header::ACTION, "Authorize"),
            Header::new(header::RECEIVED_AT, "2026-11-29T10:00:00.000000Z"),
        ];
        all.extend(headers);
        Message {
            record: Record {
                topic: Cow::Owned(topics.messages.to_string()),
                key: Bytes::from_static(b"CP-1"),
                headers: Headers::from_vec(all),
                value: Bytes::from_static(br#"{"idTag":"STRANGER"}"#),
            },
            partition: 0,
            offset: 0,
        }
    }

    #[test]
    fn a_201_authorize_is_a_change_only_when_its_token_was_refused() {
        let topics = Topics::with_prefix("t");
        let use_of = ReadingUse::Latest { energy: false };
        let station = |status: Option<&'static str>| {
            let mut message = authorize(Vec::new());
            let mut headers = vec![Header::new(header::OCPP_VERSION, "ocpp2.0.1")];
            headers.extend(status.map(|s| Header::new(header::ID_TAG_STATUS, s)));
            for h in message.record.headers.iter() {
                headers.push(h.clone());
            }
            message.record.headers = Headers::from_vec(headers);
            message.record.value =
                Bytes::from_static(br#"{"idToken":{"idToken":"STRANGER","type":"ISO14443"}}"#);
            message
        };
        assert_eq!(translate(&station(None), &topics, use_of, Utc::now()), None);
        let refused = translate(&station(Some("Unknown")), &topics, use_of, Utc::now());
        assert_eq!(
            refused,
            Some(StateChange::IdTagRefused {
                identity: "CP-1".into(),
                id_tag: "STRANGER".into(),
                status: "Unknown".into(),
                at: "2026-11-29T10:00:00.000000Z".into(),
            })
        );
    }

    #[test]
    fn an_authorize_is_a_change_only_when_its_tag_was_refused() {
        let topics = Topics::with_prefix("t");
        let use_of = ReadingUse::Latest { energy: false };
        let now = Utc::now();
        let accepted = authorize(Vec::new());
        assert_eq!(translate(&accepted, &topics, use_of, now), None);
        let refused = authorize(vec![Header::new(header::ID_TAG_STATUS, "Invalid")]);
        assert_eq!(
            translate(&refused, &topics, use_of, now),
            Some(StateChange::IdTagRefused {
                identity: "CP-1".into(),
                id_tag: "STRANGER".into(),
                status: "Invalid".into(),
                at: "2026-11-29T10:00:00.000000Z".into(),
            })
        );
    }
}
