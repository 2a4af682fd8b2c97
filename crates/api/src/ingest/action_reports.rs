//! A gateway's report as a change of the store: the action's new state, and what an answered
//! configuration call says of the charger's settings; and the stored form of a command. Shared
//! by the materialiser (which translates reports) and the actions (which take commands and
//! hand out their ends), so that neither reaches into the other.

use crate::ingest::device_model;
use cms_bus::{ActionName, ActionReport, ActionRequest, ActionStatus};
use cms_ocpp::v16::Command;
use cms_ocpp::v16::secrets::AUTHORIZATION_KEY;
use cms_ocpp::v201;
use cms_store::StateChange;
use cms_store::actions::{ActionReported, NewAction, Setting, SettingsUpdate};
use serde_json::Value;

/// The state change a report makes; `at` is when it is applied (a record timestamp).
pub fn report_change(report: &ActionReport, at: String) -> StateChange {
    let command = &report.command;
    StateChange::ActionReported(Box::new(ActionReported {
        identity: command.identity.clone(),
        // The charger id is the store's to find (by identity).
        action: new_action(0, command, true),
        status: report.status.as_str().to_string(),
        response: report.response.as_ref().map(Value::to_string),
        error_code: report.error.as_ref().map(|e| e.code.clone()),
        error_description: report.error.as_ref().map(|e| e.description.clone()),
        sent_at: report.sent_at.clone(),
        finished_at: report.finished_at.clone(),
        settings: settings_update(report),
        credential: credential_taken(report),
        at,
    }))
}

/// The stored form of a command about to be published (or left to the outbox).
pub fn new_action(charger_id: i64, command: &ActionRequest, published: bool) -> NewAction {
    NewAction {
        uuid: command.uuid.clone(),
        charger_id,
        session: command.session.clone(),
        action: command.action.to_string(),
        request: command.request.to_string(),
        requested_by_type: command.requested_by.kind.clone(),
        requested_by_email: command.requested_by.email.clone(),
        timeout_ms: command.timeout_ms as i64,
        created_at: command.created_at.clone(),
        expires_at: command.expires_at.clone(),
        ocpp_version: cms_bus::version_number(command.ocpp_version).to_string(),
        published,
    }
}

/// What an answered GetConfiguration or accepted ChangeConfiguration says of the settings,
/// and an answered SetVariables of a 2.0.1 station's device model.
fn settings_update(report: &ActionReport) -> Option<SettingsUpdate> {
    let response = report.response.as_ref()?;
    let request = &report.command.request;
    match report.command.action {
        ActionName::V16(Command::GetConfiguration) => {
            let reported = response["configurationKey"]
                .as_array()
                .map(|keys| keys.iter().filter_map(setting).collect())
                .unwrap_or_default();
            let asked_some = request["key"]
                .as_array()
                .is_some_and(|keys| !keys.is_empty());
            Some(if asked_some {
                SettingsUpdate::Upsert(reported)
            } else {
                SettingsUpdate::Replace(reported)
            })
        }
        ActionName::V16(Command::ChangeConfiguration) => match response["status"].as_str() {
            Some("Accepted" | "RebootRequired") => Some(SettingsUpdate::Change {
                key: request["key"].as_str()?.to_string(),
                value: request["value"].as_str()?.to_string(),
            }),
            _ => None,
        },
        ActionName::V201(v201::Command::SetVariables) => Some(SettingsUpdate::Variables(
            device_model::accepted_sets(request, response),
        )),
        _ => None,
    }
}

/// For the end of a ChangeConfiguration of `AuthorizationKey` (a password rotation, `PUT
/// .../security`): whether the charger took the new password. RebootRequired counts: the
/// charger uses it from its reboot on, and would be locked out if cms still wanted the old.
fn credential_taken(report: &ActionReport) -> Option<bool> {
    let command = &report.command;
    let rotation = command.action == ActionName::V16(Command::ChangeConfiguration)
        && command.request["key"]
            .as_str()
            .is_some_and(|key| key.eq_ignore_ascii_case(AUTHORIZATION_KEY));
    if !rotation || !report.status.is_final() {
        return None;
    }
    let answer = report.response.as_ref().and_then(|r| r["status"].as_str());
    Some(
        report.status == ActionStatus::Answered
            && matches!(answer, Some("Accepted" | "RebootRequired")),
    )
}

