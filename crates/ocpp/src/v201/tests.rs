mod payloads;

use std::borrow::Cow;

use chrono::{DateTime, TimeZone, Utc};
use serde_json::{Value, json};

use super::check::{check_streaming, check_tree};
use super::*;
use crate::error::{ErrorCode, Violation};
use crate::version::OcppVersion;
use payloads::VALID;

fn at(h: u32, m: u32, s: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 21, h, m, s).unwrap()
}

/// The payload refused both ways: the stream leaves it to the tree, and `check_request` says
/// what `validate_request`'s first violation says. Returns that violation.
fn refused(action: Action, payload: &str) -> Violation {
    assert!(
        check_streaming(action, payload).is_none(),
        "{action}: the stream accepted {payload}"
    );
    let violation = check_request(action, payload).expect_err(payload);
    assert_eq!(Err(violation.clone()), check_tree(action, payload));
    if let Ok(tree) = serde_json::from_str::<Value>(payload)
        && let Err(found) = action.validate_request(&tree)
    {
        assert_eq!(violation, Violation::from(found), "{payload}");
    }
    violation
}

#[test]
fn every_valid_payload_passes_the_stream_and_the_tree_with_the_same_captures() {
    for action in Action::ALL {
        assert!(
            VALID.iter().any(|(a, _)| *a == action),
            "no valid {action} payload"
        );
    }
    for &(action, payload) in VALID {
        let tree: Value = serde_json::from_str(payload).unwrap();
        action
            .validate_request(&tree)
            .unwrap_or_else(|e| panic!("{action} {payload}: {e}"));
        assert!(
            check_streaming(action, payload).is_some(),
            "{action}: left to the tree: {payload}"
        );
        let streamed = check_request(action, payload).unwrap_or_else(|e| panic!("{payload}: {e}"));
        assert_eq!(Ok(streamed), check_tree(action, payload), "{payload}");
    }
}

#[test]
fn what_is_kept_of_each_action() {
    let checked = |action: Action, i: usize| {
        let payload = VALID.iter().filter(|(a, _)| *a == action).nth(i).unwrap().1;
        check_request(action, payload).unwrap()
    };
    let badge = IdToken {
        id_token: Cow::Borrowed("04A2B3C4D5E680"),
        kind: Cow::Borrowed("ISO14443"),
    };
    assert_eq!(
        checked(Action::Authorize, 0),
        Checked::Authorize {
            id_token: badge.clone()
        }
    );
    assert_eq!(
        checked(Action::BootNotification, 1),
        Checked::BootNotification {
            reason: BootReason::Watchdog
        }
    );
    // The newest of the meter values, whatever the offset it was written with.
    assert_eq!(
        checked(Action::MeterValues, 0),
        Checked::MeterValues {
            evse_id: 1,
            newest: Some(at(10, 15, 0))
        }
    );
    assert_eq!(
        checked(Action::StatusNotification, 1),
        Checked::StatusNotification {
            evse_id: 99,
            connector_id: 2,
            status: ConnectorStatus::Faulted,
            timestamp: at(10, 15, 0) + chrono::Duration::milliseconds(500),
        }
    );
    assert_eq!(
        checked(Action::TransactionEvent, 0),
        Checked::TransactionEvent(TransactionEventCheck {
            event_type: TransactionEventType::Started,
            transaction_id: Cow::Borrowed("f8a2b3c4-d5e6-4f70-8192-a3b4c5d6e7f8"),
            seq_no: 0,
            offline: false,
            trigger_reason: "Authorized",
            evse_id: Some(1),
            connector_id: Some(1),
            id_token: Some(badge),
            remote_start_id: Some(42),
            newest: Some(at(10, 15, 0)),
            timestamp: at(10, 15, 0),
        })
    );
    let Checked::TransactionEvent(updated) = checked(Action::TransactionEvent, 1) else {
        panic!("not a TransactionEvent")
    };
    assert_eq!(
        (
            updated.offline,
            updated.newest,
            updated.evse_id,
            updated.id_token
        ),
        (true, Some(at(10, 30, 0)), None, None)
    );
    let Checked::TransactionEvent(ended) = checked(Action::TransactionEvent, 2) else {
        panic!("not a TransactionEvent")
    };
    assert_eq!(ended.event_type, TransactionEventType::Ended);
    assert_eq!(ended.newest, None);
    assert_eq!(checked(Action::Heartbeat, 0), Checked::Other);
}

#[test]
fn escaped_strings_are_kept_unescaped_and_plain_ones_borrowed() {
    let (_, payload) = VALID[VALID.len() - 2];
    let Checked::Authorize { id_token } = check_request(Action::Authorize, payload).unwrap() else {
        panic!("not an Authorize")
    };
    assert_eq!(id_token.id_token, "café-\"7\"");
    assert!(matches!(id_token.id_token, Cow::Owned(_)));
    assert!(matches!(id_token.kind, Cow::Borrowed("Central")));
    let (_, payload) = VALID[VALID.len() - 1];
    let Checked::TransactionEvent(event) =
        check_request(Action::TransactionEvent, payload).unwrap()
    else {
        panic!("not a TransactionEvent")
    };
    assert_eq!(event.transaction_id, "tx/8");
    assert_eq!(event.timestamp, at(10, 15, 0));
}

