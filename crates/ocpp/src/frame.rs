//! OCPP-J RPC framing: `[2,id,action,payload]`, `[3,id,payload]`, `[4,id,code,description,details]`.
//!
//! Rejection rules, in the order they are checked:
//! - text that is not JSON, JSON that is not an array, or anything but whitespace after
//!   the array → `FormationViolation`;
//! - a JSON array that is not a well-formed frame → `ProtocolError`: empty array, first
//!   element not the integer 2, 3 or 4, wrong element count for that type (CALL 4,
//!   CALLRESULT 3, CALLERROR 5), message id not a string / empty / longer than
//!   [`MAX_MESSAGE_ID_LEN`] characters, action (CALL) or error code and description
//!   (CALLERROR) not strings, payload of a CALL or CALLRESULT not a JSON object.
//!
//! [`FrameError::message_id`] carries element 1 whenever it is a string of at most
//! [`MAX_MESSAGE_ID_LEN`] characters, even if the frame was rejected for another
//! reason, so the answer can still be correlated; otherwise it is `None` and the
//! caller answers with id `"-1"`. CALLERROR details are taken as any JSON value
//! (the spec asks for an object, but a charger's error reply is not worth rejecting).
//! Whitespace between tokens is allowed anywhere.

mod split;
mod write;

#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use serde::de::{Deserialize, Deserializer, SeqAccess, Visitor};
use serde_json::value::RawValue;

use crate::error::{ErrorCode, excerpt};
use crate::json::Key;
use crate::version::OcppVersion;

pub use split::{CallParts, split_call};
pub use write::{
    call, call_error, call_error_in, call_result, call_result_len, write_call_result,
    write_call_result_with, write_json_str,
};

/// Longest message id OCPP-J 1.6 allows, in characters.
pub const MAX_MESSAGE_ID_LEN: usize = 36;

/// One parsed frame; everything borrows from the frame text.
#[derive(Debug, Clone)]
pub enum Frame<'a> {
    Call {
        message_id: Cow<'a, str>,
        action: Cow<'a, str>,
        payload: &'a RawValue,
    },
    CallResult {
        message_id: Cow<'a, str>,
        payload: &'a RawValue,
    },
    CallError {
        message_id: Cow<'a, str>,
        code: Cow<'a, str>,
        description: Cow<'a, str>,
        details: &'a RawValue,
    },
}

impl Frame<'_> {
    pub fn message_id(&self) -> &str {
        match self {
            Frame::Call { message_id, .. }
            | Frame::CallResult { message_id, .. }
            | Frame::CallError { message_id, .. } => message_id,
        }
    }
}

/// A frame that must be answered with a CALLERROR (or dropped, for a bad reply).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameError {
    /// The id to answer with; `None` means answer with `"-1"`.
    pub message_id: Option<String>,
    pub code: ErrorCode,
    pub description: String,
    /// The frame is a CALLRESULT or CALLERROR by its type id: a bad reply, whose id (when
    /// readable) names the call it answers.
    pub reply: bool,
    /// Its message type id is none of 2, 3, 4.
    pub unknown_type: bool,
}

impl FrameError {
    /// The CALLERROR code in `version`. 1.6 answers an unreadable frame FormationViolation and
    /// a frame of the wrong structure ProtocolError; 2.0.1 (part 4, 4.3) names both more
    /// exactly: an unknown message type is MessageTypeNotSupported, and anything else that
    /// keeps the frame from being a valid RPC message (not JSON, not an array, no readable
    /// id, the wrong number of elements) is RpcFrameworkError.
    pub fn code_in(&self, version: OcppVersion) -> ErrorCode {
        match version {
            OcppVersion::V16 => self.code,
            OcppVersion::V201 if self.unknown_type => ErrorCode::MessageTypeNotSupported,
            OcppVersion::V201 => ErrorCode::RpcFrameworkError,
        }
    }
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.description)
    }
}

impl std::error::Error for FrameError {}

/// Byte range of `part` inside `text`, for a `part` borrowed from `text` (such as a
/// frame's payload), so the caller can slice its own buffer of the frame without copying.
///
/// # Panics
/// If `part` does not lie within `text`.
pub fn span_in(text: &str, part: &str) -> Range<usize> {
    let start = (part.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize);
    let end = start.wrapping_add(part.len());
    assert!(
        start <= text.len() && end <= text.len(),
        "span_in: part is not borrowed from text"
    );
    start..end
}

