//! A charger's last frames over the bus, for `GET /api/v3/chargers/{uuid}/messages` in the
//! Kafka deployment: an API replica asks on the commands topic (keyed by the charger, as an
//! action is), and each gateway that keeps frames of the charger answers on the command
//! results, which every replica follows outside any group; the replica that asked knows its
//! answer by the request's id. The frames travel as kept, secrets and all: the API masks them
//! on show, as it masks what its own gateway keeps (docs/bus.md, "Frames of a charger").

use crate::contract::header;
use crate::{Header, Headers, Record, Topics};
use bytes::Bytes;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// The `kind` header of a request on the commands topic.
pub const FRAMES_REQUEST: &str = "frames_request";
/// The `kind` header of an answer on the command results.
pub const FRAMES: &str = "frames";
/// The most an answer's value may weigh: well under a producer's `message.max.bytes` (1 MB by
/// default). A ring holds at most 64 KiB; only frames full of characters JSON escapes could
/// pass this, and then the oldest are left out.
pub const MAX_ANSWER_BYTES: usize = 256 * 1024;

/// An API replica asks for a charger's frames.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FramesRequest {
    /// A uuid naming the request: its answers carry it.
    pub request: String,
    pub identity: String,
    /// When it was asked (record time form).
    pub asked_at: String,
}

/// A gateway's answer: the frames it keeps of the charger, newest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FramesAnswer {
    pub request: String,
    pub identity: String,
    /// The node id of the answering gateway.
    pub gateway: String,
    /// Whether the frames are of a session the gateway holds now (else of one that ended
    /// within the hour).
    pub live: bool,
    pub frames: Vec<SentFrame>,
}

/// A frame as a gateway kept it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SentFrame {
    /// When the gateway read or wrote it (record time form).
    pub at: String,
    /// `in` (from the charger) or `out` (to it).
    pub direction: String,
    /// Its kept text (the first 4 KiB of a longer frame).
    pub frame: String,
    /// Its whole length in bytes: more than `frame`'s when it was cut.
    pub len: usize,
}

/// The request's record on `<prefix>.ocpp.commands`.
pub fn frames_request_record(topics: &Topics, request: &FramesRequest) -> Record {
    record(topics.commands, &request.identity, FRAMES_REQUEST, request)
}

/// The answer's record on `<prefix>.ocpp.command-results`, its oldest frames left out past
/// [`MAX_ANSWER_BYTES`].
pub fn frames_answer_record(topics: &Topics, answer: &FramesAnswer) -> Record {
    let mut budget = MAX_ANSWER_BYTES.saturating_sub(1024);
    let kept = answer
        .frames
        .iter()
        .take_while(|frame| {
            let size = serde_json::to_vec(frame).map_or(usize::MAX, |v| v.len() + 1);
            budget = budget.saturating_sub(size);
            budget > 0
        })
        .count();
    let bounded = FramesAnswer {
        frames: answer.frames[..kept].to_vec(),
        ..answer.clone()
    };
    record(topics.command_results, &answer.identity, FRAMES, &bounded)
}

fn record(
    topic: &'static str,
    identity: &str,
    kind: &'static str,
    value: &impl Serialize,
) -> Record {
    Record {
        topic: Cow::Borrowed(topic),
        key: Bytes::copy_from_slice(identity.as_bytes()),
        headers: Headers::from_iter([Header::new(header::KIND, kind)]),
        value: Bytes::from(serde_json::to_vec(value).expect("frames records serialise")),
    }
}

impl FramesRequest {
    /// The request a commands record carries; `None` for an action's record.
    pub fn of(record: &Record) -> Option<FramesRequest> {
        (record.header_str(header::KIND) == Some(FRAMES_REQUEST))
            .then(|| serde_json::from_slice(&record.value).ok())?
    }
}

impl FramesAnswer {
    /// The answer a command results record carries; `None` for an action's report.
    pub fn of(record: &Record) -> Option<FramesAnswer> {
        (record.header_str(header::KIND) == Some(FRAMES))
            .then(|| serde_json::from_slice(&record.value).ok())?
    }
}

#[cfg(test)]
mod tests;
