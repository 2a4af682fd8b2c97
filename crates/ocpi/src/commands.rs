//! The commands module's objects (OCPI 2.2.1 "commands"): what an eMSP asks a CPO to do at one
//! of its EVSEs (start or stop a session, unlock a connector, reserve, cancel a reservation),
//! the CPO's synchronous [`CommandResponse`], and the [`CommandResult`] it posts to the
//! command's `response_url` once the charge point answered.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The commands (`CommandType`), as the path's last segment names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CommandType {
    CancelReservation,
    ReserveNow,
    StartSession,
    StopSession,
    UnlockConnector,
}

impl CommandType {
    pub const ALL: [CommandType; 5] = [
        CommandType::CancelReservation,
        CommandType::ReserveNow,
        CommandType::StartSession,
        CommandType::StopSession,
        CommandType::UnlockConnector,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            CommandType::CancelReservation => "CANCEL_RESERVATION",
            CommandType::ReserveNow => "RESERVE_NOW",
            CommandType::StartSession => "START_SESSION",
            CommandType::StopSession => "STOP_SESSION",
            CommandType::UnlockConnector => "UNLOCK_CONNECTOR",
        }
    }

    /// The command `text` names, spelt as the spec spells it (an enum value, not a CiString).
    pub fn parse(text: &str) -> Option<CommandType> {
        CommandType::ALL.into_iter().find(|c| c.as_str() == text)
    }
}

/// The token a command is for: its `uid` and `type` are what cms uses; the rest of the Token
/// object is kept as sent (the tokens module checks Tokens it stores; a command's token need
/// not be one of them, 2.2.1 "StartSession").
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CommandToken {
    pub uid: String,
    #[serde(rename = "type")]
    pub token_type: String,
    #[serde(flatten)]
    pub rest: Map<String, Value>,
}

/// `START_SESSION`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StartSession {
    pub response_url: String,
    pub token: CommandToken,
    pub location_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evse_uid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub connector_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_reference: Option<String>,
}

/// `STOP_SESSION`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StopSession {
    pub response_url: String,
    pub session_id: String,
}

/// `UNLOCK_CONNECTOR`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnlockConnector {
    pub response_url: String,
    pub location_id: String,
    pub evse_uid: String,
    pub connector_id: String,
}

/// `RESERVE_NOW`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReserveNow {
    pub response_url: String,
    pub token: CommandToken,
    /// OCPI DateTime (crate::time::parse).
    pub expiry_date: String,
    pub reservation_id: String,
    pub location_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub evse_uid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorization_reference: Option<String>,
}

/// `CANCEL_RESERVATION`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CancelReservation {
    pub response_url: String,
    pub reservation_id: String,
}

/// The longest URL OCPI carries (`URL`: string(255)).
const URL_MAX: usize = 255;
/// The longest id a command names (`CiString(36)`).
const ID_MAX: usize = 36;
/// The token types of 2.2.1 (`TokenType`).
const TOKEN_TYPES: [&str; 4] = ["AD_HOC_USER", "APP_USER", "OTHER", "RFID"];

/// What is wrong with `url` as a `response_url`, if anything.
fn url_problem(url: &str) -> Option<String> {
    let http = url.starts_with("http://") || url.starts_with("https://");
    if !http || url.len() > URL_MAX || url.chars().any(|c| c.is_whitespace()) {
        return Some(format!(
            "response_url must be an http(s) URL of at most {URL_MAX} characters"
        ));
    }
    None
}

/// What is wrong with `value` as the CiString(36) `field`, if anything.
fn id_problem(field: &str, value: &str) -> Option<String> {
    let printable = value.chars().all(|c| c.is_ascii_graphic() || c == ' ');
    if value.is_empty() || value.len() > ID_MAX || !printable {
        return Some(format!(
            "{field} must be 1 to {ID_MAX} printable ASCII characters"
        ));
    }
    None
}

fn optional_id_problem(field: &str, value: Option<&str>) -> Option<String> {
    value.and_then(|v| id_problem(field, v))
}

fn token_problem(token: &CommandToken) -> Option<String> {
    id_problem("token.uid", &token.uid).or_else(|| {
        (!TOKEN_TYPES.contains(&token.token_type.as_str()))
            .then(|| format!("token.type must be one of {}", TOKEN_TYPES.join(", ")))
    })
}

