//! One frame of an OCPP 2.0.1 session in, its answer and its bus record out: the 2.0.1 side of
//! [`crate::charger_calls`], with the same [`Handled`] and [`Outcome`]. A CALL is checked
//! against its official schema in one streaming pass (`cms_ocpp::v201::check_request`: no
//! tree, nothing allocated for a valid reading), answered from the same memory as 1.6 (the id
//! tags, the clock), and published as the station's own bytes with the headers of docs/bus.md
//! ("OCPP 2.0.1 records").

use crate::authorization::{Authorized, Verdict};
use crate::charger_action::ChargerAction;
use crate::charger_calls::{
    CallContext, Handled, Outcome, asking, call_of, connector_id_text, published_with,
    record_headers,
};
use crate::metrics::FrameKind;
use crate::record_time::record_time_bytes;
use bytes::Bytes;
use chrono::{DateTime, Utc};
use cms_bus::{
    Headers, push_authorize_refused, push_reading_headers, push_transaction_event_headers,
};
use cms_ocpp::v201::answer::{self, IdTokenInfo};
use cms_ocpp::v201::{
    Action, AuthorizationStatus, Checked, IdToken, RegistrationStatus, TransactionEventType,
    check_request, is_known_action,
};
use cms_ocpp::{ErrorCode, OcppVersion, call_error_in, span_in, split_call};
use std::borrow::Cow;
use std::fmt::Write;

/// Handles one text frame of a 2.0.1 session; `frame` holds the same bytes as `text` (the
/// session's copy, cut from its shard's chunk).
pub fn handle_text_v201(
    ctx: &CallContext<'_>,
    text: &str,
    frame: &Bytes,
    now: DateTime<Utc>,
) -> Handled {
    // Most frames are plain CALLs: split without reading the payload twice. Anything the quick
    // way would refuse goes the full way, which names the error exactly.
    if let Some(parts) = split_call(text)
        && let Some(action) = Action::from_name(parts.action)
        && let Ok(checked) = check_request(action, parts.payload)
    {
        let value = frame.slice(span_in(text, parts.payload));
        let id = frame.slice(span_in(text, parts.message_id));
        let call = Call {
            text,
            frame,
            message_id: (parts.message_id, id),
            action,
            value,
        };
        return accept(ctx, call, checked, now);
    }
    let (message_id, name, payload) = match call_of(text, OcppVersion::V201) {
        Ok(call) => call,
        Err(handled) => return handled,
    };
    let Some(action) = Action::from_name(&name) else {
        // A call of 2.0.1 that a central system may decline (reservations, certificates, ...)
        // is NotSupported; a name 2.0.1 does not have is NotImplemented.
        let (code, why) = match is_known_action(&name) {
            true => (ErrorCode::NotSupported, "cms does not take this 2.0.1 call"),
            false => (ErrorCode::NotImplemented, "not an OCPP 2.0.1 action"),
        };
        let why = format!("{name:?}: {why}");
        return refuse(FrameKind::Invalid, &message_id, code, &why);
    };
    match check_request(action, payload.get()) {
        Ok(checked) => {
            let value = frame.slice(span_in(text, payload.get()));
            let id = shared_text(text, frame, &message_id);
            let call = Call {
                text,
                frame,
                message_id: (&message_id, id),
                action,
                value,
            };
            accept(ctx, call, checked, now)
        }
        Err(v) => {
            let kind = FrameKind::Call(ChargerAction::V201(action));
            refuse(kind, &message_id, v.code, &v.description)
        }
    }
}

/// A valid CALL, as the record and the answer need it.
struct Call<'t> {
    text: &'t str,
    frame: &'t Bytes,
    /// The id as text, and as shared bytes for the record's header.
    message_id: (&'t str, Bytes),
    action: Action,
    /// The payload: a slice of the frame, never re-serialised.
    value: Bytes,
}

