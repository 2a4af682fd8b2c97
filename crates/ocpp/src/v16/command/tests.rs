use serde_json::{Value, json};

use super::*;
use crate::error::ErrorCode;
use crate::v16::SchemaViolation;
use crate::v16::test_support::{with, without};

/// A charging profile as a load balancer sends it: a transaction's schedule of two periods.
fn tx_profile() -> Value {
    json!({
        "chargingProfileId": 12,
        "transactionId": 18342,
        "stackLevel": 1,
        "chargingProfilePurpose": "TxProfile",
        "chargingProfileKind": "Absolute",
        "validFrom": "2026-11-21T10:00:00Z",
        "validTo": "2026-11-21T18:00:00Z",
        "chargingSchedule": {
            "duration": 7200,
            "startSchedule": "2026-11-21T10:00:00Z",
            "chargingRateUnit": "A",
            "chargingSchedulePeriod": [
                {"startPeriod": 0, "limit": 16.0, "numberPhases": 3},
                {"startPeriod": 3600, "limit": 10.5}
            ],
            "minChargingRate": 6.0
        }
    })
}

/// A certificate's hash data, as the security extension names one.
fn hash_data() -> Value {
    json!({
        "hashAlgorithm": "SHA256",
        "issuerNameHash": "a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90",
        "issuerKeyHash": "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0",
        "serialNumber": "4c1f3a"
    })
}

