//! One charger frame in, its answer and its bus record out. Pure apart from the transaction-id
//! memory, so the frame path is testable without sockets.

use crate::authorization::{Ask, Authority, Authorized};
use crate::charger_action::ChargerAction;
use crate::metrics::FrameKind;
use crate::record_time::record_time_bytes;
use crate::transactions::{StartKey, TransactionIds};
use bytes::{Bytes, BytesMut};
use chrono::{DateTime, Utc};
use cms_bus::Topics;
use cms_bus::{Headers, Record, push_authorize_refused, push_reading_headers, push_start_headers};
use cms_ocpp::v16::answer::{self, ClockAnswer};
use cms_ocpp::v16::{
    Action, MAX_CONNECTOR_ID, MeterValuesCheck, Request, check_meter_values, parse_request,
};
use cms_ocpp::{
    ErrorCode, Frame, OcppVersion, Violation, call_error, call_error_in, call_result_len,
    parse_frame, span_in, split_call, write_call_result_with,
};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt::Write;
use std::sync::LazyLock;
use tokio_tungstenite::tungstenite::Utf8Bytes;

/// What the session knows that a frame's handling needs.
pub struct CallContext<'a> {
    pub identity: &'a str,
    /// The identity, session id and gateway node as shared bytes: cloned per record, not copied.
    pub identity_key: &'a Bytes,
    pub session: &'a Bytes,
    pub node: &'a Bytes,
    /// The OCPP version the session agreed: its records' `ocpp_version`.
    pub version: OcppVersion,
    pub topics: &'a Topics,
    pub transaction_ids: &'a TransactionIds,
    pub authority: &'a Authority,
    pub heartbeat_interval_secs: u32,
}

pub struct Handled {
    pub kind: FrameKind,
    pub outcome: Outcome,
}

// Not boxed: publishing is what nearly every frame does, and a box would be an allocation per
// frame. An outcome is never held in a future (session/text_frame.rs), so its size costs a move.
#[allow(clippy::large_enum_variant)]
pub enum Outcome {
    /// Answer with this CALLERROR; nothing is published.
    Refuse { reply: String, code: ErrorCode },
    /// Publish the record; once the bus has it, answer with `answer`.
    Publish {
        action: ChargerAction,
        record: Record,
        answer: Utf8Bytes,
    },
    /// The charger's answer to a call of ours: matched to the call in flight by the session.
    Answer(ChargerAnswer),
    /// An Authorize whose record and answer wait for the eMSP of its OCPI token (boxed: rare).
    Ask(Box<asking::Asking>),
}

/// A CALLRESULT or CALLERROR from the charger.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChargerAnswer {
    Result {
        message_id: String,
        /// The payload's JSON text, as the charger sent it.
        payload: String,
    },
    Error {
        message_id: String,
        code: String,
        description: String,
    },
}

impl ChargerAnswer {
    pub fn message_id(&self) -> &str {
        match self {
            ChargerAnswer::Result { message_id, .. } | ChargerAnswer::Error { message_id, .. } => {
                message_id
            }
        }
    }
}

/// Handles one text frame; `frame` holds the same bytes as `text` (the session's copy, cut from
/// its shard's chunk: what is kept long must be copied out of it).
pub fn handle_text(
    ctx: &CallContext<'_>,
    text: &str,
    frame: &Bytes,
    now: DateTime<Utc>,
) -> Handled {
    // Most frames are plain CALLs: split without reading the payload twice. Anything the quick
    // way would refuse goes the full way, which names the error exactly.
    if let Some(parts) = split_call(text)
        && let Some(action) = Action::from_name(parts.action)
        && let Ok(request) = check(action, parts.payload)
    {
        let value = frame.slice(span_in(text, parts.payload));
        let id = frame.slice(span_in(text, parts.message_id));
        return accept(ctx, (parts.message_id, id), action, request, value, now);
    }
    let (message_id, action_name, payload) = match call_of(text, OcppVersion::V16) {
        Ok(call) => call,
        Err(handled) => return handled,
    };
    let Some(action) = Action::from_name(&action_name) else {
        let why = format!("unknown action {action_name:?}");
        return refuse(
            FrameKind::Invalid,
            &message_id,
            ErrorCode::NotImplemented,
            &why,
        );
    };
    match check(action, payload.get()) {
        Ok(request) => {
            let value = frame.slice(span_in(text, payload.get()));
            // An id with escapes was unescaped into a string of its own: copied.
            let id = match &message_id {
                Cow::Borrowed(id) => frame.slice(span_in(text, id)),
                Cow::Owned(id) => Bytes::copy_from_slice(id.as_bytes()),
            };
            accept(ctx, (&message_id, id), action, request, value, now)
        }
        Err(v) => {
            let kind = FrameKind::Call(ChargerAction::V16(action));
            refuse(kind, &message_id, v.code, &v.description)
        }
    }
}