/// A valid CALL: its answer, and its record.
fn accept(
    ctx: &CallContext<'_>,
    call: Call<'_>,
    checked: Checked<'_>,
    now: DateTime<Utc>,
) -> Handled {
    let (message_id, id_bytes) = call.message_id;
    let mut headers = record_headers(ctx, call.action.as_str(), id_bytes, now);
    let answer: Cow<'static, str> = match checked {
        Checked::MeterValues { evse_id, newest } => {
            // As a 1.6 MeterValues: a consumer keeps only the newest reading per EVSE without
            // parsing the ones it supersedes.
            push_reading_headers(
                &mut headers,
                connector_id_text(evse_id),
                newest.map(record_time_bytes),
            );
            Cow::Borrowed(answer::EMPTY)
        }
        Checked::TransactionEvent(event) => {
            let verdict = event.id_token.as_ref().map(|token| {
                let stop = event.event_type == TransactionEventType::Ended;
                verdict(ctx, token, stop, now)
            });
            push_transaction_event_headers(
                &mut headers,
                event.event_type.as_str(),
                shared_text(call.text, call.frame, &event.transaction_id),
                event.evse_id.map(connector_id_text),
                event.newest.map(record_time_bytes),
                verdict.as_ref().map(|(status, _)| status.as_str()),
            );
            match &verdict {
                // Nothing to say about an event without a token: the hot path's `{}`.
                None => Cow::Borrowed(answer::EMPTY),
                Some(verdict) => {
                    // The driver's price as the session starts (docs/tariffs.md).
                    let started = event.event_type == TransactionEventType::Started;
                    let price = started.then(|| price_text(ctx, verdict)).flatten();
                    let info = IdTokenInfo {
                        personal_message: price.as_deref(),
                        ..info(verdict)
                    };
                    Cow::Owned(answer::id_token_answer(&info))
                }
            }
        }
        Checked::Authorize { id_token } => {
            let authority = ctx.authority;
            let verdict = match authority.authorize_or_ask(ctx.identity, &id_token.id_token, now) {
                Authorized::Now(verdict) => verdict,
                Authorized::Ask(ask) => {
                    let action = ChargerAction::V201(call.action);
                    return asking(ctx, message_id, action, headers, call.value, *ask);
                }
            };
            // Every status of 1.6's idTagInfo is one of 2.0.1's too.
            let status = AuthorizationStatus::from_name(verdict.status)
                .unwrap_or(AuthorizationStatus::Invalid);
            let verdict = (status, verdict);
            // A refusal is told on the bus (a team's `id_tag.refused` webhook), as 1.6's.
            if verdict.0 != AuthorizationStatus::Accepted {
                push_authorize_refused(&mut headers, verdict.0.as_str());
            }
            let price = price_text(ctx, &verdict);
            let info = IdTokenInfo {
                personal_message: price.as_deref(),
                ..info(&verdict)
            };
            Cow::Owned(answer::id_token_answer(&info))
        }
        Checked::BootNotification { .. } => {
            // A station reaches its boot only registered and admitted (the upgrade refuses the
            // others, as for 1.6): its boot is accepted.
            let interval = ctx.heartbeat_interval_secs;
            let status = RegistrationStatus::Accepted;
            Cow::Owned(answer::boot_notification(now, interval, status))
        }
        Checked::StatusNotification { .. } | Checked::Other => match call.action {
            Action::Heartbeat => Cow::Owned(answer::heartbeat(now)),
            Action::DataTransfer => Cow::Owned(answer::data_transfer_unknown_vendor()),
            Action::SignCertificate
            | Action::NotifyEVChargingNeeds
            | Action::NotifyEVChargingSchedule => Cow::Borrowed(answer::STATUS_ACCEPTED),
            _ => Cow::Borrowed(answer::EMPTY),
        },
    };
    publish(ctx, message_id, call.action, headers, call.value, &answer)
}

/// The verdict on a token at this station, and its status in 2.0.1's words; `stop`: it ends
/// its own transaction (never ConcurrentTx then).
fn verdict(
    ctx: &CallContext<'_>,
    token: &IdToken<'_>,
    stop: bool,
    now: DateTime<Utc>,
) -> (AuthorizationStatus, Verdict) {
    let authority = ctx.authority;
    let verdict = match stop {
        true => authority.authorize_stop(ctx.identity, &token.id_token, now),
        false => authority.authorize(ctx.identity, &token.id_token, now),
    };
    // Every status of 1.6's idTagInfo is one of 2.0.1's too.
    let status =
        AuthorizationStatus::from_name(verdict.status).unwrap_or(AuthorizationStatus::Invalid);
    (status, verdict)
}

/// The idTokenInfo of a verdict.
fn info((status, verdict): &(AuthorizationStatus, Verdict)) -> IdTokenInfo<'_> {
    IdTokenInfo {
        status: *status,
        cache_expiry: verdict.expiry_date,
        group_id_token: verdict.parent_id_tag.as_deref(),
        personal_message: None,
    }
}

/// The price an accepted driver is told at a station whose site shows prices, from the
/// registry's memory (docs/tariffs.md "Prices on the charger"); none for a refused token.
fn price_text(
    ctx: &CallContext<'_>,
    (status, _): &(AuthorizationStatus, Verdict),
) -> Option<String> {
    match status {
        AuthorizationStatus::Accepted => ctx.authority.price_text(ctx.identity),
        _ => None,
    }
}

/// A string of the frame as shared bytes: a slice when it lies in the text, a copy when it
/// held escapes (then it was unescaped into a string of its own).
fn shared_text(text: &str, frame: &Bytes, part: &str) -> Bytes {
    let within = text.as_bytes().as_ptr_range();
    let ends = part.as_bytes().as_ptr_range();
    if within.start <= ends.start && ends.end <= within.end {
        frame.slice(span_in(text, part))
    } else {
        Bytes::copy_from_slice(part.as_bytes())
    }
}

fn publish(
    ctx: &CallContext<'_>,
    message_id: &str,
    action: Action,
    headers: Headers,
    value: Bytes,
    answer: &str,
) -> Handled {
    let action = ChargerAction::V201(action);
    published_with(
        ctx,
        message_id,
        action,
        headers,
        value,
        answer.len(),
        |out| out.write_str(answer),
    )
}

/// A CALLERROR frame with `code` spelled as 2.0.1 spells it.
pub fn call_error_v201(message_id: &str, code: ErrorCode, description: &str) -> String {
    call_error_in(OcppVersion::V201, message_id, code, description)
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

#[cfg(test)]
mod tests;