/// Parses one OCPP-J frame; see the module docs for the rejection rules.
pub fn parse_frame(text: &str) -> Result<Frame<'_>, FrameError> {
    let Elements { items, len } = serde_json::from_str(text).map_err(|e| FrameError {
        message_id: None,
        code: ErrorCode::FormationViolation,
        description: match e.classify() {
            serde_json::error::Category::Data => format!("frame is not a JSON array: {e}"),
            _ => format!("frame is not valid JSON: {e}"),
        },
        reply: false,
        unknown_type: false,
    })?;
    let message_id = items[1].and_then(raw_str);
    let kind = items[0].and_then(MessageType::from_raw);
    let fail = |description: String| FrameError {
        message_id: message_id
            .as_deref()
            .filter(|id| id.chars().count() <= MAX_MESSAGE_ID_LEN)
            .map(str::to_owned),
        code: ErrorCode::ProtocolError,
        description,
        reply: kind.is_some_and(|k| k != MessageType::Call),
        unknown_type: false,
    };

    let Some(type_id) = items[0] else {
        return Err(fail("frame is an empty array".into()));
    };
    let Some(kind) = kind else {
        let got = excerpt(type_id.get());
        let description = format!("message type id must be 2, 3 or 4, got {got}");
        return Err(FrameError {
            unknown_type: true,
            ..fail(description)
        });
    };
    if len != kind.arity() {
        let (name, arity) = (kind.name(), kind.arity());
        return Err(fail(format!("a {name} has {arity} elements, got {len}")));
    }
    match message_id.as_deref() {
        None => return Err(fail("message id must be a string".into())),
        Some("") => return Err(fail("message id is empty".into())),
        Some(id) if id.chars().count() > MAX_MESSAGE_ID_LEN => {
            let max = MAX_MESSAGE_ID_LEN;
            return Err(fail(format!("message id is longer than {max} characters")));
        }
        Some(_) => {}
    }

    // The arity check guarantees every element read below exists.
    let element = |i: usize| items[i].expect("arity checked");
    let string = |i: usize, what: &str| {
        raw_str(element(i)).ok_or_else(|| fail(format!("{what} must be a string")))
    };
    let object = |i: usize, what: &str| match element(i) {
        raw if raw.get().starts_with('{') => Ok(raw),
        _ => Err(fail(format!("{what} must be a JSON object"))),
    };
    Ok(match kind {
        MessageType::Call => {
            let action = string(2, "action")?;
            let payload = object(3, "payload")?;
            let message_id = message_id.expect("checked above");
            Frame::Call {
                message_id,
                action,
                payload,
            }
        }
        MessageType::CallResult => {
            let payload = object(2, "payload")?;
            let message_id = message_id.expect("checked above");
            Frame::CallResult {
                message_id,
                payload,
            }
        }
        MessageType::CallError => {
            let code = string(2, "error code")?;
            let description = string(3, "error description")?;
            let message_id = message_id.expect("checked above");
            let details = element(4);
            Frame::CallError {
                message_id,
                code,
                description,
                details,
            }
        }
    })
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum MessageType {
    Call,
    CallResult,
    CallError,
}

impl MessageType {
    /// Only the bare integers 2, 3 and 4; `2.0` or `"2"` are not type ids.
    fn from_raw(raw: &RawValue) -> Option<MessageType> {
        match raw.get() {
            "2" => Some(MessageType::Call),
            "3" => Some(MessageType::CallResult),
            "4" => Some(MessageType::CallError),
            _ => None,
        }
    }

    fn arity(self) -> usize {
        match self {
            MessageType::Call => 4,
            MessageType::CallResult => 3,
            MessageType::CallError => 5,
        }
    }

    fn name(self) -> &'static str {
        match self {
            MessageType::Call => "CALL",
            MessageType::CallResult => "CALLRESULT",
            MessageType::CallError => "CALLERROR",
        }
    }
}

/// The string an element holds, borrowed unless it had escapes; `None` if not a string.
fn raw_str(raw: &RawValue) -> Option<Cow<'_, str>> {
    if !raw.get().starts_with('"') {
        return None;
    }
    serde_json::from_str::<Key<'_>>(raw.get()).ok().map(|k| k.0)
}

/// The first five elements of a frame array plus the total count; no allocation.
struct Elements<'a> {
    items: [Option<&'a RawValue>; 5],
    len: usize,
}

impl<'de> Deserialize<'de> for Elements<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_seq(ElementsVisitor)
    }
}

struct ElementsVisitor;

impl<'de> Visitor<'de> for ElementsVisitor {
    type Value = Elements<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON array")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Elements<'de>, A::Error> {
        let mut elements = Elements {
            items: [None; 5],
            len: 0,
        };
        while let Some(raw) = seq.next_element::<&'de RawValue>()? {
            if let Some(slot) = elements.items.get_mut(elements.len) {
                *slot = Some(raw);
            }
            elements.len += 1;
        }
        Ok(elements)
    }
}
