//! Records of the command topics: an action for a charger (API → gateways) and each change of
//! its state (gateway → API). Both are keyed by charger identity, so one charger's actions and
//! results keep their order; both carry the whole action, so a consumer needs nothing else.

use crate::contract::header;
use crate::{ActionName, Headers, Message, Record, Topics};
use bytes::Bytes;
use cms_ocpp::OcppVersion;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
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
#[serde(from = "ActionRequestText")]
pub struct ActionRequest {
    pub uuid: String,
    pub identity: String,
    /// The session (as in the connection events) the action is for.
    pub session: String,
    /// The OCPP action, e.g. `Reset`, a call of `ocpp_version` (a name that version does not
    /// know is kept as written).
    pub action: ActionName,
    /// The OCPP version the action was taken for (`ocpp1.6` / `ocpp2.0.1`, as the subprotocol
    /// names it): a session of another version does not send it. Absent: 1.6 (records of an
    /// API that knew no other).
    #[serde(serialize_with = "version_text")]
    pub ocpp_version: OcppVersion,
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

/// The version as the store and the REST API name it (`1.6`, `2.0.1`, as `chargers.ocpp_version`
/// does): the subprotocol's name without its `ocpp`.
pub fn version_number(version: OcppVersion) -> &'static str {
    match version {
        OcppVersion::V16 => "1.6",
        OcppVersion::V201 => "2.0.1",
    }
}

/// The version [`version_number`] names; `None` for another text.
pub fn version_of_number(number: &str) -> Option<OcppVersion> {
    OcppVersion::ALL
        .into_iter()
        .find(|v| version_number(*v) == number)
}

fn version_text<S: Serializer>(version: &OcppVersion, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(version.subprotocol())
}

/// An `ActionRequest` as written: the action's name is read with the version beside it.
#[derive(Deserialize)]
struct ActionRequestText {
    uuid: String,
    identity: String,
    session: String,
    action: String,
    #[serde(default, deserialize_with = "version_of_text")]
    ocpp_version: Option<OcppVersion>,
    request: Value,
    requested_by: RequestedBy,
    created_at: String,
    expires_at: String,
    timeout_ms: u64,
    #[serde(default)]
    sealed_request: Option<String>,
}

/// A version named as the subprotocol names it; another text is no action this API or gateway
/// can send (the record is skipped, and the API's sweep ends the action).
fn version_of_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<OcppVersion>, D::Error> {
    let text = String::deserialize(d)?;
    OcppVersion::from_subprotocol(&text)
        .map(Some)
        .ok_or_else(|| serde::de::Error::custom(format!("unknown OCPP version {text:?}")))
}

impl From<ActionRequestText> for ActionRequest {
    fn from(text: ActionRequestText) -> Self {
        let version = text.ocpp_version.unwrap_or(OcppVersion::V16);
        ActionRequest {
            uuid: text.uuid,
            identity: text.identity,
            session: text.session,
            action: ActionName::new(&text.action, version),
            ocpp_version: version,
            request: text.request,
            requested_by: text.requested_by,
            created_at: text.created_at,
            expires_at: text.expires_at,
            timeout_ms: text.timeout_ms,
            sealed_request: text.sealed_request,
        }
    }
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
            ocpp_version: OcppVersion::V16,
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
    fn an_action_reads_as_the_call_of_the_version_it_was_taken_for() {
        let topics = Topics::with_prefix("t");
        let reset = ActionRequest {
            action: ActionName::new("Reset", OcppVersion::V201),
            ocpp_version: OcppVersion::V201,
            request: serde_json::json!({"type": "Immediate"}),
            ..command()
        };
        let record = command_record(&topics, &reset);
        let value: Value = serde_json::from_slice(&record.value).unwrap();
        assert_eq!(value["ocpp_version"], "ocpp2.0.1");
        assert_eq!(value["action"], "Reset");
        let read = command_of(&message(record)).unwrap();
        assert_eq!(
            read.action.command_v201(),
            Some(cms_ocpp::v201::Command::Reset)
        );
        assert_eq!(read, reset);

        // A report carries the command's version too.
        let report = ActionReport {
            command: reset.clone(),
            status: ActionStatus::Sent,
            gateway: "gw-1".into(),
            response: None,
            error: None,
            sent_at: None,
            finished_at: None,
        };
        let read = report_of(&message(report_record(&topics, &report))).unwrap();
        assert_eq!(
            read.command.action,
            ActionName::new("Reset", OcppVersion::V201)
        );
        assert_eq!(read, report);

        // A record of an API that knew only 1.6 has no version: 1.6.
        let mut older = serde_json::to_value(command()).unwrap();
        older.as_object_mut().unwrap().remove("ocpp_version");
        let read: ActionRequest = serde_json::from_value(older).unwrap();
        assert_eq!(read.ocpp_version, OcppVersion::V16);
        assert_eq!(read.action.command(), Some(cms_ocpp::v16::Command::Reset));

        // A version this code does not speak is no action it can read.
        let mut newer = serde_json::to_value(command()).unwrap();
        newer["ocpp_version"] = "ocpp2.1".into();
        assert!(serde_json::from_value::<ActionRequest>(newer).is_err());
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