/// A frame read the full way, in either version: a CALL's id, action and payload, or what is
/// left to do with anything else. A CALLRESULT or CALLERROR is the charger's answer to a call
/// of ours; a reply readable as far as its id is that call's answer, a bad one (the call ends
/// failed at once: OCPP-J answers calls, never replies); any other broken frame is refused
/// with the CALLERROR `version` names it by, with the id "-1" when no usable id could be read
/// (as OCPP 2.0.1 spells it out).
// The full way only (the quick split takes plain CALLs), and the outcome is returned at once,
// never held: its size, a published record's room, costs a move.
#[allow(clippy::result_large_err)]
pub(crate) fn call_of(
    text: &str,
    version: OcppVersion,
) -> Result<(Cow<'_, str>, Cow<'_, str>, &RawValue), Handled> {
    let parsed = match parse_frame(text) {
        Ok(parsed) => parsed,
        Err(e) => {
            let id = e.message_id.as_deref().filter(|id| !id.is_empty());
            if let (true, Some(id)) = (e.reply, id) {
                let answer = ChargerAnswer::Error {
                    message_id: id.to_string(),
                    code: ErrorCode::FormationViolation.spelled(version).into(),
                    description: format!("the charger's answer is malformed: {}", e.description),
                };
                return Err(answered(FrameKind::Invalid, answer));
            }
            let (code, id) = (e.code_in(version), id.unwrap_or("-1"));
            return Err(Handled {
                kind: FrameKind::Invalid,
                outcome: Outcome::Refuse {
                    reply: call_error_in(version, id, code, &e.description),
                    code,
                },
            });
        }
    };
    Err(match parsed {
        Frame::Call {
            message_id,
            action,
            payload,
        } => return Ok((message_id, action, payload)),
        Frame::CallResult {
            message_id,
            payload,
        } => {
            let answer = ChargerAnswer::Result {
                message_id: message_id.into_owned(),
                payload: payload.get().to_string(),
            };
            answered(FrameKind::CallResult, answer)
        }
        Frame::CallError {
            message_id,
            code,
            description,
            ..
        } => {
            let answer = ChargerAnswer::Error {
                message_id: message_id.into_owned(),
                code: code.into_owned(),
                description: description.into_owned(),
            };
            answered(FrameKind::CallError, answer)
        }
    })
}

/// A valid request as the gateway uses it: meter values are checked sample by sample but not
/// kept (their record is the charger's own bytes), so checking them allocates nothing.
enum Valid<'a> {
    MeterValues(MeterValuesCheck),
    Request(Request<'a>),
}

fn check(action: Action, payload: &str) -> Result<Valid<'_>, Violation> {
    match action {
        Action::MeterValues => check_meter_values(payload).map(Valid::MeterValues),
        _ => parse_request(action, payload).map(Valid::Request),
    }
}

/// A valid CALL: its answer, and its record. The record's value is the charger's own payload
/// bytes, a slice of its frame, never re-serialised; so is its message id header (`message_id`
/// is the id as text and as bytes).
fn accept(
    ctx: &CallContext<'_>,
    (message_id, id_bytes): (&str, Bytes),
    action: Action,
    request: Valid<'_>,
    value: Bytes,
    now: DateTime<Utc>,
) -> Handled {
    let mut headers = record_headers(ctx, action.as_str(), id_bytes, now);
    let request = match request {
        Valid::MeterValues(values) => {
            // Lets a consumer keep only the newest reading per connector without parsing the
            // ones it supersedes (the materialiser does, under load).
            push_reading_headers(
                &mut headers,
                connector_id_text(values.connector_id),
                values.newest.map(record_time_bytes),
            );
            return published(ctx, message_id, action, headers, value, answer::EMPTY);
        }
        Valid::Request(request) => request,
    };
    let answer: Cow<'static, str> = match &request {
        Request::BootNotification(_) => {
            let clock = ClockAnswer::BootAccepted(now, ctx.heartbeat_interval_secs);
            return published_clock(ctx, message_id, action, headers, value, clock);
        }
        Request::Heartbeat => {
            let clock = ClockAnswer::Heartbeat(now);
            return published_clock(ctx, message_id, action, headers, value, clock);
        }
        Request::Authorize(authorize) => {
            let verdict =
                match (ctx.authority).authorize_or_ask(ctx.identity, &authorize.id_tag, now) {
                    Authorized::Now(verdict) => verdict,
                    Authorized::Ask(ask) => {
                        let action = ChargerAction::V16(action);
                        return asking(ctx, message_id, action, headers, value, *ask);
                    }
                };
            // A refusal is told on the bus (a team's `id_tag.refused` webhook); an acceptance,
            // the common case, carries nothing more.
            if verdict.status != "Accepted" {
                push_authorize_refused(&mut headers, verdict.status);
            }
            answer::id_tag_answer(&verdict.id_tag_info()).into()
        }
        Request::StartTransaction(start) => {
            let key = StartKey {
                connector_id: start.connector_id,
                id_tag: &start.id_tag,
                meter_start: start.meter_start,
                timestamp: start.timestamp.timestamp(),
            };
            let id = ctx
                .transaction_ids
                .allocate(ctx.identity, &key, now.timestamp());
            let verdict =
                ctx.authority
                    .start(ctx.identity, start.connector_id, &start.id_tag, id, now);
            // The transaction is recorded with the verdict: a refused start is still one.
            push_start_headers(&mut headers, id, verdict.status);
            answer::start_transaction(id, &verdict.id_tag_info()).into()
        }
        Request::StopTransaction(stop) => {
            let id_tag = stop.id_tag.as_deref();
            match ctx
                .authority
                .stop(ctx.identity, stop.transaction_id, id_tag, now)
            {
                Some(verdict) => answer::id_tag_answer(&verdict.id_tag_info()).into(),
                None => answer::EMPTY.into(),
            }
        }
        Request::DataTransfer(_) => answer::data_transfer_unknown_vendor().into(),
        Request::SignCertificate => answer::SIGN_CERTIFICATE_ACCEPTED.into(),
        // MeterValues are checked apart, above; the security extension's other calls (whose
        // names `Action::from_name` matches only after the core's) are answered `{}`.
        _ => answer::EMPTY.into(),
    };
    published(ctx, message_id, action, headers, value, &answer)
}

