//! OCPP 1.6: the charger's calls (actions, typed borrowed views, validation) and the central
//! system's (commands, validated against the official JSON schemas).

pub mod answer;
mod charge_point;
mod codes;
mod command;
mod extract;
mod measurement;
mod meter;
mod schemas;
pub mod secrets;
mod security_ext;
pub(crate) mod spec_enum;
mod status;
pub(crate) mod timestamp;
mod transaction;

#[cfg(test)]
mod test_support;
#[cfg(test)]
mod tests;

pub use crate::json_schema::{SchemaViolation, SchemaViolations};
pub use charge_point::{BootNotificationRequest, DataTransferRequest};
pub use codes::{
    ChargePointErrorCode, ChargePointStatus, DiagnosticsStatus, FirmwareStatus, StopReason,
};
pub use command::Command;
pub use extract::MAX_CONNECTOR_ID;
pub use measurement::{Location, Measurand, Phase, ReadingContext, UnitOfMeasure, ValueFormat};
pub use meter::{
    MeterValue, MeterValuesCheck, MeterValuesRequest, SampledValue, read_meter_values,
};
pub use schemas::schema_text;
pub use spec_enum::SpecEnum;
pub use status::{
    DiagnosticsStatusNotificationRequest, FirmwareStatusNotificationRequest,
    StatusNotificationRequest,
};
pub use timestamp::parse_timestamp;
pub use transaction::{
    AuthorizeRequest, ID_TAG_MAX_LEN, StartTransactionRequest, StopTransactionRequest,
};

use std::fmt;

use crate::error::{ErrorCode, Violation};
use crate::json::Json;

/// The actions a charge point may CALL in OCPP 1.6 (core, firmware and diagnostics), and those
/// of the OCA's security extension ("Improved security for OCPP 1.6-J"), plain 1.6 calls too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    Authorize,
    BootNotification,
    DataTransfer,
    DiagnosticsStatusNotification,
    FirmwareStatusNotification,
    Heartbeat,
    MeterValues,
    StartTransaction,
    StatusNotification,
    StopTransaction,
    // The security extension's.
    LogStatusNotification,
    SecurityEventNotification,
    SignCertificate,
    SignedFirmwareStatusNotification,
}

impl Action {
    /// The core's 10 in alphabetical order, then the security extension's 4: [`Self::from_name`]
    /// tries them in this order, so a core call (MeterValues above all, most of a charger's
    /// frames) is matched by exactly the comparisons it always was, an extension's name after.
    pub const ALL: [Action; 14] = [
        Action::Authorize,
        Action::BootNotification,
        Action::DataTransfer,
        Action::DiagnosticsStatusNotification,
        Action::FirmwareStatusNotification,
        Action::Heartbeat,
        Action::MeterValues,
        Action::StartTransaction,
        Action::StatusNotification,
        Action::StopTransaction,
        Action::LogStatusNotification,
        Action::SecurityEventNotification,
        Action::SignCertificate,
        Action::SignedFirmwareStatusNotification,
    ];

    /// The action with exactly this name (case-sensitive, as on the wire).
    pub fn from_name(name: &str) -> Option<Action> {
        Action::ALL.into_iter().find(|a| a.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Action::Authorize => "Authorize",
            Action::BootNotification => "BootNotification",
            Action::DataTransfer => "DataTransfer",
            Action::DiagnosticsStatusNotification => "DiagnosticsStatusNotification",
            Action::FirmwareStatusNotification => "FirmwareStatusNotification",
            Action::Heartbeat => "Heartbeat",
            Action::MeterValues => "MeterValues",
            Action::StartTransaction => "StartTransaction",
            Action::StatusNotification => "StatusNotification",
            Action::StopTransaction => "StopTransaction",
            Action::LogStatusNotification => "LogStatusNotification",
            Action::SecurityEventNotification => "SecurityEventNotification",
            Action::SignCertificate => "SignCertificate",
            Action::SignedFirmwareStatusNotification => "SignedFirmwareStatusNotification",
        }
    }

    /// True for actions that carry data worth a durable acknowledgement
    /// (everything but Heartbeat and Authorize, which are pure questions).
    pub fn carries_data(self) -> bool {
        !matches!(self, Action::Heartbeat | Action::Authorize)
    }

