use super::*;
use crate::charger_calls::fixture::Fixture;

fn published(handled: Handled) -> (ChargerAction, Record, String) {
    match handled.outcome {
        Outcome::Publish {
            action,
            record,
            answer,
        } => (action, record, answer.as_str().to_string()),
        Outcome::Refuse { reply, .. } => panic!("refused: {reply}"),
        Outcome::Answer(answer) => panic!("taken for an answer: {answer:?}"),
        Outcome::Ask(_) => panic!("waits for an eMSP"),
    }
}

fn refused(handled: Handled) -> (ErrorCode, String) {
    match handled.outcome {
        Outcome::Refuse { reply, code } => (code, reply),
        _ => panic!("not refused"),
    }
}

const METER_VALUES: &str = r#"[2, "mv-1", "MeterValues", {"connectorId": 1, "meterValue": [{"timestamp": "2026-11-21T10:00:00Z", "sampledValue": [{"value": "1234.5", "measurand": "Energy.Active.Import.Register", "unit": "Wh"}]}]}]"#;

#[test]
fn meter_values_publish_the_chargers_own_payload_bytes() {
    let fixture = Fixture::new();
    let (action, record, answer) = published(fixture.handle(METER_VALUES));
    assert_eq!(action, ChargerAction::V16(Action::MeterValues));
    let start = METER_VALUES.find("{\"connectorId\"").unwrap();
    assert_eq!(
        &record.value[..],
        &METER_VALUES.as_bytes()[start..METER_VALUES.len() - 1]
    );
    assert_eq!(record.topic, "t.ocpp.messages");
    assert_eq!(&record.key[..], b"CP-1");
    assert_eq!(record.header_str("action"), Some("MeterValues"));
    assert_eq!(record.header_str("message_id"), Some("mv-1"));
    assert_eq!(record.header_str("gateway"), Some("gw-1"));
    assert_eq!(record.header_str("session"), Some("s-1"));
    assert!(record.header_str("received_at").unwrap().ends_with('Z'));
    assert_eq!(record.header_str("connector_id"), Some("1"));
    assert_eq!(
        record.header_str("measured_at"),
        Some("2026-11-21T10:00:00.000000Z")
    );
    assert_eq!(answer, r#"[3,"mv-1",{}]"#);
}

#[test]
fn meter_values_the_quick_check_leaves_to_the_tree_are_published_as_the_tree_reads_them() {
    let fixture = Fixture::new();
    // A repeated key: the quick check gives up, the tree keeps the last value.
    let frame = r#"[2,"mv-3","MeterValues",{"connectorId":1,"connectorId":2,"meterValue":[
        {"timestamp":"2026-11-21T10:00:05Z","sampledValue":[{"value":"2"}]}]}]"#;
    let (_, record, answer) = published(fixture.handle(frame));
    assert_eq!(record.header_str("connector_id"), Some("2"));
    assert_eq!(
        record.header_str("measured_at"),
        Some("2026-11-21T10:00:05.000000Z")
    );
    assert_eq!(answer, r#"[3,"mv-3",{}]"#);
}