/// A request and an answer as they pass in a real exchange, for every command.
fn realistic(command: Command) -> (Value, Value) {
    let status = |s: &str| json!({ "status": s });
    match command {
        Command::CancelReservation => (json!({"reservationId": 42}), status("Accepted")),
        Command::CertificateSigned => (
            json!({"certificateChain": "-----BEGIN CERTIFICATE-----\nMIIB...\n-----END CERTIFICATE-----\n"}),
            status("Accepted"),
        ),
        Command::DeleteCertificate => (
            json!({"certificateHashData": hash_data()}),
            status("NotFound"),
        ),
        Command::ExtendedTriggerMessage => (
            json!({"requestedMessage": "SignChargePointCertificate"}),
            status("Accepted"),
        ),
        Command::GetInstalledCertificateIds => (
            json!({"certificateType": "CentralSystemRootCertificate"}),
            json!({"status": "Accepted", "certificateHashData": [hash_data()]}),
        ),
        Command::GetLog => (
            json!({
                "logType": "SecurityLog",
                "requestId": 7,
                "log": {
                    "remoteLocation": "https://logs.example.com/upload",
                    "oldestTimestamp": "2026-11-20T00:00:00Z"
                },
                "retries": 1
            }),
            json!({"status": "Accepted", "filename": "security-7.log"}),
        ),
        Command::InstallCertificate => (
            json!({
                "certificateType": "ManufacturerRootCertificate",
                "certificate": "-----BEGIN CERTIFICATE-----\nMIIB...\n-----END CERTIFICATE-----\n"
            }),
            status("Accepted"),
        ),
        Command::SignedUpdateFirmware => (
            json!({
                "requestId": 3,
                "retries": 2,
                "firmware": {
                    "location": "https://fw.example.com/wallbox/1.6.0.bin",
                    "retrieveDateTime": "2026-11-22T02:00:00Z",
                    "signingCertificate": "-----BEGIN CERTIFICATE-----\nMIIB...",
                    "signature": "MEUCIQDx..."
                }
            }),
            status("InvalidCertificate"),
        ),
        Command::ChangeAvailability => (
            json!({"connectorId": 1, "type": "Inoperative"}),
            status("Scheduled"),
        ),
        Command::ChangeConfiguration => (
            json!({"key": "HeartbeatInterval", "value": "300"}),
            status("RebootRequired"),
        ),
        Command::ClearCache => (json!({}), status("Accepted")),
        Command::ClearChargingProfile => (
            json!({"connectorId": 1, "chargingProfilePurpose": "TxDefaultProfile", "stackLevel": 0}),
            status("Unknown"),
        ),
        Command::DataTransfer => (
            json!({"vendorId": "com.example", "messageId": "SetPrice", "data": "{\"kWh\":0.35}"}),
            json!({"status": "Accepted", "data": "ok"}),
        ),
        Command::GetCompositeSchedule => (
            json!({"connectorId": 1, "duration": 3600, "chargingRateUnit": "W"}),
            json!({
                "status": "Accepted",
                "connectorId": 1,
                "scheduleStart": "2026-11-21T10:00:00Z",
                "chargingSchedule": {
                    "duration": 3600,
                    "chargingRateUnit": "W",
                    "chargingSchedulePeriod": [{"startPeriod": 0, "limit": 11040.0}]
                }
            }),
        ),
        Command::GetConfiguration => (
            json!({"key": ["HeartbeatInterval", "MeterValueSampleInterval", "Vendor.Secret"]}),
            json!({
                "configurationKey": [
                    {"key": "HeartbeatInterval", "readonly": false, "value": "300"},
                    {"key": "MeterValueSampleInterval", "readonly": false, "value": "60"},
                    {"key": "NumberOfConnectors", "readonly": true}
                ],
                "unknownKey": ["Vendor.Secret"]
            }),
        ),
        Command::GetDiagnostics => (
            json!({
                "location": "ftp://diag:secret@diag.example.com/uploads/",
                "retries": 3,
                "retryInterval": 60,
                "startTime": "2026-11-20T00:00:00Z",
                "stopTime": "2026-11-21T00:00:00Z"
            }),
            json!({"fileName": "CP-0001-2026-11-21.tar.gz"}),
        ),
        Command::GetLocalListVersion => (json!({}), json!({"listVersion": 7})),
        Command::RemoteStartTransaction => (
            json!({"connectorId": 2, "idTag": "04A2B3C4D5E6F7", "chargingProfile": tx_profile()}),
            status("Accepted"),
        ),
        Command::RemoteStopTransaction => (json!({"transactionId": 18342}), status("Rejected")),
        Command::ReserveNow => (
            json!({
                "connectorId": 1,
                "expiryDate": "2026-11-21T11:00:00Z",
                "idTag": "04A2B3C4D5E6F7",
                "parentIdTag": "FLEET-7",
                "reservationId": 42
            }),
            status("Occupied"),
        ),
        Command::Reset => (json!({"type": "Soft"}), status("Accepted")),
        Command::SendLocalList => (
            json!({
                "listVersion": 8,
                "updateType": "Full",
                "localAuthorizationList": [
                    {"idTag": "04A2B3C4D5E6F7", "idTagInfo": {"status": "Accepted", "expiryDate": "2027-01-01T00:00:00Z", "parentIdTag": "FLEET-7"}},
                    {"idTag": "DEADBEEF", "idTagInfo": {"status": "Blocked"}}
                ]
            }),
            status("VersionMismatch"),
        ),
        Command::SetChargingProfile => (
            json!({"connectorId": 1, "csChargingProfiles": tx_profile()}),
            status("Accepted"),
        ),
        Command::TriggerMessage => (
            json!({"requestedMessage": "StatusNotification", "connectorId": 1}),
            status("Accepted"),
        ),
        Command::UnlockConnector => (json!({"connectorId": 1}), status("Unlocked")),
        Command::UpdateFirmware => (
            json!({
                "location": "https://fw.example.com/wallbox/1.5.0.bin?token=a1b2",
                "retrieveDate": "2026-11-22T02:00:00Z",
                "retries": 2,
                "retryInterval": 300
            }),
            json!({}),
        ),
    }
}

/// The first violation of a refused request, checked for its code and field.
fn refused(command: Command, payload: &Value, code: ErrorCode, field: &str) -> SchemaViolation {
    let found = match command.validate_request(payload) {
        Ok(()) => panic!("{command} accepted {payload}"),
        Err(found) => found,
    };
    let first = found.first().clone();
    assert_eq!(first.violation.code, code, "{command} {payload}: {first}");
    assert_eq!(first.field, field, "{command} {payload}: {first}");
    first
}

#[test]
fn names_and_path_segments_round_trip() {
    for command in Command::ALL {
        assert_eq!(Command::from_name(command.as_str()), Some(command));
        assert_eq!(
            Command::from_path_segment(command.path_segment()),
            Some(command)
        );
        assert_eq!(command.to_string(), command.as_str());
    }
    assert_eq!(Command::Reset.as_str(), "Reset");
    assert_eq!(
        Command::RemoteStartTransaction.path_segment(),
        "remote-start-transaction"
    );
}

