use super::*;

/// The vector of the Standard Webhooks reference library's own signing test:
/// standard-webhooks/standard-webhooks, libraries/rust/src/lib.rs, `test_sign`.
#[test]
fn signatures_match_the_reference_library_s_test_vector() {
    assert_eq!(
        sign(
            "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD",
            "msg_27UH4WbU6Z5A5EzD8u03UvzRbpk",
            1649367553,
            br#"{"email":"test@example.com","username":"test_user"}"#,
        ),
        "v1,tZ1I4/hDygAJgO5TYxiSd6Sd0kDW6hPenDe+bTa3Kkw="
    );
}

/// The vector the specification's libraries (Svix's, from which they come) publish for
/// receivers to check their verifiers with.
#[test]
fn signatures_match_the_published_receiver_test_vector() {
    let (secret, id, timestamp, body) = (
        "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
        "msg_p5jXN8AQM9LWM0D4loKWxJek",
        1614265330,
        br#"{"test": 2432232314}"#,
    );
    let expected = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
    assert_eq!(sign(secret, id, timestamp, body), expected);
    assert!(verify(secret, id, timestamp, body, expected));
    assert!(
        !verify(secret, id, timestamp + 1, body, expected),
        "timestamp signed"
    );
    assert!(
        !verify(secret, "msg_other", timestamp, body, expected),
        "id signed"
    );
}

#[test]
fn during_a_rotation_both_secrets_sign_the_new_one_first() {
    let secrets = [
        "whsec_bmV3LXNlY3JldC1ieXRlcy0yNC1sb25nISE=".to_string(),
        "whsec_b2xkLXNlY3JldC1ieXRlcy0yNC1sb25nISE=".to_string(),
    ];
    let header = signature_header(&secrets, "evt_1", 1700000000, b"{}");
    let parts: Vec<&str> = header.split(' ').collect();
    assert_eq!(parts.len(), 2);
    assert_eq!(parts[0], sign(&secrets[0], "evt_1", 1700000000, b"{}"));
    for secret in &secrets {
        assert!(verify(secret, "evt_1", 1700000000, b"{}", &header));
    }
    assert!(!verify(
        "whsec_b3RoZXI=",
        "evt_1",
        1700000000,
        b"{}",
        &header
    ));
}
