//! Records of the command topics: an action for a charger (API → gateways) and each change of
//! its state (gateway → API). Both are keyed by charger identity, so one charger's actions and
//! results keep their order; both carry the whole action, so a consumer needs nothing else.

use crate::contract::header;
use crate::{ActionName, Headers, Message, Record, Topics};
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;

/// Where an action stands. Only moves forward: pending → sent → a final state, or pending → a
/// final state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ActionStatus {
    /// Taken, waiting to be sent.
    Pending,
    /// Written to the charger, waiting for its answer.
    Sent,
    /// The charger answered with a CALLRESULT that fits the response schema.
    Answered,
    /// A CALLERROR, an answer that breaks the schema, or no room in the charger's queue.
    Failed,
    /// Sent, and no answer within the timeout (or the connection ended before it).
    TimedOut,
    /// Never sent: its deadline passed, or the session it was for ended first.
    Expired,
}

impl ActionStatus {
    pub const ALL: [ActionStatus; 6] = [
        ActionStatus::Pending,
        ActionStatus::Sent,
        ActionStatus::Answered,
        ActionStatus::Failed,
        ActionStatus::TimedOut,
        ActionStatus::Expired,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            ActionStatus::Pending => "pending",
            ActionStatus::Sent => "sent",
            ActionStatus::Answered => "answered",
            ActionStatus::Failed => "failed",
            ActionStatus::TimedOut => "timed_out",
            ActionStatus::Expired => "expired",
        }
    }

    pub fn from_name(name: &str) -> Option<ActionStatus> {
        ActionStatus::ALL.into_iter().find(|s| s.as_str() == name)
    }

    pub fn is_final(self) -> bool {
        !matches!(self, ActionStatus::Pending | ActionStatus::Sent)
    }
}

/// Who asked for an action.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RequestedBy {
    /// `user` (the REST API), `cli` (`cms charger action`) or `system` (cms itself).
    #[serde(rename = "type")]
    pub kind: String,
    /// The user's e-mail, for `user`.
    pub email: Option<String>,
}

impl RequestedBy {
    pub fn system() -> RequestedBy {
        RequestedBy {
            kind: "system".into(),
            email: None,
        }
    }
}

/// Why an action did not end `answered`: a CALLERROR's code and description, or cms's own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ActionError {
    pub code: String,
    pub description: String,
}

impl ActionError {
    pub fn new(code: &str, description: impl Into<String>) -> ActionError {
        ActionError {
            code: code.into(),
            description: description.into(),
        }
    }
}

/// An action for a charger, addressed to one of its sessions: only the gateway holding that
/// session sends it, so it is sent at most once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionRequest {
    pub uuid: String,
    pub identity: String,
    /// The session (as in the connection events) the action is for.
    pub session: String,
    /// The OCPP action, e.g. `Reset` (a name this version does not know is kept as written).
    pub action: ActionName,
    /// The OCPP request payload, already checked against the action's schema.
    pub request: Value,
    pub requested_by: RequestedBy,
    /// Record timestamps (`2026-11-21T10:00:00.000000Z`).
    pub created_at: String,
    /// Never sent after this.
    pub expires_at: String,
    /// How long the charger has to answer once the call is sent.
    pub timeout_ms: u64,
    /// The request as it is to be sent, sealed (crate::SecretsKey), when `request` shows a
    /// secret masked (cms_ocpp::v16::secrets); absent otherwise, and from every report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sealed_request: Option<String>,
}

/// A change of an action's state, as a gateway reports it: the action, and where it stands.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ActionReport {
    #[serde(flatten)]
    pub command: ActionRequest,
    pub status: ActionStatus,
    /// The node id of the reporting gateway.
    pub gateway: String,
    /// The charger's CALLRESULT payload, when answered.
    pub response: Option<Value>,
    pub error: Option<ActionError>,
    pub sent_at: Option<String>,
    pub finished_at: Option<String>,
}

