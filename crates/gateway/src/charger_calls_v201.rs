//! One frame of an OCPP 2.0.1 session in, its answer out: the 2.0.1 side of
//! [`crate::charger_calls`], with the same [`Handled`] and [`Outcome`]. For now every CALL is
//! refused `NotImplemented` (the 2.0.1 messages are handled once `cms_ocpp::v201` is there);
//! the charger's answers to calls of ours are taken as in 1.6.

use crate::charger_action::ChargerAction;
use crate::charger_calls::{CallContext, ChargerAnswer, Handled, Outcome};
use crate::metrics::FrameKind;
use bytes::Bytes;
use chrono::{DateTime, Utc};
use cms_ocpp::{ErrorCode, Frame, parse_frame};

/// The calls a 2.0.1 station makes that cms handles (`cms_ocpp::v201::Action::ALL` once that
/// is there).
pub const V201_ACTIONS: [&str; 12] = [
    "Authorize",
    "BootNotification",
    "DataTransfer",
    "FirmwareStatusNotification",
    "Heartbeat",
    "LogStatusNotification",
    "MeterValues",
    "NotifyEvent",
    "NotifyReport",
    "SecurityEventNotification",
    "StatusNotification",
    "TransactionEvent",
];

/// Handles one text frame of a 2.0.1 session (`frame` holds the same bytes as `text`).
pub fn handle_text_v201(
    _ctx: &CallContext<'_>,
    text: &str,
    _frame: &Bytes,
    _now: DateTime<Utc>,
) -> Handled {
    let parsed = match parse_frame(text) {
        Ok(parsed) => parsed,
        Err(e) => {
            let id = e.message_id.as_deref().filter(|id| !id.is_empty());
            // A bad reply ends the call it answers, failed; anything else is refused.
            if let (true, Some(id)) = (e.reply, id) {
                let answer = ChargerAnswer::Error {
                    message_id: id.to_string(),
                    code: spelled(ErrorCode::FormationViolation).into(),
                    description: format!("the charger's answer is malformed: {}", e.description),
                };
                return answered(FrameKind::Invalid, answer);
            }
            return refuse(
                FrameKind::Invalid,
                id.unwrap_or("-1"),
                e.code,
                &e.description,
            );
        }
    };
    match parsed {
        Frame::Call {
            message_id, action, ..
        } => {
            let kind = V201_ACTIONS
                .iter()
                .find(|name| **name == action)
                .map_or(FrameKind::Invalid, |name| {
                    FrameKind::Call(ChargerAction::V201(name))
                });
            let why = format!("{action} is not handled over OCPP 2.0.1 yet");
            refuse(kind, &message_id, ErrorCode::NotImplemented, &why)
        }
        Frame::CallResult {
            message_id,
            payload,
        } => answered(
            FrameKind::CallResult,
            ChargerAnswer::Result {
                message_id: message_id.into_owned(),
                payload: payload.get().to_string(),
            },
        ),
        Frame::CallError {
            message_id,
            code,
            description,
            ..
        } => answered(
            FrameKind::CallError,
            ChargerAnswer::Error {
                message_id: message_id.into_owned(),
                code: code.into_owned(),
                description: description.into_owned(),
            },
        ),
    }
}

/// A CALLERROR frame with `code` spelled as 2.0.1 spells it.
pub fn call_error_v201(message_id: &str, code: ErrorCode, description: &str) -> String {
    let frame = serde_json::json!([4, message_id, spelled(code), description, {}]);
    frame.to_string()
}

/// 2.0.1 corrected two of 1.6's spellings; the other codes are the same.
fn spelled(code: ErrorCode) -> &'static str {
    match code {
        ErrorCode::FormationViolation => "FormatViolation",
        ErrorCode::OccurenceConstraintViolation => "OccurrenceConstraintViolation",
        other => other.as_str(),
    }
}

fn refuse(kind: FrameKind, message_id: &str, code: ErrorCode, description: &str) -> Handled {
    Handled {
        kind,
        outcome: Outcome::Refuse {
            reply: call_error_v201(message_id, code, description),
            code,
        },
    }
}

fn answered(kind: FrameKind, answer: ChargerAnswer) -> Handled {
    Handled {
        kind,
        outcome: Outcome::Answer(answer),
    }
}