#[test]
fn the_path_segment_is_the_ocpp_name_in_kebab_case() {
    for command in Command::ALL {
        let mut kebab = String::new();
        for c in command.as_str().chars() {
            if c.is_ascii_uppercase() && !kebab.is_empty() {
                kebab.push('-');
            }
            kebab.push(c.to_ascii_lowercase());
        }
        assert_eq!(command.path_segment(), kebab);
    }
}

#[test]
fn names_are_matched_exactly() {
    assert_eq!(Command::from_name("reset"), None);
    assert_eq!(Command::from_name("Heartbeat"), None);
    assert_eq!(Command::from_path_segment("Reset"), None);
    assert_eq!(Command::from_path_segment("remote_start_transaction"), None);
    assert_eq!(Command::from_path_segment(""), None);
}

#[test]
fn all_lists_the_26_commands_once_in_alphabetical_order() {
    let names: Vec<&str> = Command::ALL.iter().map(|c| c.as_str()).collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(names, sorted);
    // The 19 of OCPP 1.6 and the 7 of its security extension.
    assert_eq!(names.len(), 26);
}

#[test]
fn the_security_extensions_commands_are_checked_against_their_own_schemas() {
    assert_eq!(
        Command::from_path_segment("extended-trigger-message"),
        Some(Command::ExtendedTriggerMessage)
    );
    // Renewal is asked by the extended trigger, which the core's trigger does not know.
    let renew = json!({"requestedMessage": "SignChargePointCertificate"});
    assert!(
        Command::ExtendedTriggerMessage
            .validate_request(&renew)
            .is_ok()
    );
    refused(
        Command::TriggerMessage,
        &renew,
        ErrorCode::PropertyConstraintViolation,
        "requestedMessage",
    );
    let (request, _) = realistic(Command::GetLog);
    let v = refused(
        Command::GetLog,
        &without(&request, "/log/remoteLocation"),
        ErrorCode::OccurenceConstraintViolation,
        "log.remoteLocation",
    );
    assert_eq!(
        v.violation.description,
        "log.remoteLocation: required property is missing"
    );
    let (request, _) = realistic(Command::SignedUpdateFirmware);
    let bare = with(
        &request,
        "/firmware/retrieveDateTime",
        json!("2026-11-22T02:00:00"),
    );
    refused(
        Command::SignedUpdateFirmware,
        &bare,
        ErrorCode::PropertyConstraintViolation,
        "firmware.retrieveDateTime",
    );
    let (request, _) = realistic(Command::InstallCertificate);
    refused(
        Command::InstallCertificate,
        &with(&request, "/certificateType", json!("V2GRootCertificate")),
        ErrorCode::PropertyConstraintViolation,
        "certificateType",
    );
    let found = Command::DeleteCertificate
        .validate_response(&json!({"status": "Rejected"}))
        .unwrap_err();
    assert_eq!(found.first().field, "status");
}

#[test]
fn every_command_accepts_a_realistic_request_and_answer() {
    for command in Command::ALL {
        let (request, response) = realistic(command);
        if let Err(found) = command.validate_request(&request) {
            panic!("{command} refused {request}: {found:?}");
        }
        if let Err(found) = command.validate_response(&response) {
            panic!("{command} answer {response} refused: {found:?}");
        }
    }
}

#[test]
fn a_reset_needs_its_type_and_only_hard_or_soft() {
    let v = refused(
        Command::Reset,
        &json!({}),
        ErrorCode::OccurenceConstraintViolation,
        "type",
    );
    assert_eq!(
        v.violation.description,
        "type: required property is missing"
    );
    let v = refused(
        Command::Reset,
        &json!({"type": "Hard!"}),
        ErrorCode::PropertyConstraintViolation,
        "type",
    );
    assert_eq!(v.violation.description, "type: unknown value \"Hard!\"");
}

