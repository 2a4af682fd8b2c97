//! What a proxy URL is, case by case, including each case where the API's check and the
//! relay's parser once disagreed.

use super::*;

#[test]
fn proxy_servers_are_websocket_urls() {
    for good in [
        "wss://proxy.example.com",
        "wss://proxy.example.com/ocpp",
        "wss://10.0.0.1:8443/ocpp/CP-1",
        "wss://[::1]:8443/ocpp",
        "wss://[::1]/ocpp",
        "wss://ops:s3cret@proxy.example.com/ocpp",
        "wss://ops@proxy.example.com/ocpp",
        "wss://proxy.example.com:65535/ocpp",
        "ws://127.0.0.1:9000",
    ] {
        assert!(ProxyUrl::parse(good).is_ok(), "{good}");
    }
    for bad in [
        "https://proxy.example.com",
        "no url",
        "wss://",
        "wss:///path",
        "wss://host:port/x",
        "wss://127.0.0.1:99999/x",
        "wss://host:65536/x",
        "wss://host:/x",
    ] {
        assert!(ProxyUrl::parse(bad).is_err(), "{bad}");
    }
}

#[test]
fn where_the_api_and_the_relay_disagreed_the_stricter_rule_holds() {
    // The API refused these; the relay would have dialled them.
    for bad in [
        "wss://host:0/x",
        "wss://host:+443/x",
        "wss://@host/x",
        "wss://:pw@host/x",
        "wss://host/a b",
        "wss://host/ocpp?token=x",
        "wss://host/ocpp#x",
        "WSS://host/ocpp",
    ] {
        assert!(ProxyUrl::parse(bad).is_err(), "{bad}");
    }
    // The API took this one, which the relay could never dial (no host).
    assert!(ProxyUrl::parse("wss://[]/ocpp").is_err());
    // `ws` parses (the relay dials it), though the API takes only `wss`.
    assert!(!ProxyUrl::parse("ws://h/ocpp").unwrap().is_secure());
}

#[test]
fn the_identity_is_appended_and_credentials_become_basic_auth() {
    let url = ProxyUrl::parse("wss://ops:s3cr%40t@csms.example:8443/ocpp/").unwrap();
    assert_eq!(
        url.for_charger("CP 1"),
        "wss://csms.example:8443/ocpp/CP%201"
    );
    assert_eq!(
        (url.host(), url.port(), url.is_secure()),
        ("csms.example", 8443, true)
    );
    // base64("ops:s3cr@t")
    assert_eq!(url.basic_auth().as_deref(), Some("Basic b3BzOnMzY3JAdA=="));
    assert_eq!(url.to_string(), "wss://csms.example:8443/ocpp/");
    let plain = ProxyUrl::parse("ws://127.0.0.1:9000").unwrap();
    assert_eq!(plain.for_charger("CP-1"), "ws://127.0.0.1:9000/CP-1");
    assert_eq!(
        (plain.port(), plain.is_secure(), plain.basic_auth()),
        (9000, false, None)
    );
    assert_eq!(ProxyUrl::parse("wss://h/ocpp").unwrap().port(), 443);
    assert_eq!(ProxyUrl::parse("wss://[::1]/ocpp").unwrap().host(), "::1");
    assert_eq!(redacted("wss://ops:pw@h/ocpp"), "wss://h/ocpp");
    assert_eq!(redacted("wss://ops:p@ss@h/x@y"), "wss://h/x@y");
}

#[test]
fn a_password_is_never_shown_and_comes_back_from_its_mask() {
    let stored = "wss://ops:s3:cr@t@proxy.example.com:8443/ocpp";
    assert_eq!(masked(stored), "wss://ops:***@proxy.example.com:8443/ocpp");
    assert_eq!(masked("wss://ops@h/x"), "wss://ops@h/x");
    assert_eq!(masked("wss://h/x@y"), "wss://h/x@y");
    let shown = masked(stored);
    assert_eq!(unmasked(&shown, [stored]).as_deref(), Some(stored));
    assert_eq!(unmasked("wss://ops:***@elsewhere/ocpp", [stored]), None);
    assert_eq!(
        unmasked("wss://ops:new@h/x", [stored]).as_deref(),
        Some("wss://ops:new@h/x")
    );
}
