use super::*;
use crate::charger_calls::ChargerAnswer;
use crate::charger_calls::fixture::Fixture;
use cms_bus::Record;

fn handle(fixture: &Fixture, text: &str) -> Handled {
    let ctx = fixture.context(OcppVersion::V201);
    let frame = Bytes::copy_from_slice(text.as_bytes());
    handle_text_v201(&ctx, text, &frame, Utc::now())
}

fn published(handled: Handled) -> (ChargerAction, Record, serde_json::Value) {
    match handled.outcome {
        Outcome::Publish {
            action,
            record,
            answer,
        } => {
            let frame: serde_json::Value = serde_json::from_str(answer.as_str()).unwrap();
            assert_eq!(frame[0], 3, "a CALLRESULT: {frame}");
            (action, record, frame[2].clone())
        }
        Outcome::Refuse { reply, .. } => panic!("refused: {reply}"),
        Outcome::Answer(answer) => panic!("taken for an answer: {answer:?}"),
        Outcome::Ask(_) => panic!("waits for an eMSP"),
    }
}

/// The CALLERROR: its code as written on the wire, and its id.
fn refused(handled: Handled) -> (String, String) {
    match handled.outcome {
        Outcome::Refuse { reply, .. } => {
            let frame: serde_json::Value = serde_json::from_str(&reply).unwrap();
            (
                frame[2].as_str().unwrap().into(),
                frame[1].as_str().unwrap().into(),
            )
        }
        _ => panic!("not refused"),
    }
}

const METER_VALUES: &str = r#"[2,"mv-1","MeterValues",{"evseId":2,"meterValue":[{"timestamp":"2026-11-21T10:00:00Z","sampledValue":[{"value":1234.5}]},{"timestamp":"2026-11-21T10:00:10Z","sampledValue":[{"value":1240.5,"measurand":"Energy.Active.Import.Register","unitOfMeasure":{"unit":"Wh"}}]}]}]"#;

#[test]
fn meter_values_publish_the_stations_own_bytes_with_the_evse_and_the_newest_time() {
    let fixture = Fixture::new();
    let (action, record, answer) = published(handle(&fixture, METER_VALUES));
    assert_eq!(action, ChargerAction::V201(Action::MeterValues));
    assert_eq!(answer, serde_json::json!({}));
    let start = METER_VALUES.find("{\"evseId\"").unwrap();
    assert_eq!(
        &record.value[..],
        &METER_VALUES.as_bytes()[start..METER_VALUES.len() - 1]
    );
    assert_eq!(record.header_str("ocpp_version"), Some("ocpp2.0.1"));
    assert_eq!(record.header_str("action"), Some("MeterValues"));
    assert_eq!(record.header_str("message_id"), Some("mv-1"));
    assert_eq!(record.header_str("connector_id"), Some("2"));
    let measured_at = record.header_str("measured_at").unwrap();
    assert!(
        measured_at.starts_with("2026-11-21T10:00:10"),
        "{measured_at}"
    );
    assert!(!record.headers.spilled());
}

const UPDATED: &str = r#"[2,"te-2","TransactionEvent",{"eventType":"Updated","timestamp":"2026-11-21T10:00:10Z","triggerReason":"MeterValuePeriodic","seqNo":2,"transactionInfo":{"transactionId":"tx-9","chargingState":"Charging"},"evse":{"id":1,"connectorId":1},"meterValue":[{"timestamp":"2026-11-21T10:00:10Z","sampledValue":[{"value":1500}]}]}]"#;

#[test]
fn a_reading_in_a_transaction_names_its_event_and_transaction_and_is_answered_empty() {
    let fixture = Fixture::new();
    let (action, record, answer) = published(handle(&fixture, UPDATED));
    assert_eq!(action, ChargerAction::V201(Action::TransactionEvent));
    // No idToken in the event, nothing to say about one.
    assert_eq!(answer, serde_json::json!({}));
    assert_eq!(record.header_str("event_type"), Some("Updated"));
    assert_eq!(record.header_str("transaction_id"), Some("tx-9"));
    assert_eq!(record.header_str("connector_id"), Some("1"));
    assert!(record.header_str("measured_at").is_some());
    assert_eq!(record.header_str("id_tag_status"), None);
    assert!(
        !record.headers.spilled(),
        "a reading's record holds its headers itself"
    );
}

