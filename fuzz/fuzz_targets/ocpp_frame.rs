//! The OCPP-J frame parser: `parse_frame` on any text, and the quick `split_call` the gateway
//! tries first, which must agree with `parse_frame` whenever it accepts a frame.
#![no_main]

use cms_ocpp::v16::{Action, parse_request};
use cms_ocpp::{Frame, parse_frame, span_in, split_call};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = parse_frame(text);
    if let Ok(frame) = &parsed {
        let _ = frame.message_id();
        if let Frame::Call { payload, .. } | Frame::CallResult { payload, .. } = frame {
            // The payload borrows from the frame text (the gateway slices its buffer by it).
            let _ = span_in(text, payload.get());
        }
    }
    if let Some(parts) = split_call(text) {
        let _ = span_in(text, parts.payload);
        let _ = span_in(text, parts.message_id);
        let _ = span_in(text, parts.action);
        // The gateway takes the quick way only when the payload also validates: then the full
        // parser must read the very same CALL, or the two ways would disagree about a frame.
        if let Some(action) = Action::from_name(parts.action)
            && parse_request(action, parts.payload).is_ok()
        {
            match &parsed {
                Ok(Frame::Call {
                    message_id,
                    action,
                    payload,
                }) => {
                    assert_eq!(message_id, parts.message_id, "{text:?}");
                    assert_eq!(action, parts.action, "{text:?}");
                    assert_eq!(payload.get().trim(), parts.payload, "{text:?}");
                }
                other => panic!("split_call accepted {text:?}, parse_frame gave {other:?}"),
            }
        }
    }
});
