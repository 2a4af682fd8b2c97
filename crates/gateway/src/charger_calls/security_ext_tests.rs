//! The OCPP 1.6 security extension's calls a charger makes: answered, published as the
//! charger's own bytes, or refused with 1.6's codes when they break the OCA's schema.

use super::*;
use crate::charger_calls::fixture::Fixture;

/// A frame of each call, and the answer it gets.
const CALLS: [(&str, &str, &str); 4] = [
    (
        "SecurityEventNotification",
        r#"[2,"se-1","SecurityEventNotification",{"type":"FirmwareUpdated","timestamp":"2026-11-21T10:00:00Z","techInfo":"1.6.0"}]"#,
        "{}",
    ),
    (
        "SignCertificate",
        r#"[2,"sc-1","SignCertificate",{"csr":"-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----"}]"#,
        r#"{"status":"Accepted"}"#,
    ),
    (
        "SignedFirmwareStatusNotification",
        r#"[2,"sf-1","SignedFirmwareStatusNotification",{"status":"SignatureVerified","requestId":3}]"#,
        "{}",
    ),
    (
        "LogStatusNotification",
        r#"[2,"ls-1","LogStatusNotification",{"status":"Uploaded","requestId":7}]"#,
        "{}",
    ),
];

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

fn refused(fixture: &Fixture, frame: &str) -> (ErrorCode, String) {
    match fixture.handle(frame).outcome {
        Outcome::Refuse { reply, code } => (code, reply),
        _ => panic!("not refused: {frame}"),
    }
}

#[test]
fn the_extensions_calls_are_answered_and_published_as_the_chargers_own_bytes() {
    let fixture = Fixture::new();
    for (name, frame, payload) in CALLS {
        let (action, record, answer) = published(fixture.handle(frame));
        assert_eq!(action.as_str(), name);
        assert_eq!(record.topic, "t.ocpp.messages");
        assert_eq!(&record.key[..], b"CP-1");
        assert_eq!(record.header_str("action"), Some(name));
        assert_eq!(record.header_str("ocpp_version"), Some("ocpp1.6"));
        let start = frame.find(",{").unwrap() + 1;
        assert_eq!(&record.value[..], &frame.as_bytes()[start..frame.len() - 1]);
        let id = frame[4..].split('"').next().unwrap();
        assert_eq!(record.header_str("message_id"), Some(id));
        assert_eq!(answer, format!(r#"[3,"{id}",{payload}]"#));
        // Each answer is what the OCA's response schema asks for.
        let action = Action::from_name(name).expect("a 1.6 action");
        let answered: serde_json::Value = serde_json::from_str(payload).unwrap();
        action.validate_response(&answered).unwrap();
        // They carry data: answered once the bus has them.
        assert!(ChargerAction::V16(action).carries_data());
    }
}

#[test]
fn an_extension_call_breaking_its_schema_is_refused_with_16s_codes() {
    let fixture = Fixture::new();
    let cases = [
        (
            r#"[2,"b1","SignCertificate",{}]"#,
            r#"[4,"b1","OccurenceConstraintViolation","csr: required property is missing""#,
        ),
        (
            r#"[2,"b2","SecurityEventNotification",{"type":"X","timestamp":"yesterday"}]"#,
            r#"[4,"b2","PropertyConstraintViolation","timestamp: not an RFC 3339 date-time"#,
        ),
        (
            r#"[2,"b3","LogStatusNotification",{"status":"Done"}]"#,
            r#"[4,"b3","PropertyConstraintViolation","status: unknown value \"Done\"""#,
        ),
        (
            r#"[2,"b4","SignedFirmwareStatusNotification",{"status":"Installed","requestId":"3"}]"#,
            r#"[4,"b4","TypeConstraintViolation","requestId: expected integer, got string""#,
        ),
        (
            // 1.6 spells it FormationViolation (2.0.1: FormatViolation).
            r#"[2,"b5","SignCertificate",{"csr":"x","certificateType":"V2G"}]"#,
            r#"[4,"b5","FormationViolation","unknown property \"certificateType\"""#,
        ),
    ];
    for (frame, reply) in cases {
        let (_, got) = refused(&fixture, frame);
        assert!(got.starts_with(reply), "{frame}: {got}");
    }
    // The session goes on: the next call is taken as ever.
    let (_, record, _) = published(fixture.handle(r#"[2,"h","Heartbeat",{}]"#));
    assert_eq!(record.header_str("action"), Some("Heartbeat"));
}

#[test]
fn a_call_of_20_1_only_is_still_not_implemented_in_16() {
    let fixture = Fixture::new();
    let (code, reply) = refused(&fixture, r#"[2,"n1","NotifyEvent",{}]"#);
    assert_eq!(code, ErrorCode::NotImplemented);
    assert!(reply.starts_with(r#"[4,"n1","NotImplemented""#), "{reply}");
}
