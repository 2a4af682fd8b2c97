//! The common case, quickly: a CALL whose id and action hold no escapes, split into its parts
//! by scanning its first bytes and its last, without reading the payload in between. The
//! payload is read once, when it is parsed for validation; [`parse_frame`](super::parse_frame)
//! would read it a first time only to find where it ends.
//!
//! The split checks everything of the frame but the payload. Whoever uses it parses the payload
//! and, should that fail, parses the whole frame with `parse_frame` to name the error: a frame
//! that is not a well-formed CALL is then refused exactly as it would have been.

use super::MAX_MESSAGE_ID_LEN;

/// The parts of a CALL, all borrowed from the frame text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallParts<'a> {
    pub message_id: &'a str,
    pub action: &'a str,
    /// The payload's text, surrounding whitespace left out; not yet checked to be JSON.
    pub payload: &'a str,
}

/// `[2, "id", "Action", payload]` with plain strings: its parts; anything else: `None`.
pub fn split_call(text: &str) -> Option<CallParts<'_>> {
    let bytes = text.as_bytes();
    let mut at = skip_ws(bytes, 0);
    at = expect(bytes, at, b'[')?;
    at = expect(bytes, skip_ws(bytes, at), b'2')?;
    at = expect(bytes, skip_ws(bytes, at), b',')?;
    let (message_id, next) = plain_string(text, skip_ws(bytes, at))?;
    at = expect(bytes, skip_ws(bytes, next), b',')?;
    let (action, next) = plain_string(text, skip_ws(bytes, at))?;
    at = expect(bytes, skip_ws(bytes, next), b',')?;
    let start = skip_ws(bytes, at);
    // The frame's closing bracket is its last character but for whitespace.
    let close = bytes.iter().rposition(|b| !is_ws(*b))?;
    if bytes[close] != b']' || close <= start {
        return None;
    }
    let end = bytes[..close].iter().rposition(|b| !is_ws(*b))? + 1;
    if end <= start || message_id.is_empty() || message_id.chars().count() > MAX_MESSAGE_ID_LEN {
        return None;
    }
    Some(CallParts {
        message_id,
        action,
        payload: &text[start..end],
    })
}

fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
    while bytes.get(at).is_some_and(|b| is_ws(*b)) {
        at += 1;
    }
    at
}

fn expect(bytes: &[u8], at: usize, want: u8) -> Option<usize> {
    (bytes.get(at) == Some(&want)).then_some(at + 1)
}

/// A JSON string without escapes or control characters starting at `at`: its content and the
/// position after its closing quote.
fn plain_string(text: &str, at: usize) -> Option<(&str, usize)> {
    let bytes = text.as_bytes();
    let open = expect(bytes, at, b'"')?;
    let len = bytes[open..]
        .iter()
        .position(|b| *b == b'"' || *b == b'\\' || *b < 0x20)?;
    let close = open + len;
    (bytes[close] == b'"').then(|| (&text[open..close], close + 1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{Frame, parse_frame};

    fn parts<'a>(message_id: &'a str, action: &'a str, payload: &'a str) -> CallParts<'a> {
        CallParts {
            message_id,
            action,
            payload,
        }
    }

    #[test]
    fn plain_calls_split() {
        assert_eq!(
            split_call(r#"[2,"19223201","BootNotification",{"a":1}]"#),
            Some(parts("19223201", "BootNotification", r#"{"a":1}"#))
        );
        assert_eq!(
            split_call(" \n[ 2 ,\t\"x\" , \"Heartbeat\" ,\r\n { } \n] \n"),
            Some(parts("x", "Heartbeat", "{ }"))
        );
    }

    #[test]
    fn anything_unusual_goes_the_full_way() {
        for text in [
            r#"[3,"1",{}]"#,
            r#"[2.0,"1","Heartbeat",{}]"#,
            r#"[2,"a\"b","Heartbeat",{}]"#,
            r#"[2,"1","Heart\u0062eat",{}]"#,
            r#"[2,"","Heartbeat",{}]"#,
            r#"[2,"1234567890123456789012345678901234567","Heartbeat",{}]"#,
            r#"[2,1,"Heartbeat",{}]"#,
            r#"[2,"1","Heartbeat"]"#,
            r#"[2,"1","Heartbeat",]"#,
            r#"[2,"1","Heartbeat",{}]x"#,
            r#"[2,"1","Heartbeat",{}"#,
            "[2,\"1\t\",\"Heartbeat\",{}]",
            "",
            "[",
        ] {
            assert_eq!(split_call(text), None, "{text}");
        }
    }

    /// Wherever the split's payload is JSON, the full parse agrees on every part; where it is
    /// not, the caller's payload parse fails and the full parse has the last word.
    #[test]
    fn agrees_with_the_full_parse() {
        for text in [
            r#"[2,"1","Heartbeat",{}]"#,
            r#"[2,"1","Heartbeat",{}, 5]"#,
            r#"[2,"1","Heartbeat",{}]]"#,
            r#"[2,"1","Heartbeat",[1,2]]"#,
            r#"[2,"1","Heartbeat","text"]"#,
            r#"[2,"1","MeterValues",{"connectorId":1,"meterValue":[{"x":"]"}]} ]"#,
            r#"[2,"ünïcødé-id","Authorize",{"idTag":"]\"["}]"#,
            r#"[2,"1","Heartbeat",{"a":1} ] "#,
        ] {
            let Some(split) = split_call(text) else {
                panic!("{text} did not split")
            };
            if serde_json::from_str::<&serde_json::value::RawValue>(split.payload).is_err() {
                continue;
            }
            match parse_frame(text) {
                Ok(Frame::Call {
                    message_id,
                    action,
                    payload,
                }) => {
                    assert_eq!(message_id, split.message_id, "{text}");
                    assert_eq!(action, split.action, "{text}");
                    assert_eq!(payload.get(), split.payload, "{text}");
                }
                // Only a payload that is not an object; the caller's parse refuses it too.
                Ok(other) => panic!("{text}: {other:?}"),
                Err(e) => assert!(!split.payload.starts_with('{'), "{text}: {e}"),
            }
        }
    }
}