impl StartSession {
    /// What is wrong with it, as the 2001 message says it.
    pub fn problem(&self) -> Option<String> {
        url_problem(&self.response_url)
            .or_else(|| token_problem(&self.token))
            .or_else(|| id_problem("location_id", &self.location_id))
            .or_else(|| optional_id_problem("evse_uid", self.evse_uid.as_deref()))
            .or_else(|| optional_id_problem("connector_id", self.connector_id.as_deref()))
            .or_else(|| {
                optional_id_problem(
                    "authorization_reference",
                    self.authorization_reference.as_deref(),
                )
            })
            .or_else(|| {
                (self.connector_id.is_some() && self.evse_uid.is_none())
                    .then(|| "evse_uid is required when connector_id is set".to_string())
            })
    }
}

impl StopSession {
    pub fn problem(&self) -> Option<String> {
        url_problem(&self.response_url).or_else(|| id_problem("session_id", &self.session_id))
    }
}

impl UnlockConnector {
    pub fn problem(&self) -> Option<String> {
        url_problem(&self.response_url)
            .or_else(|| id_problem("location_id", &self.location_id))
            .or_else(|| id_problem("evse_uid", &self.evse_uid))
            .or_else(|| id_problem("connector_id", &self.connector_id))
    }
}

impl ReserveNow {
    pub fn problem(&self) -> Option<String> {
        url_problem(&self.response_url)
            .or_else(|| token_problem(&self.token))
            .or_else(|| {
                crate::time::parse(&self.expiry_date)
                    .is_none()
                    .then(|| "expiry_date must be an OCPI DateTime".to_string())
            })
            .or_else(|| id_problem("reservation_id", &self.reservation_id))
            .or_else(|| id_problem("location_id", &self.location_id))
            .or_else(|| optional_id_problem("evse_uid", self.evse_uid.as_deref()))
            .or_else(|| {
                optional_id_problem(
                    "authorization_reference",
                    self.authorization_reference.as_deref(),
                )
            })
    }
}

impl CancelReservation {
    pub fn problem(&self) -> Option<String> {
        url_problem(&self.response_url)
            .or_else(|| id_problem("reservation_id", &self.reservation_id))
    }
}

/// A human-readable text in one language (`DisplayText`); cms writes English.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DisplayText {
    pub language: String,
    pub text: String,
}

impl DisplayText {
    pub fn english(text: impl Into<String>) -> Vec<DisplayText> {
        vec![DisplayText {
            language: "en".into(),
            text: text.into(),
        }]
    }
}

/// The CPO's answer to a command request (`CommandResponseType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CommandResponseType {
    NotSupported,
    Rejected,
    Accepted,
    UnknownSession,
}

impl CommandResponseType {
    pub fn as_str(self) -> &'static str {
        match self {
            CommandResponseType::NotSupported => "NOT_SUPPORTED",
            CommandResponseType::Rejected => "REJECTED",
            CommandResponseType::Accepted => "ACCEPTED",
            CommandResponseType::UnknownSession => "UNKNOWN_SESSION",
        }
    }
}

/// The synchronous answer: whether cms sent the command on, and how long the eMSP may wait
/// for its [`CommandResult`] (seconds).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandResponse {
    pub result: CommandResponseType,
    pub timeout: u64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub message: Vec<DisplayText>,
}

impl CommandResponse {
    /// `result` with `timeout` seconds and an English `message`.
    pub fn new(result: CommandResponseType, timeout: u64, message: impl Into<String>) -> Self {
        CommandResponse {
            result,
            timeout,
            message: DisplayText::english(message),
        }
    }
}

/// What the charge point made of a command (`CommandResultType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum CommandResultType {
    Accepted,
    CanceledReservation,
    EvseOccupied,
    EvseInoperative,
    Failed,
    NotSupported,
    Rejected,
    Timeout,
    UnknownReservation,
}

impl CommandResultType {
    pub fn as_str(self) -> &'static str {
        match self {
            CommandResultType::Accepted => "ACCEPTED",
            CommandResultType::CanceledReservation => "CANCELED_RESERVATION",
            CommandResultType::EvseOccupied => "EVSE_OCCUPIED",
            CommandResultType::EvseInoperative => "EVSE_INOPERATIVE",
            CommandResultType::Failed => "FAILED",
            CommandResultType::NotSupported => "NOT_SUPPORTED",
            CommandResultType::Rejected => "REJECTED",
            CommandResultType::Timeout => "TIMEOUT",
            CommandResultType::UnknownReservation => "UNKNOWN_RESERVATION",
        }
    }
}

/// The result posted to the command's `response_url`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommandResult {
    pub result: CommandResultType,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub message: Vec<DisplayText>,
}

#[cfg(test)]
mod tests;
