//! Frames a charger gets wrong: each is answered with the right CALLERROR, counted in the
//! metrics, and the connection lives on (a Heartbeat right after is still answered).

use crate::support::{Api, Charger, Cms, eventually};
use serde_json::{Value, json};

/// Sends `raw`, expects `[4, id, code, "<description>", {}]`; `ids` are the acceptable message
/// ids of the answer. Then checks the connection still answers a Heartbeat.
async fn expect_call_error(charger: &mut Charger, raw: &str, ids: &[&str], code: &str) {
    charger.send_text(raw).await;
    let answer = charger.next_frame().await;
    check_call_error(&answer, raw, ids, code);
    charger.heartbeat().await;
}

fn check_call_error(answer: &Value, sent: &str, ids: &[&str], code: &str) {
    let frame = answer
        .as_array()
        .unwrap_or_else(|| panic!("{sent} → not an array: {answer}"));
    assert_eq!(
        frame.len(),
        5,
        "{sent} → a CALLERROR has 5 elements: {answer}"
    );
    assert_eq!(frame[0], 4, "{sent} → expected a CALLERROR: {answer}");
    assert!(
        ids.iter().any(|id| frame[1] == *id),
        "{sent} → message id should be one of {ids:?}: {answer}"
    );
    assert_eq!(frame[2], code, "{sent} → wrong error code: {answer}");
    assert!(
        frame[3].is_string(),
        "{sent} → description should be a string: {answer}"
    );
    assert!(
        frame[4].is_object(),
        "{sent} → details should be an object: {answer}"
    );
}

async fn wait_for_error_counts(cms: &Cms, counts: &[(&str, f64)]) {
    let api = Api::new(cms, &cms.operator_token().await);
    eventually("cms_gateway_errors_total per code", async || {
        let metrics = api.metrics().await;
        for (code, expected) in counts {
            let seen = metrics.sum("cms_gateway_errors_total", &[("code", code)]);
            if seen != Some(*expected) {
                return Err(format!("code {code}: {seen:?}, expected {expected}"));
            }
        }
        Ok(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_that_is_not_a_json_array_gets_formation_violation() {
    let cms = Cms::up().await;
    cms.add_charger("CP-BAD-1").await;
    let mut charger = Charger::connect_and_boot(&cms, "CP-BAD-1", "1.0.0").await;

    for raw in [
        "this is not json",
        r#"{"messageTypeId":2}"#,
        r#""a string""#,
        "42",
    ] {
        expect_call_error(&mut charger, raw, &["-1"], "FormationViolation").await;
    }

    wait_for_error_counts(&cms, &[("FormationViolation", 4.0)]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn arrays_that_are_not_frames_get_protocol_error() {
    let cms = Cms::up().await;
    cms.add_charger("CP-BAD-2").await;
    let mut charger = Charger::connect_and_boot(&cms, "CP-BAD-2", "1.0.0").await;

    let long_id = "m".repeat(37);
    let cases: [(String, &[&str]); 6] = [
        (r#"[2,"p1","Heartbeat"]"#.to_string(), &["p1"]),
        (r#"[2,"p2","Heartbeat",{},{}]"#.to_string(), &["p2"]),
        (r#"[9,"p3","Heartbeat",{}]"#.to_string(), &["p3"]),
        (
            format!(r#"[2,"{long_id}","Heartbeat",{{}}]"#),
            &[long_id.as_str(), "-1"],
        ),
        (r#"[2,17,"Heartbeat",{}]"#.to_string(), &["-1"]),
        ("[]".to_string(), &["-1"]),
    ];
    for (raw, ids) in &cases {
        expect_call_error(&mut charger, raw, ids, "ProtocolError").await;
    }

    wait_for_error_counts(&cms, &[("ProtocolError", 6.0)]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn payloads_that_break_the_schema_get_the_matching_error() {
    let cms = Cms::up().await;
    cms.add_charger("CP-BAD-3").await;
    let mut charger = Charger::connect_and_boot(&cms, "CP-BAD-3", "1.0.0").await;

    let boot = |vendor: Value| json!({"chargePointVendor": vendor, "chargePointModel": "M1"});
    let cases = [
        ("c1", "Teleport", json!({}), "NotImplemented"),
        (
            "c2",
            "BootNotification",
            boot(json!(5)),
            "TypeConstraintViolation",
        ),
        (
            "c3",
            "StartTransaction",
            json!({"connectorId": "1", "idTag": "T", "meterStart": 0, "timestamp": "2026-01-01T00:00:00Z"}),
            "TypeConstraintViolation",
        ),
        (
            "c4",
            "BootNotification",
            json!({"chargePointVendor": "Acme"}),
            "OccurenceConstraintViolation",
        ),
        (
            "c5",
            "StatusNotification",
            json!({"connectorId": 1, "errorCode": "NoError", "status": "Dancing"}),
            "PropertyConstraintViolation",
        ),
        (
            "c6",
            "Authorize",
            json!({"idTag": "X".repeat(21)}),
            "PropertyConstraintViolation",
        ),
        (
            "c7",
            "BootNotification",
            boot(json!("V".repeat(21))),
            "PropertyConstraintViolation",
        ),
        (
            "c8",
            "BootNotification",
            json!({"chargePointVendor": "Acme", "chargePointModel": "M1", "colour": "red"}),
            "FormationViolation",
        ),
    ];
    for (id, action, payload, code) in cases {
        let raw = json!([2, id, action, payload]).to_string();
        expect_call_error(&mut charger, &raw, &[id], code).await;
    }

    // Right at the limits is fine.
    let at_limit = charger
        .call_result("Authorize", json!({"idTag": "X".repeat(20)}))
        .await;
    assert_eq!(at_limit["idTagInfo"]["status"], "Accepted", "{at_limit}");

    wait_for_error_counts(
        &cms,
        &[
            ("NotImplemented", 1.0),
            ("TypeConstraintViolation", 2.0),
            ("OccurenceConstraintViolation", 1.0),
            ("PropertyConstraintViolation", 3.0),
            ("FormationViolation", 1.0),
        ],
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_binary_frame_gets_formation_violation() {
    let cms = Cms::up().await;
    cms.add_charger("CP-BAD-4").await;
    let mut charger = Charger::connect_and_boot(&cms, "CP-BAD-4", "1.0.0").await;

    charger
        .send_binary(br#"[2,"b1","Heartbeat",{}]"#.to_vec())
        .await;
    let answer = charger.next_frame().await;
    check_call_error(&answer, "a binary frame", &["-1"], "FormationViolation");
    charger.heartbeat().await;

    wait_for_error_counts(&cms, &[("FormationViolation", 1.0)]).await;
}