    /// Whether the call is one of the security extension's, checked against the OCA's schema
    /// (the core's are parsed by hand).
    pub fn is_security_extension(self) -> bool {
        matches!(
            self,
            Action::LogStatusNotification
                | Action::SecurityEventNotification
                | Action::SignCertificate
                | Action::SignedFirmwareStatusNotification
        )
    }
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A validated CALL payload; strings borrow from the payload text unless they held escapes.
#[derive(Debug, Clone, PartialEq)]
pub enum Request<'a> {
    Authorize(AuthorizeRequest<'a>),
    BootNotification(BootNotificationRequest<'a>),
    DataTransfer(DataTransferRequest<'a>),
    DiagnosticsStatusNotification(DiagnosticsStatusNotificationRequest),
    FirmwareStatusNotification(FirmwareStatusNotificationRequest),
    Heartbeat,
    MeterValues(MeterValuesRequest<'a>),
    StartTransaction(StartTransactionRequest<'a>),
    StatusNotification(StatusNotificationRequest<'a>),
    StopTransaction(StopTransactionRequest<'a>),
    // The security extension's: valid against the OCA's schema. Nothing is kept: the gateway
    // publishes the charger's bytes, and the materialiser reads the fields it stores.
    LogStatusNotification,
    SecurityEventNotification,
    SignCertificate,
    SignedFirmwareStatusNotification,
}

impl Request<'_> {
    pub fn action(&self) -> Action {
        match self {
            Request::Authorize(_) => Action::Authorize,
            Request::BootNotification(_) => Action::BootNotification,
            Request::DataTransfer(_) => Action::DataTransfer,
            Request::DiagnosticsStatusNotification(_) => Action::DiagnosticsStatusNotification,
            Request::FirmwareStatusNotification(_) => Action::FirmwareStatusNotification,
            Request::Heartbeat => Action::Heartbeat,
            Request::MeterValues(_) => Action::MeterValues,
            Request::StartTransaction(_) => Action::StartTransaction,
            Request::StatusNotification(_) => Action::StatusNotification,
            Request::StopTransaction(_) => Action::StopTransaction,
            Request::LogStatusNotification => Action::LogStatusNotification,
            Request::SecurityEventNotification => Action::SecurityEventNotification,
            Request::SignCertificate => Action::SignCertificate,
            Request::SignedFirmwareStatusNotification => Action::SignedFirmwareStatusNotification,
        }
    }
}

/// Parses and validates a CALL payload of a known action against its 1.6 JSON schema.
/// The view borrows from `payload` (strings are copied only if they held JSON escapes).
///
/// Violations: payload not JSON or not an object, or a property the schema does not
/// list → `FormationViolation`; a field of the wrong JSON type (including `1.5` or
/// `1.0` for an integer) → `TypeConstraintViolation`; a required field missing, or
/// an empty array where the schema has `minItems: 1` → `OccurenceConstraintViolation`;
/// a value outside its enumeration, a string over its maxLength (in characters) or holding
/// a NUL character, an integer beyond 32 bits, a connectorId outside its minimum to
/// [`MAX_CONNECTOR_ID`], or a malformed date-time → `PropertyConstraintViolation`. The description starts with the field path.
pub fn parse_request<'a>(action: Action, payload: &'a str) -> Result<Request<'a>, Violation> {
    // The hot path reads meter values without a tree; whatever it leaves (a refusal, anything
    // unusual) the tree path decides.
    if action == Action::MeterValues
        && let Some(request) = meter::stream_meter_values(payload)
    {
        return Ok(Request::MeterValues(request));
    }
    parse_request_tree(action, payload)
}

/// [`parse_request`] of a MeterValues payload, keeping only what [`MeterValuesCheck`] holds:
/// the same checks and the same refusals, without the request's lists (the gateway's hot path).
pub fn check_meter_values(payload: &str) -> Result<MeterValuesCheck, Violation> {
    if let Some(check) = meter::stream_check(payload) {
        return Ok(check);
    }
    let request = MeterValuesRequest::from_json(tree(payload)?)?;
    Ok(MeterValuesCheck::of(&request))
}

/// [`parse_request`] through a [`Json`] tree, for every action: the reference the streaming
/// reader of meter values must agree with.
pub fn parse_request_tree<'a>(action: Action, payload: &'a str) -> Result<Request<'a>, Violation> {
    if action.is_security_extension() {
        return security_ext::parse(action, payload);
    }
    parse_request_json(action, tree(payload)?)
}

fn tree(payload: &str) -> Result<Json<'_>, Violation> {
    serde_json::from_str(payload).map_err(|e| {
        Violation::new(
            ErrorCode::FormationViolation,
            format!("payload is not valid JSON: {e}"),
        )
    })
}

/// [`parse_request`] for a payload already parsed into a [`Json`] tree.
pub fn parse_request_json(action: Action, json: Json<'_>) -> Result<Request<'_>, Violation> {
    Ok(match action {
        Action::Authorize => Request::Authorize(AuthorizeRequest::from_json(json)?),
        Action::BootNotification => {
            Request::BootNotification(BootNotificationRequest::from_json(json)?)
        }
        Action::DataTransfer => Request::DataTransfer(DataTransferRequest::from_json(json)?),
        Action::DiagnosticsStatusNotification => Request::DiagnosticsStatusNotification(
            DiagnosticsStatusNotificationRequest::from_json(json)?,
        ),
        Action::FirmwareStatusNotification => {
            Request::FirmwareStatusNotification(FirmwareStatusNotificationRequest::from_json(json)?)
        }
        Action::Heartbeat => {
            charge_point::check_heartbeat(json)?;
            Request::Heartbeat
        }
        Action::MeterValues => Request::MeterValues(MeterValuesRequest::from_json(json)?),
        Action::StartTransaction => {
            Request::StartTransaction(StartTransactionRequest::from_json(json)?)
        }
        Action::StatusNotification => {
            Request::StatusNotification(StatusNotificationRequest::from_json(json)?)
        }
        Action::StopTransaction => {
            Request::StopTransaction(StopTransactionRequest::from_json(json)?)
        }
        Action::LogStatusNotification
        | Action::SecurityEventNotification
        | Action::SignCertificate
        | Action::SignedFirmwareStatusNotification => security_ext::parse_json(action, json)?,
    })
}
