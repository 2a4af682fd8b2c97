//! The commands module's pushes (docs/ocpi.md "Commands"): when the action that carries an
//! eMSP's command ends (its `action.finished` event), the CommandResult is posted to the
//! command's `response_url`, mapped from how the station answered (or why it did not).

use cms_ocpi::commands::{CommandResult, CommandResultType, DisplayText};
use cms_store::Store;
use cms_store::ocpi::commands::FinishedCommand;
use cms_store::ocpi::parties::Party;
use cms_store::ocpi::pushes::{NewPush, OutboxEvent};
use serde_json::Value;

/// The pushes `event` makes for `party`: the CommandResult of the party's command whose action
/// it tells the end of; nothing for any other event.
pub async fn pushes(
    store: &Store,
    event: &OutboxEvent,
    party: &Party,
) -> cms_store::Result<Vec<NewPush>> {
    if event.event_type != "action.finished" {
        return Ok(Vec::new());
    }
    let Some(action_uuid) = event.data["action_uuid"].as_str() else {
        return Ok(Vec::new());
    };
    let Some(command) = store.ocpi_command_of_action(action_uuid).await? else {
        return Ok(Vec::new());
    };
    if command.provider_id != party.provider_id {
        return Ok(Vec::new());
    }
    let result = result_of(&command);
    // Kept beside the command (the first noted stays: an event read twice pushes the same).
    store
        .ocpi_command_result(command.id, result.result.as_str())
        .await?;
    let body = serde_json::to_string(&result).expect("a CommandResult serialises");
    Ok(vec![NewPush {
        provider_id: command.provider_id,
        object_key: format!("command:{}", command.id),
        module: "url".into(),
        method: "POST".into(),
        path: command.response_url,
        body: Some(body),
    }])
}

/// The CommandResult of a command whose action ended as `command` tells.
pub fn result_of(command: &FinishedCommand) -> CommandResult {
    let (result, message) = match command.status.as_str() {
        "answered" => {
            let answer: Value = (command.response.as_deref())
                .and_then(|text| serde_json::from_str(text).ok())
                .unwrap_or(Value::Null);
            let status = answer["status"].as_str().unwrap_or_default();
            let mut message = format!("The charge point answered {}: {status}.", command.action);
            // 2.0.1 says why in statusInfo.
            if let Some(reason) = answer["statusInfo"]["reasonCode"].as_str() {
                message = format!("{} ({reason}).", message.trim_end_matches('.'));
            }
            (answered(&command.action, status), message)
        }
        "failed" => {
            let code = command.error_code.as_deref().unwrap_or_default();
            let result = match code {
                "NotImplemented" | "NotSupported" => CommandResultType::NotSupported,
                _ => CommandResultType::Failed,
            };
            let description = command.error_description.as_deref().unwrap_or_default();
            let message = format!("The charge point answered with the error {code}: {description}");
            (result, message)
        }
        "timed_out" => (
            CommandResultType::Timeout,
            "The charge point did not answer in time.".to_string(),
        ),
        "expired" => (
            CommandResultType::Timeout,
            "The command could not be delivered to the charge point in time.".to_string(),
        ),
        other => (
            CommandResultType::Failed,
            format!("The command ended {other}."),
        ),
    };
    CommandResult {
        result,
        message: DisplayText::english(message),
    }
}

/// The result of the station's `status` in its answer to `action` (OCPP 1.6 and 2.0.1 name
/// their statuses alike where they mean the same).
fn answered(action: &str, status: &str) -> CommandResultType {
    match status {
        "Accepted" | "Unlocked" => CommandResultType::Accepted,
        // CancelReservation: "no reservation with this id" (1.6 and 2.0.1).
        "Rejected" if action == "CancelReservation" => CommandResultType::UnknownReservation,
        "Rejected" | "UnknownConnector" => CommandResultType::Rejected,
        "Occupied" | "OngoingAuthorizedTransaction" => CommandResultType::EvseOccupied,
        "Faulted" | "Unavailable" => CommandResultType::EvseInoperative,
        "NotSupported" => CommandResultType::NotSupported,
        // UnlockFailed, and anything a station should not have said.
        _ => CommandResultType::Failed,
    }
}

#[cfg(test)]
mod tests;