#[test]
fn measured_at_is_the_newest_reading_of_the_frame() {
    let fixture = Fixture::new();
    let frame = r#"[2,"mv-2","MeterValues",{"connectorId":3,"meterValue":[
        {"timestamp":"2026-11-21T10:00:05.5Z","sampledValue":[{"value":"2"}]},
        {"timestamp":"2026-11-21T10:00:09+01:00","sampledValue":[{"value":"3"}]},
        {"timestamp":"2026-11-21T09:00:07Z","sampledValue":[{"value":"1"}]}]}]"#;
    let (_, record, _) = published(fixture.handle(frame));
    assert_eq!(record.header_str("connector_id"), Some("3"));
    assert_eq!(
        record.header_str("measured_at"),
        Some("2026-11-21T10:00:05.500000Z")
    );
    let (_, heartbeat, _) = published(fixture.handle(r#"[2,"h","Heartbeat",{}]"#));
    assert_eq!(heartbeat.header("connector_id"), None);
    assert_eq!(heartbeat.header("measured_at"), None);
}

#[test]
fn the_published_value_shares_the_frame_buffer() {
    let fixture = Fixture::new();
    let ctx_frame = Bytes::copy_from_slice(METER_VALUES.as_bytes());
    let ctx = fixture.context(OcppVersion::V16);
    let text = std::str::from_utf8(&ctx_frame).unwrap();
    let (_, record, _) = published(handle_text(&ctx, text, &ctx_frame, Utc::now()));
    let frame_range = ctx_frame.as_ptr() as usize..ctx_frame.as_ptr() as usize + ctx_frame.len();
    assert!(frame_range.contains(&(record.value.as_ptr() as usize)));
}

#[test]
fn a_records_ocpp_version_is_the_one_its_session_agreed() {
    let fixture = Fixture::new();
    let (_, record, _) = published(fixture.handle(r#"[2,"h","Heartbeat",{}]"#));
    assert_eq!(record.header_str("ocpp_version"), Some("ocpp1.6"));
    let ctx = fixture.context(OcppVersion::V201);
    let id = Bytes::from_static(b"t-1");
    let record = Record {
        topic: Cow::Borrowed(fixture.topics.messages),
        key: fixture.key.clone(),
        headers: record_headers(&ctx, "TransactionEvent", id, Utc::now()),
        value: Bytes::from_static(b"{}"),
    };
    assert_eq!(record.header_str("ocpp_version"), Some("ocpp2.0.1"));
    assert_eq!(record.header_str("action"), Some("TransactionEvent"));
    assert_eq!(record.header_str("message_id"), Some("t-1"));
    assert_eq!(record.header_str("session"), Some("s-1"));
}

#[test]
fn boot_and_heartbeat_are_answered_with_the_time_and_interval() {
    let fixture = Fixture::new();
    let boot =
        r#"[2,"b1","BootNotification",{"chargePointVendor":"ACME","chargePointModel":"X1"}]"#;
    let (_, _, answer) = published(fixture.handle(boot));
    let parsed: serde_json::Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(parsed[2]["status"], "Accepted");
    assert_eq!(parsed[2]["interval"], 120);
    assert!(parsed[2]["currentTime"].as_str().unwrap().ends_with('Z'));
    let (_, _, answer) = published(fixture.handle(r#"[2,"h1","Heartbeat",{}]"#));
    let parsed: serde_json::Value = serde_json::from_str(&answer).unwrap();
    assert!(parsed[2]["currentTime"].is_string());
}

#[test]
fn start_transaction_ids_are_in_the_answer_and_the_record_and_stable_on_retry() {
    let fixture = Fixture::new();
    let start = r#"[2,"s1","StartTransaction",{"connectorId":1,"idTag":"TAG1","meterStart":10,"timestamp":"2026-11-21T10:00:00Z"}]"#;
    let (_, record, answer) = published(fixture.handle(start));
    let parsed: serde_json::Value = serde_json::from_str(&answer).unwrap();
    let id = parsed[2]["transactionId"].as_i64().unwrap();
    assert_eq!(parsed[2]["idTagInfo"]["status"], "Accepted");
    assert_eq!(
        record.header_str("transaction_id"),
        Some(id.to_string().as_str())
    );
    let retry = start.replace("\"s1\"", "\"s2\"");
    let (_, _, again) = published(fixture.handle(&retry));
    let again: serde_json::Value = serde_json::from_str(&again).unwrap();
    assert_eq!(again[2]["transactionId"].as_i64(), Some(id));
}

#[test]
fn bad_frames_are_refused_with_the_spec_error_codes() {
    let fixture = Fixture::new();
    let (code, reply) = refused(fixture.handle("not json"));
    assert_eq!(code, ErrorCode::FormationViolation);
    assert!(
        reply.starts_with(r#"[4,"-1","FormationViolation""#),
        "{reply}"
    );
    let (code, reply) = refused(fixture.handle(r#"[2,"u1","FlyToTheMoon",{}]"#));
    assert_eq!(code, ErrorCode::NotImplemented);
    assert!(reply.starts_with(r#"[4,"u1","NotImplemented""#), "{reply}");
    let (code, _) = refused(fixture.handle(r#"[2,"a1","Authorize",{}]"#));
    assert_eq!(code, ErrorCode::OccurenceConstraintViolation);
    let (code, _) = refused(fixture.handle(r#"[2,"a2","Authorize",{"idTag":5}]"#));
    assert_eq!(code, ErrorCode::TypeConstraintViolation);
    let long = format!(r#"[2,"a3","Authorize",{{"idTag":"{}"}}]"#, "x".repeat(21));
    let (code, _) = refused(fixture.handle(&long));
    assert_eq!(code, ErrorCode::PropertyConstraintViolation);
}

#[test]
fn results_and_errors_from_the_charger_are_answers_to_match_not_calls_to_answer() {
    let fixture = Fixture::new();
    let Outcome::Answer(answer) = fixture.handle(r#"[3,"x", {"status": "Accepted"}]"#).outcome
    else {
        panic!("a CALLRESULT is an answer");
    };
    assert_eq!(
        answer,
        ChargerAnswer::Result {
            message_id: "x".into(),
            payload: r#"{"status": "Accepted"}"#.into()
        }
    );
    let Outcome::Answer(answer) = fixture
        .handle(r#"[4,"y","NotSupported","no such thing",{}]"#)
        .outcome
    else {
        panic!("a CALLERROR is an answer");
    };
    assert_eq!(
        answer,
        ChargerAnswer::Error {
            message_id: "y".into(),
            code: "NotSupported".into(),
            description: "no such thing".into()
        }
    );
    assert_eq!(answer.message_id(), "y");
}

#[test]
fn a_reply_unreadable_past_its_id_is_a_failed_answer_not_a_frame_to_refuse() {
    let fixture = Fixture::new();
    for bad in [r#"[3,"x"]"#, r#"[3,"x",5]"#, r#"[4,"x","NotSupported"]"#] {
        let Outcome::Answer(ChargerAnswer::Error {
            message_id, code, ..
        }) = fixture.handle(bad).outcome
        else {
            panic!("{bad}: the charger's answer to call x, malformed");
        };
        assert_eq!(
            (message_id.as_str(), code.as_str()),
            ("x", "FormationViolation")
        );
    }
    // Without an id it answers nothing: refused, as any frame that cannot be read.
    assert!(matches!(
        fixture.handle("[3]").outcome,
        Outcome::Refuse { .. }
    ));
}
