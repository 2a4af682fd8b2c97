//! What `PUT .../settings` of a 2.0.1 station refuses before anything is sent, and the
//! SetVariables it sends of what it takes.

use super::*;
use std::collections::BTreeMap;

fn row(key: &str, component: &str, variable: &str, mutability: &str) -> VariableRow {
    VariableRow {
        key: key.into(),
        component: component.into(),
        component_instance: None,
        evse_id: None,
        connector_id: None,
        variable: variable.into(),
        variable_instance: None,
        attribute_type: ACTUAL.into(),
        value: None,
        mutability: mutability.into(),
        persistent: None,
        constant: None,
        data_type: None,
        unit: None,
        min_limit: None,
        max_limit: None,
        values_list: None,
        updated_at: "2026-11-21T10:00:00.000000Z".into(),
    }
}

fn typed(key: &str, data_type: &str) -> VariableRow {
    let (component, variable) = key.split_once('/').unwrap();
    VariableRow {
        data_type: Some(data_type.into()),
        ..row(key, component, variable, "ReadWrite")
    }
}

fn model() -> Vec<VariableRow> {
    let mut interval = typed("OCPPCommCtrlr/HeartbeatInterval", "integer");
    (interval.min_limit, interval.max_limit) = (Some(1.0), Some(86400.0));
    let mut power = typed("EVSE/Power", "decimal");
    power.key = "EVSE@1.2/Power:L1#MaxSet".into();
    (power.evse_id, power.connector_id) = (Some(1), Some(2));
    power.variable_instance = Some("L1".into());
    power.attribute_type = "MaxSet".into();
    power.max_limit = Some(22000.0);
    let mut option = typed("TxCtrlr/TxStartPoint", "OptionList");
    option.values_list = Some("Authorized, EVConnected,PowerPathClosed".into());
    let mut members = typed("SampledDataCtrlr/TxUpdatedMeasurands", "MemberList");
    members.values_list = Some("Energy.Active.Import.Register,Power.Active.Import".into());
    let mut name = typed("ChargingStation/Name", "string");
    name.max_limit = Some(5.0);
    vec![
        interval,
        power,
        option,
        members,
        name,
        typed("AuthCtrlr/Enabled", "boolean"),
        typed("ClockCtrlr/DateTime", "dateTime"),
        row(
            "ChargingStation/Model",
            "ChargingStation",
            "Model",
            "ReadOnly",
        ),
        row("Vendor/WifiPassword", "Vendor", "WifiPassword", "ReadWrite"),
        row("Vendor/ApnPin", "Vendor", "ApnPin", "WriteOnly"),
        row(
            "SecurityCtrlr/BasicAuthPassword",
            "SecurityCtrlr",
            "BasicAuthPassword",
            "ReadWrite",
        ),
    ]
}

/// The errors `PUT` answers `settings` with (none: an empty map).
fn errors_of(settings: Value, can_seal: bool) -> BTreeMap<String, Vec<String>> {
    let model = model();
    let body = serde_json::to_vec(&json!({ "settings": settings })).unwrap();
    let mut input = Input::from_json(&body).unwrap();
    changes_of(&mut input, &model, can_seal);
    match input.finish() {
        Ok(()) => BTreeMap::new(),
        Err(ApiError::Validation(errors)) => errors,
        Err(other) => panic!("expected a 422, got {other:?}"),
    }
}

fn refused(key: &str, value: &str) -> Vec<String> {
    let mut errors = errors_of(json!({ key: value }), true);
    errors
        .remove(&format!("settings.{key}"))
        .unwrap_or_default()
}

#[test]
fn keys_outside_the_model_and_read_only_ones_are_refused() {
    assert_eq!(
        refused("OCPPCommCtrlr/NoSuchVariable", "1"),
        ["The OCPPCommCtrlr/NoSuchVariable setting is not in the station's device model."]
    );
    assert_eq!(
        refused("HeartbeatInterval", "60"),
        ["The HeartbeatInterval setting is not in the station's device model."],
        "a 1.6 key is not a 2.0.1 one"
    );
    assert_eq!(
        refused("ChargingStation/Model", "X"),
        ["The ChargingStation/Model setting is read-only."]
    );
    let errors = errors_of(
        json!({"ocppcommctrlr/heartbeatinterval": "60", "OCPPCommCtrlr/HeartbeatInterval": "61"}),
        true,
    );
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert_eq!(
        errors_of(json!({"ocppcommctrlr/heartbeatinterval": "60"}), true),
        BTreeMap::new(),
        "names are case-insensitive"
    );
    assert_eq!(
        errors_of(json!({}), true)["settings"],
        ["The settings field must have at least 1 item."]
    );
}

