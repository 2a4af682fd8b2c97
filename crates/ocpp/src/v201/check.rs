//! `check_request`: a station's CALL payload validated against its official 2.0.1 schema in
//! one streaming pass, keeping the few values the gateway needs. What to keep is a table of
//! paths per action ([`targets`]); the validation itself is the schema's, read by the one
//! generic streaming validator, with the tree validator deciding every refusal.

use std::borrow::Cow;

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::schemas::action_schemas;
use super::{Action, BootReason, ConnectorStatus, TransactionEventType};
use crate::error::{ErrorCode, Violation};
use crate::json_schema::capture::{self, Captured, Captures, Target};
use crate::json_schema::stream;
use crate::v16::MAX_CONNECTOR_ID;

/// What the gateway keeps of a valid CALL; strings borrow from the payload unless they held
/// escapes.
#[derive(Debug, Clone, PartialEq)]
pub enum Checked<'a> {
    BootNotification {
        reason: BootReason,
    },
    Authorize {
        id_token: IdToken<'a>,
    },
    MeterValues {
        evse_id: u32,
        /// The newest meterValue timestamp.
        newest: Option<DateTime<Utc>>,
    },
    StatusNotification {
        evse_id: u32,
        connector_id: u32,
        status: ConnectorStatus,
        timestamp: DateTime<Utc>,
    },
    TransactionEvent(TransactionEventCheck<'a>),
    /// Everything else: valid, nothing to keep.
    Other,
}

/// An IdTokenType: the token and its kind.
#[derive(Debug, Clone, PartialEq)]
pub struct IdToken<'a> {
    pub id_token: Cow<'a, str>,
    /// `type`: ISO14443, eMAID, Central, ... (IdTokenEnumType's spelling).
    pub kind: Cow<'a, str>,
}

/// What the gateway keeps of a TransactionEvent.
#[derive(Debug, Clone, PartialEq)]
pub struct TransactionEventCheck<'a> {
    pub event_type: TransactionEventType,
    /// transactionInfo.transactionId (at most 36 characters).
    pub transaction_id: Cow<'a, str>,
    pub seq_no: u32,
    /// `offline`, false when absent.
    pub offline: bool,
    /// TriggerReasonEnumType's spelling.
    pub trigger_reason: &'static str,
    pub evse_id: Option<u32>,
    pub connector_id: Option<u32>,
    pub id_token: Option<IdToken<'a>>,
    /// transactionInfo.remoteStartId.
    pub remote_start_id: Option<i32>,
    /// The newest meterValue timestamp, if there are meter values.
    pub newest: Option<DateTime<Utc>>,
    pub timestamp: DateTime<Utc>,
}

/// Validates a station's CALL payload against the official schema in one streaming pass (no
/// tree, and nothing allocated for a valid payload without escapes), and keeps what the
/// gateway needs. Refusals carry the code (spelled for 2.0.1 by `ErrorCode::spelled`) and a
/// description that starts with the field path; the same payload gets the same first violation
/// as [`Action::validate_request`]. Beyond the schema, cms holds an EVSE's and a connector's
/// id to 0 to [`MAX_CONNECTOR_ID`] (the REST API's bound) and a seqNo to 0 or more.
pub fn check_request(action: Action, payload: &str) -> Result<Checked<'_>, Violation> {
    match check_streaming(action, payload) {
        Some(captures) => checked(action, captures),
        None => check_tree(action, payload),
    }
}

/// The streaming pass alone: `None` when it leaves the payload to the tree.
pub(crate) fn check_streaming(action: Action, payload: &str) -> Option<Captures<'_, 'static>> {
    stream::check(
        &action_schemas(action.as_str()).request,
        payload,
        targets(action),
    )
}

/// [`check_request`] through a `serde_json::Value` tree: what every refusal comes from.
pub(crate) fn check_tree(action: Action, payload: &str) -> Result<Checked<'static>, Violation> {
    let tree: Value = serde_json::from_str(payload).map_err(|e| {
        let message = format!("payload is not valid JSON: {e}");
        Violation::new(ErrorCode::FormationViolation, message)
    })?;
    action.validate_request(&tree)?;
    let root = &action_schemas(action.as_str()).request;
    checked(action, capture::from_tree(root, &tree, targets(action)))
}

