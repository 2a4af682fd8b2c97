//! The few OCPP 1.6J frames a simulated charger sends, and a light parse of what comes back.

use serde_json::value::RawValue;

/// A frame from the gateway, as far as the simulator cares.
#[derive(Debug, PartialEq)]
pub enum Incoming<'a> {
    /// `[3, id, payload]`
    Result { id: String, payload: &'a str },
    /// `[4, id, code, description, details]`
    Error { id: String, code: String },
    /// `[2, id, action, payload]`: a call from the central system.
    Call { id: String, action: String },
}

/// Parses a text frame; `None` when it is not an OCPP-J frame.
pub fn parse(text: &str) -> Option<Incoming<'_>> {
    let parts: Vec<&RawValue> = serde_json::from_str(text).ok()?;
    let kind: u8 = serde_json::from_str(parts.first()?.get()).ok()?;
    let id: String = serde_json::from_str(parts.get(1)?.get()).ok()?;
    match kind {
        3 => Some(Incoming::Result {
            id,
            payload: parts.get(2)?.get(),
        }),
        4 => Some(Incoming::Error {
            id,
            code: serde_json::from_str(parts.get(2)?.get()).ok()?,
        }),
        2 => Some(Incoming::Call {
            id,
            action: serde_json::from_str(parts.get(2)?.get()).ok()?,
        }),
        _ => None,
    }
}

/// A CALL frame; the payload is JSON already.
pub fn call(id: &str, action: &str, payload: &str) -> String {
    format!(r#"[2,"{id}","{action}",{payload}]"#)
}

/// The payload a simulated charger answers a central system's call with: the least its
/// response schema allows, accepting where it can. `None` for an action it does not know.
pub fn answer(action: &str) -> Option<&'static str> {
    Some(match action {
        "CancelReservation"
        | "ChangeAvailability"
        | "ChangeConfiguration"
        | "ClearCache"
        | "ClearChargingProfile"
        | "DataTransfer"
        | "RemoteStartTransaction"
        | "RemoteStopTransaction"
        | "ReserveNow"
        | "Reset"
        | "SendLocalList"
        | "SetChargingProfile"
        | "TriggerMessage"
        // The 1.6 security extension's.
        | "CertificateSigned"
        | "DeleteCertificate"
        | "ExtendedTriggerMessage"
        | "InstallCertificate"
        | "SignedUpdateFirmware" => r#"{"status":"Accepted"}"#,
        "GetInstalledCertificateIds" => r#"{"status":"NotFound"}"#,
        // No log to upload.
        "GetLog" => r#"{"status":"Rejected"}"#,
        "UnlockConnector" => r#"{"status":"Unlocked"}"#,
        // No schedule to offer: Accepted would need one.
        "GetCompositeSchedule" => r#"{"status":"Rejected"}"#,
        "GetConfiguration" => r#"{"configurationKey":[]}"#,
        "GetLocalListVersion" => r#"{"listVersion":0}"#,
        "GetDiagnostics" | "UpdateFirmware" => "{}",
        _ => return None,
    })
}

/// The frame answering call `id` of `action`: a CALLRESULT, or a NotImplemented CALLERROR for
/// an action the simulator does not know.
pub fn reply_to(id: &str, action: &str) -> String {
    let id = serde_json::to_string(id).unwrap_or_else(|_| "\"\"".into());
    match answer(action) {
        Some(payload) => format!("[3,{id},{payload}]"),
        None => {
            format!(r#"[4,{id},"NotImplemented","cms-loadtest does not know this action",{{}}]"#)
        }
    }
}

pub fn boot_notification() -> &'static str {
    r#"{"chargePointVendor":"cms","chargePointModel":"loadtest","firmwareVersion":"1.0"}"#
}

pub fn status_notification(connector: u32, status: &str, timestamp: &str) -> String {
    format!(
        r#"{{"connectorId":{connector},"errorCode":"NoError","status":"{status}","timestamp":"{timestamp}"}}"#
    )
}

/// One meter reading: the energy register, and current and voltage on phase L1.
#[derive(Debug, Clone, Copy)]
pub struct Reading {
    pub energy_wh: f64,
    pub current_a: f64,
    pub voltage_v: f64,
}

