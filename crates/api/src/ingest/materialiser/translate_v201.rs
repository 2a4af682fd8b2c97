//! A 2.0.1 station's record (`ocpp_version` = `ocpp2.0.1`) as a change of the store: pure,
//! as translate.rs is for 1.6. The payload is read with serde into the few fields cms keeps
//! (the gateway validated it against the schemas); an EVSE is the reference's connector.

use super::reading::ReadingUse;
use crate::ingest::normalise_v201::{
    MeterValue, energy_register_wh, newest_energy_register_wh, rest_meter_values,
};
use chrono::{DateTime, Utc};
use cms_bus::ChargerMessage;
use cms_store::station_events::{
    EventEnergy, EventType, ReadingContext, TransactionEvent as StoredEvent,
};
use cms_store::{EnergyReading, StateChange, format_record_time};
use serde::Deserialize;

/// The `ocpp_version` header of a 2.0.1 station's records.
pub(crate) const OCPP_2_0_1: &str = "ocpp2.0.1";

/// The change a 2.0.1 station's message makes; `None` for one that makes none.
pub(super) fn message_change(
    identity: String,
    payload: &str,
    at: String,
    told: &ChargerMessage<'_>,
    use_of: ReadingUse,
) -> Option<StateChange> {
    let change = match told.action {
        "Heartbeat" => Some(StateChange::Heartbeat { identity, at }),
        "BootNotification" => read::<Boot>(payload).map(|boot| {
            let station = boot.charging_station;
            StateChange::Booted {
                identity,
                vendor: station.vendor_name,
                model: station.model,
                serial_number: station.serial_number,
                firmware_version: station.firmware_version,
                at,
            }
        }),
        "StatusNotification" => read::<Status>(payload)
            // EVSE 0 would be the station itself: StatusNotification names a real EVSE.
            .filter(|status| status.evse_id > 0)
            .map(|status| StateChange::EvseStatus {
                identity,
                evse_id: status.evse_id,
                connector_id: status.connector_id,
                ocpp_status: status.connector_status,
                timestamp: format_record_time(status.timestamp),
                at,
            }),
        "MeterValues" => read::<Readings>(payload)
            .and_then(|readings| meter_values(identity, readings, at, use_of)),
        // The gateway tells only a refusal (an accepted token's record has no status).
        "Authorize" => told.id_tag_status.and_then(|status| {
            let authorize = read::<Authorize>(payload)?;
            Some(StateChange::IdTagRefused {
                identity,
                id_tag: authorize.id_token.id_token,
                status: status.to_string(),
                at,
            })
        }),
        "TransactionEvent" => read::<Event>(payload).and_then(|event| {
            let mut event = transaction_event(identity, event, at, told.id_tag_status, use_of)?;
            // Only a start's and an end's: an Updated (the hot path) is not read twice.
            if event.event_type != EventType::Updated {
                event.signed = super::signed::of_v201(payload);
            }
            Some(StateChange::TransactionEvent(Box::new(event)))
        }),
        _ => None,
    };
    if change.is_none() {
        tracing::trace!(action = told.action, "2.0.1 record without state change");
    }
    change
}

/// The payload as `T`; a record that does not read came from elsewhere than a gateway.
fn read<'a, T: Deserialize<'a>>(payload: &'a str) -> Option<T> {
    serde_json::from_str(payload)
        .inspect_err(|e| tracing::warn!(error = %e, "skipping an unreadable 2.0.1 record"))
        .ok()
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Authorize {
    id_token: Token,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Token {
    id_token: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Boot {
    charging_station: Station,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Station {
    vendor_name: String,
    model: String,
    serial_number: Option<String>,
    firmware_version: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Status {
    timestamp: DateTime<Utc>,
    connector_status: String,
    evse_id: i64,
    connector_id: i64,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Readings {
    evse_id: i64,
    meter_value: Vec<MeterValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Event {
    event_type: String,
    timestamp: DateTime<Utc>,
    seq_no: i64,
    reservation_id: Option<i64>,
    transaction_info: TransactionInfo,
    id_token: Option<IdToken>,
    evse: Option<Evse>,
    #[serde(default)]
    meter_value: Vec<MeterValue>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TransactionInfo {
    transaction_id: String,
    stopped_reason: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct IdToken {
    id_token: String,
}

#[derive(Deserialize)]
struct Evse {
    id: i64,
}

/// A MeterValues of EVSE `evseId`: as 1.6's of connector `connectorId` (evseId 0 is the
/// station's main meter, as connector 0 is a 1.6 charger's).
fn meter_values(
    identity: String,
    readings: Readings,
    at: String,
    use_of: ReadingUse,
) -> Option<StateChange> {
    let register = || newest_energy_register_wh(&readings.meter_value);
    let rest = || rest_meter_values(&readings.meter_value);
    super::reading::reading_change((identity, readings.evse_id, at), use_of, register, rest)
}

/// A TransactionEvent: every energy register of its meter values (its transaction's, for
/// its start, stop and price), and the readings as its EVSE's latest when it names the EVSE,
/// unless a newer event of the batch is the latest (`ReadingUse::EnergyOnly`).
fn transaction_event(
    identity: String,
    event: Event,
    at: String,
    id_tag_status: Option<&str>,
    use_of: ReadingUse,
) -> Option<StoredEvent> {
    let energy = event
        .meter_value
        .iter()
        .filter_map(|value| {
            let (wh, context) = energy_register_wh(value)?;
            let context = match context {
                "Transaction.Begin" => ReadingContext::Begin,
                "Transaction.End" => ReadingContext::End,
                _ => ReadingContext::Other,
            };
            let reading = EnergyReading {
                at: format_record_time(value.timestamp),
                wh,
            };
            Some(EventEnergy { reading, context })
        })
        .collect();
    let evse_id = event.evse.map(|evse| evse.id);
    let latest = match (evse_id, event.meter_value.is_empty()) {
        (Some(_), false) if use_of != ReadingUse::EnergyOnly => {
            let (json, newest) = rest_meter_values(&event.meter_value);
            newest.map(|newest| (json, format_record_time(newest)))
        }
        _ => None,
    };
    // A transaction without authorisation (idToken type NoAuthorization) has an empty one.
    let id_tag = event.id_token.map(|t| t.id_token).filter(|t| !t.is_empty());
    Some(StoredEvent {
        identity,
        station_transaction_id: event.transaction_info.transaction_id,
        seq_no: event.seq_no,
        event_type: EventType::from_name(&event.event_type)?,
        evse_id,
        id_tag_status: id_tag.as_ref().and(id_tag_status.map(str::to_string)),
        id_tag,
        reservation_id: event.reservation_id,
        stopped_reason: event.transaction_info.stopped_reason,
        timestamp: format_record_time(event.timestamp),
        energy,
        latest,
        at,
        signed: Vec::new(),
    })
}
