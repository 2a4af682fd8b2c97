//! The whole upgrade handshake (`cms_gateway::fuzzing::handshake`: the HTTP request head, the
//! `/ocpp/{identity}` path, the Upgrade/Connection/Sec-WebSocket-* headers, the Basic-auth
//! header against a charger of each security profile) on whatever bytes a client sends. The
//! first byte picks the transport: plain ws, TLS with a certificate naming CP3, TLS without one.
#![no_main]

use cms_gateway::fuzzing::{Handshake, handshake};
use libfuzzer_sys::fuzz_target;
use std::pin::pin;
use std::task::{Context, Poll, Waker};

fuzz_target!(|data: &[u8]| {
    let Some((&transport, request)) = data.split_first() else {
        return;
    };
    let names = ["CP3".to_string()];
    let tls = match transport % 3 {
        0 => None,
        1 => Some(&names[..]),
        _ => Some(&[][..]),
    };
    // An in-memory client and directory never wait: one poll finishes the handshake.
    let mut future = pin!(handshake(request, tls));
    let Poll::Ready(Handshake { response, outcome }) =
        future.as_mut().poll(&mut Context::from_waker(Waker::noop()))
    else {
        panic!("the handshake waited on an in-memory client");
    };
    let text = String::from_utf8_lossy(&response);
    match outcome {
        Ok((identity, authenticated)) => {
            assert!(text.starts_with("HTTP/1.1 101 "), "{text}");
            assert!(text.contains("\r\nSec-WebSocket-Accept: "), "{text}");
            // Only the directory's chargers get in, and only 0 without proving who it is.
            let profile = match identity.as_str() {
                "CP0" => 0,
                "CP1" => 1,
                "CP2" => 2,
                "CP3" => 3,
                other => panic!("upgraded an unknown charger {other:?}"),
            };
            assert_eq!(authenticated, profile > 0, "{identity}");
            assert!(profile < 2 || tls.is_some(), "{identity} over plain ws");
        }
        Err(_) if response.is_empty() => {}
        Err(rejection) => {
            // Every refusal is a whole HTTP answer whose length header tells the truth.
            let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
            assert!(head.starts_with("HTTP/1.1 4") || head.starts_with("HTTP/1.1 5")
                || head.starts_with("HTTP/1.1 200 "), "{rejection:?}: {head}");
            let length = format!("\r\nContent-Length: {}\r\n", body.len());
            assert!(head.contains(&length), "{rejection:?}: {text}");
        }
    }
});
