use std::borrow::Cow;

use super::*;
use crate::error::ErrorCode;

#[test]
fn action_names_round_trip() {
    for action in Action::ALL {
        assert_eq!(Action::from_name(action.as_str()), Some(action));
        assert_eq!(action.to_string(), action.as_str());
    }
    assert_eq!(Action::from_name("heartbeat"), None);
    assert_eq!(Action::from_name("RemoteStartTransaction"), None);
    assert_eq!(Action::from_name(""), None);
}

#[test]
fn only_questions_carry_no_data() {
    let quiet: Vec<Action> = Action::ALL
        .into_iter()
        .filter(|a| !a.carries_data())
        .collect();
    assert_eq!(quiet, [Action::Authorize, Action::Heartbeat]);
}

#[test]
fn request_knows_its_action() {
    let payloads = [
        (Action::Authorize, r#"{"idTag":"a"}"#),
        (
            Action::BootNotification,
            r#"{"chargePointVendor":"v","chargePointModel":"m"}"#,
        ),
        (Action::DataTransfer, r#"{"vendorId":"v"}"#),
        (
            Action::DiagnosticsStatusNotification,
            r#"{"status":"Idle"}"#,
        ),
        (Action::FirmwareStatusNotification, r#"{"status":"Idle"}"#),
        (Action::Heartbeat, "{}"),
        (
            Action::MeterValues,
            r#"{"connectorId":1,"meterValue":[{"timestamp":"2026-01-01T00:00:00Z","sampledValue":[{"value":"1"}]}]}"#,
        ),
        (
            Action::StartTransaction,
            r#"{"connectorId":1,"idTag":"a","meterStart":0,"timestamp":"2026-01-01T00:00:00Z"}"#,
        ),
        (
            Action::StatusNotification,
            r#"{"connectorId":1,"errorCode":"NoError","status":"Charging"}"#,
        ),
        (
            Action::StopTransaction,
            r#"{"meterStop":1,"timestamp":"2026-01-01T00:00:00Z","transactionId":1}"#,
        ),
        (Action::LogStatusNotification, r#"{"status":"Idle"}"#),
        (
            Action::SecurityEventNotification,
            r#"{"type":"StartupOfTheDevice","timestamp":"2026-01-01T00:00:00Z"}"#,
        ),
        (Action::SignCertificate, r#"{"csr":"x"}"#),
        (
            Action::SignedFirmwareStatusNotification,
            r#"{"status":"Downloading","requestId":1}"#,
        ),
    ];
    for (action, payload) in payloads {
        let request = parse_request(action, payload).unwrap_or_else(|v| panic!("{action}: {v}"));
        assert_eq!(request.action(), action);
        let json = serde_json::from_str(payload).unwrap();
        assert_eq!(parse_request_json(action, json), Ok(request), "{action}");
    }
}

#[test]
fn the_security_extensions_calls_are_matched_after_the_cores() {
    let names: Vec<&str> = Action::ALL.iter().map(|a| a.as_str()).collect();
    let core = &names[..10];
    let mut sorted = core.to_vec();
    sorted.sort_unstable();
    assert_eq!(core, sorted);
    assert_eq!(
        &names[10..],
        [
            "LogStatusNotification",
            "SecurityEventNotification",
            "SignCertificate",
            "SignedFirmwareStatusNotification"
        ]
    );
    assert!(Action::ALL[10..].iter().all(|a| a.is_security_extension()));
    assert!(!Action::MeterValues.is_security_extension());
}

#[test]
fn a_security_extension_call_is_refused_as_its_schema_says_by_stream_or_by_tree() {
    let cases = [
        (
            Action::SignCertificate,
            "{}",
            ErrorCode::OccurenceConstraintViolation,
            "csr: required property is missing",
        ),
        (
            Action::SecurityEventNotification,
            r#"{"type":"X","timestamp":"2026-01-01T00:00:00Z","techInfo":"a\u0000b"}"#,
            ErrorCode::PropertyConstraintViolation,
            "techInfo: must not contain NUL characters (\\u0000)",
        ),
        (
            Action::LogStatusNotification,
            r#"{"status":"Uploaded","requestId":2147483648}"#,
            ErrorCode::PropertyConstraintViolation,
            "requestId: 2147483648 is out of range for a 32-bit integer",
        ),
        (
            Action::SignedFirmwareStatusNotification,
            r#"{"status":"Installed""#,
            ErrorCode::FormationViolation,
            "payload is not valid JSON",
        ),
    ];
    for (action, payload, code, description) in cases {
        let v = parse_request(action, payload).unwrap_err();
        assert_eq!(v.code, code, "{action} {payload}");
        assert!(v.description.starts_with(description), "{action}: {v}");
    }
    // A repeated member: the stream leaves it to the tree, where the last one counts.
    let twice = r#"{"status":"Idle","status":"Uploaded"}"#;
    assert!(parse_request(Action::LogStatusNotification, twice).is_ok());
    let twice = r#"{"status":"Idle","status":"Done"}"#;
    assert!(parse_request(Action::LogStatusNotification, twice).is_err());
}

#[test]
fn payload_that_is_not_json_is_a_formation_violation() {
    for text in ["", "{", "{\"idTag\":}", "{} x", "nope"] {
        let v = parse_request(Action::Authorize, text).unwrap_err();
        assert_eq!(v.code, ErrorCode::FormationViolation, "{text:?}");
    }
}

#[test]
fn whitespace_in_payload_is_fine() {
    let text = " \n{ \"idTag\" :\t\"abc\" }\r\n";
    let request = parse_request(Action::Authorize, text).unwrap();
    assert_eq!(
        request,
        Request::Authorize(AuthorizeRequest {
            id_tag: "abc".into()
        })
    );
}

#[test]
fn repeated_key_keeps_the_last_value() {
    let request = parse_request(Action::Authorize, r#"{"idTag":"a","idTag":"b"}"#).unwrap();
    assert_eq!(
        request,
        Request::Authorize(AuthorizeRequest { id_tag: "b".into() })
    );
}

const METER_VALUES: &str = r#"{"connectorId":1,"transactionId":5,"meterValue":[{"timestamp":"2026-11-21T10:00:00Z","sampledValue":[{"value":"123.4","measurand":"Voltage","phase":"L1-N","unit":"V"},{"value":"99"}]}]}"#;

fn points_into(text: &str, part: &str) -> bool {
    let text_range = text.as_ptr() as usize..text.as_ptr() as usize + text.len();
    let start = part.as_ptr() as usize;
    text_range.contains(&start) && start + part.len() <= text_range.end
}

#[test]
fn meter_values_view_borrows_from_the_payload() {
    let Request::MeterValues(m) = parse_request(Action::MeterValues, METER_VALUES).unwrap() else {
        panic!("not MeterValues")
    };
    let values: Vec<&Cow<'_, str>> = m.meter_value[0]
        .sampled_value
        .iter()
        .map(|s| &s.value)
        .collect();
    assert_eq!(values.len(), 2);
    for value in values {
        assert!(matches!(value, Cow::Borrowed(_)), "{value:?} was copied");
        assert!(
            points_into(METER_VALUES, value),
            "{value:?} is outside the payload"
        );
    }
}

#[test]
fn escaped_strings_are_unescaped_into_owned_copies() {
    let text = r#"{"idTag":"caf\u00e9\"1"}"#;
    let Request::Authorize(a) = parse_request(Action::Authorize, text).unwrap() else {
        panic!("not Authorize")
    };
    assert!(matches!(&a.id_tag, Cow::Owned(s) if s == "café\"1"));
}

#[test]
fn escapes_count_as_the_characters_they_encode() {
    // 20 characters written as 20 \u escapes (120 bytes of JSON text) is within the limit.
    let tag = r"\u00e9".repeat(20);
    let text = format!(r#"{{"idTag":"{tag}"}}"#);
    assert!(parse_request(Action::Authorize, &text).is_ok());
    let text = format!(r#"{{"idTag":"{tag}x"}}"#);
    let v = parse_request(Action::Authorize, &text).unwrap_err();
    assert_eq!(v.code, ErrorCode::PropertyConstraintViolation);
}

#[test]
fn parse_request_json_accepts_a_tree_from_elsewhere() {
    let json: crate::Json<'_> = serde_json::from_str(METER_VALUES).unwrap();
    let request = parse_request_json(Action::MeterValues, json).unwrap();
    assert_eq!(
        request,
        parse_request(Action::MeterValues, METER_VALUES).unwrap()
    );
}

#[test]
fn spec_enums_expose_their_spellings() {
    assert_eq!(
        Measurand::EnergyActiveImportRegister.as_str(),
        "Energy.Active.Import.Register"
    );
    assert_eq!(Measurand::Rpm.as_str(), "RPM");
    assert_eq!(Phase::L3L1.to_string(), "L3-L1");
    assert_eq!(Location::Ev.as_str(), "EV");
    assert_eq!(UnitOfMeasure::KVarh.as_str(), "kvarh");
    assert_eq!(ChargePointStatus::SuspendedEvse.as_str(), "SuspendedEVSE");
    assert_eq!(
        ChargePointErrorCode::EvCommunicationError.as_str(),
        "EVCommunicationError"
    );
    assert_eq!(StopReason::DeAuthorized.as_str(), "DeAuthorized");
    assert_eq!(Measurand::ALL.len(), 22);
    assert_eq!(UnitOfMeasure::ALL.len(), 18);
    assert_eq!(
        ReadingContext::from_name("Sample.Periodic"),
        Some(ReadingContext::SamplePeriodic)
    );
    assert_eq!(<Phase as SpecEnum>::from_name("l1"), None);
}

#[test]
fn huge_bad_values_are_cut_short_in_the_description() {
    let text = format!(r#"{{"status":"{}"}}"#, "X".repeat(10_000));
    let v = parse_request(Action::FirmwareStatusNotification, &text).unwrap_err();
    assert_eq!(v.code, ErrorCode::PropertyConstraintViolation);
    assert!(v.description.len() < 100, "{}", v.description);
}

/// A NUL character can reach a string only as the `\u0000` escape; wherever a string field
/// takes text, it is refused, so that no store downstream ever sees one.
#[test]
fn a_nul_character_in_any_string_field_is_refused() {
    let cases = [
        (
            Action::StatusNotification,
            r#"{"connectorId":1,"errorCode":"NoError","status":"Available","info":"a\u0000b"}"#,
            "info",
        ),
        (
            Action::BootNotification,
            r#"{"chargePointVendor":"\u0000","chargePointModel":"m"}"#,
            "chargePointVendor",
        ),
        (Action::Authorize, r#"{"idTag":"TAG\u0000"}"#, "idTag"),
        (
            Action::DataTransfer,
            r#"{"vendorId":"v","data":"{\"x\":\"\u0000\"}"}"#,
            "data",
        ),
        (
            Action::MeterValues,
            r#"{"connectorId":1,"meterValue":[{"timestamp":"2026-11-21T10:00:00Z","sampledValue":[{"value":"1\u00002"}]}]}"#,
            "meterValue[0].sampledValue[0].value",
        ),
    ];
    for (action, payload, path) in cases {
        let violation = parse_request(action, payload).expect_err(payload);
        assert_eq!(
            violation.code,
            ErrorCode::PropertyConstraintViolation,
            "{payload}"
        );
        assert!(
            violation.description.starts_with(path) && violation.description.contains("NUL"),
            "{payload}: {}",
            violation.description
        );
    }
    // Other escapes are text like any other.
    let ok = r#"{"connectorId":1,"errorCode":"NoError","status":"Available","info":"tab\there"}"#;
    assert!(parse_request(Action::StatusNotification, ok).is_ok());
    // And a raw NUL is not JSON at all.
    let raw = "{\"idTag\":\"a\u{0}b\"}";
    let violation = parse_request(Action::Authorize, raw).expect_err("raw NUL");
    assert_eq!(violation.code, ErrorCode::FormationViolation);
}

#[test]
fn connector_ids_beyond_the_apis_bound_are_refused() {
    for connector in [100_i64, 2_000_000_000, 4_000_000_000] {
        for (action, payload) in [
            (
                Action::StatusNotification,
                format!(
                    r#"{{"connectorId":{connector},"errorCode":"NoError","status":"Available"}}"#
                ),
            ),
            (
                Action::MeterValues,
                format!(
                    r#"{{"connectorId":{connector},"meterValue":[{{"timestamp":"2026-11-21T10:00:00Z","sampledValue":[{{"value":"1"}}]}}]}}"#
                ),
            ),
            (
                Action::StartTransaction,
                format!(
                    r#"{{"connectorId":{connector},"idTag":"T","meterStart":0,"timestamp":"2026-11-21T10:00:00Z"}}"#
                ),
            ),
        ] {
            let violation = parse_request(action, &payload).expect_err(&payload);
            assert_eq!(
                violation.code,
                ErrorCode::PropertyConstraintViolation,
                "{payload}"
            );
            assert!(
                violation.description.starts_with("connectorId"),
                "{violation}"
            );
        }
    }
    let highest = format!(
        r#"{{"connectorId":{MAX_CONNECTOR_ID},"errorCode":"NoError","status":"Available"}}"#
    );
    assert!(parse_request(Action::StatusNotification, &highest).is_ok());
}