// The paths each action keeps, by slot.
const EVSE_ID: usize = 0;
const NEWEST: usize = 1;
const METER_VALUES: &[Target] = &[&["evseId"], &["meterValue", "*", "timestamp"]];

const CONNECTOR_ID: usize = 1;
const STATUS: usize = 2;
const TIMESTAMP: usize = 3;
const STATUS_NOTIFICATION: &[Target] = &[
    &["evseId"],
    &["connectorId"],
    &["connectorStatus"],
    &["timestamp"],
];

const TOKEN: usize = 0;
const TOKEN_TYPE: usize = 1;
const AUTHORIZE: &[Target] = &[&["idToken", "idToken"], &["idToken", "type"]];

const BOOT_NOTIFICATION: &[Target] = &[&["reason"]];

mod tx {
    pub(super) const EVENT_TYPE: usize = 0;
    pub(super) const TRANSACTION_ID: usize = 1;
    pub(super) const SEQ_NO: usize = 2;
    pub(super) const OFFLINE: usize = 3;
    pub(super) const TRIGGER_REASON: usize = 4;
    pub(super) const EVSE_ID: usize = 5;
    pub(super) const CONNECTOR_ID: usize = 6;
    pub(super) const TOKEN: usize = 7;
    pub(super) const TOKEN_TYPE: usize = 8;
    pub(super) const REMOTE_START_ID: usize = 9;
    pub(super) const NEWEST: usize = 10;
    pub(super) const TIMESTAMP: usize = 11;
}
const TRANSACTION_EVENT: &[Target] = &[
    &["eventType"],
    &["transactionInfo", "transactionId"],
    &["seqNo"],
    &["offline"],
    &["triggerReason"],
    &["evse", "id"],
    &["evse", "connectorId"],
    &["idToken", "idToken"],
    &["idToken", "type"],
    &["transactionInfo", "remoteStartId"],
    &["meterValue", "*", "timestamp"],
    &["timestamp"],
];

fn targets(action: Action) -> &'static [Target] {
    match action {
        Action::Authorize => AUTHORIZE,
        Action::BootNotification => BOOT_NOTIFICATION,
        Action::MeterValues => METER_VALUES,
        Action::StatusNotification => STATUS_NOTIFICATION,
        Action::TransactionEvent => TRANSACTION_EVENT,
        _ => &[],
    }
}

/// The check of a valid payload from its captures.
fn checked<'a>(action: Action, mut c: Captures<'a, 'static>) -> Result<Checked<'a>, Violation> {
    Ok(match action {
        Action::BootNotification => Checked::BootNotification {
            reason: enumeration(&c, 0, "reason", BootReason::from_name)?,
        },
        Action::Authorize => Checked::Authorize {
            id_token: id_token(&mut c, TOKEN, TOKEN_TYPE, "idToken")?
                .ok_or_else(|| missing("idToken"))?,
        },
        Action::MeterValues => Checked::MeterValues {
            evse_id: id(&c, EVSE_ID, "evseId")?.ok_or_else(|| missing("evseId"))?,
            newest: time(&c, NEWEST),
        },
        Action::StatusNotification => Checked::StatusNotification {
            evse_id: id(&c, EVSE_ID, "evseId")?.ok_or_else(|| missing("evseId"))?,
            connector_id: id(&c, CONNECTOR_ID, "connectorId")?
                .ok_or_else(|| missing("connectorId"))?,
            status: enumeration(&c, STATUS, "connectorStatus", ConnectorStatus::from_name)?,
            timestamp: time(&c, TIMESTAMP).ok_or_else(|| missing("timestamp"))?,
        },
        Action::TransactionEvent => Checked::TransactionEvent(transaction_event(c)?),
        _ => Checked::Other,
    })
}

