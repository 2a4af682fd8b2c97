use std::collections::BTreeSet;
use std::path::Path;

use chrono::{TimeZone, Utc};
use serde_json::Value;

use super::*;
use crate::error::ErrorCode;
use crate::json_schema::compile_draft06;
use crate::v16::{Command, answer};

/// The keywords `json_schema` implements, and the formats it checks.
const IMPLEMENTED: [&str; 13] = [
    "$schema",
    "id",
    "title",
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "minItems",
    "enum",
    "maxLength",
    "format",
    "multipleOf",
];
const FORMATS: [&str; 2] = ["date-time", "uri"];

/// Every `(place, keyword)` of a schema the validator does not implement, walking every
/// nested schema itself (not through `compile`, which the test also runs).
fn unimplemented(schema: &Value, at: &str, out: &mut Vec<String>) {
    let Value::Object(keywords) = schema else {
        out.push(format!("{at}: not a schema object"));
        return;
    };
    for (keyword, value) in keywords {
        if !IMPLEMENTED.contains(&keyword.as_str()) {
            out.push(format!("{at}: {keyword}"));
        }
        if keyword == "format" && !value.as_str().is_some_and(|f| FORMATS.contains(&f)) {
            out.push(format!("{at}: format {value}"));
        }
        if keyword == "additionalProperties" && *value != Value::Bool(false) {
            out.push(format!("{at}: additionalProperties {value}"));
        }
    }
    if let Some(Value::Object(properties)) = keywords.get("properties") {
        for (name, property) in properties {
            unimplemented(property, &format!("{at}/properties/{name}"), out);
        }
    }
    if let Some(items) = keywords.get("items") {
        unimplemented(items, &format!("{at}/items"), out);
    }
}

fn vendored_files() -> impl Iterator<Item = (String, &'static str)> {
    VENDORED.iter().flat_map(|&(call, request, response)| {
        [
            (format!("{call}.json"), request),
            (format!("{call}Response.json"), response),
        ]
    })
}

#[test]
fn every_vendored_schema_uses_only_implemented_keywords() {
    for (file, text) in vendored_files() {
        let schema: Value = serde_json::from_str(text).unwrap_or_else(|e| panic!("{file}: {e}"));
        // The security extension's files are draft-06, read as 2.0.1's are (their test walks
        // those keywords).
        if is_draft06(&schema) {
            if let Err(e) = compile_draft06(&schema) {
                panic!("{file} does not compile: {e}");
            }
            continue;
        }
        let mut found = Vec::new();
        unimplemented(&schema, "#", &mut found);
        assert!(
            found.is_empty(),
            "{file} uses unimplemented keywords: {found:?}"
        );
        if let Err(e) = compile(&schema) {
            panic!("{file} does not compile: {e}");
        }
    }
}

#[test]
fn the_security_extensions_schemas_are_vendored_as_draft_06() {
    let extension = [
        "CertificateSigned",
        "DeleteCertificate",
        "ExtendedTriggerMessage",
        "GetInstalledCertificateIds",
        "GetLog",
        "InstallCertificate",
        "SignedUpdateFirmware",
        "LogStatusNotification",
        "SecurityEventNotification",
        "SignCertificate",
        "SignedFirmwareStatusNotification",
    ];
    for call in extension {
        let (request, response) = (schema_text(call, false), schema_text(call, true));
        for text in [request, response] {
            let schema: Value = serde_json::from_str(text.expect(call)).unwrap();
            assert!(is_draft06(&schema), "{call} is not draft-06");
        }
    }
}