#[test]
fn a_property_the_schema_does_not_list_is_a_formation_violation() {
    let v = refused(
        Command::Reset,
        &json!({"type": "Soft", "delay": 5}),
        ErrorCode::FormationViolation,
        "delay",
    );
    assert_eq!(v.violation.description, "unknown property \"delay\"");
    let (request, _) = realistic(Command::SetChargingProfile);
    let nested = with(
        &request,
        "/csChargingProfiles/chargingSchedule/priority",
        json!(1),
    );
    let v = refused(
        Command::SetChargingProfile,
        &nested,
        ErrorCode::FormationViolation,
        "csChargingProfiles.chargingSchedule.priority",
    );
    assert_eq!(
        v.violation.description,
        "csChargingProfiles.chargingSchedule: unknown property \"priority\""
    );
}

#[test]
fn a_fractional_connector_id_is_a_type_violation() {
    let v = refused(
        Command::UnlockConnector,
        &json!({"connectorId": 1.5}),
        ErrorCode::TypeConstraintViolation,
        "connectorId",
    );
    assert_eq!(
        v.violation.description,
        "connectorId: expected integer, got number"
    );
}

#[test]
fn an_integer_beyond_32_bits_is_a_property_violation() {
    refused(
        Command::RemoteStopTransaction,
        &json!({"transactionId": 2_147_483_648_u64}),
        ErrorCode::PropertyConstraintViolation,
        "transactionId",
    );
    assert!(
        Command::RemoteStopTransaction
            .validate_request(&json!({"transactionId": i32::MAX}))
            .is_ok()
    );
}

#[test]
fn an_id_tag_holds_at_most_20_characters() {
    let (request, _) = realistic(Command::RemoteStartTransaction);
    let long = with(&request, "/idTag", json!("A".repeat(21)));
    let v = refused(
        Command::RemoteStartTransaction,
        &long,
        ErrorCode::PropertyConstraintViolation,
        "idTag",
    );
    assert_eq!(
        v.violation.description,
        "idTag: longer than 20 characters (21)"
    );
}

#[test]
fn a_limit_is_a_multiple_of_a_tenth() {
    let (request, _) = realistic(Command::SetChargingProfile);
    let pointer = "/csChargingProfiles/chargingSchedule/chargingSchedulePeriod/0/limit";
    let v = refused(
        Command::SetChargingProfile,
        &with(&request, pointer, json!(16.05)),
        ErrorCode::PropertyConstraintViolation,
        "csChargingProfiles.chargingSchedule.chargingSchedulePeriod.0.limit",
    );
    assert_eq!(
        v.violation.description,
        "csChargingProfiles.chargingSchedule.chargingSchedulePeriod[0].limit: \
         16.05 is not a multiple of 0.1"
    );
    let fine = with(&request, pointer, json!(16.1));
    assert!(Command::SetChargingProfile.validate_request(&fine).is_ok());
}

#[test]
fn a_valid_from_must_be_a_date_time() {
    let (request, _) = realistic(Command::SetChargingProfile);
    let bad = with(
        &request,
        "/csChargingProfiles/validFrom",
        json!("tomorrow 8am"),
    );
    let v = refused(
        Command::SetChargingProfile,
        &bad,
        ErrorCode::PropertyConstraintViolation,
        "csChargingProfiles.validFrom",
    );
    assert!(v.violation.description.contains("RFC 3339"), "{v}");
}

#[test]
fn a_date_time_cms_sends_carries_its_offset_while_a_chargers_may_omit_it() {
    let (request, _) = realistic(Command::ReserveNow);
    let bare = with(&request, "/expiryDate", json!("2026-11-21T10:00:00"));
    let v = refused(
        Command::ReserveNow,
        &bare,
        ErrorCode::PropertyConstraintViolation,
        "expiryDate",
    );
    assert_eq!(
        v.violation.description,
        "expiryDate: a date-time without its offset (add Z for UTC, or ±hh:mm): \
         \"2026-11-21T10:00:00\""
    );
    for fine in ["2026-11-21T10:00:00Z", "2026-11-21T11:00:00.250+01:00"] {
        let fine = with(&request, "/expiryDate", json!(fine));
        assert!(
            Command::ReserveNow.validate_request(&fine).is_ok(),
            "{fine}"
        );
    }
    // A charger's answer is read as it is sent: a time without offset is UTC.
    let answer = json!({
        "status": "Accepted",
        "connectorId": 1,
        "scheduleStart": "2026-11-21T10:00:00",
    });
    assert!(
        Command::GetCompositeSchedule
            .validate_response(&answer)
            .is_ok()
    );
}

