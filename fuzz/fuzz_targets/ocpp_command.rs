//! The official 1.6 JSON schemas of the 19 calls cms sends (`Command::validate_request`, run on
//! every REST action body before it goes out, and `validate_response`, run on every answer a
//! charger sends back). The first byte picks the call and the direction, the rest is JSON.
#![no_main]

use cms_ocpp::v16::Command;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let Ok(payload) = serde_json::from_slice::<serde_json::Value>(rest) else {
        return;
    };
    let command = Command::ALL[usize::from(selector / 2) % Command::ALL.len()];
    let checked = match selector % 2 {
        0 => command.validate_request(&payload),
        _ => command.validate_response(&payload),
    };
    if let Err(violations) = checked {
        // A refusal names at least one violation, and says where (the REST answer shows it).
        let first = violations.first();
        let _ = format!("{first}");
        assert!(violations.iter().count() >= 1);
    }
});
