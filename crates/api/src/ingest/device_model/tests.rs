use super::*;
use serde_json::json;

fn told(ocpp_version: &str) -> ChargerMessage<'_> {
    ChargerMessage {
        action: NOTIFY_REPORT,
        message_id: None,
        received_at: None,
        gateway: None,
        session: None,
        ocpp_version: Some(ocpp_version),
        connector_id: None,
        measured_at: None,
        transaction_id: None,
        id_tag_status: None,
        event_type: None,
    }
}

fn change_of(payload: Value) -> Vec<ReportedVariable> {
    let payload = payload.to_string();
    let change = report_change(
        "CS-1".into(),
        &told("ocpp2.0.1"),
        payload.as_bytes(),
        "t".into(),
    );
    match change {
        Some(StateChange::DeviceModelReported { variables, .. }) => variables,
        other => panic!("expected a device model change, got {other:?}"),
    }
}

#[test]
fn each_attribute_of_a_report_is_a_variable_named_by_its_key() {
    let variables = change_of(json!({
        "requestId": 1, "generatedAt": "2026-11-21T10:00:00Z", "seqNo": 0, "tbc": false,
        "reportData": [
            {"component": {"name": "OCPPCommCtrlr"}, "variable": {"name": "HeartbeatInterval"},
             "variableAttribute": [{"value": "300"}],
             "variableCharacteristics": {"dataType": "integer", "unit": "s", "minLimit": 1,
                                         "supportsMonitoring": false}},
            {"component": {"name": "EVSE", "evse": {"id": 1}}, "variable": {"name": "Power"},
             "variableAttribute": [
                 {"type": "Actual", "value": "0", "mutability": "ReadOnly"},
                 {"type": "MaxSet", "value": "22000", "persistent": true, "constant": false}],
             "variableCharacteristics": {"dataType": "decimal", "maxLimit": 22000.5,
                                         "supportsMonitoring": true}},
            {"component": {"name": "SecurityCtrlr"}, "variable": {"name": "BasicAuthPassword"},
             "variableAttribute": [{"mutability": "WriteOnly"}]}
        ]
    }));
    let keys: Vec<String> = variables.iter().map(|v| v.name.key()).collect();
    assert_eq!(
        keys,
        [
            "OCPPCommCtrlr/HeartbeatInterval",
            "EVSE@1/Power",
            "EVSE@1/Power#MaxSet",
            "SecurityCtrlr/BasicAuthPassword"
        ]
    );
    let heartbeat = &variables[0];
    assert_eq!(heartbeat.value.as_deref(), Some("300"));
    assert_eq!(heartbeat.mutability, "ReadWrite", "the default");
    assert_eq!(
        (heartbeat.data_type.as_deref(), heartbeat.unit.as_deref()),
        (Some("integer"), Some("s"))
    );
    assert_eq!(heartbeat.min_limit, Some(1.0));
    assert_eq!(variables[1].mutability, "ReadOnly");
    assert_eq!(variables[2].max_limit, Some(22000.5));
    assert_eq!(
        (variables[2].persistent, variables[2].constant),
        (Some(true), Some(false))
    );
    assert!(!variables[0].secret);
    assert!(variables[3].secret, "secret by its name");
}

#[test]
fn a_report_without_data_changes_nothing_and_a_1_6_record_is_not_one() {
    let empty = json!({"requestId": 1, "generatedAt": "2026-11-21T10:00:00Z", "seqNo": 0});
    assert_eq!(change_of(empty.clone()), []);
    let payload = empty.to_string();
    let change = report_change(
        "CS-1".into(),
        &told("ocpp1.6"),
        payload.as_bytes(),
        "t".into(),
    );
    assert_eq!(change, None);
    let garbage = report_change("CS-1".into(), &told("ocpp2.0.1"), b"[1]", "t".into());
    assert_eq!(garbage, None);
}

#[test]
fn only_the_values_a_station_took_are_kept_and_secrets_are_marked() {
    let entry = |component: Value, variable: &str, value: &str| json!({"component": component, "variable": {"name": variable}, "attributeValue": value});
    let mut max_set = entry(json!({"name": "EVSE", "evse": {"id": 1}}), "Power", "11000");
    max_set["attributeType"] = json!("MaxSet");
    let request = json!({"setVariableData": [
        entry(json!({"name": "OCPPCommCtrlr"}), "HeartbeatInterval", "60"),
        max_set,
        entry(json!({"name": "Vendor"}), "WifiPassword", "***"),
        entry(json!({"name": "Vendor"}), "Refused", "1"),
    ]});
    let result = |component: Value, variable: &str, status: &str| json!({"component": component, "variable": {"name": variable}, "attributeStatus": status});
    let mut max_set = result(
        json!({"name": "EVSE", "evse": {"id": 1}}),
        "Power",
        "RebootRequired",
    );
    max_set["attributeType"] = json!("MaxSet");
    // In another order than asked.
    let response = json!({"setVariableResult": [
        result(json!({"name": "Vendor"}), "Refused", "Rejected"),
        result(json!({"name": "Vendor"}), "WifiPassword", "Accepted"),
        max_set,
        result(json!({"name": "OCPPCommCtrlr"}), "HeartbeatInterval", "Accepted"),
    ]});
    let set = |key: &str, value: &str, secret: bool| VariableSet {
        key: key.into(),
        value: value.into(),
        secret,
    };
    assert_eq!(
        accepted_sets(&request, &response),
        [
            set("OCPPCommCtrlr/HeartbeatInterval", "60", false),
            set("EVSE@1/Power#MaxSet", "11000", false),
            set("Vendor/WifiPassword", "***", true),
        ]
    );
    assert_eq!(
        answers(&response)[0],
        ("Vendor/Refused".into(), "Rejected".into())
    );
}

#[test]
fn the_last_part_of_a_report_says_which_report_ended() {
    let ended = |payload: Value| {
        let payload = payload.to_string();
        match report_change(
            "CS-1".into(),
            &told("ocpp2.0.1"),
            payload.as_bytes(),
            "t".into(),
        ) {
            Some(StateChange::DeviceModelReported { ended_request, .. }) => ended_request,
            other => panic!("expected a device model change, got {other:?}"),
        }
    };
    let part = |seq_no: i64, tbc: Option<bool>| {
        let mut report = json!({"requestId": 42, "generatedAt": "2026-11-21T10:00:00Z",
            "seqNo": seq_no});
        if let Some(tbc) = tbc {
            report["tbc"] = json!(tbc);
        }
        report
    };
    assert_eq!(ended(part(0, Some(true))), None, "more to come");
    assert_eq!(ended(part(1, Some(false))), Some(42));
    assert_eq!(ended(part(0, None)), Some(42), "tbc defaults to false");
}