fn transaction_event<'a>(
    mut c: Captures<'a, 'static>,
) -> Result<TransactionEventCheck<'a>, Violation> {
    let seq_no = match c.get(tx::SEQ_NO) {
        Some(Captured::Int(n)) => u32::try_from(*n).map_err(|_| {
            let message = format!("seqNo: must be 0 or more, got {n}");
            Violation::new(ErrorCode::PropertyConstraintViolation, message)
        })?,
        _ => return Err(missing("seqNo")),
    };
    let trigger_reason = match c.get(tx::TRIGGER_REASON) {
        Some(Captured::Enum(name)) => *name,
        _ => return Err(missing("triggerReason")),
    };
    Ok(TransactionEventCheck {
        event_type: enumeration(
            &c,
            tx::EVENT_TYPE,
            "eventType",
            TransactionEventType::from_name,
        )?,
        transaction_id: match c.take(tx::TRANSACTION_ID) {
            Some(Captured::Str(id)) => id,
            _ => return Err(missing("transactionInfo.transactionId")),
        },
        seq_no,
        offline: matches!(c.get(tx::OFFLINE), Some(Captured::Bool(true))),
        trigger_reason,
        evse_id: id(&c, tx::EVSE_ID, "evse.id")?,
        connector_id: id(&c, tx::CONNECTOR_ID, "evse.connectorId")?,
        id_token: id_token(&mut c, tx::TOKEN, tx::TOKEN_TYPE, "idToken")?,
        remote_start_id: match c.get(tx::REMOTE_START_ID) {
            Some(Captured::Int(n)) => i32::try_from(*n).ok(),
            _ => None,
        },
        newest: time(&c, tx::NEWEST),
        timestamp: time(&c, tx::TIMESTAMP).ok_or_else(|| missing("timestamp"))?,
    })
}

/// What a valid payload cannot lack; reported as the schema would, should it ever happen.
fn missing(path: &str) -> Violation {
    let message = format!("{path}: required property is missing");
    Violation::new(ErrorCode::OccurenceConstraintViolation, message)
}

/// An EVSE's or a connector's id: 0 to [`MAX_CONNECTOR_ID`], as for a 1.6 connector (cms's
/// bound, not the schema's: an EVSE is the REST API's connector).
fn id(c: &Captures<'_, '_>, slot: usize, path: &str) -> Result<Option<u32>, Violation> {
    match c.get(slot) {
        Some(Captured::Int(n)) => match u32::try_from(*n) {
            Ok(id) if id <= MAX_CONNECTOR_ID => Ok(Some(id)),
            _ => {
                let message = format!("{path}: must be from 0 to {MAX_CONNECTOR_ID}, got {n}");
                Err(Violation::new(
                    ErrorCode::PropertyConstraintViolation,
                    message,
                ))
            }
        },
        _ => Ok(None),
    }
}

fn time(c: &Captures<'_, '_>, slot: usize) -> Option<DateTime<Utc>> {
    match c.get(slot) {
        Some(Captured::Time(at)) => Some(*at),
        _ => None,
    }
}

fn enumeration<T>(
    c: &Captures<'_, '_>,
    slot: usize,
    path: &str,
    from_name: fn(&str) -> Option<T>,
) -> Result<T, Violation> {
    match c.get(slot) {
        Some(Captured::Enum(name)) => from_name(name).ok_or_else(|| {
            let message = format!("{path}: unknown value {name:?}");
            Violation::new(ErrorCode::PropertyConstraintViolation, message)
        }),
        _ => Err(missing(path)),
    }
}

fn id_token<'a>(
    c: &mut Captures<'a, 'static>,
    token: usize,
    kind: usize,
    path: &str,
) -> Result<Option<IdToken<'a>>, Violation> {
    match (c.take(token), c.take(kind)) {
        (None, _) => Ok(None),
        (Some(Captured::Str(id_token)), Some(Captured::Enum(kind))) => Ok(Some(IdToken {
            id_token,
            kind: Cow::Borrowed(kind),
        })),
        _ => Err(missing(&format!("{path}.type"))),
    }
}
