//! The handshake's URL path parsing: the charger identity of `/ocpp/{identity}`
//! (percent-decoding, then the identity rule). The rest of the handshake (headers,
//! subprotocol, Basic auth) lives in private modules of cms-gateway, reachable only through
//! the async `accept` on a socket.
#![no_main]

use cms_gateway::{ChargerIdentity, MAX_IDENTITY_LEN};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(identity) = ChargerIdentity::from_path_segment(text) {
        let s = identity.as_str();
        assert!(
            !s.is_empty() && s.chars().count() <= MAX_IDENTITY_LEN,
            "{text:?}"
        );
        // A decoded identity holds no '%', so it is its own path segment and parses the same.
        assert_eq!(
            ChargerIdentity::from_path_segment(s).as_ref(),
            Ok(&identity)
        );
        assert_eq!(ChargerIdentity::parse(s).as_ref(), Ok(&identity));
    }
    if let Ok(identity) = ChargerIdentity::parse(text) {
        assert_eq!(identity.as_str(), text);
        assert_eq!(identity.to_string(), text);
    }
});
