//! OCPP 2.0.1 payloads written by hand for [`super::station201::RawStation201`]: the
//! StatusNotification, MeterValues and TransactionEvents of one EVSE, each valid against its
//! official schema, with the energy register in Wh.

use serde_json::{Value, json};

/// The id token a test transaction is authorised with.
pub const TX_ID_TOKEN: &str = "04A2B3C4D5E6F7";

/// A StatusNotification of connector 1 of `evse_id`.
pub fn status_notification(evse_id: u32, status: &str, timestamp: &str) -> String {
    json!({
        "timestamp": timestamp,
        "connectorStatus": status,
        "evseId": evse_id,
        "connectorId": 1,
    })
    .to_string()
}

/// One meterValue: the energy register at `wh` Wh sampled at `timestamp` in `context`.
pub fn energy(wh: u32, context: &str, timestamp: &str) -> Value {
    json!({
        "timestamp": timestamp,
        "sampledValue": [{
            "value": wh,
            "context": context,
            "measurand": "Energy.Active.Import.Register",
            "unitOfMeasure": {"unit": "Wh"},
        }],
    })
}

/// A MeterValues of `evse_id` with the energy register at `wh` Wh.
pub fn meter_values(evse_id: u32, wh: u32, timestamp: &str) -> String {
    json!({"evseId": evse_id, "meterValue": [energy(wh, "Sample.Periodic", timestamp)]}).to_string()
}

/// One TransactionEvent of a transaction on EVSE 1 (connector 1): `event_type` Started,
/// Updated or Ended, its `seq_no`, its time, and the energy register then. Started carries the
/// id token and a `Transaction.Begin` reading; Ended a `Transaction.End` reading and
/// `stoppedReason` Local.
pub fn transaction_event(
    transaction_id: &str,
    event_type: &str,
    seq_no: u32,
    timestamp: &str,
    wh: u32,
) -> String {
    let (trigger, context) = match event_type {
        "Started" => ("Authorized", "Transaction.Begin"),
        "Ended" => ("StopAuthorized", "Transaction.End"),
        _ => ("MeterValuePeriodic", "Sample.Periodic"),
    };
    let mut info = json!({"transactionId": transaction_id});
    if event_type == "Ended" {
        info["stoppedReason"] = json!("Local");
    }
    let mut event = json!({
        "eventType": event_type,
        "timestamp": timestamp,
        "triggerReason": trigger,
        "seqNo": seq_no,
        "transactionInfo": info,
        "evse": {"id": 1, "connectorId": 1},
        "meterValue": [energy(wh, context, timestamp)],
    });
    if event_type == "Started" {
        event["idToken"] = json!({"idToken": TX_ID_TOKEN, "type": "ISO14443"});
    }
    event.to_string()
}