pub fn meter_values(
    connector: u32,
    transaction: Option<i64>,
    timestamp: &str,
    r: Reading,
) -> String {
    let tx = transaction
        .map(|t| format!(r#","transactionId":{t}"#))
        .unwrap_or_default();
    format!(
        concat!(
            r#"{{"connectorId":{connector}{tx},"meterValue":[{{"timestamp":"{ts}","sampledValue":["#,
            r#"{{"value":"{e:.1}","context":"Sample.Periodic","measurand":"Energy.Active.Import.Register","location":"Outlet","unit":"Wh"}},"#,
            r#"{{"value":"{i:.2}","context":"Sample.Periodic","measurand":"Current.Import","phase":"L1","location":"Outlet","unit":"A"}},"#,
            r#"{{"value":"{v:.1}","context":"Sample.Periodic","measurand":"Voltage","phase":"L1-N","location":"Outlet","unit":"V"}}"#,
            r#"]}}]}}"#
        ),
        connector = connector,
        tx = tx,
        ts = timestamp,
        e = r.energy_wh,
        i = r.current_a,
        v = r.voltage_v,
    )
}

/// `idTagInfo.status` of an Authorize answer.
pub fn id_tag_status(payload: &str) -> Option<String> {
    let answer: serde_json::Value = serde_json::from_str(payload).ok()?;
    Some(answer["idTagInfo"]["status"].as_str()?.to_string())
}

pub fn start_transaction(
    connector: u32,
    id_tag: &str,
    meter_start: i64,
    timestamp: &str,
) -> String {
    format!(
        r#"{{"connectorId":{connector},"idTag":"{id_tag}","meterStart":{meter_start},"timestamp":"{timestamp}"}}"#
    )
}

pub fn stop_transaction(
    transaction: i64,
    id_tag: &str,
    meter_stop: i64,
    timestamp: &str,
) -> String {
    format!(
        r#"{{"transactionId":{transaction},"idTag":"{id_tag}","meterStop":{meter_stop},"timestamp":"{timestamp}","reason":"Local"}}"#
    )
}

/// `status` of a BootNotification answer.
pub fn boot_status(payload: &str) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Boot {
        status: String,
    }
    serde_json::from_str::<Boot>(payload).ok().map(|b| b.status)
}

/// `transactionId` of a StartTransaction answer.
pub fn transaction_id(payload: &str) -> Option<i64> {
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Start {
        transaction_id: i64,
    }
    serde_json::from_str::<Start>(payload)
        .ok()
        .map(|s| s.transaction_id)
}

/// The time now as OCPP wants it.
pub fn now() -> String {
    chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_answers() {
        assert_eq!(
            parse(r#"[3,"7",{"currentTime":"x"}]"#),
            Some(Incoming::Result {
                id: "7".into(),
                payload: r#"{"currentTime":"x"}"#
            })
        );
        assert_eq!(
            parse(r#"[4, "8", "FormationViolation", "bad", {}]"#),
            Some(Incoming::Error {
                id: "8".into(),
                code: "FormationViolation".into()
            })
        );
        assert_eq!(
            parse(r#"[2,"s1","Reset",{"type":"Soft"}]"#),
            Some(Incoming::Call {
                id: "s1".into(),
                action: "Reset".into()
            })
        );
        assert_eq!(parse("not json"), None);
        assert_eq!(parse(r#"[9,"1",{}]"#), None);
    }

    #[test]
    fn frames_are_json() {
        let ts = now();
        let r = Reading {
            energy_wh: 1234.56,
            current_a: 16.0,
            voltage_v: 230.0,
        };
        for (action, payload) in [
            ("BootNotification", boot_notification().to_string()),
            (
                "StatusNotification",
                status_notification(1, "Available", &ts),
            ),
            ("MeterValues", meter_values(1, Some(5), &ts, r)),
            ("MeterValues", meter_values(1, None, &ts, r)),
            ("StartTransaction", start_transaction(1, "LT1", 10, &ts)),
            ("StopTransaction", stop_transaction(5, "LT1", 20, &ts)),
        ] {
            let frame = call("1", action, &payload);
            let v: serde_json::Value = serde_json::from_str(&frame).unwrap();
            assert_eq!(v[2], action);
        }
        let mv: serde_json::Value =
            serde_json::from_str(&meter_values(1, Some(5), &ts, r)).unwrap();
        assert_eq!(mv["transactionId"], 5);
        let sampled = &mv["meterValue"][0]["sampledValue"];
        assert_eq!(sampled[0]["value"], "1234.6");
        assert_eq!(sampled[1]["measurand"], "Current.Import");
        assert_eq!(sampled[2]["phase"], "L1-N");
    }

    #[test]
    fn every_call_of_a_central_system_gets_an_answer_its_schema_takes() {
        for command in cms_ocpp::v16::Command::ALL {
            let action = command.as_str();
            let frame: serde_json::Value = serde_json::from_str(&reply_to("a\"b", action)).unwrap();
            assert_eq!(frame[0], 3, "{action}: {frame}");
            assert_eq!(frame[1], "a\"b");
            if let Err(e) = command.validate_response(&frame[2]) {
                panic!("{action}: {frame} breaks its schema: {e:?}");
            }
        }
    }

    #[test]
    fn an_unknown_call_is_refused() {
        let frame: serde_json::Value = serde_json::from_str(&reply_to("7", "Frobnicate")).unwrap();
        assert_eq!(frame[0], 4);
        assert_eq!(frame[1], "7");
        assert_eq!(frame[2], "NotImplemented");
    }

    #[test]
    fn reads_answers() {
        assert_eq!(
            boot_status(r#"{"status":"Accepted","currentTime":"x","interval":60}"#).as_deref(),
            Some("Accepted")
        );
        assert_eq!(
            transaction_id(r#"{"transactionId":42,"idTagInfo":{"status":"Accepted"}}"#),
            Some(42)
        );
        assert_eq!(transaction_id("{}"), None);
    }
}