#[test]
fn values_are_held_to_the_variables_characteristics() {
    let integer = "OCPPCommCtrlr/HeartbeatInterval";
    assert_eq!(refused(integer, "60"), Vec::<String>::new());
    assert_eq!(
        refused(integer, "sixty"),
        [format!("The {integer} setting must be an integer.")]
    );
    assert_eq!(
        refused(integer, "0"),
        [format!("The {integer} setting must be at least 1.")]
    );
    assert_eq!(
        refused(integer, "86401"),
        [format!(
            "The {integer} setting must not be greater than 86400."
        )]
    );
    let decimal = "EVSE@1.2/Power:L1#MaxSet";
    assert_eq!(refused(decimal, "7400.5"), Vec::<String>::new());
    assert_eq!(
        refused(decimal, "22000.1"),
        [format!(
            "The {decimal} setting must not be greater than 22000."
        )]
    );
    assert_eq!(
        refused(decimal, "NaN"),
        [format!("The {decimal} setting must be a decimal number.")]
    );
    assert_eq!(refused("AuthCtrlr/Enabled", "false"), Vec::<String>::new());
    assert_eq!(
        refused("AuthCtrlr/Enabled", "yes"),
        ["The AuthCtrlr/Enabled setting must be true or false."]
    );
    assert_eq!(
        refused("TxCtrlr/TxStartPoint", "EVConnected"),
        Vec::<String>::new()
    );
    assert_eq!(
        refused("TxCtrlr/TxStartPoint", "Never"),
        [
            "The TxCtrlr/TxStartPoint setting must be one of Authorized, EVConnected, PowerPathClosed."
        ]
    );
    let members = "SampledDataCtrlr/TxUpdatedMeasurands";
    let two = "Power.Active.Import,Energy.Active.Import.Register";
    assert_eq!(refused(members, two), Vec::<String>::new());
    assert_eq!(refused(members, "Power.Active.Import,Voltage").len(), 1);
    assert_eq!(
        refused("ChargingStation/Name", "abcdef"),
        ["The ChargingStation/Name setting must not be greater than 5 characters."]
    );
    assert_eq!(
        refused("ClockCtrlr/DateTime", "2026-11-21T10:00:00Z"),
        Vec::<String>::new()
    );
    assert_eq!(refused("ClockCtrlr/DateTime", "yesterday").len(), 1);
    let long = "x".repeat(1001);
    assert_eq!(
        refused("Vendor/WifiPassword", &long),
        ["The Vendor/WifiPassword setting must not be greater than 1000 characters."]
    );
    assert_eq!(
        errors_of(json!({ integer: 60 }), true)[&format!("settings.{integer}")],
        [format!("The settings.{integer} field must be a string.")]
    );
}

#[test]
fn secrets_are_refused_as_the_mask_without_a_key_or_as_the_stations_password() {
    assert_eq!(
        refused("Vendor/WifiPassword", "n3w-s3cret"),
        Vec::<String>::new()
    );
    assert_eq!(
        refused("Vendor/ApnPin", "***"),
        ["The Vendor/ApnPin setting is write-only: *** is how cms shows it, not a value."]
    );
    let errors = errors_of(json!({"Vendor/ApnPin": "1234"}), false);
    assert_eq!(
        errors["settings.Vendor/ApnPin"],
        [
            "The Vendor/ApnPin setting is a secret, and this API has no --secrets-key to send it \
          to the station's gateway sealed."
        ]
    );
    assert_eq!(
        refused("SecurityCtrlr/BasicAuthPassword", "n3w-s3cret").len(),
        1
    );
}

#[test]
fn one_set_variables_names_each_attribute_as_the_station_did_and_masks_secrets() {
    let model = model();
    let body = json!({"settings": {
        "EVSE@1.2/Power:L1#MaxSet": "11000",
        "OCPPCommCtrlr/HeartbeatInterval": "60",
        "Vendor/ApnPin": "1234",
    }});
    let mut input = Input::from_json(&serde_json::to_vec(&body).unwrap()).unwrap();
    let changes = changes_of(&mut input, &model, true);
    assert!(input.finish().is_ok());
    let (request, masked) = set_variables(&changes);
    let entries = |apn: &str| {
        json!({"setVariableData": [
            {"attributeType": "MaxSet", "attributeValue": "11000",
             "component": {"name": "EVSE", "evse": {"id": 1, "connectorId": 2}},
             "variable": {"name": "Power", "instance": "L1"}},
            {"attributeValue": "60", "component": {"name": "OCPPCommCtrlr"},
             "variable": {"name": "HeartbeatInterval"}},
            {"attributeValue": apn, "component": {"name": "Vendor"},
             "variable": {"name": "ApnPin"}},
        ]})
    };
    assert_eq!(request, entries("1234"));
    assert_eq!(masked, Some(entries("***")));
}