fn setting(entry: &Value) -> Option<Setting> {
    Some(Setting {
        key: entry["key"].as_str()?.to_string(),
        value: entry["value"].as_str().map(str::to_string),
        readonly: entry["readonly"].as_bool().unwrap_or(false),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use cms_bus::{ActionRequest, RequestedBy};
    use serde_json::json;

    fn answered(action: &str, request: Value, response: Value) -> ActionReport {
        ActionReport {
            command: ActionRequest {
                uuid: "a-1".into(),
                identity: "CP-1".into(),
                session: "s-1".into(),
                action: action.into(),
                ocpp_version: cms_ocpp::OcppVersion::V16,
                request,
                requested_by: RequestedBy::system(),
                created_at: "2026-11-21T10:00:00.000000Z".into(),
                expires_at: "2026-11-21T10:01:00.000000Z".into(),
                timeout_ms: 30_000,
                sealed_request: None,
            },
            status: ActionStatus::Answered,
            gateway: "gw-1".into(),
            response: Some(response),
            error: None,
            sent_at: None,
            finished_at: None,
        }
    }

    #[test]
    fn a_read_of_every_key_replaces_the_configuration_and_a_read_of_some_updates_them() {
        let keys = json!({"configurationKey": [
            {"key": "HeartbeatInterval", "readonly": false, "value": "300"},
            {"key": "NumberOfConnectors", "readonly": true, "value": "2"},
            {"key": "Secret", "readonly": false}
        ], "unknownKey": ["Nope"]});
        let all = settings_update(&answered("GetConfiguration", json!({}), keys.clone()));
        let Some(SettingsUpdate::Replace(settings)) = all else {
            panic!("{all:?}");
        };
        assert_eq!(settings.len(), 3);
        assert_eq!(
            settings[1],
            Setting {
                key: "NumberOfConnectors".into(),
                value: Some("2".into()),
                readonly: true
            }
        );
        assert_eq!(settings[2].value, None, "a key reported without a value");
        let some = settings_update(&answered(
            "GetConfiguration",
            json!({"key": ["HeartbeatInterval"]}),
            keys,
        ));
        assert!(matches!(some, Some(SettingsUpdate::Upsert(_))));
    }

    #[test]
    fn only_an_accepted_change_changes_the_configuration() {
        let request = json!({"key": "HeartbeatInterval", "value": "60"});
        for (status, changes) in [
            ("Accepted", true),
            ("RebootRequired", true),
            ("Rejected", false),
            ("NotSupported", false),
        ] {
            let update = settings_update(&answered(
                "ChangeConfiguration",
                request.clone(),
                json!({"status": status}),
            ));
            assert_eq!(update.is_some(), changes, "{status}");
        }
        assert!(
            settings_update(&answered(
                "Reset",
                json!({"type": "Soft"}),
                json!({"status": "Accepted"})
            ))
            .is_none()
        );
    }

    #[test]
    fn only_a_taken_authorization_key_changes_the_credential() {
        let request = json!({"key": "AuthorizationKey", "value": "***"});
        for (status, taken) in [
            ("Accepted", Some(true)),
            ("RebootRequired", Some(true)),
            ("Rejected", Some(false)),
        ] {
            let report = answered(
                "ChangeConfiguration",
                request.clone(),
                json!({"status": status}),
            );
            assert_eq!(credential_taken(&report), taken, "{status}");
        }
        let mut sent = answered("ChangeConfiguration", request.clone(), json!({}));
        sent.status = ActionStatus::Sent;
        assert_eq!(credential_taken(&sent), None, "not ended yet");
        let mut lost = answered("ChangeConfiguration", request, json!({}));
        (lost.status, lost.response) = (ActionStatus::TimedOut, None);
        assert_eq!(credential_taken(&lost), Some(false));
        let other = answered(
            "ChangeConfiguration",
            json!({"key": "HeartbeatInterval", "value": "60"}),
            json!({"status": "Accepted"}),
        );
        assert_eq!(credential_taken(&other), None);
    }
}
