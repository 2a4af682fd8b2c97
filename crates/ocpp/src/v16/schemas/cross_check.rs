//! The hand-written parsers of the charger's calls against the official schemas: on the crate's
//! test payloads and on mutations of them, both accept or both refuse with the same violation.
//!
//! One disagreement is on purpose: `parse_request` bounds `connectorId` to 0 (1 for
//! StartTransaction) to [`MAX_CONNECTOR_ID`], the REST API's bound, where the schema takes any
//! 32-bit integer. The test asserts it rather than skipping it.

use serde_json::{Value, json};

use super::VENDORED;
use crate::error::{ErrorCode, Violation};
use crate::v16::test_support::{chars, with, without};
use crate::v16::{Action, MAX_CONNECTOR_ID, parse_request};

fn sampled(value: &str, measurand: &str, phase: Option<&str>, location: &str, unit: &str) -> Value {
    let mut sample = json!({
        "value": value, "context": "Sample.Periodic", "format": "Raw",
        "measurand": measurand, "location": location, "unit": unit
    });
    if let Some(phase) = phase {
        sample["phase"] = json!(phase);
    }
    sample
}

/// The payloads of the crate's own tests (the per-message `tests.rs` files and the MeterValues
/// bench), copied: those live in private test modules.
fn corpus() -> Vec<(Action, Value)> {
    let three_phase = json!({
        "connectorId": 1,
        "transactionId": 18342,
        "meterValue": [{
            "timestamp": "2026-11-21T10:15:00.000Z",
            "sampledValue": [
                sampled("15243.7", "Energy.Active.Import.Register", None, "Outlet", "Wh"),
                sampled("15.92", "Current.Import", Some("L1"), "Outlet", "A"),
                sampled("230.4", "Voltage", Some("L1-N"), "Outlet", "V"),
                sampled("38.5", "Temperature", None, "Body", "Celsius"),
                sampled("63", "SoC", None, "EV", "Percent"),
            ]
        }]
    });
    vec![
        (Action::Authorize, json!({"idTag": "04A2B3C4D5E6F7"})),
        (
            Action::BootNotification,
            json!({
                "chargePointVendor": "Acme", "chargePointModel": "Wallbox 22",
                "chargePointSerialNumber": "CP-0001", "chargeBoxSerialNumber": "CB-0001",
                "firmwareVersion": "1.4.2", "iccid": "8931440400012345678",
                "imsi": "262011234567890", "meterType": "EM340", "meterSerialNumber": "M-99"
            }),
        ),
        (
            Action::BootNotification,
            json!({"chargePointVendor": "Acme", "chargePointModel": "W1"}),
        ),
        (
            Action::DataTransfer,
            json!({"vendorId": "com.example", "messageId": "GetPrice", "data": "{\"kWh\":12}"}),
        ),
        (
            Action::DiagnosticsStatusNotification,
            json!({"status": "Uploading"}),
        ),
        (
            Action::FirmwareStatusNotification,
            json!({"status": "InstallationFailed"}),
        ),
        (Action::Heartbeat, json!({})),
        (
            Action::MeterValues,
            json!({
                "connectorId": 2,
                "transactionId": 42,
                "meterValue": [{
                    "timestamp": "2026-11-21T10:00:00Z",
                    "sampledValue": [{
                        "value": "1234.5", "context": "Sample.Clock", "format": "Raw",
                        "measurand": "Current.Import", "phase": "L2", "location": "Inlet",
                        "unit": "A"
                    }]
                }]
            }),
        ),
        (Action::MeterValues, three_phase),
        (
            Action::StartTransaction,
            json!({
                "connectorId": 1, "idTag": "TAG-1", "meterStart": 0,
                "reservationId": 77, "timestamp": "2026-11-21T10:00:00Z"
            }),
        ),
        (
            Action::StatusNotification,
            json!({
                "connectorId": 1, "errorCode": "GroundFailure", "info": "RCD tripped",
                "status": "Faulted", "timestamp": "2026-11-21T10:00:00.000Z",
                "vendorId": "com.example", "vendorErrorCode": "E-17"
            }),
        ),
        (
            Action::StopTransaction,
            json!({
                "meterStop": 12000, "timestamp": "2026-11-21T11:00:00Z", "transactionId": 9,
                "idTag": "TAG-1", "reason": "EVDisconnected",
                "transactionData": [{
                    "timestamp": "2026-11-21T11:00:00Z",
                    "sampledValue": [{
                        "value": "12000", "context": "Transaction.End", "format": "Raw",
                        "measurand": "Energy.Active.Import.Register", "phase": "L1",
                        "location": "Outlet", "unit": "Wh"
                    }]
                }]
            }),
        ),
        // The security extension's: checked by the OCA's schema itself, streaming or by tree.
        (
            Action::LogStatusNotification,
            json!({"status": "Uploading", "requestId": 7}),
        ),
        (
            Action::SecurityEventNotification,
            json!({
                "type": "SettingSystemTime", "timestamp": "2026-11-21T10:00:00Z",
                "techInfo": "NTP"
            }),
        ),
        (
            Action::SignCertificate,
            json!({"csr": "-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----"}),
        ),
        (
            Action::SignedFirmwareStatusNotification,
            json!({"status": "InvalidSignature", "requestId": 3}),
        ),
    ]
}