#[test]
fn an_event_with_a_token_is_answered_with_what_cms_knows_of_it() {
    let fixture = Fixture::new();
    let started = r#"[2,"te-0","TransactionEvent",{"eventType":"Started","timestamp":"2026-11-21T10:00:00Z","triggerReason":"Authorized","seqNo":0,"transactionInfo":{"transactionId":"tx\u002d10"},"idToken":{"idToken":"TAG-1","type":"ISO14443"},"evse":{"id":1}}]"#;
    let (_, record, answer) = published(handle(&fixture, started));
    // The charger's site is open: every token is accepted.
    assert_eq!(answer["idTokenInfo"]["status"], "Accepted", "{answer}");
    assert_eq!(record.header_str("id_tag_status"), Some("Accepted"));
    assert_eq!(record.header_str("event_type"), Some("Started"));
    // An id written with escapes is kept unescaped.
    assert_eq!(record.header_str("transaction_id"), Some("tx-10"));
    assert_eq!(record.header_str("measured_at"), None);
    let authorize = r#"[2,"a-1","Authorize",{"idToken":{"idToken":"TAG-1","type":"ISO14443"}}]"#;
    let (_, _, answer) = published(handle(&fixture, authorize));
    assert_eq!(answer["idTokenInfo"]["status"], "Accepted", "{answer}");
    assert!(Action::Authorize.validate_response(&answer).is_ok());
}

#[test]
fn an_accepted_driver_is_told_the_price_at_authorize_and_at_the_start_only() {
    const PRICE: &str = "0.36 EUR/kWh, 0.60 EUR per session";
    let shown = serde_json::json!({"format": "UTF8", "content": PRICE});
    let event = |kind: &str, token: bool| {
        let token = match token {
            true => r#","idToken":{"idToken":"TAG-1","type":"ISO14443"}"#,
            false => "",
        };
        format!(
            r#"[2,"te-{kind}","TransactionEvent",{{"eventType":"{kind}","timestamp":"2026-11-21T10:00:00Z","triggerReason":"Authorized","seqNo":0,"transactionInfo":{{"transactionId":"tx-1"}}{token}}}]"#
        )
    };
    let authorize = r#"[2,"a-1","Authorize",{"idToken":{"idToken":"TAG-1","type":"ISO14443"}}]"#;
    let priced = Fixture::with_price_text(PRICE);
    let (_, _, answer) = published(handle(&priced, authorize));
    assert_eq!(answer["idTokenInfo"]["personalMessage"], shown, "{answer}");
    assert!(Action::Authorize.validate_response(&answer).is_ok());
    let (_, _, answer) = published(handle(&priced, &event("Started", true)));
    assert_eq!(answer["idTokenInfo"]["personalMessage"], shown, "{answer}");
    assert!(Action::TransactionEvent.validate_response(&answer).is_ok());
    // The end's total is the API's to give (a CostUpdated once priced); a reading's answer
    // stays the meter path's empty one.
    for (kind, token) in [("Updated", true), ("Ended", true)] {
        let (_, _, answer) = published(handle(&priced, &event(kind, token)));
        assert_eq!(answer["idTokenInfo"]["status"], "Accepted", "{answer}");
        assert!(
            answer["idTokenInfo"].get("personalMessage").is_none(),
            "{answer}"
        );
    }
    let (_, _, answer) = published(handle(&priced, &event("Updated", false)));
    assert_eq!(answer, serde_json::json!({}));
    // A site that does not show prices tells none.
    let (_, _, answer) = published(handle(&Fixture::new(), authorize));
    assert!(
        answer["idTokenInfo"].get("personalMessage").is_none(),
        "{answer}"
    );
}