/// A valid payload of `action` with the value at `pointer` replaced (`None`: removed).
fn with(action: Action, i: usize, pointer: &str, value: Option<Value>) -> String {
    let payload = VALID.iter().filter(|(a, _)| *a == action).nth(i).unwrap().1;
    let mut tree: Value = serde_json::from_str(payload).unwrap();
    let (parent, last) = pointer.rsplit_once('/').unwrap();
    let holder = tree
        .pointer_mut(parent)
        .unwrap_or_else(|| panic!("{pointer}"));
    match (holder, value) {
        (Value::Object(members), Some(value)) => {
            members.insert(last.to_owned(), value);
        }
        (Value::Object(members), None) => {
            members.shift_remove(last).expect(pointer);
        }
        (Value::Array(items), Some(value)) => items[last.parse::<usize>().unwrap()] = value,
        (other, _) => panic!("{pointer} in {other}"),
    }
    tree.to_string()
}

#[test]
fn broken_payloads_get_the_trees_first_violation_in_2_0_1s_codes() {
    use Action::*;
    let te = TransactionEvent;
    let battery: Vec<(Action, String, &str, &str)> = vec![
        // Wrong JSON type.
        (
            MeterValues,
            with(MeterValues, 0, "/evseId", Some(json!("1"))),
            "TypeConstraintViolation",
            "evseId: expected integer, got string",
        ),
        (
            MeterValues,
            with(MeterValues, 0, "/evseId", Some(json!(1.0))),
            "TypeConstraintViolation",
            "evseId: expected integer, got number",
        ),
        (
            MeterValues,
            with(
                MeterValues,
                0,
                "/meterValue/0/sampledValue/0/value",
                Some(json!("15243.7")),
            ),
            "TypeConstraintViolation",
            "meterValue[0].sampledValue[0].value: expected number, got string",
        ),
        (
            te,
            with(te, 0, "/offline", Some(json!("true"))),
            "TypeConstraintViolation",
            "offline: expected boolean, got string",
        ),
        (
            te,
            with(te, 0, "/evse", Some(json!(null))),
            "TypeConstraintViolation",
            "evse: expected object, got null",
        ),
        (
            StatusNotification,
            with(
                StatusNotification,
                0,
                "/timestamp",
                Some(json!(1_700_000_000)),
            ),
            "TypeConstraintViolation",
            "timestamp: expected string, got integer",
        ),
        // Missing required.
        (
            te,
            with(te, 0, "/transactionInfo/transactionId", None),
            "OccurrenceConstraintViolation",
            "transactionInfo.transactionId: required property is missing",
        ),
        (
            Authorize,
            with(Authorize, 0, "/idToken/type", None),
            "OccurrenceConstraintViolation",
            "idToken.type: required property is missing",
        ),
        (
            BootNotification,
            with(BootNotification, 0, "/chargingStation/vendorName", None),
            "OccurrenceConstraintViolation",
            "chargingStation.vendorName: required property is missing",
        ),
        (
            Authorize,
            with(Authorize, 1, "/customData/vendorId", None),
            "OccurrenceConstraintViolation",
            "customData.vendorId: required property is missing",
        ),
        // Too few, too many items.
        (
            MeterValues,
            with(MeterValues, 0, "/meterValue", Some(json!([]))),
            "OccurrenceConstraintViolation",
            "meterValue: needs at least 1 item(s)",
        ),
        (
            MeterValues,
            with(
                MeterValues,
                0,
                "/meterValue/0/sampledValue",
                Some(json!([])),
            ),
            "OccurrenceConstraintViolation",
            "meterValue[0].sampledValue: needs at least 1 item(s)",
        ),
        (
            NotifyReport,
            with(
                NotifyReport,
                0,
                "/reportData/0/variableAttribute",
                Some(json!([{}, {}, {}, {}, {}])),
            ),
            "OccurrenceConstraintViolation",
            "reportData[0].variableAttribute: holds more than 4 item(s) (5)",
        ),
        // Unknown property.
        (
            te,
            with(te, 0, "/colour", Some(json!("red"))),
            "FormatViolation",
            "unknown property \"colour\"",
        ),
        (
            MeterValues,
            with(
                MeterValues,
                0,
                "/meterValue/0/sampledValue/1/unitOfMeasure/scale",
                Some(json!(1)),
            ),
            "FormatViolation",
            "meterValue[0].sampledValue[1].unitOfMeasure: unknown property \"scale\"",
        ),
        // Enumerations.
        (
            te,
            with(te, 0, "/eventType", Some(json!("Paused"))),
            "PropertyConstraintViolation",
            "eventType: unknown value \"Paused\"",
        ),
        (
            StatusNotification,
            with(
                StatusNotification,
                0,
                "/connectorStatus",
                Some(json!("Charging")),
            ),
            "PropertyConstraintViolation",
            "connectorStatus: unknown value \"Charging\"",
        ),
        (
            MeterValues,
            with(
                MeterValues,
                0,
                "/meterValue/0/sampledValue/1/phase",
                Some(json!("l1")),
            ),
            "PropertyConstraintViolation",
            "meterValue[0].sampledValue[1].phase: unknown value \"l1\"",
        ),
        // Too long.
        (
            te,
            with(
                te,
                0,
                "/transactionInfo/transactionId",
                Some(json!("x".repeat(37))),
            ),
            "PropertyConstraintViolation",
            "transactionInfo.transactionId: longer than 36 characters (37)",
        ),
        (
            Authorize,
            with(
                Authorize,
                0,
                "/idToken/idToken",
                Some(json!("é".repeat(37))),
            ),
            "PropertyConstraintViolation",
            "idToken.idToken: longer than 36 characters (37)",
        ),
        // Bad date-time.
        (
            te,
            with(te, 0, "/timestamp", Some(json!("2026-11-21 10:15"))),
            "PropertyConstraintViolation",
            "timestamp: not an RFC 3339 date-time: \"2026-11-21 10:15\"",
        ),
        (
            MeterValues,
            with(
                MeterValues,
                0,
                "/meterValue/1/timestamp",
                Some(json!("yesterday")),
            ),
            "PropertyConstraintViolation",
            "meterValue[1].timestamp: not an RFC 3339 date-time: \"yesterday\"",
        ),
        // cms's two rules.
        (
            te,
            with(te, 0, "/seqNo", Some(json!(2_147_483_648_u64))),
            "PropertyConstraintViolation",
            "seqNo: 2147483648 is out of range for a 32-bit integer",
        ),
        (
            DataTransfer,
            with(DataTransfer, 0, "/data/list/1", Some(json!("a\u{0}b"))),
            "PropertyConstraintViolation",
            "data.list[1]: must not contain NUL characters (\\u0000)",
        ),
        (
            Authorize,
            with(Authorize, 0, "/idToken/idToken", Some(json!("a\u{0}b"))),
            "PropertyConstraintViolation",
            "idToken.idToken: must not contain NUL characters (\\u0000)",
        ),
        // Not an object, not JSON.
        (
            Heartbeat,
            "[]".into(),
            "FormatViolation",
            "payload must be a JSON object, got array",
        ),
        (
            te,
            "null".into(),
            "FormatViolation",
            "payload must be a JSON object, got null",
        ),
        (
            MeterValues,
            "\"x\"".into(),
            "FormatViolation",
            "payload must be a JSON object, got string",
        ),
        (
            MeterValues,
            "{\"evseId\":1,".into(),
            "FormatViolation",
            "payload is not valid JSON: ",
        ),
        (
            Heartbeat,
            "{} x".into(),
            "FormatViolation",
            "payload is not valid JSON: ",
        ),
        (
            Heartbeat,
            String::new(),
            "FormatViolation",
            "payload is not valid JSON: ",
        ),
    ];
    for (action, payload, code, description) in battery {
        let violation = refused(action, &payload);
        assert_eq!(violation.code.spelled(OcppVersion::V201), code, "{payload}");
        assert!(
            violation.description.starts_with(description),
            "{payload}: {violation}"
        );
    }
}