/// JSON pointers to every value below the root, parents first.
fn pointers(value: &Value, at: &str, out: &mut Vec<String>) {
    let children: Vec<(String, &Value)> = match value {
        Value::Object(members) => members.iter().map(|(k, v)| (k.clone(), v)).collect(),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, v)| (i.to_string(), v))
            .collect(),
        _ => return,
    };
    for (key, child) in children {
        let pointer = format!("{at}/{key}");
        out.push(pointer.clone());
        pointers(child, &pointer, out);
    }
}

/// The raw schema of the value at `pointer` of a payload, to read its enumeration.
fn schema_at<'s>(schema: &'s Value, pointer: &str) -> Option<&'s Value> {
    pointer
        .split('/')
        .skip(1)
        .try_fold(schema, |node, step| match step.parse::<usize>() {
            Ok(_) => node.get("items"),
            Err(_) => node.get("properties")?.get(step),
        })
}

/// A value of every JSON type, and values that break each rule the schemas can state.
fn replacements() -> Vec<Value> {
    vec![
        json!(null),
        json!(true),
        json!(0),
        json!(-1),
        json!(MAX_CONNECTOR_ID + 1),
        json!(2_147_483_648_u64),
        json!(1.5),
        json!(""),
        json!("x"),
        json!("2026-11-21T10:00:00Z"),
        // A unit only MeterValues lists: StopTransaction's enumeration lacks it.
        json!("Hertz"),
        json!(chars(256)),
        json!("a\u{0}b"),
        json!([]),
        json!([{}]),
        json!({}),
    ]
}

/// Each corpus payload, then every payload one change away from it.
fn mutations(action: Action, base: &Value) -> Vec<(String, Value)> {
    let (_, request, _) = VENDORED
        .iter()
        .find(|(call, ..)| *call == action.as_str())
        .expect("vendored");
    let schema: Value = serde_json::from_str(request).unwrap();
    let mut out = vec![("as is".to_owned(), base.clone())];
    for payload in [json!([]), json!("x"), json!(1), json!(null)] {
        out.push(("not an object".into(), payload));
    }
    out.push((
        "unknown at /".into(),
        with(base, "/vendorExtension", json!(1)),
    ));
    let mut all = Vec::new();
    pointers(base, "", &mut all);
    for pointer in &all {
        let value = base.pointer(pointer).unwrap();
        let (parent, _) = pointer.rsplit_once('/').unwrap();
        if base.pointer(parent).is_some_and(Value::is_object) {
            out.push((format!("drop {pointer}"), without(base, pointer)));
        }
        if value.is_object() {
            let extra = format!("{pointer}/vendorExtension");
            out.push((
                format!("unknown at {pointer}"),
                with(base, &extra, json!(1)),
            ));
        }
        let mut values = replacements();
        if let Some(Value::Array(listed)) = schema_at(&schema, pointer).and_then(|s| s.get("enum"))
        {
            values.extend(listed.iter().cloned());
        }
        if let Some(text) = value.as_str() {
            values.push(json!(text.to_lowercase()));
        }
        for replacement in values {
            let label = format!("{pointer} = {replacement}");
            out.push((label, with(base, pointer, replacement)));
        }
    }
    out
}

fn by_hand(action: Action, payload: &Value) -> Result<(), Violation> {
    parse_request(action, &payload.to_string()).map(|_| ())
}

fn by_schema(action: Action, payload: &Value) -> Result<(), Violation> {
    action.validate_request(payload).map_err(Violation::from)
}

/// A `connectorId` the schema takes but cms does not: the one intended disagreement.
fn beyond_cms_connector_bound(action: Action, payload: &Value) -> bool {
    let lowest = if action == Action::StartTransaction {
        1
    } else {
        0
    };
    let id = payload.get("connectorId").and_then(Value::as_i64);
    id.is_some_and(|id| {
        i32::try_from(id).is_ok() && !(lowest..=i64::from(MAX_CONNECTOR_ID)).contains(&id)
    })
}

#[test]
fn the_hand_written_parsers_and_the_official_schemas_agree_on_the_corpus_and_its_mutations() {
    let mut checked = 0;
    let mut connector_bound = 0;
    for (action, base) in corpus() {
        for (change, payload) in mutations(action, &base) {
            let (hand, schema) = (by_hand(action, &payload), by_schema(action, &payload));
            checked += 1;
            if beyond_cms_connector_bound(action, &payload) {
                connector_bound += 1;
                assert_eq!(schema, Ok(()), "{action} {change}: the schema takes it");
                let refused = hand.expect_err("cms bounds connectorId");
                assert_eq!(refused.code, ErrorCode::PropertyConstraintViolation);
                assert!(
                    refused.description.starts_with("connectorId: must be from"),
                    "{action} {change}: {refused}"
                );
                continue;
            }
            assert_eq!(hand, schema, "{action} {change}: {payload}");
        }
    }
    assert!(checked > 2_000, "only {checked} payloads were checked");
    assert!(
        connector_bound > 0,
        "the intended disagreement was never met"
    );
}

#[test]
fn every_charger_action_is_in_the_corpus() {
    let corpus = corpus();
    for action in Action::ALL {
        assert!(
            corpus.iter().any(|(a, _)| *a == action),
            "no {action} payload"
        );
    }
}