#[test]
fn a_boot_is_accepted_with_the_heartbeat_interval_and_a_heartbeat_gets_the_clock() {
    let fixture = Fixture::new();
    let boot = r#"[2,"b-1","BootNotification",{"reason":"PowerUp","chargingStation":{"model":"M","vendorName":"V"}}]"#;
    let (_, record, answer) = published(handle(&fixture, boot));
    assert_eq!(answer["status"], "Accepted");
    assert_eq!(answer["interval"], 120);
    assert!(Action::BootNotification.validate_response(&answer).is_ok());
    assert_eq!(record.header_str("action"), Some("BootNotification"));
    let (_, _, answer) = published(handle(&fixture, r#"[2,"h-1","Heartbeat",{}]"#));
    assert!(answer["currentTime"].as_str().unwrap().ends_with('Z'));
    let data = r#"[2,"d-1","DataTransfer",{"vendorId":"acme"}]"#;
    let (_, _, answer) = published(handle(&fixture, data));
    assert_eq!(answer["status"], "UnknownVendorId");
}

#[test]
fn a_frame_breaking_its_schema_is_refused_in_2_0_1s_codes() {
    let fixture = Fixture::new();
    let cases = [
        (r#"[2,"1","Heartbeat",{"x":1}]"#, "FormatViolation"),
        (r#"[2,"2","Authorize",{}]"#, "OccurrenceConstraintViolation"),
        (
            r#"[2,"3","MeterValues",{"evseId":"one","meterValue":[]}]"#,
            "TypeConstraintViolation",
        ),
        (
            r#"[2,"4","StatusNotification",{"timestamp":"2026-11-21T10:00:00Z","connectorStatus":"Charging","evseId":1,"connectorId":1}]"#,
            "PropertyConstraintViolation",
        ),
        (r#"[2,"5","GetCertificateStatus",{}]"#, "NotSupported"),
        (r#"[2,"6","Frobnicate",{}]"#, "NotImplemented"),
        (r#"[9,"7","Heartbeat",{}]"#, "MessageTypeNotSupported"),
    ];
    for (frame, code) in cases {
        let (got, _) = refused(handle(&fixture, frame));
        assert_eq!(got, code, "{frame}");
    }
    let (code, id) = refused(handle(&fixture, "not json"));
    assert_eq!((code.as_str(), id.as_str()), ("RpcFrameworkError", "-1"));
}

#[test]
fn the_stations_answers_to_calls_of_ours_are_taken_as_answers() {
    let fixture = Fixture::new();
    let handled = handle(&fixture, r#"[3,"u-1",{"status":"Accepted"}]"#);
    assert!(matches!(
        handled.outcome,
        Outcome::Answer(ChargerAnswer::Result { ref message_id, .. }) if message_id == "u-1"
    ));
    let handled = handle(&fixture, r#"[4,"u-2","NotSupported","no",{}]"#);
    assert!(matches!(
        handled.outcome,
        Outcome::Answer(ChargerAnswer::Error { ref code, .. }) if code == "NotSupported"
    ));
}

#[test]
fn the_calls_beyond_core_are_answered_by_their_response_schema_and_published() {
    let fixture = Fixture::new();
    let calls = [
        (
            Action::ClearedChargingLimit,
            r#"{"chargingLimitSource":"EMS"}"#,
        ),
        (
            Action::NotifyChargingLimit,
            r#"{"chargingLimit":{"chargingLimitSource":"SO"}}"#,
        ),
        (
            Action::NotifyDisplayMessages,
            r#"{"requestId":4,"messageInfo":[{"id":1,"priority":"NormalCycle","message":{"format":"UTF8","content":"Hi"}}]}"#,
        ),
        (
            Action::NotifyEVChargingNeeds,
            r#"{"evseId":1,"chargingNeeds":{"requestedEnergyTransfer":"DC"}}"#,
        ),
        (
            Action::NotifyEVChargingSchedule,
            r#"{"timeBase":"2026-11-21T10:15:00Z","evseId":1,"chargingSchedule":{"id":1,"chargingRateUnit":"W","chargingSchedulePeriod":[{"startPeriod":0,"limit":7000.0}]}}"#,
        ),
        (
            Action::ReportChargingProfiles,
            r#"{"requestId":7,"chargingLimitSource":"CSO","evseId":0,"chargingProfile":[{"id":1,"stackLevel":0,"chargingProfilePurpose":"TxDefaultProfile","chargingProfileKind":"Absolute","chargingSchedule":[{"id":1,"chargingRateUnit":"A","chargingSchedulePeriod":[{"startPeriod":0,"limit":16.0}]}]}]}"#,
        ),
        (
            Action::ReservationStatusUpdate,
            r#"{"reservationId":3,"reservationUpdateStatus":"Removed"}"#,
        ),
        (
            Action::SignCertificate,
            r#"{"csr":"-----BEGIN CERTIFICATE REQUEST-----"}"#,
        ),
    ];
    for (action, payload) in calls {
        let frame = format!(r#"[2,"b-1","{action}",{payload}]"#);
        let (published_as, record, answer) = published(handle(&fixture, &frame));
        assert_eq!(published_as, ChargerAction::V201(action));
        assert_eq!(record.header_str("action"), Some(action.as_str()));
        assert_eq!(&record.value[..], payload.as_bytes());
        action
            .validate_response(&answer)
            .unwrap_or_else(|e| panic!("{action} answered {answer}: {e}"));
    }
}
