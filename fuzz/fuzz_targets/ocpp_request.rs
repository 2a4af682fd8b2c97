//! Each charger message's validation: `parse_request(action, payload)`, the entry point the
//! gateway validates a CALL payload with. The first byte picks the action, the rest is the
//! payload text. MeterValues are read without a tree when they can be: whatever the payload,
//! that reader and the tree path must give the same request or the same refusal, and the
//! gateway's check of a MeterValues payload (which keeps no lists) must agree with both.
#![no_main]

use cms_ocpp::v16::{
    Action, MeterValuesCheck, Request, check_meter_values, parse_request, parse_request_tree,
};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let Ok(payload) = std::str::from_utf8(rest) else {
        return;
    };
    let action = Action::ALL[usize::from(selector) % Action::ALL.len()];
    let parsed = parse_request(action, payload);
    assert_eq!(parsed, parse_request_tree(action, payload), "{payload:?}");
    if action == Action::MeterValues {
        let checked = parsed.clone().map(|request| match request {
            Request::MeterValues(request) => MeterValuesCheck::of(&request),
            other => panic!("MeterValues read as {other:?}"),
        });
        assert_eq!(check_meter_values(payload), checked, "{payload:?}");
    }
    if let Ok(request) = parsed {
        assert_eq!(request.action(), action);
        // What the gateway does next with an accepted request: answer it.
        let _ = format!("{request:?}");
    }
});