#[test]
fn a_draft_06_schema_checks_what_its_definitions_say() {
    // `log` refers to `#/definitions/LogParametersType`: its required field is checked.
    let get_log = &call_schemas("GetLog").request;
    let payload = serde_json::json!({"logType": "SecurityLog", "requestId": 1, "log": {}});
    let found = get_log.validate(&payload).unwrap_err();
    assert_eq!(found.first().field, "log.remoteLocation");
    assert_eq!(
        found.first().violation.code,
        ErrorCode::OccurenceConstraintViolation
    );
    let payload = serde_json::json!({"logType": "AllLogs", "requestId": 1,
        "log": {"remoteLocation": "ftp://logs.example.com/"}});
    let found = get_log.validate(&payload).unwrap_err();
    assert_eq!(found.first().field, "logType");
    assert_eq!(
        found.first().violation.code,
        ErrorCode::PropertyConstraintViolation
    );
    let csr = &call_schemas("SignCertificate").request;
    let found = csr.validate(&serde_json::json!({})).unwrap_err();
    assert_eq!(found.first().field, "csr");
    let long = serde_json::json!({"csr": "A".repeat(5501)});
    assert_eq!(csr.validate(&long).unwrap_err().first().field, "csr");
    csr.validate(&serde_json::json!({"csr": "-----BEGIN CERTIFICATE REQUEST-----"}))
        .unwrap();
}

#[test]
fn every_file_in_the_schema_folder_is_embedded_and_nothing_else() {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/v16");
    let on_disk: BTreeSet<String> = std::fs::read_dir(&folder)
        .expect("schemas/v16 exists")
        .map(|entry| entry.expect("readable").file_name().into_string().unwrap())
        .collect();
    let embedded: BTreeSet<String> = vendored_files().map(|(file, _)| file).collect();
    assert_eq!(on_disk, embedded);
    // 19 calls of the central system and 10 of the charger (DataTransfer is both), and the
    // security extension's 7 and 4.
    assert_eq!(VENDORED.len(), 39);
}

#[test]
fn every_command_and_every_charger_action_has_its_schemas() {
    let names = Command::ALL
        .iter()
        .map(|c| c.as_str())
        .chain(Action::ALL.iter().map(|a| a.as_str()));
    for name in names {
        assert!(COMPILED.contains_key(name), "{name} has no vendored schema");
    }
}

#[test]
fn every_answer_cms_sends_a_charger_fits_the_official_schema() {
    let now = Utc.with_ymd_and_hms(2026, 11, 21, 10, 0, 0).unwrap();
    let answers = [
        (Action::Authorize, answer::id_tag_accepted().to_owned()),
        (
            Action::BootNotification,
            answer::ClockAnswer::BootAccepted(now, 300).to_string(),
        ),
        (
            Action::DataTransfer,
            answer::data_transfer_unknown_vendor().to_owned(),
        ),
        (Action::DiagnosticsStatusNotification, answer::EMPTY.into()),
        (Action::FirmwareStatusNotification, answer::EMPTY.into()),
        (
            Action::Heartbeat,
            answer::ClockAnswer::Heartbeat(now).to_string(),
        ),
        (Action::MeterValues, answer::EMPTY.into()),
        (
            Action::StartTransaction,
            answer::start_transaction_accepted(i32::MAX),
        ),
        (Action::StatusNotification, answer::EMPTY.into()),
        (Action::LogStatusNotification, answer::EMPTY.into()),
        (Action::SecurityEventNotification, answer::EMPTY.into()),
        (
            Action::SignCertificate,
            answer::SIGN_CERTIFICATE_ACCEPTED.into(),
        ),
        (
            Action::SignedFirmwareStatusNotification,
            answer::EMPTY.into(),
        ),
        (Action::StopTransaction, answer::EMPTY.into()),
        (
            Action::StopTransaction,
            answer::id_tag_accepted().to_owned(),
        ),
    ];
    for (action, text) in answers {
        let payload: Value = serde_json::from_str(&text).unwrap();
        if let Err(found) = action.validate_response(&payload) {
            panic!("{action} answer {text} breaks its schema: {found:?}");
        }
    }
}

#[test]
fn a_boot_notification_answer_without_interval_breaks_the_schema() {
    let payload = serde_json::json!({"status": "Accepted", "currentTime": "2026-11-21T10:00:00Z"});
    let found = Action::BootNotification
        .validate_response(&payload)
        .unwrap_err();
    assert_eq!(found.first().field, "interval");
    assert_eq!(
        found.first().violation.code,
        ErrorCode::OccurenceConstraintViolation
    );
}