#[test]
fn cms_holds_evse_and_connector_ids_to_the_apis_bound_and_seq_no_to_zero_or_more() {
    use Action::*;
    let te = TransactionEvent;
    for (action, payload, description) in [
        (
            MeterValues,
            with(MeterValues, 0, "/evseId", Some(json!(100))),
            "evseId: must be from 0 to 99, got 100",
        ),
        (
            StatusNotification,
            with(StatusNotification, 0, "/connectorId", Some(json!(-1))),
            "connectorId: must be from 0 to 99, got -1",
        ),
        (
            te,
            with(te, 0, "/evse/id", Some(json!(1000))),
            "evse.id: must be from 0 to 99, got 1000",
        ),
        (
            te,
            with(te, 0, "/seqNo", Some(json!(-1))),
            "seqNo: must be 0 or more, got -1",
        ),
    ] {
        // Valid by the schema, so the stream reads it through; cms's bound refuses it both ways.
        assert!(check_streaming(action, &payload).is_some(), "{payload}");
        let violation = check_request(action, &payload).unwrap_err();
        assert_eq!(Err(violation.clone()), check_tree(action, &payload));
        assert_eq!(violation.code, ErrorCode::PropertyConstraintViolation);
        assert_eq!(violation.description, description);
    }
}

#[test]
fn a_repeated_member_is_left_to_the_tree_which_keeps_the_last() {
    let payload = r#"{"evseId":1,"evseId":2,"meterValue":[{"timestamp":"2026-11-21T10:15:00Z","sampledValue":[{"value":1}]}]}"#;
    assert!(check_streaming(Action::MeterValues, payload).is_none());
    assert_eq!(
        check_request(Action::MeterValues, payload),
        Ok(Checked::MeterValues {
            evse_id: 2,
            newest: Some(at(10, 15, 0))
        })
    );
}
