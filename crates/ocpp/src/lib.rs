//! OCPP-J framing and OCPP 1.6 and 2.0.1 messages both ways: parse, validate, answer. No I/O.
#![forbid(unsafe_code)]

pub mod error;
pub mod frame;
pub mod json;
mod json_schema;
pub mod masking;
pub mod v16;
pub mod v201;
mod version;

pub use error::{ErrorCode, Violation};
pub use frame::{
    CallParts, Frame, FrameError, MAX_MESSAGE_ID_LEN, call, call_error, call_error_in, call_result,
    call_result_len, parse_frame, span_in, split_call, write_call_result, write_call_result_with,
};
pub use json::Json;
pub use version::OcppVersion;
