//! 2.0.1 frames a station gets wrong, written by hand: each gets the CALLERROR with 2.0.1's
//! code (FormatViolation, OccurrenceConstraintViolation, RpcFrameworkError, ...), and the connection
//! lives on (a Heartbeat right after is answered). The faults and codes mirror the 1.6 ones of
//! tests/e2e/bad_frames.rs.

use crate::support::Cms;
use crate::support::station201::{OCPP201, RawStation201};
use serde_json::{Value, json};

/// Fails unless `answer` is `[4, id, code, "<description>", {}]` with `id` one of `ids`.
fn assert_call_error(answer: &Value, sent: &str, ids: &[&str], code: &str) {
    let frame = answer.as_array().map(Vec::as_slice).unwrap_or_default();
    assert!(
        frame.len() == 5 && frame[0] == 4 && ids.iter().any(|id| frame[1] == *id),
        "{sent} → expected a CALLERROR answering one of {ids:?}, got {answer}"
    );
    assert_eq!(frame[2], code, "{sent} → the 2.0.1 code: {answer}");
    assert!(
        frame[3].is_string() && frame[4].is_object(),
        "{sent} → {answer}"
    );
}

/// `payload` with `field` set to `value`.
fn with(payload: &Value, field: &str, value: Value) -> Value {
    let mut changed = payload.clone();
    changed[field] = value;
    changed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ocpp201_schema_faults_get_their_2_0_1_codes_and_the_connection_lives_on() {
    let cms = Cms::up().await;
    cms.add_charger("CP-201-BAD").await;
    let mut station = RawStation201::connect(cms.ocpp_addr(), "CP-201-BAD").await;
    assert_eq!(station.subprotocol.as_deref(), Some(OCPP201));
    station.boot().await;

    let boot = |reason: Value| json!({"reason": reason, "chargingStation": {"model": "M", "vendorName": "V"}});
    let status = json!({"timestamp": "2026-06-01T10:00:00Z", "connectorStatus": "Available",
                        "evseId": 1, "connectorId": 1});
    let dancing = with(&status, "connectorStatus", json!("Dancing"));
    let extra = with(&status, "colour", json!("red"));
    let cases = [
        // A name that is no 2.0.1 action at all; one that is, but not handled (contract §1).
        ("Teleport", json!({}), "NotImplemented"),
        (
            "GetCertificateStatus",
            json!({"ocspRequestData": {}}),
            "NotSupported",
        ),
        (
            "BootNotification",
            boot(json!(5)),
            "TypeConstraintViolation",
        ),
        (
            "StatusNotification",
            with(&status, "evseId", json!("1")),
            "TypeConstraintViolation",
        ),
        (
            "StatusNotification",
            json!({"connectorStatus": "Available"}),
            "OccurrenceConstraintViolation",
        ),
        ("StatusNotification", dancing, "PropertyConstraintViolation"),
        (
            "BootNotification",
            boot(json!("Bored")),
            "PropertyConstraintViolation",
        ),
        (
            "Authorize",
            json!({"idToken": {"idToken": "X".repeat(37), "type": "ISO14443"}}),
            "PropertyConstraintViolation",
        ),
        ("StatusNotification", extra, "FormatViolation"),
    ];
    for (action, payload, code) in cases {
        let id = station.message_id();
        let raw = json!([2, id, action, payload]).to_string();
        let answer = station.send_and_read(&raw).await;
        assert_call_error(&answer, &raw, &[&id], code);
        station.heartbeat().await;
    }
    // A frame that is no RPC message at all is an RpcFrameworkError in 2.0.1 (part 4, 4.3:
    // "not a valid RPC Request"); 1.6 called it a FormationViolation.
    for raw in ["this is not json", r#"{"messageTypeId":2}"#, "42"] {
        let answer = station.send_and_read(raw).await;
        assert_call_error(&answer, raw, &["-1"], "RpcFrameworkError");
        station.heartbeat().await;
    }
    let raw = r#"[5,"m-1","Heartbeat",{}]"#;
    let answer = station.send_and_read(raw).await;
    assert_call_error(&answer, raw, &["m-1"], "MessageTypeNotSupported");
    station.heartbeat().await;

    // Right at a limit is fine: an idToken of 36 characters.
    let at_limit = json!({"idToken": {"idToken": "X".repeat(36), "type": "ISO14443"}});
    let answer = station.call_text("Authorize", &at_limit.to_string()).await;
    assert!(
        answer[0] == 3 && answer[2]["idTokenInfo"]["status"].is_string(),
        "{answer}"
    );
}
