//! A station's signed meter readings, as the gateway publishes them, read into the change that
//! stores them: a 1.6 StopTransaction's `SignedData` samples, a 2.0.1 Started's or Ended's
//! `signedMeterValue`s, never an Updated's.

use super::reading::ReadingUse;
use super::translate::translate;
use bytes::Bytes;
use chrono::Utc;
use cms_bus::contract::header;
use cms_bus::{Header, Headers, Message, Record, Topics};
use cms_store::StateChange;
use cms_store::signed_values::SignedValue;
use serde_json::{Value, json};
use std::borrow::Cow;

/// The signed values the change of CP-1's `action` record with `payload` carries (of 2.0.1
/// when `v201`); `None` for a change that is neither a stop nor a TransactionEvent.
fn signed_of(action: &'static str, payload: Value, v201: bool) -> Option<Vec<SignedValue>> {
    let topics = Topics::with_prefix("t");
    let mut headers = vec![
        Header::new(header::ACTION, action),
        Header::new(header::RECEIVED_AT, "2026-11-29T10:00:00.000000Z"),
    ];
    if v201 {
        headers.push(Header::new(header::OCPP_VERSION, "ocpp2.0.1"));
    }
    let message = Message {
        record: Record {
            topic: Cow::Owned(topics.messages.to_string()),
            key: Bytes::from_static(b"CP-1"),
            headers: Headers::from_vec(headers),
            value: Bytes::from(payload.to_string()),
        },
        partition: 0,
        offset: 0,
    };
    let use_of = ReadingUse::Latest { energy: true };
    match translate(&message, &topics, use_of, Utc::now())? {
        StateChange::TransactionStopped { signed, .. } => Some(signed),
        StateChange::TransactionEvent(event) => Some(event.signed),
        _ => None,
    }
}

fn value(nature: &str, plain: &str, signed: &str, method: &str, key: Option<&str>) -> SignedValue {
    SignedValue {
        nature: nature.into(),
        plain_data: plain.into(),
        signed_data: signed.into(),
        encoding_method: method.into(),
        public_key: key.map(str::to_string),
    }
}

#[test]
fn a_stop_transactions_signed_readings_go_with_the_stop() {
    let reading =
        |samples: Value| json!({"timestamp": "2026-11-29T09:59:00Z", "sampledValue": samples});
    let proof = |text: &str, context: &str| {
        json!({"value": text, "context": context, "format": "SignedData",
               "measurand": "Energy.Active.Import.Register"})
    };
    let payload = json!({
        "transactionId": 7, "meterStop": 4000, "timestamp": "2026-11-29T09:59:00Z",
        "transactionData": [
            reading(json!([
                {"value": "0", "context": "Transaction.Begin",
                 "measurand": "Energy.Active.Import.Register", "unit": "Wh"},
                proof("OCMF|{\"RD\":[{\"RV\":0}]}|{\"SD\":\"30\"}", "Transaction.Begin")])),
            reading(json!([proof("AB12CD", "Sample.Periodic")])),
            reading(json!([
                {"value": "4000", "context": "Transaction.End", "unit": "Wh"},
                proof("OCMF|{\"RD\":[{\"RV\":4000}]}|{\"SD\":\"31\"}", "Transaction.End")])),
        ]
    });
    assert_eq!(
        signed_of("StopTransaction", payload, false),
        Some(vec![
            value(
                "Start",
                "0",
                "OCMF|{\"RD\":[{\"RV\":0}]}|{\"SD\":\"30\"}",
                "OCMF",
                None
            ),
            value("Intermediate", "", "AB12CD", "UNKNOWN", None),
            value(
                "End",
                "4000",
                "OCMF|{\"RD\":[{\"RV\":4000}]}|{\"SD\":\"31\"}",
                "OCMF",
                None
            ),
        ])
    );
    let plain = json!({"transactionId": 7, "meterStop": 4000,
                       "timestamp": "2026-11-29T09:59:00Z"});
    assert_eq!(signed_of("StopTransaction", plain, false), Some(vec![]));
}

#[test]
fn a_started_and_ended_events_signed_readings_are_read_and_an_updated_s_not() {
    let event = |event_type: &str, context: &str, wh: f64| {
        json!({
            "eventType": event_type, "timestamp": "2026-11-29T09:59:00Z",
            "triggerReason": "MeterValuePeriodic", "seqNo": 0,
            "transactionInfo": {"transactionId": "tx-201"}, "evse": {"id": 1},
            "meterValue": [{"timestamp": "2026-11-29T09:59:00Z", "sampledValue": [
                {"value": wh, "context": context, "measurand": "Energy.Active.Import.Register",
                 "signedMeterValue": {"signedMeterData": format!("SIGNED-{wh}"),
                   "signingMethod": "ECDSA-secp256r1-SHA256", "encodingMethod": "OCMF",
                   "publicKey": "04ABCD"}},
                {"value": 7.2, "context": context, "measurand": "Power.Active.Import"}]}]
        })
    };
    let ended = signed_of(
        "TransactionEvent",
        event("Ended", "Transaction.End", 3.5),
        true,
    );
    let end = value("End", "3.5", "SIGNED-3.5", "OCMF", Some("04ABCD"));
    assert_eq!(ended, Some(vec![end]));
    let started = signed_of(
        "TransactionEvent",
        event("Started", "Transaction.Begin", 0.0),
        true,
    );
    let start = value("Start", "0.0", "SIGNED-0", "OCMF", Some("04ABCD"));
    assert_eq!(started, Some(vec![start]));
    let updated = signed_of(
        "TransactionEvent",
        event("Updated", "Sample.Periodic", 1.0),
        true,
    );
    assert_eq!(updated, Some(vec![]), "the hot path reads no signed values");
}