/// The record of a command on `<prefix>.ocpp.commands`.
pub fn command_record(topics: &Topics, command: &ActionRequest) -> Record {
    json_record(
        topics.commands,
        &command.identity,
        command.action.as_str(),
        command,
    )
}

/// The record of a report on `<prefix>.ocpp.command-results`.
pub fn report_record(topics: &Topics, report: &ActionReport) -> Record {
    let command = &report.command;
    let mut record = json_record(
        topics.command_results,
        &command.identity,
        command.action.as_str(),
        report,
    );
    record
        .headers
        .push(crate::Header::new(header::STATUS, report.status.as_str()));
    record
}

fn json_record(
    topic: &'static str,
    identity: &str,
    action: &str,
    value: &impl Serialize,
) -> Record {
    let value = serde_json::to_vec(value).expect("command records serialise");
    Record {
        topic: Cow::Borrowed(topic),
        key: Bytes::copy_from_slice(identity.as_bytes()),
        headers: Headers::from_iter([crate::Header::new(
            header::ACTION,
            Bytes::copy_from_slice(action.as_bytes()),
        )]),
        value: Bytes::from(value),
    }
}

/// The command a record carries; `None` for a record that is not one (logged by the caller).
pub fn command_of(message: &Message) -> Option<ActionRequest> {
    serde_json::from_slice(&message.record.value).ok()
}

/// The report a record carries; `None` for a record that is not one.
pub fn report_of(message: &Message) -> Option<ActionReport> {
    serde_json::from_slice(&message.record.value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn command() -> ActionRequest {
        ActionRequest {
            uuid: "0b6f8f1e-5a3e-4a43-9d2f-1c1e8f0c2a11".into(),
            identity: "CP-1".into(),
            session: "s-1".into(),
            action: "Reset".into(),
            request: serde_json::json!({"type": "Soft"}),
            requested_by: RequestedBy {
                kind: "user".into(),
                email: Some("op@example.com".into()),
            },
            created_at: "2026-11-21T10:00:00.000000Z".into(),
            expires_at: "2026-11-21T10:01:00.000000Z".into(),
            timeout_ms: 30_000,
            sealed_request: None,
        }
    }

    fn message(record: Record) -> Message {
        Message {
            record,
            partition: 0,
            offset: 0,
        }
    }

    #[test]
    fn commands_and_reports_round_trip_keyed_by_charger() {
        let topics = Topics::with_prefix("t");
        let record = command_record(&topics, &command());
        assert_eq!(record.topic, "t.ocpp.commands");
        assert_eq!(&record.key[..], b"CP-1");
        assert_eq!(record.header_str("action"), Some("Reset"));
        assert_eq!(command_of(&message(record)), Some(command()));

        let report = ActionReport {
            command: command(),
            status: ActionStatus::Answered,
            gateway: "gw-1".into(),
            response: Some(serde_json::json!({"status": "Accepted"})),
            error: None,
            sent_at: Some("2026-11-21T10:00:00.100000Z".into()),
            finished_at: Some("2026-11-21T10:00:00.200000Z".into()),
        };
        let record = report_record(&topics, &report);
        assert_eq!(record.topic, "t.ocpp.command-results");
        assert_eq!(record.header_str("status"), Some("answered"));
        let value: Value = serde_json::from_slice(&record.value).unwrap();
        assert_eq!(value["status"], "answered");
        assert_eq!(
            value["uuid"],
            command().uuid,
            "the command's fields at the top"
        );
        assert_eq!(report_of(&message(record)), Some(report));
    }

    #[test]
    fn only_pending_and_sent_are_not_final() {
        let open: Vec<&str> = ActionStatus::ALL
            .into_iter()
            .filter(|s| !s.is_final())
            .map(ActionStatus::as_str)
            .collect();
        assert_eq!(open, ["pending", "sent"]);
        for status in ActionStatus::ALL {
            assert_eq!(ActionStatus::from_name(status.as_str()), Some(status));
        }
    }
}
