//! The OCPP 2.0.1 frames a simulated station sends (`--ocpp-version 2.0.1`): the same readings
//! as the 1.6 ones of `ocpp.rs`, in 2.0.1's shapes, and its answers to a central system's calls.

use crate::ocpp::Reading;

pub fn boot_notification() -> &'static str {
    r#"{"reason":"PowerUp","chargingStation":{"model":"loadtest","vendorName":"cms","firmwareVersion":"1.0"}}"#
}

/// A StatusNotification of connector 1 of `evse`: `Available` or `Occupied`.
pub fn status_notification(evse: u32, status: &str, timestamp: &str) -> String {
    format!(
        r#"{{"timestamp":"{timestamp}","connectorStatus":"{status}","evseId":{evse},"connectorId":1}}"#
    )
}

/// The three samples of a 1.6 reading (energy register, current and voltage on L1), as
/// 2.0.1's meterValue list.
fn meter_value(timestamp: &str, r: Reading) -> String {
    format!(
        concat!(
            r#"[{{"timestamp":"{ts}","sampledValue":["#,
            r#"{{"value":{e:.1},"context":"Sample.Periodic","measurand":"Energy.Active.Import.Register","location":"Outlet","unitOfMeasure":{{"unit":"Wh"}}}},"#,
            r#"{{"value":{i:.2},"context":"Sample.Periodic","measurand":"Current.Import","phase":"L1","location":"Outlet","unitOfMeasure":{{"unit":"A"}}}},"#,
            r#"{{"value":{v:.1},"context":"Sample.Periodic","measurand":"Voltage","phase":"L1-N","location":"Outlet","unitOfMeasure":{{"unit":"V"}}}}"#,
            r#"]}}]"#
        ),
        ts = timestamp,
        e = r.energy_wh,
        i = r.current_a,
        v = r.voltage_v,
    )
}

/// MeterValues of `evse` outside a transaction.
pub fn meter_values(evse: u32, timestamp: &str, r: Reading) -> String {
    format!(
        r#"{{"evseId":{evse},"meterValue":{}}}"#,
        meter_value(timestamp, r)
    )
}

/// Which event of a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionEvent {
    /// Started by a driver's token (sent with it).
    Started,
    /// A periodic reading.
    Updated,
    /// Stopped at the station.
    Ended,
}

/// A TransactionEvent of transaction `id` on connector 1 of `evse`, `seq_no`th of the
/// station's events, with a reading.
pub fn transaction_event(
    event: TransactionEvent,
    id: &str,
    seq_no: u64,
    evse: u32,
    id_token: &str,
    timestamp: &str,
    r: Reading,
) -> String {
    let (event_type, trigger, extra) = match event {
        TransactionEvent::Started => (
            "Started",
            "Authorized",
            format!(
                r#","idToken":{{"idToken":"{id_token}","type":"Central"}},"evse":{{"id":{evse},"connectorId":1}}"#
            ),
        ),
        TransactionEvent::Updated => ("Updated", "MeterValuePeriodic", String::new()),
        TransactionEvent::Ended => ("Ended", "StopAuthorized", String::new()),
    };
    let info = match event {
        TransactionEvent::Ended => {
            format!(r#"{{"transactionId":"{id}","stoppedReason":"Local"}}"#)
        }
        _ => format!(r#"{{"transactionId":"{id}","chargingState":"Charging"}}"#),
    };
    format!(
        concat!(
            r#"{{"eventType":"{event_type}","timestamp":"{timestamp}","triggerReason":"{trigger}","#,
            r#""seqNo":{seq_no},"transactionInfo":{info}{extra},"meterValue":{mv}}}"#
        ),
        event_type = event_type,
        timestamp = timestamp,
        trigger = trigger,
        seq_no = seq_no,
        info = info,
        extra = extra,
        mv = meter_value(timestamp, r),
    )
}

pub fn authorize(id_token: &str) -> String {
    format!(r#"{{"idToken":{{"idToken":"{id_token}","type":"Central"}}}}"#)
}

/// `idTokenInfo.status` of an Authorize or TransactionEvent answer.
pub fn id_token_status(payload: &str) -> Option<String> {
    let answer: serde_json::Value = serde_json::from_str(payload).ok()?;
    Some(answer["idTokenInfo"]["status"].as_str()?.to_string())
}

/// The payload a simulated station answers a central system's 2.0.1 call with: the least its
/// response schema allows, accepting where it can. `None` for a call it does not take.
pub fn answer(action: &str) -> Option<&'static str> {
    Some(match action {
        "ChangeAvailability"
        | "ClearCache"
        | "GetBaseReport"
        | "GetReport"
        | "RequestStartTransaction"
        | "RequestStopTransaction"
        | "Reset"
        | "TriggerMessage" => r#"{"status":"Accepted"}"#,
        "DataTransfer" => r#"{"status":"UnknownVendorId"}"#,
        "UnlockConnector" => r#"{"status":"Unlocked"}"#,
        "GetTransactionStatus" => r#"{"messagesInQueue":false}"#,
        _ => return None,
    })
}

/// The frame answering call `id` of `action`: a CALLRESULT, or a NotImplemented CALLERROR.
pub fn reply_to(id: &str, action: &str) -> String {
    let id = serde_json::to_string(id).unwrap_or_else(|_| "\"\"".into());
    match answer(action) {
        Some(payload) => format!("[3,{id},{payload}]"),
        None => {
            format!(r#"[4,{id},"NotImplemented","cms-loadtest does not take this call",{{}}]"#)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ocpp::now;

    fn reading() -> Reading {
        Reading {
            energy_wh: 1234.56,
            current_a: 16.0,
            voltage_v: 230.0,
        }
    }

    #[test]
    fn frames_are_json_with_numbers_for_values() {
        let ts = now();
        let mv: serde_json::Value = serde_json::from_str(&meter_values(1, &ts, reading())).unwrap();
        assert_eq!(mv["evseId"], 1);
        assert_eq!(mv["meterValue"][0]["sampledValue"][0]["value"], 1234.6);
        assert_eq!(mv["meterValue"][0]["sampledValue"][2]["phase"], "L1-N");
        for event in [
            TransactionEvent::Started,
            TransactionEvent::Updated,
            TransactionEvent::Ended,
        ] {
            let text = transaction_event(event, "LT-1", 3, 1, "TAG", &ts, reading());
            let te: serde_json::Value = serde_json::from_str(&text).unwrap();
            assert_eq!(te["seqNo"], 3);
            assert_eq!(te["transactionInfo"]["transactionId"], "LT-1");
            assert_eq!(
                te["idToken"].is_object(),
                event == TransactionEvent::Started
            );
        }
        for text in [
            boot_notification().to_string(),
            status_notification(1, "Available", &ts),
            authorize("T"),
        ] {
            serde_json::from_str::<serde_json::Value>(&text).unwrap();
        }
    }

    #[test]
    fn reads_the_token_status() {
        assert_eq!(
            id_token_status(r#"{"idTokenInfo":{"status":"Accepted"}}"#).as_deref(),
            Some("Accepted")
        );
        assert_eq!(id_token_status("{}"), None);
    }
}
