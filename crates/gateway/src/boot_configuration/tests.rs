//! The configuration read after a boot, told from an operator's, and when it is skipped.

use super::*;

#[test]
fn the_configuration_read_after_boot_is_told_from_an_operators_get_configuration() {
    let config = GatewayConfig::new(None, "gw-1".into(), cms_bus::Topics::with_prefix("t"));
    let read = read_configuration(&config, "CP-1", b"s-1", OcppVersion::V16);
    assert!(is_configuration_read(&read));
    let operator = ActionRequest {
        requested_by: RequestedBy {
            kind: "user".into(),
            email: Some("operator@example.com".into()),
        },
        ..read.clone()
    };
    assert!(!is_configuration_read(&operator), "an operator's read");
    let some_keys = ActionRequest {
        request: serde_json::json!({"key": ["HeartbeatInterval"]}),
        ..read.clone()
    };
    assert!(!is_configuration_read(&some_keys), "a read of some keys");
    let reset = ActionRequest {
        action: "Reset".into(),
        request: serde_json::json!({"type": "Soft"}),
        ..read.clone()
    };
    assert!(!is_configuration_read(&reset), "another action");
}

#[test]
fn a_201_station_is_asked_for_its_full_base_report_each_time_with_a_fresh_request_id() {
    let config = GatewayConfig::new(None, "gw-1".into(), cms_bus::Topics::with_prefix("t"));
    let read = |_| read_configuration(&config, "CS-1", b"s-1", OcppVersion::V201);
    let (first, second) = (read(1), read(2));
    assert_eq!(first.action, ActionName::V201(v201::Command::GetBaseReport));
    assert_eq!(first.ocpp_version, OcppVersion::V201);
    assert_eq!(first.request["reportBase"], "FullInventory");
    assert!(
        v201::Command::GetBaseReport
            .validate_request(&first.request)
            .is_ok()
    );
    assert_ne!(first.request["requestId"], second.request["requestId"]);
    assert!(
        !is_configuration_read(&first),
        "its answer is no configuration"
    );
}