#[test]
fn a_local_list_entry_needs_its_id_tag() {
    let (request, _) = realistic(Command::SendLocalList);
    let bad = with(&request, "/localAuthorizationList/1", json!({}));
    let v = refused(
        Command::SendLocalList,
        &bad,
        ErrorCode::OccurenceConstraintViolation,
        "localAuthorizationList.1.idTag",
    );
    assert_eq!(
        v.violation.description,
        "localAuthorizationList[1].idTag: required property is missing"
    );
}

#[test]
fn a_nul_in_any_string_is_refused() {
    let v = refused(
        Command::ChangeConfiguration,
        &json!({"key": "HeartbeatInterval", "value": "3\u{0}00"}),
        ErrorCode::PropertyConstraintViolation,
        "value",
    );
    assert!(v.violation.description.contains("NUL"), "{v}");
    refused(
        Command::DataTransfer,
        &json!({"vendorId": "com.example", "data": "\u{0}"}),
        ErrorCode::PropertyConstraintViolation,
        "data",
    );
}

#[test]
fn a_payload_that_is_not_an_object_is_a_formation_violation() {
    for command in Command::ALL {
        refused(command, &json!([]), ErrorCode::FormationViolation, "");
    }
}

#[test]
fn a_required_field_missing_anywhere_is_named_by_its_path() {
    let (request, _) = realistic(Command::SetChargingProfile);
    let cases = [
        ("/connectorId", "connectorId"),
        (
            "/csChargingProfiles/stackLevel",
            "csChargingProfiles.stackLevel",
        ),
        (
            "/csChargingProfiles/chargingSchedule/chargingRateUnit",
            "csChargingProfiles.chargingSchedule.chargingRateUnit",
        ),
        (
            "/csChargingProfiles/chargingSchedule/chargingSchedulePeriod/1/startPeriod",
            "csChargingProfiles.chargingSchedule.chargingSchedulePeriod.1.startPeriod",
        ),
    ];
    for (pointer, field) in cases {
        refused(
            Command::SetChargingProfile,
            &without(&request, pointer),
            ErrorCode::OccurenceConstraintViolation,
            field,
        );
    }
}

#[test]
fn every_broken_field_of_a_request_is_reported() {
    let payload = json!({"connectorId": "1", "type": "Sometimes", "when": "now"});
    let found = Command::ChangeAvailability
        .validate_request(&payload)
        .unwrap_err();
    let fields: Vec<&str> = found.iter().map(|v| v.field.as_str()).collect();
    assert_eq!(fields, ["when", "connectorId", "type"]);
}

#[test]
fn an_answer_that_breaks_its_schema_is_refused_with_the_field_named() {
    let cases = [
        (Command::Reset, json!({"status": "OK"}), "status"),
        (Command::Reset, json!({}), "status"),
        (
            Command::GetConfiguration,
            json!({"configurationKey": [{"key": "HeartbeatInterval", "value": "300"}]}),
            "configurationKey.0.readonly",
        ),
        (
            Command::GetConfiguration,
            json!({"configurationKey": [{"key": "K", "readonly": "no"}]}),
            "configurationKey.0.readonly",
        ),
        (
            Command::GetLocalListVersion,
            json!({"listVersion": "7"}),
            "listVersion",
        ),
        (
            Command::UpdateFirmware,
            json!({"status": "Accepted"}),
            "status",
        ),
    ];
    for (command, answer, field) in cases {
        let found = match command.validate_response(&answer) {
            Ok(()) => panic!("{command} answer {answer} accepted"),
            Err(found) => found,
        };
        assert_eq!(
            found.first().field,
            field,
            "{command} {answer}: {}",
            found.first()
        );
    }
}

#[test]
fn a_value_the_charger_reports_is_checked_against_the_500_character_bound() {
    let key = json!({"key": "Long", "readonly": true, "value": "v".repeat(501)});
    let found = Command::GetConfiguration
        .validate_response(&json!({"configurationKey": [key]}))
        .unwrap_err();
    assert_eq!(
        found.first().violation.code,
        ErrorCode::PropertyConstraintViolation
    );
    assert_eq!(found.first().field, "configurationKey.0.value");
}
