//! Frame writers: the id, action, code and description are JSON-escaped; payloads are
//! JSON text the caller already produced.

use std::fmt::{self, Write};

use crate::error::ErrorCode;
use crate::version::OcppVersion;

/// `[3,"id",payload]`
pub fn call_result(message_id: &str, payload_json: &str) -> String {
    let mut out = String::with_capacity(call_result_len(message_id, payload_json));
    // Writing to a String cannot fail.
    let _ = write_call_result(&mut out, message_id, payload_json);
    out
}

/// [`call_result`] written into any text sink: the gateway writes its answers into shared
/// buffers instead of a string each.
pub fn write_call_result(
    out: &mut impl Write,
    message_id: &str,
    payload_json: &str,
) -> fmt::Result {
    write_call_result_with(out, message_id, |out| out.write_str(payload_json))
}

/// [`write_call_result`] with the payload written in place by `payload` (JSON text): an answer
/// made of parts, such as the clock, needs no string of its own.
pub fn write_call_result_with<W: Write>(
    out: &mut W,
    message_id: &str,
    payload: impl FnOnce(&mut W) -> fmt::Result,
) -> fmt::Result {
    out.write_str("[3,")?;
    json_str(out, message_id)?;
    out.write_char(',')?;
    payload(out)?;
    out.write_char(']')
}

/// The length of [`call_result`]'s frame: exact unless the id needs escapes. (Exact matters: a
/// string whose length is its capacity becomes `Bytes` without an allocation of its own.)
pub fn call_result_len(message_id: &str, payload_json: &str) -> usize {
    "[3,\"\",]".len() + message_id.len() + payload_json.len()
}

/// `[4,"id","Code","description",{}]`, the code spelled as OCPP 1.6 spells it.
pub fn call_error(message_id: &str, code: ErrorCode, description: &str) -> String {
    call_error_in(OcppVersion::V16, message_id, code, description)
}

/// A CALLERROR frame with the code spelled for `version` ([`ErrorCode::spelled`]).
pub fn call_error_in(
    version: OcppVersion,
    message_id: &str,
    code: ErrorCode,
    description: &str,
) -> String {
    let mut out = String::with_capacity(48 + message_id.len() + description.len());
    out.push_str("[4,");
    write_json_str(&mut out, message_id);
    out.push(',');
    write_json_str(&mut out, code.spelled(version));
    out.push(',');
    write_json_str(&mut out, description);
    out.push_str(",{}]");
    out
}

/// `[2,"id","Action",payload]`
pub fn call(message_id: &str, action: &str, payload_json: &str) -> String {
    let mut out = String::with_capacity(12 + message_id.len() + action.len() + payload_json.len());
    out.push_str("[2,");
    write_json_str(&mut out, message_id);
    out.push(',');
    write_json_str(&mut out, action);
    out.push(',');
    out.push_str(payload_json);
    out.push(']');
    out
}

/// Appends `s` as a quoted JSON string, escaping quotes, backslashes and control characters.
pub fn write_json_str(out: &mut String, s: &str) {
    // Writing to a String cannot fail.
    let _ = json_str(out, s);
}

fn json_str(out: &mut impl Write, s: &str) -> fmt::Result {
    out.write_char('"')?;
    let mut clean_from = 0;
    for (i, byte) in s.bytes().enumerate() {
        let escape = match byte {
            b'"' => "\\\"",
            b'\\' => "\\\\",
            b'\n' => "\\n",
            b'\r' => "\\r",
            b'\t' => "\\t",
            0x08 => "\\b",
            0x0c => "\\f",
            0..=0x1f => "",
            _ => continue,
        };
        // Runs of ordinary characters are copied whole; escapes are ASCII, so slicing
        // at them always lands on a char boundary.
        out.write_str(&s[clean_from..i])?;
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.write_str("\\u00")?;
            out.write_char(char::from(HEX[usize::from(byte >> 4)]))?;
            out.write_char(char::from(HEX[usize::from(byte & 0xf)]))?;
        } else {
            out.write_str(escape)?;
        }
        clean_from = i + 1;
    }
    out.write_str(&s[clean_from..])?;
    out.write_char('"')
}