/// The headers every record of a CALL has (`message_id` as shared bytes), in either version.
pub(crate) fn record_headers(
    ctx: &CallContext<'_>,
    action: &'static str,
    message_id: Bytes,
    now: DateTime<Utc>,
) -> Headers {
    cms_bus::message_headers(
        action,
        message_id,
        record_time_bytes(now),
        ctx.node.clone(),
        ctx.session.clone(),
        ctx.version.subprotocol(),
    )
}

/// The record of a valid CALL, and its answer frame (cut from the thread's chunk).
fn published(
    ctx: &CallContext<'_>,
    message_id: &str,
    action: Action,
    headers: Headers,
    value: Bytes,
    answer: &str,
) -> Handled {
    published_with(
        ctx,
        message_id,
        ChargerAction::V16(action),
        headers,
        value,
        answer.len(),
        |out| out.write_str(answer),
    )
}

/// [`published`] for an answer carrying the clock: written straight into the frame.
fn published_clock(
    ctx: &CallContext<'_>,
    message_id: &str,
    action: Action,
    headers: Headers,
    value: Bytes,
    clock: ClockAnswer,
) -> Handled {
    let room = ClockAnswer::MAX_LEN;
    let action = ChargerAction::V16(action);
    published_with(ctx, message_id, action, headers, value, room, |out| {
        write!(out, "{clock}")
    })
}

/// [`published`] with the answer's payload written straight into the frame by `payload` (at
/// most `payload_room` bytes, or the chunk grows by a copy): the clock needs no string.
pub(crate) fn published_with(
    ctx: &CallContext<'_>,
    message_id: &str,
    action: ChargerAction,
    headers: Headers,
    value: Bytes,
    payload_room: usize,
    payload: impl FnOnce(&mut BytesMut) -> std::fmt::Result,
) -> Handled {
    let room = call_result_len(message_id, "") + payload_room;
    let answer = crate::chunks::text(room, |out| write_call_result_with(out, message_id, payload));
    let record = Record {
        topic: Cow::Borrowed(ctx.topics.messages),
        key: ctx.identity_key.clone(),
        headers,
        value,
    };
    Handled {
        kind: FrameKind::Call(action),
        outcome: Outcome::Publish {
            action,
            record,
            answer,
        },
    }
}

/// An Authorize waiting for the eMSP of its token: its record, its answer still to make.
pub(crate) fn asking(
    ctx: &CallContext<'_>,
    message_id: &str,
    action: ChargerAction,
    headers: Headers,
    value: Bytes,
    ask: Ask,
) -> Handled {
    let record = Record {
        topic: Cow::Borrowed(ctx.topics.messages),
        key: ctx.identity_key.clone(),
        headers,
        value,
    };
    Handled {
        kind: FrameKind::Call(action),
        outcome: Outcome::Ask(Box::new(asking::Asking::new(
            action, record, message_id, ask,
        ))),
    }
}

/// A connector id as header text: shared bytes made once for every id a charger may use.
pub(crate) fn connector_id_text(id: u32) -> Bytes {
    static TEXTS: LazyLock<Vec<Bytes>> = LazyLock::new(|| {
        (0..=MAX_CONNECTOR_ID)
            .map(|id| Bytes::from(id.to_string()))
            .collect()
    });
    match TEXTS.get(id as usize) {
        Some(text) => text.clone(),
        None => Bytes::from(id.to_string()),
    }
}

fn refuse(kind: FrameKind, message_id: &str, code: ErrorCode, description: &str) -> Handled {
    Handled {
        kind,
        outcome: Outcome::Refuse {
            reply: call_error(message_id, code, description),
            code,
        },
    }
}

pub(crate) fn answered(kind: FrameKind, answer: ChargerAnswer) -> Handled {
    Handled {
        kind,
        outcome: Outcome::Answer(answer),
    }
}

pub mod asking;
#[cfg(test)]
pub(crate) mod fixture;
#[cfg(test)]
mod security_ext_tests;
#[cfg(test)]
mod tests;
